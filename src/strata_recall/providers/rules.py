"""The built-in rule-based provider: deterministic English extraction and decisions.

Extraction is ``strata_recall.domain.english``: each clause is read into a holder (the user, a named
person, the team), an attribute and a value, with its tense, negation, change and hedge cues;
``strata_recall.domain.slots`` turns holder and attribute into the slot key decisions compare.
A declarative clause no rule reads is kept as a casual mention (importance 3) without a slot;
chit-chat and questions give nothing. Importance follows the scale of [002]; "remember this"
gives 10 and pins the fact.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import lru_cache

from strata_recall.domain.decisions import Candidate, Decision, decide
from strata_recall.domain.english import Statement, is_chatter, read_text, third_person
from strata_recall.providers.base import (
    Capabilities,
    ExtractedFact,
    Extraction,
    Relation,
    Reliability,
)

__all__ = ["PROMPT_VERSION", "RuleBasedProvider", "extract_facts", "is_chatter", "third_person"]

PROMPT_VERSION = "rules-2"
#: Readings kept, by text and role: a remembered turn is read up to three times on the write
#: path (its own-words fact, its extract job, its graph), each time to the same answer.
READINGS_CACHED = 1024
#: Longer texts (documents) are read once each and not kept.
CACHED_TEXT_MAX_CHARS = 2000


def to_fact(statement: Statement) -> ExtractedFact:
    """The provider-port shape of one read statement."""
    relations: tuple[Relation, ...] = ()
    if statement.attribute is not None and statement.value in statement.entities:
        source = statement.entities[0] if statement.holder != "project" else "User"
        relations = (Relation(source, statement.attribute, statement.value,
                              statement.confidence),)
    return ExtractedFact(
        content=statement.content, type=statement.kind, subject=statement.slot,
        importance=statement.importance, confidence=statement.confidence,
        entities=statement.entities, relations=relations, pinned=statement.pinned,
        value=statement.value, negated=statement.negated,
        explicit_change=statement.explicit_change, hedged=statement.hedged,
        holder=statement.holder if statement.attribute is not None else None,
        attribute=statement.attribute, tense=statement.tense,
    )


def extract_facts(text: str, role: str = "user") -> tuple[ExtractedFact, ...]:
    """The facts of one turn said by ``role``: in an assistant turn "you" is the user and the
    assistant's own "I" statements are skipped (see ``strata_recall.domain.english``). The
    reading is pure and its facts frozen, so a short text's reading is kept and shared."""
    if len(text) > CACHED_TEXT_MAX_CHARS:
        return _read_facts(text, role)
    return _read_facts_cached(text, role)


def _read_facts(text: str, role: str) -> tuple[ExtractedFact, ...]:
    return tuple(to_fact(s) for s in read_text(text, role))


_read_facts_cached = lru_cache(maxsize=READINGS_CACHED)(_read_facts)


class RuleBasedProvider:
    """Deterministic, local, English. The default provider and the last fallback."""

    name = "rules"
    model: str | None = None
    prompt_version: str | None = PROMPT_VERSION
    capabilities = Capabilities(structured_output=Reliability.EXACT, timeout_s=1.0,
                                max_input_chars=100_000, remote=False)

    def __init__(self, now: Callable[[], datetime] | None = None) -> None:
        self._now = now or (lambda: datetime.now(UTC))

    def extract(self, text: str) -> Extraction:
        facts = extract_facts(text)
        entities = tuple(dict.fromkeys(e for f in facts for e in f.entities))
        relations = tuple(r for f in facts for r in f.relations)
        return Extraction(facts=facts, entities=entities, relations=relations,
                          provider=self.name, prompt_version=self.prompt_version)

    def decide(self, fact: ExtractedFact, candidates: Sequence[Candidate]) -> Decision:
        return decide(fact.view, candidates, self._now())
