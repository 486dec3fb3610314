"""Chat front ends over one ``Agent``: a transport hands ``Incoming`` messages to
``dispatch`` and renders the ``Reply`` (terminal, HTTP/WebSocket, Discord)."""

from strata_recall.agent.transports.port import Reply, Transport, dispatch

__all__ = ["Reply", "Transport", "dispatch"]
