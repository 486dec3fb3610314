"""The retrieval ladder ([001] B): auto level, ``more``, reroll, witness slices, and the rule
that a caller is never handed the same context twice."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from strata_recall.domain.compression.escalation_rules import (
    Escalation,
    Source,
    auto_rung,
    build_ladder,
    more,
    parse_level,
    parse_witness,
    rerolled,
    serve,
    slice_events,
)
from strata_recall.domain.compression.representations import (
    Bullet,
    DerivationKind,
    Level,
    MemoryVersion,
    Section,
    Witness,
)
from strata_recall.domain.models import Event, Memory, MemoryType, Provenance, Scope
from strata_recall.errors import InvalidInput, NotFound

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TEXTS = ("Alice: we ship on Friday.", "Bob: the build is green.", "Alice: Friday it is.")


def events(conversation: str = "c1") -> list[Event]:
    return [Event(id=f"e{i}", scope=Scope(), conversation_id=conversation, seq=i + 1,
                  ts=T0 + timedelta(minutes=i), text=text.split(": ", 1)[1],
                  content_hash=str(i), author=text.split(":")[0])
            for i, text in enumerate(TEXTS)]


def memory(active: str | None = None, content: str = "\n".join(TEXTS)) -> Memory:
    return Memory(id="m1", scope=Scope(), type=MemoryType.EPISODIC, content=content,
                  content_hash="h", created_at=T0, updated_at=T0,
                  provenance=Provenance(event_ids=("e0", "e1", "e2")),
                  active_version_id=active)


def version(vid: str, level: Level, content: str, *, witnesses: tuple[Witness, ...] = (),
            minutes: int = 0) -> MemoryVersion:
    sections = (Section("Summary", (Bullet(content, witnesses),)),) if witnesses else ()
    kind = {Level.R1: DerivationKind.TRACE, Level.R3: DerivationKind.SUMMARIZE,
            Level.R4: DerivationKind.NORMALIZE}[level]
    return MemoryVersion(id=vid, memory_id="m1", level=level, kind=kind, content=content,
                         created_at=T0 + timedelta(minutes=minutes), sections=sections)


def compressed(r4_text: str = "we ship on Friday. the build is green. Friday it is.",
               ) -> tuple[Memory, list[MemoryVersion]]:
    versions = [
        version("v4", Level.R4, r4_text),
        version("v3", Level.R3, "- ship Friday", witnesses=(Witness(event_id="e0"),
                                                            Witness(event_id="e2"))),
        version("v1", Level.R1, "ship friday"),
    ]
    return memory(active="v3"), versions


def test_a_memory_without_versions_is_served_by_its_content_then_its_raw_events() -> None:
    plain = memory()
    ladder = build_ladder(plain, [], events())
    assert [(r.level, r.source) for r in ladder] == [(Level.R4, Source.CONTENT),
                                                     (Level.R5, Source.EVENTS)]
    assert auto_rung(plain, ladder).content == plain.content
    top = more(plain, ladder)
    assert top is not None and [e.id for e in top.events] == ["e0", "e1", "e2"]
    assert more(plain, ladder, Level.R5) is None


def test_the_auto_level_is_the_active_version_and_more_climbs_r3_r4_r5() -> None:
    mem, versions = compressed()
    ladder = build_ladder(mem, versions, events())
    assert [r.level for r in ladder] == [Level.R1, Level.R3, Level.R4, Level.R5]
    served = serve(mem, ladder, "auto")
    assert served.level is Level.R3 and served.next_level is Level.R4
    assert serve(mem, ladder, "more").level is Level.R4
    top = serve(mem, ladder, "more", have="R4")
    assert top.level is Level.R5 and not top.has_more
    assert serve(mem, ladder, "more", have="R1").level is Level.R3
    with pytest.raises(NotFound):
        serve(mem, ladder, "more", have="R5")


def test_r5_is_exactly_the_witnessed_slice_in_thread_order() -> None:
    mem, versions = compressed()
    top = build_ladder(mem, versions, list(reversed(events())))[-1]
    assert [e.id for e in top.events] == ["e0", "e2"]
    assert top.content.splitlines()[0].startswith("[c1#1] Alice")
    assert top.inline.startswith("[c1#1] Alice") and "\n" not in top.inline


def test_each_step_up_holds_more_tokens_or_more_events() -> None:
    mem, versions = compressed()
    ladder = build_ladder(mem, versions, events())
    steps = [rerolled(mem, ladder, n) for n in range(3)]
    assert [s.level for s in steps] == [Level.R3, Level.R4, Level.R5]
    assert steps[0].tokens < steps[1].tokens
    assert len(steps[2].events) > len(steps[1].events)


def test_reroll_never_serves_the_same_context_twice() -> None:
    """R4 equal to R3's text is skipped: reroll 1 goes straight to the raw evidence."""
    mem, versions = compressed(r4_text="- ship   Friday")
    ladder = build_ladder(mem, versions, events())
    served = [rerolled(mem, ladder, n) for n in range(4)]
    assert [s.level for s in served] == [Level.R3, Level.R5, Level.R5, Level.R5]
    assert not served[0].same_context(served[1])
    assert serve(mem, ladder, "more").level is Level.R5


def test_reroll_from_content_equal_to_the_clean_log_steps_to_evidence() -> None:
    plain = memory()
    ladder = build_ladder(plain, [version("v4", Level.R4, plain.content)], events())
    assert [rerolled(plain, ladder, n).level for n in range(3)] == [
        Level.R4, Level.R5, Level.R5]


def test_the_newest_version_of_a_level_is_served_unless_another_is_active() -> None:
    mem, versions = compressed()
    newer = version("v3b", Level.R3, "- newer", minutes=5)
    assert serve(mem, build_ladder(mem, [*versions, newer], events()), "R3").version_id \
        == versions[1].id
    assert serve(memory(), build_ladder(memory(), [*versions, newer], events()),
                 "R3").version_id == newer.id


def test_a_level_the_memory_lacks_is_not_found_and_bad_names_are_invalid() -> None:
    plain = memory()
    ladder = build_ladder(plain, [], events())
    with pytest.raises(NotFound):
        serve(plain, ladder, "R3")
    for bad in ("R2", "R9", "more-ish", ""):
        with pytest.raises(InvalidInput):
            parse_level(bad)
    assert parse_level("r3") is Level.R3 and parse_level(5) is Level.R5


def test_witness_slices_by_event_id_and_seq_range() -> None:
    log = events()
    assert [e.id for e in slice_events(log, [parse_witness("e1")])] == ["e1"]
    assert [e.id for e in slice_events(log, [parse_witness("c1:2-3")])] == ["e1", "e2"]
    assert [e.id for e in slice_events(log, [parse_witness("c1:3")])] == ["e2"]
    assert slice_events(log, [parse_witness("other:1-3")]) == ()
    assert parse_witness({"event_id": "e1"}) == Witness(event_id="e1")
    for bad in ("c1:x-3", "c1:3-1", "   "):
        with pytest.raises(InvalidInput):
            parse_witness(bad)


def test_escalation_modes_are_the_two_of_the_spec() -> None:
    assert {m.value for m in Escalation} == {"auto", "ask"}
