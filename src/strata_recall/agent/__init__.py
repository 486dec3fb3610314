"""The agent runtime around the memory ([004], [002]'s model router, [000]'s commands).

A separate layer over the public ``Strata`` facade: the pipeline (``runtime``), procedural
memory as data (``procedural``), the model router and cost guard (``router``, ``costs``),
chat models (``llm``), the proactive scheduler and dreaming (``scheduler``, ``dreaming``),
re-indexing (``reindex``) and the transports (``transports``).
"""

from strata_recall.agent.llm import ChatModel, OfflineModel, chat_model
from strata_recall.agent.runtime import Agent, AgentConfig, Incoming, Turn

__all__ = ["Agent", "AgentConfig", "ChatModel", "Incoming", "OfflineModel", "Turn",
           "chat_model"]
