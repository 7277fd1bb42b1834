"""Paired Vanilla/Mirror study: metrics and statistics (pure functions, no I/O).

* :mod:`runtime.study.stats` -- binomial intervals, stratified differences,
  Cochran's Q (paper Sections 4.1 and Appendix C).
* :mod:`runtime.study.metrics` -- episode records, Score/SR, RIE, the
  disclosure split, IRR/RL, checkpoint SR and record validation
  (paper Sections 3.4-3.6, Appendix C/D).
"""
