"""Paired studies: configs, the episode plan, the executor, the scheduler, the runner and its
results store, metrics (``metrics/``), statistics and reports (``report/``)."""
