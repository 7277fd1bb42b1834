"""Agents: ``base`` (the Agent protocol), ``registry`` (name -> factory; ``create``), ``scripted``
(the planning baselines) and ``llm`` (the LLM configurations and their model client)."""
