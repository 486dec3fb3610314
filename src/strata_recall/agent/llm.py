"""Chat models for generation: an offline deterministic one and the existing HTTP clients.

A ``ChatModel`` answers a list of chat messages, whole (``complete``) or as text pieces
(``stream``). The HTTP models extend the extraction clients of ``strata_recall.providers`` (same
transport, retries, error mapping and redaction) with free-text chat and streaming on each
wire format: Ollama's NDJSON, OpenAI's and Anthropic's server-sent events.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from strata_recall.agent.extraction import sections as prompt_sections
from strata_recall.errors import InvalidInput, ProviderOutputInvalid, ProviderUnavailable
from strata_recall.providers.http_providers import (
    AnthropicProvider,
    HttpProvider,
    OllamaProvider,
    OpenAIProvider,
)

__all__ = ["ChatModel", "Completion", "Message", "OfflineModel", "chat_model", "estimate_tokens"]

Message = Mapping[str, str]  # {"role": "system" | "user" | "assistant", "content": ...}


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    model: str
    input_tokens: int
    output_tokens: int


class ChatModel(Protocol):
    @property
    def name(self) -> str: ...

    def complete(self, messages: Sequence[Message], *, model: str | None = None,
                 temperature: float = 0.2) -> Completion: ...

    def stream(self, messages: Sequence[Message], *, model: str | None = None,
               temperature: float = 0.2) -> Iterator[str]: ...


def estimate_tokens(text: str) -> int:
    """About four characters a token: the cost guard's estimate before a call."""
    return max(1, len(text) // 4)


# -- the offline model ---------------------------------------------------------------------

_TASK = re.compile(r"^TASK:\s*(\w+)", re.MULTILINE)


class OfflineModel:
    """A deterministic stand-in for an LLM, for tests and key-less demos.

    It reads the prompt's ``TASK:`` line and its ``## `` sections (facts, relations,
    objectives, feedback) and answers from them, so what memory put into the prompt shows
    in the reply. Never calls the network."""

    def __init__(self, model: str = "offline-1") -> None:
        self._model = model

    @property
    def name(self) -> str:
        return "offline"

    def complete(self, messages: Sequence[Message], *, model: str | None = None,
                 temperature: float = 0.2) -> Completion:
        prompt = "\n".join(m["content"] for m in messages)
        text = self.answer(messages)
        return Completion(text, model or self._model, estimate_tokens(prompt),
                          estimate_tokens(text))

    def stream(self, messages: Sequence[Message], *, model: str | None = None,
               temperature: float = 0.2) -> Iterator[str]:
        yield from re.findall(r"\S+\s*", self.answer(messages))

    def answer(self, messages: Sequence[Message]) -> str:
        system = "\n".join(m["content"] for m in messages if m["role"] == "system")
        user = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
        found = _TASK.search(system)
        task = found.group(1).lower() if found else "chat"
        sections = prompt_sections(system)
        if task == "proactive_decision":
            return _decide(sections)
        if task == "classify":
            return json.dumps(_classify(user))
        if task == "dream":
            return _dream(sections)
        if task == "dream_extraction":
            return _dream_extraction(sections)
        return _chat(user, sections)


def _chat(user: str, sections: Mapping[str, list[str]]) -> str:
    parts = [f"You said: {user.strip()}"] if user.strip() else []
    for name, label in (("north star", "Your goal"), ("facts", "I remember"),
                        ("relations", "I know")):
        known = [line for line in sections.get(name, []) if line != user.strip()]
        if known:
            parts.append(f"{label}: {known[0]}")
    return " | ".join(parts) or "Hello."


def _decide(sections: Mapping[str, list[str]]) -> str:
    goals = sections.get("objectives", []) + sections.get("north star", [])
    if not goals:
        return "WAIT"
    return f"MESSAGE: How is it going with this: {goals[0]}?"


#: The style rule the offline dreamer learns from each kind of implicit signal.
SIGNAL_LESSONS: Mapping[str, str] = {
    "short_reply": "Keep answers short; say more only when asked.",
    "correction": "Check the facts and relations above before answering; say when unsure.",
    "repeat": "Answer the question itself, directly, from the facts above.",
    "undo": "Avoid answers like the ones the user removed.",
}
_STATED = re.compile(r"\b(?:[A-Z][a-z]+|I)\s+(?P<verb>[a-z]{3,20}s)\s+(?:[A-Z][a-z]+|me)\b")
_NOT_RELATIONS = frozenset({"is", "was", "has", "does", "says", "thinks", "goes", "likes"})


def _dream(sections: Mapping[str, list[str]]) -> str:
    feedback = sections.get("feedback", [])
    kinds = dict.fromkeys(line.split(":", 1)[0] for line in sections.get("signals", []))
    lessons = [SIGNAL_LESSONS[k] for k in kinds if k in SIGNAL_LESSONS]
    template = "\n".join(sections.get("current template", []))
    new = [item for item in [*feedback, *lessons] if f"- {item}" not in template]
    if not new:
        return "NO_CHANGE"
    return template + "\nStyle rules learned from feedback:\n" + "\n".join(
        f"- {item}" for item in new)


def _dream_extraction(sections: Mapping[str, list[str]]) -> str:
    """A relation rule for each third-person verb linking two names in a missed statement
    ("Bob mentors Carla" → ``mentors: mentors``) that no current rule covers."""
    known = {line.split(":", 1)[0].strip() for line in sections.get("current rules", [])}
    verbs = [m["verb"] for line in sections.get("missed statements", [])
             for m in _STATED.finditer(line)]
    fresh = [v for v in dict.fromkeys(verbs) if v not in known and v not in _NOT_RELATIONS]
    return "\n".join(f"- {v}: {v}" for v in fresh) or "NO_CHANGE"


def _classify(query: str) -> dict[str, float]:
    from strata_recall.agent.router import heuristic_dimensions

    return heuristic_dimensions(query, history_turns=0)


# -- HTTP chat models ----------------------------------------------------------------------

class _HttpChat:
    """Chat and streaming over an ``HttpProvider``'s transport (mixed in first)."""

    def _chat_body(self, messages: Sequence[Message], model: str, temperature: float,
                   stream: bool) -> dict[str, Any]:
        raise NotImplementedError

    def _chat_text(self, body: Any) -> tuple[str, int, int]:
        raise NotImplementedError

    def _stream_piece(self, line: str) -> str | None:
        raise NotImplementedError

    def complete(self, messages: Sequence[Message], *, model: str | None = None,
                 temperature: float = 0.2) -> Completion:
        provider = self._provider()
        chosen = model or provider.model or ""
        body = provider._post(self._chat_body(self._redacted(messages), chosen, temperature,
                                              False))
        text, tokens_in, tokens_out = self._chat_text(body)
        return Completion(text, chosen, tokens_in, tokens_out)

    def stream(self, messages: Sequence[Message], *, model: str | None = None,
               temperature: float = 0.2) -> Iterator[str]:
        provider = self._provider()
        body = self._chat_body(self._redacted(messages), model or provider.model or "",
                               temperature, True)
        try:
            with provider._client.stream("POST", provider._url, json=body,
                                         headers=provider._headers(),
                                         timeout=provider._timeout) as response:
                if response.status_code >= 400:
                    response.read()
                    provider._read(response)
                for line in response.iter_lines():
                    piece = self._stream_piece(line.strip()) if line.strip() else None
                    if piece:
                        yield piece
        except httpx.HTTPError as exc:
            raise ProviderUnavailable(f"{provider.name}: {type(exc).__name__}: {exc}",
                                      provider=provider.name) from exc

    def _provider(self) -> HttpProvider:
        assert isinstance(self, HttpProvider)
        return self

    def _redacted(self, messages: Sequence[Message]) -> list[dict[str, str]]:
        provider = self._provider()
        return [{"role": m["role"], "content": provider._outbound(m["content"]).text}
                for m in messages]


def _json_line(line: str) -> Any:
    data = line[5:].strip() if line.startswith("data:") else line
    if not data or data == "[DONE]" or line.startswith("event:"):
        return None
    try:
        return json.loads(data)
    except ValueError as exc:
        raise ProviderOutputInvalid(f"unreadable stream line: {line[:80]}") from exc


class OllamaChat(_HttpChat, OllamaProvider):
    def _chat_body(self, messages: Sequence[Message], model: str, temperature: float,
                   stream: bool) -> dict[str, Any]:
        return {"model": model, "stream": stream, "messages": list(messages),
                "options": {"temperature": temperature, "num_predict": self._max_tokens}}

    def _chat_text(self, body: Any) -> tuple[str, int, int]:
        message = body.get("message") if isinstance(body, Mapping) else None
        if not isinstance(message, Mapping) or not isinstance(message.get("content"), str):
            raise ProviderOutputInvalid("ollama: no message in the response", provider="ollama")
        return (message["content"], int(body.get("prompt_eval_count", 0)),
                int(body.get("eval_count", 0)))

    def _stream_piece(self, line: str) -> str | None:
        data = _json_line(line)
        message = data.get("message") if isinstance(data, Mapping) else None
        return str(message.get("content") or "") if isinstance(message, Mapping) else None


class OpenAIChat(_HttpChat, OpenAIProvider):
    def _chat_body(self, messages: Sequence[Message], model: str, temperature: float,
                   stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {"model": model, "temperature": temperature,
                                "max_tokens": self._max_tokens, "messages": list(messages)}
        if stream:
            body["stream"] = True
        return body

    def _chat_text(self, body: Any) -> tuple[str, int, int]:
        choices = body.get("choices") if isinstance(body, Mapping) else None
        if not isinstance(choices, list) or not choices:
            raise ProviderOutputInvalid("openai: no choices in the response", provider="openai")
        text = (choices[0].get("message") or {}).get("content")
        usage = body.get("usage") or {}
        return (str(text or ""), int(usage.get("prompt_tokens", 0)),
                int(usage.get("completion_tokens", 0)))

    def _stream_piece(self, line: str) -> str | None:
        data = _json_line(line)
        choices = data.get("choices") if isinstance(data, Mapping) else None
        if not isinstance(choices, list) or not choices:
            return None
        return str((choices[0].get("delta") or {}).get("content") or "")


class AnthropicChat(_HttpChat, AnthropicProvider):
    def _chat_body(self, messages: Sequence[Message], model: str, temperature: float,
                   stream: bool) -> dict[str, Any]:
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        body: dict[str, Any] = {
            "model": model, "max_tokens": self._max_tokens, "temperature": temperature,
            "system": system, "messages": [m for m in messages if m["role"] != "system"]}
        if stream:
            body["stream"] = True
        return body

    def _chat_text(self, body: Any) -> tuple[str, int, int]:
        blocks = body.get("content") if isinstance(body, Mapping) else None
        if not isinstance(blocks, list):
            raise ProviderOutputInvalid("anthropic: no content in the response",
                                        provider="anthropic")
        text = "".join(b.get("text", "") for b in blocks
                       if isinstance(b, Mapping) and b.get("type") == "text")
        usage = body.get("usage") or {}
        return text, int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))

    def _stream_piece(self, line: str) -> str | None:
        data = _json_line(line)
        if not isinstance(data, Mapping) or data.get("type") != "content_block_delta":
            return None
        return str((data.get("delta") or {}).get("text") or "")


CHAT_MODELS: dict[str, type[_HttpChat]] = {
    "ollama": OllamaChat, "openai": OpenAIChat, "anthropic": AnthropicChat,
}


def chat_model(kind: str = "offline", *, base_url: str | None = None, model: str | None = None,
               api_key: str | None = None, timeout_s: float = 60.0) -> ChatModel:
    """The chat model named ``kind``: ``offline`` (default, no network) or an HTTP one."""
    if kind == "offline":
        return OfflineModel(model or "offline-1")
    if kind not in CHAT_MODELS:
        raise InvalidInput(f"unknown chat model {kind!r}; one of offline, "
                           f"{', '.join(sorted(CHAT_MODELS))}")
    if not base_url or not model:
        raise InvalidInput(f"the {kind} chat model needs a base URL and a model name")
    cls: Any = CHAT_MODELS[kind]
    built: ChatModel = cls(base_url=base_url, model=model, api_key=api_key, timeout_s=timeout_s,
                           max_retries=1)
    return built
