"""A remember with the default mode (behind, decision 0051): it answers once the input is saved,
its pipeline runs right after in this process, and this process's reads see its decisions as
they would have after a ``sync`` remember."""

from __future__ import annotations

from strata_recall.domain.jobs import JobStatus
from strata_recall.domain.models import Filters, Lifecycle, Scope
from strata_recall.facade import Strata
from strata_recall.testing import FakeClock

SAID = [
    "I live in Lisbon.",
    "My manager is Rui.",
    "I moved from Lisbon to Porto in September.",
    "I prefer tea over coffee.",
    "I prefer tea to coffee.",
    "Actually my manager is Carla, not Rui.",
    "I like cilantro. I don't like cilantro.",
]
EVERY_STATE = Filters(lifecycles=tuple(lc for lc in Lifecycle if lc is not Lifecycle.DELETED))


def live_state(strata: Strata, scope: Scope) -> list[tuple[str, str, str | None]]:
    page = strata.list(scope=scope, filters=EVERY_STATE, limit=200)
    return sorted((m.content, m.lifecycle.value, m.subject) for m in page.items)


def test_default_remembers_answer_queued_and_reads_see_what_sync_ones_would(
        strata: Strata) -> None:
    by_default, waited = Scope("t", user="ana"), Scope("t", user="bo")
    answers = [strata.remember(text, scope=by_default) for text in SAID]
    for text in SAID:
        assert strata.remember(text, scope=waited, mode="sync").status == "processed"
    assert {a.status for a in answers} == {"queued"}
    assert all(a.job_id for a in answers) and not any(a.derived_ids for a in answers)
    assert live_state(strata, by_default) == live_state(strata, waited)
    assert {strata.job(a.job_id or "").status for a in answers} == {JobStatus.DONE}
    top = strata.recall("Where does the user live?", scope=by_default).hits[0].memory
    assert "Porto" in top.content
    lisbon = strata.get(answers[0].memory_ids[0], scope=by_default)
    assert lisbon.lifecycle is Lifecycle.SUPERSEDED


def test_a_job_its_process_never_ran_is_left_to_workers_for_a_lease_then_run(
        strata: Strata, clock: FakeClock) -> None:
    scope = Scope("t", user="cy")
    strata.writer._behind.close()  # the process stops before its write-behind thread ran it
    answer = strata.remember("My phone number is 555 0199.", scope=scope)
    assert answer.status == "queued" and answer.job_id
    assert strata.work() == 0  # held back: this process was to run it
    clock.advance(seconds=strata.settings.job_lease_s)
    assert strata.work() >= 1  # the extract job (and the graph job it enqueues)
    job = strata.job(answer.job_id)
    assert job.status is JobStatus.DONE and job.result and job.result.get("memory_ids")
