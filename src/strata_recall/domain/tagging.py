"""The typed tag contract of [000] chunk 10. Pure.

A tag whose prefix (before the first ``:``) names a known family is *typed* and must have a
value: ``kind:<k>``, ``topic:<t>``, ``source:<s>``, ``subject:person:<id>``,
``subject:user:<id>``. Any other tag is a plain (legacy) tag and is kept as it was written,
trimmed: it stays searchable exactly as before.

Normalising a typed tag: the family (and ``person`` / ``user`` of ``subject:``) is trimmed
and lower-cased, the value trimmed with inner whitespace collapsed to one space; a ``kind:``
value is lower-cased too (it is a small vocabulary that maps to a memory type), the other
values keep their case (names and ids). The whole list is deduplicated after normalising,
first occurrence first. A malformed typed tag is ``InvalidInput`` with ``details``
``{"field", "tag", "index"}``; nothing is written.

``kind:`` → memory type, used when a write gives tags but no explicit type (``KIND_TYPES``;
a memory type's own name is accepted as a kind too; an unknown kind is allowed and maps to
nothing). The first kind that maps wins.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from strata_recall.domain.models import MemoryType
from strata_recall.errors import InvalidInput

MAX_TAGS = 50
MAX_TAG_CHARS = 100
FAMILIES = frozenset({"kind", "topic", "subject", "source"})
SUBJECT_KINDS = frozenset({"person", "user"})
#: The kinds of [000] and the memory type each one means.
KIND_TYPES: dict[str, MemoryType] = {
    "fact": MemoryType.SEMANTIC,
    "preference": MemoryType.USER_PROFILE,
    "procedure": MemoryType.PROCEDURAL,
    "identity": MemoryType.IDENTITY,
    "event": MemoryType.EPISODIC,
    **{t.value: t for t in MemoryType},
}

_SPACES = re.compile(r"\s+")


def normalize_tags(tags: object, *, field: str = "tags") -> tuple[str, ...]:
    """Check, normalise and deduplicate a list of tags (see the module docstring)."""
    if isinstance(tags, str) or not isinstance(tags, Sequence):
        raise InvalidInput(f"{field} must be a list of strings, not one string"
                           if isinstance(tags, str) else f"{field} must be a list of strings",
                           field=field)
    if len(tags) > MAX_TAGS:
        raise InvalidInput(f"at most {MAX_TAGS} tags", field=field, count=len(tags))
    return tuple(dict.fromkeys(normalize_tag(tag, field=field, index=i)
                               for i, tag in enumerate(tags)))


def normalize_tag(tag: object, *, field: str = "tags", index: int = 0) -> str:
    """One tag, normalised; ``InvalidInput`` if it is not a tag or a malformed typed tag."""
    if not isinstance(tag, str) or not tag.strip() or len(tag.strip()) > MAX_TAG_CHARS:
        raise InvalidInput(f"each tag must be a non-empty string of ≤ {MAX_TAG_CHARS} chars",
                           field=field, index=index)
    family, colon, rest = tag.partition(":")
    family = family.strip().lower()
    if not colon or family not in FAMILIES:
        return tag.strip()
    if family == "subject":
        return _subject(tag, rest, field, index)
    value = _value(rest)
    if not value:
        raise InvalidInput(f"typed tag {family}: needs a value, e.g. '{family}:example'",
                           field=field, tag=tag, index=index)
    return f"{family}:{value.lower() if family == 'kind' else value}"


def _subject(tag: str, rest: str, field: str, index: int) -> str:
    kind, colon, value = rest.partition(":")
    kind, value = kind.strip().lower(), _value(value)
    if not colon or kind not in SUBJECT_KINDS or not value:
        raise InvalidInput("typed tag subject: must be 'subject:person:<id>' or "
                           "'subject:user:<id>'", field=field, tag=tag, index=index)
    return f"subject:{kind}:{value}"


def _value(raw: str) -> str:
    return _SPACES.sub(" ", raw).strip()


def values(tags: Iterable[str], family: str) -> list[str]:
    """The values of the (normalised) typed tags of ``family``, in order."""
    prefix = f"{family}:"
    return [t[len(prefix):] for t in tags if t.startswith(prefix)]


def kind_type(tags: Iterable[str]) -> MemoryType | None:
    """The memory type the first mappable ``kind:`` tag names, if any."""
    return next((KIND_TYPES[k] for k in values(tags, "kind") if k in KIND_TYPES), None)


def with_topic(tags: Sequence[str], topic: object, *, field: str = "topic"
               ) -> tuple[str, ...]:
    """``tags`` with ``topic:<topic>`` instead of any previous topic (one topic per memory)."""
    if not isinstance(topic, str) or not _value(topic):
        raise InvalidInput("topic must be a non-empty string", field=field)
    typed = normalize_tag(f"topic:{topic}", field=field)
    return tuple(dict.fromkeys((*(t for t in tags if not t.startswith("topic:")), typed)))
