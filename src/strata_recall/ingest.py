"""The write path's pure half: validate a remember request and turn it into events and drafts.

``Extractor`` is the seam where fact extraction plugs in later; today the built-in
``VerbatimExtractor`` derives one memory per event, holding the event's text as it was said.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from strata_recall.domain.chatter import ASSISTANT_ROLES, is_chatter, is_echo
from strata_recall.domain.ids import new_id
from strata_recall.domain.lifecycle import check_importance, check_tags, check_text, check_type
from strata_recall.domain.models import Event, Memory, MemoryType, Provenance, Scope
from strata_recall.domain.secrets import SECRETS_KEY, marked, masked
from strata_recall.domain.tagging import kind_type
from strata_recall.domain.text import content_hash, search_text
from strata_recall.domain.validation import check_json, check_time, check_unicode
from strata_recall.errors import InvalidInput

MAX_META_BYTES = 16_384
MAX_NAME_CHARS = 200


@dataclass(frozen=True, slots=True)
class Message:
    content: str
    role: str | None = None
    author: str | None = None
    ts: datetime | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RememberRequest:
    """A validated remember call."""

    scope: Scope
    messages: tuple[Message, ...]
    type: MemoryType
    importance: float
    pinned: bool
    tags: tuple[str, ...]
    conversation_id: str
    idempotency_key: str | None

    def fingerprint(self) -> str:
        """A hash of everything but the key, to tell a replay from a reuse of the key."""
        body = {
            "scope": self.scope.to_dict(),
            "messages": [
                [m.content, m.role, m.author, m.ts.isoformat() if m.ts else None, dict(m.meta)]
                for m in self.messages
            ],
            "type": self.type.value,
            "importance": self.importance,
            "pinned": self.pinned,
            "tags": list(self.tags),
            "conversation_id": self.conversation_id,
        }
        return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Draft:
    """A memory the extractor proposes, before ids, vectors and timestamps."""

    content: str
    event_index: int
    subject: str | None = None


class Extractor(Protocol):
    name: str

    def extract(self, events: Sequence[Event]) -> list[Draft]: ...


class VerbatimExtractor:
    """One memory per event, with the event's text as it was."""

    name = "verbatim"

    def extract(self, events: Sequence[Event]) -> list[Draft]:
        return [
            Draft(content=event.text, event_index=i, subject=event.author)
            for i, event in enumerate(events)
        ]


class TurnExtractor(VerbatimExtractor):
    """One memory per event that says something: chit-chat and acknowledgements stay in the
    raw log (and in the episode's text) but are no memory of their own."""

    def extract(self, events: Sequence[Event]) -> list[Draft]:
        return [d for d in super().extract(events) if not _says_nothing(events, d.event_index)]


def _says_nothing(events: Sequence[Event], index: int) -> bool:
    """Chit-chat, or an acknowledgement that only repeats the turn before it."""
    event = events[index]
    previous = events[index - 1].text if index else None
    return is_chatter(event.text, event.role) or is_echo(event.text, previous, event.role)


def parse_request(
    *,
    text: str | None,
    messages: Sequence[Mapping[str, Any]] | None,
    scope: Scope | Mapping[str, Any] | str | None,
    type: MemoryType | str | None,
    importance: float | None,
    pinned: bool,
    tags: Sequence[str],
    conversation_id: str | None,
    author: str | None,
    meta: Mapping[str, Any] | None,
    idempotency_key: str | None,
    max_chars: int,
    max_messages: int,
) -> RememberRequest:
    if (text is None) == (messages is None):
        raise InvalidInput("give exactly one of text or messages")
    parsed_scope = Scope.parse(scope)
    base_meta = _check_meta(meta)
    items: tuple[Message, ...]
    if text is not None:
        items = (Message(check_text(text, max_chars=max_chars), author=_name(author, "author"),
                         meta=base_meta),)
    else:
        items = _parse_messages(messages or (), max_chars, max_messages, author, base_meta)
    if not isinstance(pinned, bool):
        raise InvalidInput("pinned must be true or false")
    if idempotency_key is not None and (
        not isinstance(idempotency_key, str) or not 0 < len(idempotency_key) <= 200
    ):
        raise InvalidInput("idempotency_key must be a string of 1-200 characters")
    checked_tags = check_tags(tags)
    if type is None:  # not given: a kind: tag says it, else a verbatim record of what was said
        type = kind_type(checked_tags) or MemoryType.EPISODIC
    return RememberRequest(
        scope=parsed_scope,
        messages=items,
        type=check_type(type, parsed_scope),
        importance=check_importance(importance if importance is not None else 0.5) or 0.0,
        pinned=pinned,
        tags=checked_tags,
        conversation_id=_name(conversation_id, "conversation_id") or "default",
        idempotency_key=idempotency_key,
    )


def _parse_messages(
    messages: Sequence[Mapping[str, Any]],
    max_chars: int,
    max_messages: int,
    author: str | None,
    base_meta: Mapping[str, Any],
) -> tuple[Message, ...]:
    if not isinstance(messages, list | tuple) or not messages:
        raise InvalidInput("messages must be a non-empty list of {role, content, ts?, meta?}")
    if len(messages) > max_messages:
        raise InvalidInput(f"at most {max_messages} messages per call", count=len(messages))
    parsed = []
    for i, raw in enumerate(messages):
        if not isinstance(raw, Mapping):
            raise InvalidInput(f"messages[{i}] must be an object")
        unknown = set(raw) - {"role", "content", "ts", "meta", "author", "name"}
        if unknown:
            raise InvalidInput(f"messages[{i}] has unknown fields {sorted(unknown)}")
        parsed.append(Message(
            content=check_text(raw.get("content"), max_chars=max_chars,
                               field=f"messages[{i}].content"),
            role=_name(raw.get("role"), f"messages[{i}].role"),
            author=_name(raw.get("author") or raw.get("name") or author, f"messages[{i}].author"),
            ts=_parse_ts(raw.get("ts"), i),
            meta={**base_meta, **_check_meta(raw.get("meta"))},
        ))
    return tuple(parsed)


def build_events(request: RememberRequest, now: datetime) -> list[Event]:
    return [
        Event(
            id=new_id(), scope=request.scope, conversation_id=request.conversation_id, seq=0,
            ts=message.ts or now, text=message.content, content_hash=content_hash(message.content),
            author=message.author, role=message.role, meta=marked(message.meta, message.content),
        )
        for message in request.messages
    ]


def build_memories(
    request: RememberRequest, events: Sequence[Event], drafts: Sequence[Draft],
    extractor: str, now: datetime,
) -> list[Memory]:
    memories = []
    for draft in drafts:
        event = events[draft.event_index]
        memories.append(Memory(
            id=new_id(), scope=request.scope, type=request.type, content=draft.content,
            content_hash=content_hash(draft.content), created_at=now, updated_at=now,
            importance=request.importance, pinned=request.pinned, subject=draft.subject,
            conversation_id=request.conversation_id, tags=request.tags,
            provenance=Provenance(event_ids=(event.id,), extractor=extractor),
            valid_from=event.ts, meta=_memory_meta(draft, event),
        ))
    return memories


def _memory_meta(draft: Draft, event: Event) -> dict[str, Any]:
    """The speaker, and the secrets mark: the event's when the draft is its text verbatim."""
    meta: dict[str, Any] = {"speaker": event.author} if event.author else {}
    if (event.role or "").casefold() in ASSISTANT_ROLES:  # recall ranks the user's words first
        meta["role"] = "assistant"
    if draft.content != event.text:
        return marked(meta, draft.content)
    kinds = event.meta.get(SECRETS_KEY)
    return {**meta, SECRETS_KEY: kinds} if kinds else meta


def _name(value: object, field: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME_CHARS:
        raise InvalidInput(f"{field} must be a non-empty string of ≤ {MAX_NAME_CHARS} chars")
    return check_unicode(value, field)


def _check_meta(meta: object) -> dict[str, Any]:
    if meta is None:
        return {}
    if not isinstance(meta, Mapping):
        raise InvalidInput("meta must be an object")
    check_json(meta, "meta")  # before encoding: finite, valid Unicode, not too deep
    try:
        encoded = json.dumps(meta)
    except (TypeError, ValueError) as exc:
        raise InvalidInput("meta must be JSON-serialisable") from exc
    if len(encoded) > MAX_META_BYTES:
        raise InvalidInput(f"meta is larger than {MAX_META_BYTES} bytes")
    return dict(meta)


def _parse_ts(value: object, index: int) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            raise InvalidInput(f"messages[{index}].ts is not an ISO 8601 time") from exc
    else:
        raise InvalidInput(f"messages[{index}].ts must be an ISO 8601 string")
    return check_time(parsed, f"messages[{index}].ts")


#: Memories summarising one ``remember(messages=...)`` call carry this tag (and meta kind).
EPISODE_TAG = "episode"
#: The meta key of a turn that names the episode it is a line of.
EPISODE_KEY = "episode"


def is_question(text: str) -> bool:
    return "?" in text


def memory_search_text(
    content: str, event: Event | None, previous: Event | None = None,
    following: Event | None = None, *, analyse: Callable[[str], str] = search_text,
) -> str:
    """What lexical search indexes for a memory: who said it, its content; when the turn
    before was a question, that question (an answer is found by the words it answers); when
    this turn is a statement, the reply to it (replies echo what they respond to).
    ``analyse``: ``search_text``, or a paced equivalent (``pacing.paced_search_text``)."""
    parts = [event.author or "" if event is not None else "", content]
    if previous is not None and is_question(previous.text):
        parts.append(previous.text)
    if following is not None and not is_question(content):
        parts.append(following.text)
    return search_text(" ".join(p for p in parts if p))


#: Turns within this distance in the same remember are a memory's neighbours (``meta.near``).
NEIGHBOUR_DISTANCE = 2


def with_neighbours(memories: Sequence[Memory], drafts: Sequence[Draft]) -> list[Memory]:
    """Each turn memory with the ids of the turns around it in the same exchange, nearest
    first, so recall can bring a hit's context along."""
    by_event = {d.event_index: m.id for m, d in zip(memories, drafts, strict=True)}
    out = []
    for memory, draft in zip(memories, drafts, strict=True):
        near = [by_event[draft.event_index + step * sign]
                for step in range(1, NEIGHBOUR_DISTANCE + 1) for sign in (-1, 1)
                if draft.event_index + step * sign in by_event]
        out.append(memory.evolve(meta={**memory.meta, "near": near}) if near else memory)
    return out


def memory_embedding_text(content: str, event: Event | None, previous: Event | None = None) -> str:
    """What the embedder sees: the turn with its speaker, after the turn it replies to."""
    line = f"{event.author}: {content}" if event is not None and event.author else content
    if previous is None:
        return line
    before = f"{previous.author}: {previous.text}" if previous.author else previous.text
    return f"{before}\n{line}"


def indexed_texts(memory: Memory, source: Event | None) -> tuple[str, str]:
    """What the embedder and the lexical index see of ``memory``'s content as ``source``
    said it (a rewritten turn, an edited memory): secrets masked in both."""
    shown = masked(memory).content
    said = masked(source) if source is not None else None
    return memory_embedding_text(shown, said), memory_search_text(shown, said)


def episode_parts(meta: Mapping[str, Any]) -> list[str]:
    """The turn memories an episode holds (``meta.parts``, as ``build_episode`` wrote it)."""
    parts = meta.get("parts", [])
    return [p for p in parts if isinstance(p, str)] if isinstance(parts, list) else []


def episode_line(event: Event) -> str:
    """An event's text as its episode holds it: masked, after its speaker's name."""
    said = masked(event)
    return f"{said.author}: {said.text}" if said.author else said.text


def build_episode(
    request: RememberRequest, events: Sequence[Event], parts: Sequence[Memory], now: datetime,
    id_: str | None = None,
) -> Memory:
    """One episodic memory for a multi-message remember: the whole exchange, so that recall
    can score a session as a unit and pass the score on to its turns (``meta.parts``). Derived:
    secrets in the events are masked."""
    content = "\n".join(episode_line(e) for e in events)
    return Memory(
        id=id_ or new_id(), scope=request.scope, type=MemoryType.EPISODIC, content=content,
        content_hash=content_hash(content), created_at=now, updated_at=now,
        importance=request.importance, conversation_id=request.conversation_id,
        tags=(EPISODE_TAG,), provenance=Provenance(event_ids=tuple(e.id for e in events),
                                                   extractor="episode"),
        valid_from=events[0].ts, meta={"kind": EPISODE_TAG, "parts": [m.id for m in parts]},
    )
