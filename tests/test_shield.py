"""The compaction shield through the facade, on every store adapter: two passes, provenance,
a summary, idempotency, the graph of the facts."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from strata_recall.domain.decisions import Candidate, Decision
from strata_recall.domain.lifecycle import Actor
from strata_recall.errors import IdempotencyMismatch, InvalidInput
from strata_recall.facade import Strata
from strata_recall.providers.base import Capabilities, ExtractedFact, Extraction, Provider, Relation
from strata_recall.providers.chain import ProviderChain
from strata_recall.providers.rules import RuleBasedProvider
from strata_recall.results import ShieldResult
from strata_recall.shield import CompactionShield

A = {"team": "a"}
TURNS = [
    {"role": "user", "author": "Alice",
     "content": "We use Postgres. My daughter Mia starts school on 3 September."},
    {"role": "assistant", "content": "Noted."},
]


class FirstSentenceOnly:
    """An extractor that sees only the first sentence of each message (a weak first pass)."""

    name = "first-sentence"
    model = None
    prompt_version = "test"
    capabilities = Capabilities()

    def extract(self, text: str) -> Extraction:
        first = text.split(". ")[0].rstrip(".")
        facts = RuleBasedProvider().extract(first).facts
        return Extraction(facts=facts, provider=self.name)

    def decide(self, fact: ExtractedFact, candidates: Sequence[Candidate]) -> Decision:
        raise NotImplementedError


def shield_with(strata: Strata, extractor: Provider) -> ShieldResult:
    chain = ProviderChain([extractor])
    return CompactionShield(strata, strata._clock.now, chain).run(
        TURNS, scope=A, conversation_id="c1", idempotency_key=None, actor=Actor())


def test_a_fact_the_first_pass_missed_is_caught_by_the_verification_pass(
    strata: Strata,
) -> None:
    result = shield_with(strata, FirstSentenceOnly())
    found = {f.content: f.found_by for f in result.facts}
    assert found == {"The team uses Postgres": "extraction",
                     "User's daughter Mia starts school on 3 September": "verification"}
    by_pass = {f.found_by: strata.get(f.memory_id, scope=A) for f in result.facts}
    caught = by_pass["verification"]
    assert caught.provenance.event_ids == (result.event_ids[0],)
    assert caught.provenance.extractor == "verification:verification"
    assert by_pass["extraction"].provenance.extractor == "first-sentence:extraction"
    assert caught.meta["shield_pass"] == "verification" and "shield" in caught.tags


def test_the_rule_based_shield_keeps_every_fact_a_summary_and_the_raw_events(
    strata: Strata,
) -> None:
    result = strata.shield(TURNS, scope=A, conversation_id="c1")
    contents = [f.content for f in result.facts]
    assert "The team uses Postgres" in contents
    assert any("Mia" in c and "September" in c for c in contents)
    assert len(contents) == len(set(contents))
    summary = strata.get(result.summary_id or "", scope=A)
    assert summary.type.value == "episodic" and "Mia starts school" in summary.content
    assert summary.provenance.event_ids == result.event_ids
    assert [e.text for e in strata.evidence(summary.id, scope=A)] == [t["content"] for t in TURNS]
    mia = [e for e in strata.graph_entities(scope=A) if e.canonical_name == "mia"]
    assert mia and mia[0].mentions >= 1  # the facts' entities are in the graph


def test_the_shield_is_idempotent_per_conversation_and_key(strata: Strata) -> None:
    first = strata.shield(TURNS, scope=A, conversation_id="c1", idempotency_key="k")
    events = strata.stats().events
    again = strata.shield(TURNS, scope=A, conversation_id="c1", idempotency_key="k")
    assert again.replayed and [f.memory_id for f in again.facts] == [
        f.memory_id for f in first.facts]
    assert again.summary_id == first.summary_id and strata.stats().events == events
    other = strata.shield(TURNS, scope=A, conversation_id="c2", idempotency_key="k")
    assert not other.replayed  # another conversation: another shield
    with pytest.raises(IdempotencyMismatch):
        strata.shield(TURNS[:1], scope=A, conversation_id="c1", idempotency_key="k")


def test_bad_input_changes_nothing(strata: Strata) -> None:
    for messages in ([], [{"content": ""}], [{"content": "x", "bogus": 1}]):
        with pytest.raises(InvalidInput):
            strata.shield(messages, scope=A)
    assert strata.stats().events == 0


def test_relations_from_the_extraction_reach_the_graph(strata: Strata) -> None:
    class WithRelation(FirstSentenceOnly):
        def extract(self, text: str) -> Extraction:
            fact = ExtractedFact(content=f"fact: {text}", entities=("Alice", "Acme"),
                                 relations=(Relation("Alice", "works at", "Acme"),))
            return Extraction(facts=(fact,), provider="stub")

    shield_with(strata, WithRelation())
    alice = next(e for e in strata.graph_entities(scope=A) if e.canonical_name == "alice")
    edges = strata.graph_neighbors(alice.id, scope=A).edges
    assert [e.relation for e in edges] == ["works_at"]


@pytest.mark.parametrize("review", ["capture_only", "all"])
def test_the_shield_facts_and_summary_ignore_review_mode(strata: Strata, review: str) -> None:
    from pathlib import Path

    from strata_recall.domain.models import Lifecycle
    from strata_recall.settings import load_settings

    held = Strata(strata.store, strata.embedder, clock=strata._clock, settings=load_settings(
        home=Path("/nonexistent"), review_mode=review))
    result = held.shield(TURNS, scope=A, conversation_id="c1")
    written = [*(f.memory_id for f in result.facts), result.summary_id or ""]
    assert {held.get(i, scope=A).lifecycle for i in written} == {Lifecycle.CANDIDATE}
    assert not held.recall("Postgres Mia school", scope=A).hits
