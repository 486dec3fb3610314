"""Strata as OpenAI Agents SDK function tools: ``remember``, ``recall`` and ``forget``.

``memory_tools(strata, scope=...)`` returns the three tools bound to one scope (the agent's
user, agent or run; ``docs/adapters.md``). The model never names a scope: it is fixed when the
tools are made, as the MCP server takes it from the transport. Each tool answers JSON text; a
Strata error becomes the tool's answer (``{"error": {code, message}}``) so the model can read it
and carry on, instead of ending the run.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

from agents import FunctionTool, function_tool

from strata_recall.adapters._backend import Backend
from strata_recall.domain.models import Scope, ScopeLike
from strata_recall.errors import StrataError

__all__ = ["memory_tools"]


def memory_tools(strata: Backend, *, scope: ScopeLike = None,
                 recall_limit: int = 5) -> list[FunctionTool]:
    """The remember / recall / forget tools over ``strata``, all within ``scope``."""
    where = Scope.parse(scope)

    def remember(text: str) -> str:
        """Store something worth remembering about the user or the task, in one sentence.

        Args:
            text: The fact, preference or event to remember.
        """
        result = strata.remember(text, scope=where)
        return json.dumps({"memory_ids": list(result.memory_ids), "status": result.status})

    def recall(query: str) -> str:
        """Search long-term memory for what is relevant to a question.

        Args:
            query: What to look for, in plain words.
        """
        hits = strata.recall(query, scope=where, k=recall_limit).hits
        return json.dumps([{"id": h.memory.id, "content": h.memory.content,
                            "score": round(h.score, 4)} for h in hits])

    def forget(memory_id: str, reason: str) -> str:
        """Forget a memory that is wrong or no longer wanted (it can be recovered).

        Args:
            memory_id: The id recall returned for it.
            reason: Why it should be forgotten.
        """
        memory = strata.forget(memory_id, reason=reason, scope=where)
        return json.dumps({"id": memory.id, "lifecycle": memory.lifecycle.value})

    return [function_tool(_answering_errors(tool)) for tool in (remember, recall, forget)]


def _answering_errors(tool: Callable[..., str]) -> Callable[..., str]:
    """``tool`` answering a ``StrataError`` as JSON text the model can read."""
    @functools.wraps(tool)  # the SDK reads the name, docstring and signature through it
    def guarded(*args: Any, **kwargs: Any) -> str:
        try:
            return tool(*args, **kwargs)
        except StrataError as exc:
            return json.dumps({"error": {"code": exc.code, "message": str(exc)}})

    return guarded
