"""The project's one room for language models, a sibling of the compiler: the OpenAI-compatible chat
client (``client``) with its direct request path (``wire``) and retry policy (``transport``), the
reply schemas of structured outputs (``schemas``), the turns of a process's episode threads
(``turns``), the prompt-template environment (``templates``),
the price table (``prices.json``) and a scripted endpoint for tests and benches (``testing``).

Its users are the LLM agents (``runtime/agents/llm/``: their configurations, prompts and reply
contracts), the Designer/Judge and the command line. It imports nothing of the project but
``compiler.core``.
"""
