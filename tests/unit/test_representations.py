"""The rule-based derivation of representation levels and its value types."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

import pytest

from strata_recall.domain.compression.representations import (
    Bullet,
    DerivationKind,
    Level,
    MemoryVersion,
    Section,
    Witness,
    derive_levels,
    normalize_text,
)
from strata_recall.domain.models import Event, Memory, MemoryType, Scope
from strata_recall.domain.text import content_hash
from strata_recall.errors import InvalidInput

NOW = datetime(2026, 1, 2, tzinfo=UTC)
SCOPE = Scope(team="t")


def _event(i: int, text: str, author: str = "ana") -> Event:
    return Event(id=f"e{i}", scope=SCOPE, conversation_id="c", seq=i, ts=NOW, text=text,
                 content_hash=content_hash(text), author=author)


def _memory(content: str, event_ids: tuple[str, ...] = ()) -> Memory:
    from strata_recall.domain.models import Provenance

    return Memory(id="m", scope=SCOPE, type=MemoryType.EPISODIC, content=content,
                  content_hash=content_hash(content), created_at=NOW, updated_at=NOW,
                  provenance=Provenance(event_ids=event_ids))


def _ids() -> object:
    counter = itertools.count(1)
    return lambda: f"v{next(counter)}"


def test_r3_bullets_are_the_informative_sentences_each_witnessed_by_its_event() -> None:
    events = [_event(1, "Hi!  How are you?"), _event(2, "I adopted a dog named Rex.", "bo"),
              _event(3, "I adopted a dog named Rex. He is a beagle.", "bo")]
    r4, r3, r1 = derive_levels(_memory("x", ("e1", "e2", "e3")), events, now=NOW,
                               new_id=_ids())  # type: ignore[arg-type]
    assert (r4.level, r3.level, r1.level) == (Level.R4, Level.R3, Level.R1)
    assert (r4.kind, r3.kind, r1.kind) == (
        DerivationKind.NORMALIZE, DerivationKind.SUMMARIZE, DerivationKind.TRACE)
    assert r4.content == "ana: Hi! How are you?\nbo: I adopted a dog named Rex.\n" \
        "bo: I adopted a dog named Rex. He is a beagle."
    [section] = r3.sections
    assert section.title == "bo"
    assert [(b.text, [w.event_id for w in b.witnesses]) for b in section.bullets] == [
        ("I adopted a dog named Rex.", ["e2"]), ("He is a beagle.", ["e3"])]
    assert r3.inline() == "I adopted a dog named Rex. He is a beagle."
    assert "rex" in r1.anchors and "dog" in r1.anchors
    assert r3.tokens < r4.tokens


def test_a_memory_without_events_summarises_its_content_without_witnesses() -> None:
    _, r3, _ = derive_levels(_memory("Thanks! The build uses Bazel now."), [], now=NOW,
                             new_id=_ids())  # type: ignore[arg-type]
    assert [b.text for b in r3.sections[0].bullets] == ["The build uses Bazel now."]
    assert r3.witnesses() == ()


def test_nothing_informative_keeps_the_clean_text_witnessed_by_every_event() -> None:
    events = [_event(1, "Wow!"), _event(2, "Cool?")]
    _, r3, _ = derive_levels(_memory("Wow! Cool?", ("e1", "e2")), events, now=NOW,
                             new_id=_ids())  # type: ignore[arg-type]
    [bullet] = r3.sections[0].bullets
    assert bullet.text == "Wow! Cool?" and [w.event_id for w in bullet.witnesses] == ["e1", "e2"]


def test_normalize_collapses_space_and_drops_repeated_sentences() -> None:
    assert normalize_text("Ok.  Ok.\n\nWe ship   Friday. ok.") == "Ok. We ship Friday."


@pytest.mark.parametrize("value, level", [(3, Level.R3), ("R1", Level.R1), ("r5", Level.R5),
                                          ("4", Level.R4), (Level.R2, Level.R2)])
def test_levels_parse_from_numbers_and_labels(value: object, level: Level) -> None:
    assert Level.parse(value) is level


@pytest.mark.parametrize("value", ["R6", "0", "three", True, "", "R"])
def test_unknown_levels_are_refused(value: object) -> None:
    with pytest.raises(InvalidInput):
        Level.parse(value)


@pytest.mark.parametrize("fields", [
    {}, {"event_id": "e1", "conversation_id": "c", "seq_from": 1, "seq_to": 2},
    {"conversation_id": "c", "seq_from": 3, "seq_to": 2}, {"conversation_id": "c", "seq_from": 1},
    {"event_id": ""}, {"conversation_id": "c", "seq_from": 0, "seq_to": 1},
])
def test_a_witness_is_one_event_or_one_seq_range(fields: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        Witness(**fields)  # type: ignore[arg-type]


def test_a_seq_range_witness_covers_its_conversation_s_events_only() -> None:
    witness = Witness(conversation_id="c", seq_from=2, seq_to=3, reason="r")
    assert [witness.covers(_event(i, "x")) for i in (1, 2, 3, 4)] == [False, True, True, False]
    other = Event(id="o", scope=SCOPE, conversation_id="d", seq=2, ts=NOW, text="x",
                  content_hash="h")
    assert not witness.covers(other)


def test_versions_round_trip_through_dicts() -> None:
    version = MemoryVersion(
        id="v", memory_id="m", level=Level.R3, kind=DerivationKind.SUMMARIZE, content="- a",
        created_at=NOW, derived_from="v0", tokens=2, quality=0.5, model="x",
        sections=(Section("ana", (Bullet("a", (Witness(event_id="e1", reason="r"),
                                               Witness(conversation_id="c", seq_from=1,
                                                       seq_to=2))),)),),
        anchors=("a",), meta={"k": 1},
    )
    assert MemoryVersion.from_dict(version.to_dict()) == version
