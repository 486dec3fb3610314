"""Validation of a model's answers ([003] §11.1-11.2): nothing unchecked reaches the store.

An extraction that is not the expected shape at all raises ``ProviderOutputInvalid`` (the
pipeline then falls back, at worst to a raw save). Inside a well-formed answer, single bad
facts (empty, trivial, too long, unknown type) are dropped or repaired and reported as warnings;
the count is capped. A decision whose target is not one of the offered candidates is discarded.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from strata_recall.domain.decisions import Action, Candidate, Decision
from strata_recall.domain.english import is_chatter, past_attribute
from strata_recall.domain.models import MemoryType
from strata_recall.domain.slots import is_single_valued, slot_key
from strata_recall.domain.text import keywords
from strata_recall.errors import ProviderOutputInvalid
from strata_recall.providers.base import ExtractedFact, Extraction, Relation

MAX_FACTS = 20
MAX_FACT_CHARS = 500
MAX_REASON_CHARS = 300
MIN_IMPORTANCE = 3  # [002]: below 3 is small talk, not stored
_SUBJECT = re.compile(r"^[a-z0-9_]+(?::[a-z0-9_]+)?(?:\.[a-z0-9_]+){0,5}$")
_HOLDER = re.compile(r"^(?:user|project|(?:person|topic):[a-z0-9_]+)$")
_ATTRIBUTE = re.compile(r"^[a-z][a-z0-9_]{0,60}$")
_TENSES = ("past", "present", "future")


def parse_json(text: str) -> Any:
    """The JSON object in a model's text, tolerating a Markdown code fence around it."""
    stripped = text.strip()
    fenced = re.match(r"^```(?:json)?\s*([\s\S]*?)\s*```$", stripped)
    if fenced:
        stripped = fenced.group(1)
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as exc:
        raise ProviderOutputInvalid(f"the answer is not valid JSON: {exc.msg}",
                                    position=exc.pos) from exc


def validate_extraction(
    data: Any, *, provider: str, model: str | None, prompt_version: str | None
) -> Extraction:
    if not isinstance(data, Mapping) or not isinstance(data.get("facts"), list):
        raise ProviderOutputInvalid("extraction must be an object with a 'facts' list")
    warnings: list[str] = [str(w)[:200] for w in data.get("warnings") or []
                           if isinstance(w, str)]
    raw_facts = data["facts"]
    if len(raw_facts) > MAX_FACTS:
        warnings.append(f"{len(raw_facts)} facts; kept the first {MAX_FACTS}")
        raw_facts = raw_facts[:MAX_FACTS]
    facts = []
    for index, raw in enumerate(raw_facts):
        fact = _fact(raw, index, warnings)
        if fact is not None:
            facts.append(fact)
    relations = tuple(r for r in (_relation(x) for x in data.get("relations") or []) if r)
    entities = tuple(dict.fromkeys(e.strip() for e in data.get("entities") or []
                                   if isinstance(e, str) and e.strip()))
    return Extraction(tuple(facts), entities, relations, tuple(warnings), provider, model,
                      prompt_version)


def _fact(raw: Any, index: int, warnings: list[str]) -> ExtractedFact | None:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("content"), str):
        raise ProviderOutputInvalid(f"facts[{index}] has no string 'content'")
    content = " ".join(raw["content"].split())
    if not content or is_chatter(content) or not keywords(content):
        warnings.append(f"facts[{index}] rejected: empty or trivial")
        return None
    if len(content) > MAX_FACT_CHARS:
        warnings.append(f"facts[{index}] rejected: longer than {MAX_FACT_CHARS} characters")
        return None
    importance = _number(raw.get("importance", 5), index, "importance")
    if not 1 <= importance <= 10:
        raise ProviderOutputInvalid(f"facts[{index}].importance must be 1-10")
    if importance < MIN_IMPORTANCE:
        warnings.append(f"facts[{index}] rejected: importance {importance:g} < {MIN_IMPORTANCE}")
        return None
    confidence = _number(raw.get("confidence", 0.8), index, "confidence")
    if not 0 <= confidence <= 1:
        raise ProviderOutputInvalid(f"facts[{index}].confidence must be 0-1")
    value = _text(raw.get("value"))
    holder, attribute, tense = _slot_parts(raw, value)
    subject = (slot_key(holder, attribute, value) if holder and attribute and value
               else _subject(raw.get("subject"), index, warnings))
    return ExtractedFact(
        content=content, type=_type(raw.get("type"), index, warnings),
        subject=subject, importance=round(importance),
        confidence=confidence, value=value,
        pinned=raw.get("pinned") is True, negated=raw.get("negated") is True,
        explicit_change=raw.get("explicit_change") is True, hedged=raw.get("hedged") is True,
        entities=tuple(e for e in raw.get("entities") or [] if isinstance(e, str)),
        holder=holder, attribute=attribute, tense=tense,
    )


def _slot_parts(raw: Mapping[str, Any], value: str | None) -> tuple[str | None, str | None, str]:
    """holder, attribute and tense as the rule-based extractor fills them; a past claim of a
    single-valued attribute is moved to its past attribute (lives_in → lived_in), so it can
    never replace the current value."""
    holder, attribute, tense = raw.get("holder"), raw.get("attribute"), raw.get("tense")
    tense = tense if tense in _TENSES else "present"
    if not (isinstance(holder, str) and _HOLDER.match(holder.strip().lower())
            and isinstance(attribute, str) and _ATTRIBUTE.match(attribute.strip().lower())
            and value):
        return None, None, tense
    attribute = attribute.strip().lower()
    if tense == "past" and is_single_valued(attribute):
        attribute = past_attribute(attribute, None)
    return holder.strip().lower(), attribute, tense


def _number(value: Any, index: int, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ProviderOutputInvalid(f"facts[{index}].{name} must be a number")
    return float(value)


def _type(value: Any, index: int, warnings: list[str]) -> str:
    try:
        return MemoryType(value).value
    except ValueError:
        warnings.append(f"facts[{index}]: unknown type {value!r}; stored as semantic")
        return MemoryType.SEMANTIC.value


def _subject(value: Any, index: int, warnings: list[str]) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) and _SUBJECT.match(value.strip().lower()):
        return value.strip().lower()
    warnings.append(f"facts[{index}]: subject {value!r} is not dot notation; dropped")
    return None


def _text(value: Any) -> str | None:
    return value.strip()[:MAX_FACT_CHARS] if isinstance(value, str) and value.strip() else None


def _relation(raw: Any) -> Relation | None:
    if not isinstance(raw, Mapping):
        return None
    parts = [raw.get(k) for k in ("source", "relationship", "target")]
    if not all(isinstance(p, str) and p.strip() for p in parts):
        return None
    confidence = raw.get("confidence", 0.8)
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        confidence = 0.8
    return Relation(str(parts[0]), str(parts[1]), str(parts[2]),
                    min(1.0, max(0.0, float(confidence))))


def validate_decision(
    data: Any, candidates: Sequence[Candidate], *, provider: str, model: str | None,
    prompt_version: str | None,
) -> Decision:
    """A model's decision; targets are the temp ids ("0", "1", ...) of ``candidates``."""
    if not isinstance(data, Mapping):
        raise ProviderOutputInvalid("decision must be a JSON object")
    try:
        action = Action(str(data.get("action", "")).upper())
    except ValueError as exc:
        raise ProviderOutputInvalid(f"unknown action {data.get('action')!r}") from exc
    ids = {str(i): c.id for i, c in enumerate(candidates)}
    target = data.get("target")
    target_id = ids.get(str(target)) if target is not None else None
    if action is not Action.ADD and target_id is None:
        raise ProviderOutputInvalid(f"{action.value} needs a valid candidate target",
                                    target=target)
    confidence = data.get("confidence", 0.5)
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not (
        0 <= confidence <= 1
    ):
        raise ProviderOutputInvalid("decision confidence must be a number 0-1")
    contradicts = tuple(ids[str(t)] for t in data.get("contradicts") or [] if str(t) in ids)
    return Decision(action, target_id if action is not Action.ADD else None,
                    str(data.get("reason", ""))[:MAX_REASON_CHARS], float(confidence),
                    contradicts, provider=provider, model=model, prompt_version=prompt_version)
