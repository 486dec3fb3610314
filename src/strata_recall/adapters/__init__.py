"""Adapters for the agent frameworks people already use, each over the ``Strata`` facade.

One module per ecosystem; each imports its library only when it is imported itself, so the
core needs none of them (install the extra: ``langgraph``, ``langchain``, ``openai-agents``):

- ``strata_recall.adapters.langgraph``: ``StrataStore``, a LangGraph ``BaseStore``.
- ``strata_recall.adapters.langchain``: ``StrataChatMessageHistory``, a LangChain
  ``BaseChatMessageHistory``.
- ``strata_recall.adapters.openai_agents``: ``memory_tools``, remember / recall / forget as OpenAI
  Agents SDK function tools.
- ``strata_recall.adapters.mem0``: ``Memory``, mem0's ``Memory`` calls and return shapes (no
  third-party library needed).

The mapping of each framework's names onto Strata scopes is in ``docs/adapters.md``.
"""
