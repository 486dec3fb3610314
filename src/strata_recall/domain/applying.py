"""What decisions turn into: new derived memories and changes of existing ones. Pure.

For each extracted fact and its (invariant-checked) decision:

- ADD → a new memory holding the fact (``meta.fact``: subject, value, polarity, entities);
  disputed, with ``meta.contradicts`` links, when the decision flags a conflict, and each
  contradicted memory that is not pinned or locked becomes disputed too, linked back.
- UPDATE → the fact as a new memory that ``supersedes`` the target; the target becomes
  ``superseded`` (``valid_to`` now, ``superseded_by``), its content untouched: history is kept.
- DELETE (a negation) → the negation as a new memory; the target is superseded by it.
- NONE → nothing changes.

Review mode ([000] chunk 8): under ``capture_only`` and ``all`` inferred memories are written
as ``candidate`` (not recalled) and the changes they would make to existing memories are only
proposed (``meta.proposed``), never applied. Pinned or manually locked memories are never
changed by a decision (``enforce_invariants`` already turned such UPDATE/DELETE into ADD).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from strata_recall.domain.decisions import (
    VALUE_WORDS,
    Action,
    Candidate,
    Decision,
    has_negation,
    held_by_someone,
)
from strata_recall.domain.ids import new_id
from strata_recall.domain.lifecycle import FACT, Planned
from strata_recall.domain.models import (
    AGENT_BOUND_TYPES,
    HistoryEvent,
    HistoryKind,
    Lifecycle,
    Memory,
    MemoryType,
    Provenance,
    Scope,
)
from strata_recall.domain.review_mode import ReviewMode as ReviewMode  # re-exported: its old home
from strata_recall.domain.text import analyze, content_hash, keywords

#: ``meta`` key of a memory edited by hand: until then, inference may not change it.
OVERRIDE_KEY = "manual_override_until"
#: ``meta`` key holding what the decision rules need about a derived fact.
FACT_KEY = FACT
DERIVED_TAG = "derived"
#: ``provenance.source`` of a memory the pipeline derived (a verbatim turn has another).
EXTRACTED = "extract"
#: ``meta`` key: the verbatim turn(s) whose words asserted a derived fact.
ASSERTED_BY_KEY = "asserted_by"
#: ``meta`` key of a fact from a turn that said several: the other facts that turn gave.
SIBLINGS_KEY = "siblings"
#: ``meta`` key of a fact whose turn says more than any fact holds (so the turn is never
#: superseded with it): the turn, which a dispute of the fact marks too.
SAID_IN_KEY = "said_in"
#: ``meta`` keys of a fact made live because the turn that said it was superseded (the
#: fact keeps that turn's claim), and of the correction that did it (``undo`` reverts both).
PROMOTED_BY_KEY = "promoted_by"
PROMOTED_KEY = "promoted"
#: ``meta`` key of a retraction applied with the new value(s) its turn gave for what it
#: retracted ("I don't take the bus anymore, I cycle"): recall passes the old claim's score
#: on to them as well.
REPLACED_BY_KEY = "replaced_by"
#: ``meta`` key: how many times the claim was said (a repetition adds one).
MENTIONS_KEY = "mentions"
#: ``meta`` key of a fact whose decision was applied at once under review mode.
DECISION_KEY = "decision"
#: Tag of such a fact: ``list --tag decision:applied`` is the "applied, undo?" queue.
APPLIED_TAG = "decision:applied"
#: Lifecycles a repetition can fold into (counted as one more mention).
RECALLABLE_NOW = frozenset({Lifecycle.ACTIVE, Lifecycle.DISPUTED, Lifecycle.CANDIDATE})
#: Lifecycles a repeated turn may be superseded by: what recall serves. Folded into a pending
#: candidate, the turn stays live (the candidate only counts the mention).
RECALLED = frozenset({Lifecycle.ACTIVE, Lifecycle.DISPUTED})


@dataclass(frozen=True, slots=True)
class FactInput:
    """One extracted fact, in the shape the planner needs (no provider types here)."""

    content: str
    type: str
    subject: str | None
    value: str | None
    negated: bool
    importance: int  # 1-10
    confidence: float
    pinned: bool
    entities: tuple[str, ...]
    event_id: str


@dataclass(frozen=True, slots=True)
class Origin:
    """What every memory derived from one input shares."""

    scope: Scope
    conversation_id: str | None
    tags: tuple[str, ...]
    actor: str
    extractor: str
    model: str | None
    prompt_version: str | None
    review: ReviewMode
    request_id: str | None = None


@dataclass(frozen=True, slots=True)
class Derived:
    """A new memory and the provenance its ADD history row records."""

    memory: Memory
    fact_index: int
    reason: str
    provider: str
    model: str | None
    prompt_version: str | None
    confidence: float
    event_id: str


@dataclass(slots=True)
class Plan:
    added: list[Derived] = field(default_factory=list)
    changes: list[tuple[Planned, int]] = field(default_factory=list)  # (change, expected ver.)
    outcomes: list[dict[str, Any]] = field(default_factory=list)  # one per fact, for results


def candidate_of(memory: Memory, similarity: float) -> Candidate:
    """A stored memory as the decision rules see it: a derived fact with its slot, or a
    verbatim turn as a plain claim (no slot; its polarity read from its words)."""
    fact = memory.meta.get(FACT_KEY)
    if fact is None:
        return Candidate(
            id=memory.id, content=memory.content, similarity=similarity,
            negated=has_negation(memory.content), pinned=memory.pinned,
            lifecycle=memory.lifecycle, manual_override_until=override_until(memory),
        )
    return Candidate(
        id=memory.id, content=memory.content, similarity=similarity, subject=memory.subject,
        value=fact.get("value"), negated=bool(fact.get("negated", False)), pinned=memory.pinned,
        lifecycle=memory.lifecycle, manual_override_until=override_until(memory),
    )


def is_turn(memory: Memory) -> bool:
    """A verbatim record of one turn (not a derived fact, not a whole episode)."""
    return FACT_KEY not in memory.meta and memory.meta.get("kind") != "episode" and \
        memory.provenance.source != EXTRACTED and len(memory.provenance.event_ids) >= 1


def override_until(memory: Memory) -> datetime | None:
    value = memory.meta.get(OVERRIDE_KEY)
    return datetime.fromisoformat(value) if isinstance(value, str) else None


def with_manual_override(planned: Planned, now: datetime, seconds: float) -> Planned:
    """An explicit edit locks the memory against inferred changes for ``seconds``."""
    if seconds <= 0:
        return planned
    meta = {**planned.after.meta, OVERRIDE_KEY: (now + timedelta(seconds=seconds)).isoformat()}
    after = planned.after.evolve(meta=meta)
    history = _replace_after(planned.history, after)
    return Planned(after, history, planned.content_changed)


def is_derived(memory: Memory) -> bool:
    """Made from an extracted fact (as opposed to a verbatim turn or an episode)."""
    return FACT_KEY in memory.meta


def plan(
    facts: Sequence[FactInput], decisions: Sequence[Decision],
    current: Mapping[str, Memory], origin: Origin, now: datetime,
    turns: Mapping[str, str] | None = None,
) -> Plan:
    """The memories to add and the changes to apply for ``decisions`` (one per fact).
    ``turns`` maps each event of the input to its verbatim memory (in ``current``)."""
    turns = turns or {}
    per_turn = Counter(f.event_id for f in facts)
    corrected = _corrected_holders(facts, decisions, origin.review)
    result = Plan()
    touched: dict[str, _Touch] = {}  # memories changed so far, by id (latest state)
    held_by_turn: set[str] = set()  # events with a claim only their turn holds
    promoted: dict[str, list[str]] = {}  # new fact id -> the facts it made live
    retractions: dict[tuple[str, str], list[str]] = {}  # (event, holder) -> applied negations
    replacements: dict[tuple[str, str], list[str]] = {}  # (event, holder) -> their companions
    for index, (fact, decision) in enumerate(zip(facts, decisions, strict=True)):
        own_turn = turns.get(fact.event_id)
        sole = per_turn[fact.event_id] == 1
        if decision.action is Action.NONE:
            result.outcomes.append(_outcome(decision, None))
            if sole and own_turn and decision.target_id:
                _collapse(touched, current, own_turn, decision, fact, now)
            continue
        turn_text = current[own_turn].content if own_turn and own_turn in current else None
        if _kept_as_turn(fact, decision, turn_text):
            result.outcomes.append(_outcome(replace(decision, reason="kept as its turn"), None))
            held_by_turn.add(fact.event_id)
            continue
        companion = _companion(fact, decision, corrected)
        applied = _applies(decision, origin.review) or companion
        if companion:  # the new value weighs what the retraction said with it does
            weight = corrected[(fact.event_id, str(_holder(fact.subject)))]
            fact = replace(fact, importance=max(fact.importance, weight))
        derived = _derived(fact, decision, index, origin, now, applied, own_turn)
        holder = _holder(fact.subject)
        if holder is not None and applied and fact.negated and _ends_a_claim(decision):
            retractions.setdefault((fact.event_id, holder), []).append(derived.memory.id)
        elif holder is not None and companion:
            replacements.setdefault((fact.event_id, holder), []).append(derived.memory.id)
        carrier = _carrier(touched, current, own_turn, derived, now)
        if carrier is None:
            derived = _in_their_words(derived, fact, decision, turn_text)
            result.added.append(derived)
        else:  # the fact is its turn word for word: the turn carries it (one memory)
            if carrier is not _latest(touched, current, carrier.id):
                touched[carrier.id] = _Touch(carrier, HistoryKind.UPDATE,
                                             f"carries its fact ({decision.reason})", decision)
            derived = replace(derived, memory=carrier)
        result.outcomes.append({**_outcome(decision, derived.memory.id), "applied": applied})
        if not applied:
            continue  # proposed only: the candidate carries what it would change
        for target_id in _targets(decision):
            made_live = _retarget(touched, current, target_id, derived, decision, now)
            promoted.setdefault(derived.memory.id, []).extend(made_live)
        for earlier in decision.corrects:
            _retract_turn(touched, current, turns.get(facts[earlier].event_id), own_turn,
                          per_turn[facts[earlier].event_id] == 1, derived, decision, now)
        for turn_id in _turns_in_conflict(fact, decision, facts, turns):
            _dispute_turn(touched, current, turn_id, derived, decision, now)
        if decision.contradicts and own_turn:
            _dispute_turn(touched, current, own_turn, derived, decision, now)
    replaced_by = {n: replacements[key] for key, ids in retractions.items()
                   if key in replacements for n in ids}
    result.added = _with_siblings(result.added, per_turn, held_by_turn, promoted, replaced_by)
    for target_id, touch in touched.items():
        before = current[target_id]
        result.changes.append((Planned(touch.after, _history(before, touch, now, origin)),
                               before.version))
    return result


def _with_siblings(added: list[Derived], per_turn: Counter[str], held_by_turn: set[str],
                   promoted: Mapping[str, list[str]],
                   replaced_by: Mapping[str, list[str]]) -> list[Derived]:
    """The new facts as written: a fact from a turn that said several lists the others
    (``siblings``), so that a later correction of one can supersede the turn and make the
    others live in its place; a turn with a claim no fact holds (kept as its turn) is never
    superseded that way, so its facts do not name it. A correction lists the facts it made
    live (``promoted``) for ``undo``; a retraction, the new values said with it
    (``replaced_by``)."""
    by_event: dict[str, list[str]] = {}
    for d in added:
        by_event.setdefault(d.event_id, []).append(d.memory.id)
    result = []
    for d in added:
        meta = dict(d.memory.meta)
        if per_turn[d.event_id] > 1:
            if d.event_id in held_by_turn:  # still the turn a dispute of it marks
                meta[SAID_IN_KEY] = meta.pop(ASSERTED_BY_KEY, [])
            else:
                meta[SIBLINGS_KEY] = [i for i in by_event[d.event_id] if i != d.memory.id]
        if promoted.get(d.memory.id):
            meta[PROMOTED_KEY] = list(dict.fromkeys(promoted[d.memory.id]))
        if replaced_by.get(d.memory.id):
            meta[REPLACED_BY_KEY] = replaced_by[d.memory.id]
        result.append(d if meta == d.memory.meta
                      else replace(d, memory=replace(d.memory, meta=meta)))
    return result


def carrying(turn: Memory, subject: str, value: str | None, negated: bool,
             entities: Sequence[str]) -> Memory:
    """``turn`` holding the fact that is its own words, as it is written (version 1): its
    slot in ``subject``, the fact in ``meta`` as a derived memory holds it."""
    return turn.evolve(subject=subject,
                       meta={**turn.meta, FACT_KEY: fact_meta(value, negated, entities)})


def fact_meta(value: str | None, negated: bool, entities: Sequence[str]) -> dict[str, Any]:
    """What ``meta[FACT_KEY]`` holds of a fact: what the decision rules compare."""
    return {"value": value, "negated": negated, "entities": list(entities)}


def _carrier(touched: Mapping[str, _Touch], current: Mapping[str, Memory],
             own_turn: str | None, derived: Derived, now: datetime) -> Memory | None:
    """The input's own turn holding ``derived``'s fact, when the fact is the turn's words
    ("The deadline is Friday" typed without a full stop): a second memory of the same text
    would be the turn again, and the fact's slot, which a later correction looks for, would
    be lost. The turn keeps its lifecycle; a decided conflict marks it disputed."""
    turn = _latest(touched, current, own_turn) if own_turn else None
    fact = derived.memory
    if turn is None or turn.content_hash != fact.content_hash or not _live(turn, now):
        return None
    carried = {k: v for k, v in fact.meta.items() if k != ASSERTED_BY_KEY}
    lifecycle = Lifecycle.DISPUTED if fact.lifecycle is Lifecycle.DISPUTED else turn.lifecycle
    if turn.subject == fact.subject and lifecycle is turn.lifecycle and \
            turn.meta.get(FACT_KEY) == carried[FACT_KEY]:
        return turn  # written carrying it (``carrying``): nothing to change
    return turn.evolve(subject=fact.subject, lifecycle=lifecycle, updated_at=now,
                       version=turn.version + 1, meta={**turn.meta, **carried})


def _targets(decision: Decision) -> list[str]:
    if decision.action in (Action.UPDATE, Action.DELETE) and decision.target_id:
        return [decision.target_id, *decision.contradicts]
    return list(decision.contradicts)


@dataclass(slots=True)
class _Touch:
    after: Memory
    kind: HistoryKind
    reason: str
    decision: Decision


def _applies(decision: Decision, review: ReviewMode) -> bool:
    """Whether the decision takes effect now. ``capture_only`` holds brand-new facts for
    review but applies a decision that changes what is already known (an update, a
    retraction, a conflict, a correction of what the same input said first): a correction
    never waits while the stale fact keeps winning."""
    if review is ReviewMode.OFF:
        return True
    if review is ReviewMode.ALL:
        return False
    return decision.action in (Action.UPDATE, Action.DELETE) or decision.disputed or \
        bool(decision.corrects)


def _holder(subject: str | None) -> str | None:
    return subject.split(".", 1)[0] if subject and "." in subject else None


def _ends_a_claim(decision: Decision) -> bool:
    """The decision ends a claim: a known memory's (update, delete) or one the same input
    said first (``corrects``)."""
    return decision.action in (Action.UPDATE, Action.DELETE) or bool(decision.corrects)


def _corrected_holders(facts: Sequence[FactInput], decisions: Sequence[Decision],
                       review: ReviewMode) -> dict[tuple[str, str], int]:
    """(event, holder) pairs whose input applied a retraction (of a known memory, or of
    what the same input said first: "My cat's name is Mochi … I mean Miso"), with the
    importance of the weightiest of them (the new value said with it weighs as much). (An
    update carries its new value itself; what else its turn says waits for review.)"""
    weights: dict[tuple[str, str], int] = {}
    for f, d in zip(facts, decisions, strict=True):
        holder = _holder(f.subject)
        if f.negated and _ends_a_claim(d) and _applies(d, review) and holder is not None:
            key = (f.event_id, holder)
            weights[key] = max(weights.get(key, f.importance), f.importance)
    return weights


def _companion(fact: FactInput, decision: Decision, corrected: Mapping[tuple[str, str], int]
               ) -> bool:
    """A new fact said in the same turn as a retraction about the same holder, the value that
    replaces what was retracted ("Nadia traded in her Golf for a Prius", "Tom no longer works
    at Google, he joined Meta"): applied with the correction instead of waiting for review
    while the retraction already shows."""
    holder = _holder(fact.subject)
    return decision.action is Action.ADD and not decision.disputed and not fact.negated \
        and holder is not None and (fact.event_id, holder) in corrected


#: Share of a slot-less claim's content words found in its turn above which it only
#: restates the turn ("User's passport expires in May" for "my passport expires in May").
RESTATES_TURN = 0.6
_SPEAKER_WORDS = frozenset({"user", "team"})


def _kept_as_turn(fact: FactInput, decision: Decision, turn_text: str | None) -> bool:
    """A new claim without a slot that restates its verbatim turn: no second memory. (A
    slot-less fact that adds words of its own, as a model's distillation may, is kept.)"""
    if decision.action is not Action.ADD or decision.disputed or fact.subject is not None \
            or turn_text is None:
        return False
    said = set(keywords(turn_text))
    claim = [w for w in keywords(fact.content) if w not in _SPEAKER_WORDS]
    return not claim or sum(w in said for w in claim) / len(claim) >= RESTATES_TURN


def _live(memory: Memory | None, now: datetime) -> bool:
    return memory is not None and not memory.pinned and not _locked(memory, now) and \
        memory.lifecycle in (Lifecycle.ACTIVE, Lifecycle.DISPUTED, Lifecycle.CANDIDATE)


def _latest(touched: Mapping[str, _Touch], current: Mapping[str, Memory],
            memory_id: str) -> Memory | None:
    touch = touched.get(memory_id)
    return touch.after if touch is not None else current.get(memory_id)


def _retarget(touched: dict[str, _Touch], current: Mapping[str, Memory], target_id: str,
              derived: Derived, decision: Decision, now: datetime) -> list[str]:
    """Supersede (update, retraction) or dispute ``target_id``; a superseded fact takes the
    verbatim turn that asserted it along. When that turn said more (``siblings``), its other
    facts waiting for review become live in its place, so nothing it said stops being
    recalled; returns their ids. A turn whose other facts cannot all be read stays."""
    base = _latest(touched, current, target_id)
    if base is None or base.pinned or _locked(base, now):
        return []
    replaces = decision.action in (Action.UPDATE, Action.DELETE) and \
        decision.target_id == target_id
    if not replaces:
        touched[target_id] = _Touch(disputed(base, derived.memory.id, now), HistoryKind.UPDATE,
                                    f"disputed: contradicted ({decision.reason})", decision)
        for turn_id in (*base.meta.get(ASSERTED_BY_KEY, ()),  # the claim a reader sees
                        *base.meta.get(SAID_IN_KEY, ())):
            _dispute_turn(touched, current, str(turn_id), derived, decision, now)
        return []
    kind = HistoryKind(decision.action.value)
    reason = f"superseded by {derived.memory.id} ({decision.action.value}: {decision.reason})"
    touched[target_id] = _Touch(superseded(base, derived.memory.id, now), kind, reason, decision)
    siblings = [_latest(touched, current, str(i)) for i in base.meta.get(SIBLINGS_KEY, ())]
    made_live: list[str] = []
    for turn_id in base.meta.get(ASSERTED_BY_KEY, ()):
        turn = _latest(touched, current, str(turn_id))
        if turn is None or not _live(turn, now) or turn.id == target_id or None in siblings:
            continue
        touched[turn.id] = _Touch(superseded(turn, derived.memory.id, now), kind,
                                  f"its claim {target_id} was {reason}", decision)
        for sibling in siblings:
            if sibling is not None and _live(sibling, now) and \
                    decision.action is Action.DELETE and _schedule_of(sibling, base):
                touched[sibling.id] = _Touch(  # a habit that ended has no time any more
                    superseded(sibling, derived.memory.id, now), kind,
                    f"the habit it times, {target_id}, was {reason}", decision)
            elif sibling is not None and sibling.lifecycle is Lifecycle.CANDIDATE and \
                    _live(sibling, now) and sibling.id not in made_live:
                touched[sibling.id] = _Touch(
                    promoted_by(sibling, derived.memory.id, now), HistoryKind.UPDATE,
                    f"made live: it keeps the claim of turn {turn.id}, superseded by "
                    f"{derived.memory.id} ({decision.reason})", decision)
                made_live.append(sibling.id)
    return made_live


def _schedule_of(memory: Memory, habit: Memory) -> bool:
    """``memory`` is when ``habit`` happens: "User drinks coffee every morning"
    (``user.schedule_of_drinks_coffee``) for "User drinks coffee" (``user.drinks.coffee``)."""
    if memory.subject is None or habit.subject is None:
        return False
    holder, _, slot = memory.subject.partition(".")
    if holder != habit.subject.partition(".")[0] or not slot.startswith("schedule_of_"):
        return False
    said = set(habit.subject.rsplit(".", 1)[-1].split("_"))
    return said <= set(slot.removeprefix("schedule_of_").split("_"))


def promoted_by(fact: Memory, by: str, now: datetime) -> Memory:
    """A fact waiting for review made live because the turn that said it was superseded."""
    return fact.evolve(lifecycle=Lifecycle.ACTIVE, updated_at=now, version=fact.version + 1,
                       meta={**fact.meta, PROMOTED_BY_KEY: by})


def _retract_turn(touched: dict[str, _Touch], current: Mapping[str, Memory],
                  turn_id: str | None, own_turn: str | None, sole: bool, derived: Derived,
                  decision: Decision, now: datetime) -> None:
    """The turn of this input whose claim a later turn corrected ("my gym is Fitness First"
    … "oops, I meant Anytime Fitness"): superseded by the correction, when that claim was all
    the turn said (a turn that says more stays, its other facts with it)."""
    turn = _latest(touched, current, turn_id) if turn_id and sole else None
    if turn is None or turn.id == own_turn or not _live(turn, now):
        return
    touched[turn.id] = _Touch(superseded(turn, derived.memory.id, now), HistoryKind.UPDATE,
                              f"corrected later in the same input by {derived.memory.id} "
                              f"({decision.reason})", decision)


def _turns_in_conflict(fact: FactInput, decision: Decision, facts: Sequence[FactInput],
                      turns: Mapping[str, str]) -> list[str]:
    """The turns of this input that said the two sides of a conflict the input has with
    itself ("I'm a morning person … I'm definitely not a morning person"): the turn is the
    claim a reader sees, so it carries the marker its facts carry."""
    sides = [fact, *(facts[i] for i in decision.batch_conflicts)]
    if not decision.batch_conflicts or not all(_plainly_opposed(fact, other)
                                               for other in sides[1:]):
        return []
    return list(dict.fromkeys(turns[f.event_id] for f in sides if f.event_id in turns))


def _plainly_opposed(fact: FactInput, other: FactInput) -> bool:
    """Two facts of someone that say yes and no to one claim, or give it two short values
    ("I'm a morning person" / "I'm not a morning person"); not two descriptions of a thing
    ("The colors are so bright" / "… so bold")."""
    if not held_by_someone(fact.subject) or not held_by_someone(other.subject):
        return False
    return fact.negated != other.negated or max(
        len((v or "").split()) for v in (fact.value, other.value)) <= VALUE_WORDS


#: Longest turn (in words) a conflict of its facts marks disputed as a whole: a claim or two,
#: not a story in which one sentence was read against another.
DISPUTED_TURN_WORDS = 25


def _dispute_turn(touched: dict[str, _Touch], current: Mapping[str, Memory], turn_id: str,
                  derived: Derived, decision: Decision, now: datetime) -> None:
    turn = _latest(touched, current, turn_id)
    if turn is None or turn.pinned or _locked(turn, now) or \
            turn.lifecycle is not Lifecycle.ACTIVE or \
            len(turn.content.split()) > DISPUTED_TURN_WORDS:
        return
    touched[turn.id] = _Touch(disputed(turn, derived.memory.id, now), HistoryKind.UPDATE,
                              f"disputed: it says both sides of a conflict ({decision.reason})",
                              decision)


def _collapse(touched: dict[str, _Touch], current: Mapping[str, Memory], own_turn: str,
              decision: Decision, fact: FactInput, now: datetime) -> None:
    """A repetition or paraphrase: the new turn folds into the memory that already says it
    (one more mention, the new event as extra evidence); the new turn is superseded by it
    when recall serves that memory."""
    target = _latest(touched, current, decision.target_id or "")
    if target is None or target.lifecycle not in RECALLABLE_NOW:
        return
    home_id = next(iter(target.meta.get(ASSERTED_BY_KEY, ())), None) or target.id
    home = _latest(touched, current, str(home_id))
    turn = _latest(touched, current, own_turn)
    if home is None or turn is None or home.id == turn.id or not _live(turn, now) or \
            home.lifecycle not in RECALLABLE_NOW:
        return
    if home.lifecycle in RECALLED:  # a turn never hides behind what recall does not serve
        reason = f"repetition of {home.id} ({decision.reason})"
        touched[turn.id] = _Touch(superseded(turn, home.id, now), HistoryKind.UPDATE, reason,
                                  decision)
    for memory in {home.id: home, target.id: target}.values():
        touched[memory.id] = _Touch(mentioned(memory, fact.event_id, now), HistoryKind.UPDATE,
                                    f"mentioned again ({decision.reason})", decision)


def mentioned(memory: Memory, event_id: str, now: datetime) -> Memory:
    """One more mention of ``memory``: its count, and the event as extra evidence."""
    events = tuple(dict.fromkeys((*memory.provenance.event_ids, event_id)))
    count = int(memory.meta.get(MENTIONS_KEY, 1)) + 1
    return memory.evolve(updated_at=now, version=memory.version + 1,
                         provenance=replace(memory.provenance, event_ids=events),
                         meta={**memory.meta, MENTIONS_KEY: count})


def _locked(memory: Memory, now: datetime) -> bool:
    until = override_until(memory)
    return until is not None and until > now


#: The longest sentence of a turn a retraction quotes.
QUOTED_CHARS = 120


def _in_their_words(derived: Derived, fact: FactInput, decision: Decision,
                    turn_text: str | None) -> Derived:
    """A retraction ("User no longer smokes") with the sentence of its turn that said it (' ("i
    stopped smoking 3 months ago")'): the change in the speaker's own words, which a reader
    looking for them finds, and the receipt of why the old claim went."""
    ends = decision.action is Action.DELETE or (
        fact.negated and decision.action is Action.UPDATE)
    if not ends or not turn_text:
        return derived
    said = _sentence_saying(fact, turn_text)
    if said is None or said.casefold() in fact.content.casefold():
        return derived
    content = f'{fact.content} ("{said}")'
    return replace(derived, memory=replace(derived.memory, content=content,
                                           content_hash=content_hash(content)))


def _sentence_saying(fact: FactInput, turn_text: str) -> str | None:
    """The turn's sentence that shares the most words with the fact (None: none does, or it
    is too long to quote)."""
    from strata_recall.domain.english import sentences

    wanted = set(analyze(f"{fact.value or ''} {fact.content}")) - {"user", "longer"}
    best, shared = None, 0
    for sentence in sentences(turn_text):
        overlap = len(wanted & set(analyze(sentence)))
        if overlap > shared:
            best, shared = sentence.strip(), overlap
    return best if best is not None and len(best) <= QUOTED_CHARS else None


def _derived(fact: FactInput, decision: Decision, index: int, origin: Origin,
             now: datetime, applied: bool, own_turn: str | None) -> Derived:
    lifecycle = (Lifecycle.CANDIDATE if not applied else
                 Lifecycle.DISPUTED if decision.disputed else Lifecycle.ACTIVE)
    meta: dict[str, Any] = {FACT_KEY: fact_meta(fact.value, fact.negated, fact.entities)}
    if own_turn is not None:
        meta[ASSERTED_BY_KEY] = [own_turn]
    if applied and origin.review.holds_inferred():
        meta[DECISION_KEY] = {"action": decision.action.value, "status": "applied",
                              "target": decision.target_id}
    if decision.contradicts:
        meta["contradicts"] = list(decision.contradicts)
    if decision.action in (Action.UPDATE, Action.DELETE) and decision.target_id:
        meta["supersedes"] = decision.target_id
    if not applied and (decision.target_id or decision.contradicts):
        meta["proposed"] = {"action": decision.action.value, "target": decision.target_id,
                            "contradicts": list(decision.contradicts)}
    memory = Memory(
        id=new_id(), scope=origin.scope, type=_type(fact.type, origin.scope),
        content=fact.content, content_hash=content_hash(fact.content), created_at=now,
        updated_at=now, importance=max(0.0, min(1.0, fact.importance / 10)),
        confidence=max(0.0, min(1.0, fact.confidence)), pinned=fact.pinned,
        lifecycle=lifecycle, subject=fact.subject, conversation_id=origin.conversation_id,
        tags=tuple(dict.fromkeys((*origin.tags, DERIVED_TAG,
                                  *((APPLIED_TAG,) if DECISION_KEY in meta else ())))),
        provenance=Provenance(event_ids=(fact.event_id,), source=EXTRACTED,
                              extractor=origin.extractor, model=origin.model,
                              prompt_version=origin.prompt_version),
        valid_from=now, meta=meta,
    )
    return Derived(
        memory=memory, fact_index=index, reason=f"{decision.action.value}: {decision.reason}",
        provider=decision.provider, model=decision.model or origin.model,
        prompt_version=decision.prompt_version or origin.prompt_version,
        confidence=decision.confidence, event_id=fact.event_id,
    )


def _type(value: str, scope: Scope) -> MemoryType:
    try:
        chosen = MemoryType(value)
    except ValueError:
        return MemoryType.SEMANTIC
    return MemoryType.SEMANTIC if chosen in AGENT_BOUND_TYPES and scope.agent is None else chosen


def superseded(base: Memory, by: str, now: datetime) -> Memory:
    """``base`` replaced by memory ``by``: kept, readable, no longer recalled."""
    return base.evolve(lifecycle=Lifecycle.SUPERSEDED, valid_to=now, updated_at=now,
                       version=base.version + 1, meta={**base.meta, "superseded_by": by})


#: How sure a turn succession is (``turn_succession.py``): read from the turns' words and
#: meaning, without a slot on either side.
SUCCESSION_CONFIDENCE = 0.6


def planned_succession(old: Memory, by: str, now: datetime, origin: Origin) -> Planned:
    """The earlier turn ``old`` superseded by the later turn ``by`` that says it changed
    (``turn_succession.succeeded``); ``undo`` of ``by`` restores it."""
    return _by_rule(old, superseded(old, by, now), now, origin,
                    f"a later turn on the same topic says it changed: {by}")


def planned_restatement(turn: Memory, home: Memory, event_id: str, now: datetime,
                        origin: Origin) -> list[tuple[Planned, int]]:
    """The turn ``turn`` that only says ``home`` again (``turn_succession.restated``) folded
    into it: ``home`` one mention more with the turn's event as evidence, the turn superseded
    by it; ``undo`` of ``home`` brings the turn back. Each change with its expected version."""
    return [
        (_by_rule(turn, superseded(turn, home.id, now), now, origin, f"restates {home.id}"),
         turn.version),
        (_by_rule(home, mentioned(home, event_id, now), now, origin,
                  f"mentioned again (restated by {turn.id})"), home.version),
    ]


def planned_conflict(old: Memory, new: Memory, now: datetime, origin: Origin
                     ) -> list[tuple[Planned, int]]:
    """Two turns that contradict each other with no cue of which holds
    (``turn_succession.conflicted``): both disputed, each linked to the other, until the user
    says which holds. Each change with its expected version."""
    return [(_by_rule(m, disputed(m, other.id, now), now, origin,
                      f"disputed: contradicted by {other.id} (another value, no cue of "
                      f"change)"), m.version)
            for m, other in ((old, new), (new, old)) if m.lifecycle is Lifecycle.ACTIVE]


#: The meta key of an episode that lost lines: the memories whose coming ended them (``undo``
#: of one gives the lines back).
LINES_ENDED_BY_KEY = "lines_ended_by"


def planned_episode(episode: Memory, content: str, by: Sequence[str], now: datetime,
                    origin: Origin) -> Planned:
    """``episode`` as a new version saying ``content``: without the lines of its turns that
    were superseded by ``by`` (``domain/episodes.py``)."""
    return _by_rule(episode, _said_anew(episode, content, by, now), now, origin,
                    "without the lines of its turns that were superseded")


def planned_without_item(turn: Memory, content: str, item: str, by: str, now: datetime,
                         origin: Origin) -> Planned:
    """The list turn ``turn`` as a new version saying ``content``: without ``item``, which
    the later turn ``by`` changed (``domain/list_items.py``); ``undo`` of ``by`` puts it
    back. Its vector is made anew from the new text (the old one still says the item)."""
    planned = _by_rule(turn, _said_anew(turn, content, (by,), now), now, origin,
                       f"a later turn changed one item of it: {item!r} ({by})")
    return replace(planned, content_changed=True)


def _said_anew(memory: Memory, content: str, by: Sequence[str], now: datetime) -> Memory:
    """``memory`` as a new version saying ``content``, listing the turns ``by`` whose
    decisions shortened it (``LINES_ENDED_BY_KEY``: ``undo`` of one of them gives it back)."""
    ended_by = list(dict.fromkeys((*memory.meta.get(LINES_ENDED_BY_KEY, ()), *by)))
    return memory.evolve(content=content, content_hash=content_hash(content), updated_at=now,
                         version=memory.version + 1,
                         meta={**memory.meta, LINES_ENDED_BY_KEY: ended_by})


def planned_repeat_ended(reply: Memory, by: str, now: datetime, origin: Origin) -> Planned:
    """The other speaker's reply that repeated a claim superseded by ``by`` ("Tracking UA
    1482 now." after "My flight home is UA 1482"): superseded with it."""
    return _by_rule(reply, superseded(reply, by, now), now, origin,
                    f"it repeated a claim superseded by {by}")


def _by_rule(before: Memory, after: Memory, now: datetime, origin: Origin,
             reason: str) -> Planned:
    """``before`` changed to ``after`` by a turn-level rule: one ``UPDATE`` history row."""
    return Planned(after, HistoryEvent(
        id=new_id(), memory_id=before.id, kind=HistoryKind.UPDATE, ts=now, actor=origin.actor,
        reason=reason, before=before.to_dict(), after=after.to_dict(),
        request_id=origin.request_id, provider="rules", confidence=SUCCESSION_CONFIDENCE))


def disputed(base: Memory, by: str, now: datetime) -> Memory:
    """``base`` contradicted by memory ``by``: disputed (if it was active), linked to it."""
    links = list(dict.fromkeys((*base.meta.get("contradicts", ()), by)))
    lifecycle = Lifecycle.DISPUTED if base.lifecycle is Lifecycle.ACTIVE else base.lifecycle
    return base.evolve(lifecycle=lifecycle, updated_at=now, version=base.version + 1,
                       meta={**base.meta, "contradicts": links})


def plan_approval(
    candidate: Memory, targets: Mapping[str, Memory], now: datetime, actor: str, reason: str,
    request_id: str | None = None,
) -> list[tuple[Planned, int]]:
    """Approving a candidate: it becomes active (disputed if it contradicts something) and the
    change it proposed is applied now to ``targets`` still live and not pinned or locked."""
    proposed = candidate.meta.get("proposed") or {}
    lifecycle = Lifecycle.DISPUTED if candidate.meta.get("contradicts") else Lifecycle.ACTIVE
    meta = {k: v for k, v in candidate.meta.items() if k != "proposed"}
    after = candidate.evolve(lifecycle=lifecycle, updated_at=now, version=candidate.version + 1,
                             meta=meta)
    changes = [(_row(candidate, after, HistoryKind.UPDATE, now, actor,
                     f"approved: {reason}", request_id), candidate.version)]
    for target_id in [proposed.get("target"), *proposed.get("contradicts", ())]:
        base = targets.get(str(target_id)) if target_id else None
        if base is None or base.pinned or _locked(base, now) or \
                base.lifecycle not in (Lifecycle.ACTIVE, Lifecycle.DISPUTED):
            continue
        replace_it = target_id == proposed.get("target") and proposed.get("action") in (
            Action.UPDATE.value, Action.DELETE.value)
        changed = superseded(base, candidate.id, now) if replace_it else disputed(
            base, candidate.id, now)
        kind = HistoryKind(proposed["action"]) if replace_it else HistoryKind.UPDATE
        changes.append((_row(base, changed, kind, now, actor,
                             f"{'superseded' if replace_it else 'disputed'} by approved "
                             f"{candidate.id}: {reason}", request_id), base.version))
    return changes


def _row(before: Memory, after: Memory, kind: HistoryKind, now: datetime, actor: str,
         reason: str, request_id: str | None) -> Planned:
    return Planned(after, HistoryEvent(
        id=new_id(), memory_id=after.id, kind=kind, ts=now, actor=actor, reason=reason,
        before=before.to_dict(), after=after.to_dict(), request_id=request_id,
    ))


def _history(before: Memory, touch: _Touch, now: datetime, origin: Origin) -> HistoryEvent:
    decision = touch.decision
    return HistoryEvent(
        id=new_id(), memory_id=before.id, kind=touch.kind, ts=now, actor=origin.actor,
        reason=touch.reason, before=before.to_dict(), after=touch.after.to_dict(),
        request_id=origin.request_id, provider=decision.provider,
        model=decision.model or origin.model,
        prompt_version=decision.prompt_version or origin.prompt_version,
        confidence=decision.confidence,
    )


def _replace_after(history: HistoryEvent, after: Memory) -> HistoryEvent:
    return replace(history, after=after.to_dict())


def _outcome(decision: Decision, memory_id: str | None) -> dict[str, Any]:
    return {"action": decision.action.value, "target": decision.target_id,
            "memory_id": memory_id, "contradicts": list(decision.contradicts),
            "reason": decision.reason, "confidence": decision.confidence}
