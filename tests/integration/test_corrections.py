"""A correction stays made (issue 13): what recall injects after a modify is the current
content, whatever is derived later; forgetting a memory forgets its derived copies."""

from __future__ import annotations

from pathlib import Path

from strata_recall.domain.models import Filters, Lifecycle, Scope
from strata_recall.facade import Strata
from strata_recall.ports import Store
from strata_recall.settings import load_settings
from strata_recall.testing import FakeClock
from tests.conftest import EMBEDDER

A = Scope("t", user="ana")


def facade(store: Store, clock: FakeClock, review: str = "off") -> Strata:
    return Strata(store, EMBEDDER, clock=clock, settings=load_settings(
        home=Path("/nonexistent"), review_mode=review))


def test_compress_after_a_modify_injects_the_corrected_content_back_as_the_old_one(
    store: Store, clock: FakeClock
) -> None:
    strata = facade(store, clock)
    lisbon = strata.remember("I live in Lisbon.", scope=A, raw=True).memory_ids[0]
    strata.compress(lisbon, reason="first", scope=A)
    strata.modify(lisbon, reason="moved", content="I live in Porto.", scope=A)
    strata.compress(lisbon, reason="again", scope=A)
    result = strata.recall("where do I live", scope=A)
    assert lisbon in result.context_memory_ids
    assert "Porto" in result.context and "Lisbon" not in result.context
    for rung in ("R4", "R3", "R1"):
        leveled = strata.get(lisbon, scope=A, level=rung)
        assert "Lisbon" not in leveled.served.content, rung


def test_forget_by_query_leaves_a_forgotten_phone_number_in_a_derived_fact(
    store: Store, clock: FakeClock
) -> None:
    strata = facade(store, clock)
    said = strata.remember("My phone number is 555 0199.", scope=A, mode="sync")
    assert said.derived_ids, "the rules derive a fact from it"
    preview = strata.forget_preview("phone number 555 0199", scope=A)
    chosen = [c.memory.id for c in preview.candidates if c.memory.id in said.memory_ids]
    strata.forget_execute(chosen, preview_token=preview.preview_token, reason="privacy",
                          scope=A, confirm_token=preview.confirm_token)
    kept = tuple(c for c in Lifecycle if c is not Lifecycle.DELETED)
    left = strata.list(scope=A, filters=Filters(lifecycles=kept)).items
    assert not [m for m in left if "555" in m.content], "a derived copy kept the number"
    assert "555" not in strata.recall("phone number", scope=A).context
