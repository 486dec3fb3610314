"""Model providers over HTTP: Ollama ``/api/chat``, OpenAI-compatible ``/v1/chat/completions``
and Anthropic ``/v1/messages``, each asked for output constrained by a JSON schema.

The shared half (prompts, redaction, retries, error mapping, validation) does no wire work;
each adapter only builds its request body and reads its response body. Transport errors become
``ProviderUnavailable``, a 429 past the allowed retries ``ProviderRateLimited``, a refused request
``ProviderError`` and an unusable answer (malformed, truncated) ``ProviderOutputInvalid``.
Text sent to a remote provider is redacted first; placeholders are restored in the answer here.
"""

from __future__ import annotations

import ipaddress
import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx

from strata_recall.domain.decisions import Candidate, Decision
from strata_recall.errors import (
    ProviderError,
    ProviderOutputInvalid,
    ProviderRateLimited,
    ProviderUnavailable,
)
from strata_recall.providers.base import Capabilities, ExtractedFact, Extraction, Reliability
from strata_recall.providers.redaction import Redacted, Redactor
from strata_recall.providers.summarize import (
    SUMMARY_PROMPT,
    SUMMARY_SCHEMA,
    SourceEvent,
    summary_request,
)
from strata_recall.providers.validation import parse_json, validate_decision, validate_extraction

PROMPT_VERSION = "strata-llm-2"
ANTHROPIC_VERSION = "2023-06-01"

EXTRACTION_PROMPT = """Extract durable memories from the user's text.
Return JSON: {"facts": [...], "entities": [...], "relations": [...], "warnings": [...]}.
Each fact: content (a standalone third-person sentence: "User lives in Porto."), type
(semantic|episodic|procedural|user_profile), holder (who it is about: "user", "project",
"person:<first name>", e.g. "person:ana"), attribute (snake_case: lives_in, works_at,
job_title, phone, email, manager, partner, birthday, age, name, favourite_<thing>,
deadline_of_<thing>, likes, dislikes, visited, speaks, has_pet, allergy, hobby, or a verb
such as plays), value (the attribute's value: "Porto"; for "moved from Lisbon to Porto" the
NEW value "Porto"), tense (past|present|future: "I lived in Lisbon" is past), importance 1-10
(10: the user said "remember this"; 9: name, role, company; 8: strong preference; 7: decision;
6: project-critical fact; 5: useful context; 4: mild preference; 3: casual mention; skip
greetings, thanks, acknowledgements and small talk), confidence 0-1, pinned (true only for an
explicit "remember this"), negated (the fact says something is not or no longer so: "I don't
eat meat anymore", "I quit smoking"), explicit_change (a correction or a change: "actually",
"now", "moved to", "switched to", "X, not Y"), hedged ("I think", "maybe").
Relations: {source, relationship, target, confidence}. Keep placeholders like
[REDACTED_X_1] exactly as they are."""

DECISION_PROMPT = """Decide what to do with a new fact given existing memories (candidates,
with temporary ids). Return JSON: {"action": "ADD"|"UPDATE"|"DELETE"|"NONE", "target": id or
null, "confidence": 0-1, "reason": short text, "contradicts": [ids]}.
NONE: the fact is already known (target = the duplicate). UPDATE: the fact gives a candidate's
subject a new value (target = it). DELETE: the fact negates a candidate. ADD: new information.
If the conflict is ambiguous, ADD and list the conflicting ids in contradicts. Never UPDATE or
DELETE a pinned candidate."""

_FACT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "content": {"type": "string"}, "type": {"type": "string"},
        "subject": {"type": ["string", "null"]}, "value": {"type": ["string", "null"]},
        "importance": {"type": "integer", "minimum": 1, "maximum": 10},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "pinned": {"type": "boolean"}, "negated": {"type": "boolean"},
        "explicit_change": {"type": "boolean"}, "hedged": {"type": "boolean"},
        "holder": {"type": ["string", "null"]}, "attribute": {"type": ["string", "null"]},
        "tense": {"type": "string", "enum": ["past", "present", "future"]},
    },
    "required": ["content", "type", "importance", "confidence"],
}
EXTRACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "facts": {"type": "array", "items": _FACT_SCHEMA},
        "entities": {"type": "array", "items": {"type": "string"}},
        "relations": {"type": "array", "items": {
            "type": "object",
            "properties": {"source": {"type": "string"}, "relationship": {"type": "string"},
                           "target": {"type": "string"}, "confidence": {"type": "number"}},
            "required": ["source", "relationship", "target"]}},
        "warnings": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["facts"],
}
DECISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["ADD", "UPDATE", "DELETE", "NONE"]},
        "target": {"type": ["string", "null"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "reason": {"type": "string"},
        "contradicts": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["action", "confidence", "reason"],
}


def is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class HttpProvider:
    """The wire-independent half of every HTTP provider."""

    kind = "http"
    path = ""
    reliability = Reliability.SCHEMA

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout_s: float = 30.0,
        max_retries: int = 1,
        max_retry_wait_s: float = 5.0,
        remote: bool | None = None,
        redactor: Redactor | None = None,
        max_output_tokens: int = 2_048,
        client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._url = base_url.rstrip("/") + self.path
        self._model = model
        self._api_key = api_key
        self._timeout = timeout_s
        self._max_retries = max_retries
        self._max_wait = max_retry_wait_s
        self._remote = (not is_loopback(base_url)) if remote is None else remote
        self._redactor = redactor or Redactor()
        self._max_tokens = max_output_tokens
        self._client = client or httpx.Client()
        self._sleep = sleep

    @property
    def name(self) -> str:
        return self.kind

    @property
    def model(self) -> str | None:
        return self._model

    @property
    def prompt_version(self) -> str | None:
        return PROMPT_VERSION

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(structured_output=self.reliability, timeout_s=self._timeout,
                            max_output_tokens=self._max_tokens, remote=self._remote)

    def close(self) -> None:
        self._client.close()

    def extract(self, text: str) -> Extraction:
        sent = self._outbound(text)
        data = _restore(self._complete(EXTRACTION_PROMPT, sent.text, EXTRACTION_SCHEMA,
                                       "record_extraction"), sent)
        return validate_extraction(data, provider=self.name, model=self._model,
                                   prompt_version=PROMPT_VERSION)

    def decide(self, fact: ExtractedFact, candidates: Sequence[Candidate]) -> Decision:
        payload = {
            "fact": {k: v for k, v in fact.to_dict().items() if k not in ("relations",)},
            "candidates": [{"id": str(i), "content": c.content, "subject": c.subject,
                            "pinned": c.pinned, "similarity": round(c.similarity, 3)}
                           for i, c in enumerate(candidates)],
        }
        sent = self._outbound(json.dumps(payload, ensure_ascii=False))
        data = _restore(self._complete(DECISION_PROMPT, sent.text, DECISION_SCHEMA,
                                       "record_decision"), sent)
        return validate_decision(data, candidates, provider=self.name, model=self._model,
                                 prompt_version=PROMPT_VERSION)

    # -- summaries ([001] R3; strata.providers.summarize) --

    def summarize(self, memory: str, events: Sequence[SourceEvent]) -> Any:
        """R3 bullets citing the events' temporary ids, parsed (checked by the caller)."""
        sent = self._outbound(json.dumps(summary_request(memory, events), ensure_ascii=False))
        return _restore(self._complete(SUMMARY_PROMPT, sent.text, SUMMARY_SCHEMA,
                                       "record_summary"), sent)

    def _outbound(self, text: str) -> Redacted:
        """What may leave the machine: redacted for a remote provider ([003] §10.2)."""
        return self._redactor.redact(text) if self._remote else Redacted(text)

    # -- per wire format --------------------------------------------------------------------

    def _complete(self, system: str, user: str, schema: Mapping[str, Any], tool: str) -> Any:
        raise NotImplementedError

    def _headers(self) -> dict[str, str]:
        return {}

    # -- transport --------------------------------------------------------------------------

    def _post(self, body: Mapping[str, Any]) -> Any:
        for attempt in range(self._max_retries + 1):
            response = self._send(body)
            if response.status_code not in (429, 503, 529):
                break
            wait = _retry_after(response)
            if attempt < self._max_retries and wait <= self._max_wait:
                self._sleep(wait)
                continue
            if response.status_code == 429:
                raise ProviderRateLimited(f"{self.name}: rate limited (HTTP 429)",
                                          provider=self.name, retry_after=wait)
            break
        return self._read(response)

    def _send(self, body: Mapping[str, Any]) -> httpx.Response:
        try:
            return self._client.post(self._url, json=body, headers=self._headers(),
                                     timeout=self._timeout)
        except httpx.TimeoutException as exc:
            raise ProviderUnavailable(f"{self.name}: no answer within {self._timeout:g} s",
                                      provider=self.name) from exc
        except httpx.HTTPError as exc:
            raise ProviderUnavailable(f"{self.name}: {type(exc).__name__}: {exc}",
                                      provider=self.name) from exc

    def _read(self, response: httpx.Response) -> Any:
        if response.status_code >= 500:
            raise ProviderUnavailable(f"{self.name}: HTTP {response.status_code}",
                                      provider=self.name, status=response.status_code)
        if response.status_code >= 400:
            raise ProviderError(f"{self.name}: HTTP {response.status_code}: "
                                f"{_error_message(response)}", provider=self.name,
                                status=response.status_code)
        try:
            return response.json()
        except ValueError as exc:
            raise ProviderOutputInvalid(f"{self.name}: the response body is not JSON",
                                        provider=self.name) from exc


class OllamaProvider(HttpProvider):
    """Ollama's chat API with ``format`` set to the JSON schema (structured outputs)."""

    kind = "ollama"
    path = "/api/chat"

    def _complete(self, system: str, user: str, schema: Mapping[str, Any], tool: str) -> Any:
        body = self._post({
            "model": self._model, "stream": False, "format": schema,
            "messages": [{"role": "system", "content": system},
                         {"role": "user", "content": user}],
            "options": {"temperature": 0, "num_predict": self._max_tokens},
        })
        message = _field(body, "message", self.name)
        if body.get("done_reason") == "length":
            raise ProviderOutputInvalid(f"{self.name}: the answer was truncated",
                                        provider=self.name)
        return parse_json(_text(message.get("content"), self.name))


class OpenAIProvider(HttpProvider):
    """OpenAI-compatible chat completions with a ``json_schema`` response format."""

    kind = "openai"
    path = "/v1/chat/completions"

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}

    def _complete(self, system: str, user: str, schema: Mapping[str, Any], tool: str) -> Any:
        body = self._post({
            "model": self._model, "temperature": 0, "max_tokens": self._max_tokens,
            "messages": [{"role": "system", "content": system},
                         {"role": "user", "content": user}],
            "response_format": {"type": "json_schema",
                                "json_schema": {"name": tool, "schema": schema}},
        })
        choices = body.get("choices") if isinstance(body, Mapping) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            raise ProviderOutputInvalid(f"{self.name}: no choices in the response",
                                        provider=self.name)
        if choices[0].get("finish_reason") == "length":
            raise ProviderOutputInvalid(f"{self.name}: the answer was truncated",
                                        provider=self.name)
        message = _field(choices[0], "message", self.name)
        if message.get("refusal"):
            raise ProviderOutputInvalid(f"{self.name}: the model refused", provider=self.name)
        return parse_json(_text(message.get("content"), self.name))


class AnthropicProvider(HttpProvider):
    """Anthropic's Messages API, the schema enforced as a forced tool call."""

    kind = "anthropic"
    path = "/v1/messages"

    def _headers(self) -> dict[str, str]:
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers

    def _complete(self, system: str, user: str, schema: Mapping[str, Any], tool: str) -> Any:
        body = self._post({
            "model": self._model, "max_tokens": self._max_tokens, "system": system,
            "messages": [{"role": "user", "content": user}],
            "tools": [{"name": tool, "description": "Record the structured answer.",
                       "input_schema": schema}],
            "tool_choice": {"type": "tool", "name": tool},
        })
        if not isinstance(body, Mapping) or not isinstance(body.get("content"), list):
            raise ProviderOutputInvalid(f"{self.name}: no content in the response",
                                        provider=self.name)
        if body.get("stop_reason") == "max_tokens":
            raise ProviderOutputInvalid(f"{self.name}: the answer was truncated",
                                        provider=self.name)
        for block in body["content"]:
            if isinstance(block, Mapping) and block.get("type") == "tool_use":
                return block.get("input")
        raise ProviderOutputInvalid(f"{self.name}: no tool_use block in the response",
                                    provider=self.name)


PROVIDERS: dict[str, type[HttpProvider]] = {
    "ollama": OllamaProvider, "openai": OpenAIProvider, "anthropic": AnthropicProvider,
}


def _field(body: Any, name: str, provider: str) -> Mapping[str, Any]:
    value = body.get(name) if isinstance(body, Mapping) else None
    if not isinstance(value, Mapping):
        raise ProviderOutputInvalid(f"{provider}: no '{name}' object in the response",
                                    provider=provider)
    return value


def _text(value: Any, provider: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ProviderOutputInvalid(f"{provider}: empty answer", provider=provider)
    return value


def _retry_after(response: httpx.Response) -> float:
    """Seconds to wait: ``retry-after`` (or ``retry-after-ms``); 1 s if absent or unreadable."""
    millis = response.headers.get("retry-after-ms")
    seconds = response.headers.get("retry-after")
    try:
        if millis is not None:
            return max(0.0, float(millis) / 1000)
        if seconds is not None:
            return max(0.0, float(seconds))
    except ValueError:
        pass
    return 1.0


def _error_message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:200]
    error = body.get("error") if isinstance(body, Mapping) else None
    if isinstance(error, Mapping):
        return str(error.get("message", ""))[:200]
    return str(error or body)[:200]


def _restore(data: Any, sent: Redacted) -> Any:
    """Put redacted secrets back into every string of a parsed answer, locally."""
    if not sent.placeholders:
        return data
    if isinstance(data, str):
        return sent.restore(data)
    if isinstance(data, list):
        return [_restore(item, sent) for item in data]
    if isinstance(data, Mapping):
        return {key: _restore(value, sent) for key, value in data.items()}
    return data
