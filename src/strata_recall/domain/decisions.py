"""What to do with one extracted fact, given the memories it might touch ([003] §11.2-11.3,
[002] contradiction detection). Pure: no I/O, no clock of its own.

The rules, in order (the first that applies wins):

1. An exact duplicate (same normalised content) of a live memory → NONE.
2. A near duplicate (cosine > 0.95) with the same polarity → NONE, unless both name the same
   slot with different values, or the memory has no slot and does not say the fact's value
   (then the rules below decide).
3. A memory about the same claim (same subject, or the same words) that the fact conflicts with:
   - the memory is pinned or under a manual override lock → ADD, both flagged as contradicting
     (a decision never deletes or overwrites such a memory);
   - the fact is hedged or of low confidence → ADD, both flagged (an ambiguous conflict:
     it may not overwrite anything);
   - the fact negates the memory → DELETE it (superseded by the negation);
   - the fact gives the same subject a new value → UPDATE it (a new version; the old one is
     superseded);
   - a fact without a known subject replaces an overlapping memory only with an explicit
     change cue ("now", "actually", "moved to"); otherwise it is simply ADDed.
4. Otherwise → ADD.

Within one input ([003] §11.3) two opposing claims about one subject, neither marked as a
correction, block each other's destructive decisions: both are ADDed and flagged. A later claim
marked as a correction ("oops, I meant …") replaces the earlier one: the earlier fact is not
kept, and the correction names it (``corrects``) so that the turn that said it is superseded.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from strata_recall.domain.english import about_another, unknown_word
from strata_recall.domain.models import Lifecycle
from strata_recall.domain.slots import singular_nouns
from strata_recall.domain.text import as_digit, keywords, normalize, stem, words

#: Cosine above which two facts are the same fact said twice ([002]: "cosine > 0.95").
NEAR_DUPLICATE = 0.95
#: Below this confidence a fact may add, never replace or delete.
MIN_DESTRUCTIVE_CONFIDENCE = 0.6
#: Keyword overlap (Jaccard) at which two subject-less statements are about the same claim.
SAME_CLAIM_OVERLAP = 0.8
#: ... and at which an explicit change cue lets the new one replace the old one.
CHANGE_OVERLAP = 0.5
#: Lifecycles a decision may act on; superseded or deleted rows are history, not candidates.
ACTIONABLE = frozenset({Lifecycle.ACTIVE, Lifecycle.DISPUTED, Lifecycle.CANDIDATE})

_NEGATION_WORDS = frozenset({"not", "no", "never", "longer", "anymore", "don't", "doesn't",
                             "isn't", "aren't", "wasn't", "won't", "didn't", "stopped"})
#: Words that say who speaks, not what is claimed: "User likes tea" restates "I like tea".
_SPEAKER_WORDS = frozenset({"user", "user's"})


class Action(enum.StrEnum):
    ADD = "ADD"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    NONE = "NONE"


@dataclass(frozen=True, slots=True)
class FactView:
    """The parts of an extracted fact the rules read."""

    content: str
    subject: str | None = None
    value: str | None = None
    negated: bool = False
    explicit_change: bool = False
    hedged: bool = False
    confidence: float = 1.0


@dataclass(frozen=True, slots=True)
class Candidate:
    """An existing memory a fact might duplicate or change, with its similarity to the fact."""

    id: str
    content: str
    similarity: float = 0.0  # cosine to the fact
    subject: str | None = None
    value: str | None = None
    negated: bool = False
    pinned: bool = False
    lifecycle: Lifecycle = Lifecycle.ACTIVE
    manual_override_until: datetime | None = None

    def locked(self, now: datetime) -> bool:
        """Pinned, or edited by hand recently enough that inference must not touch it."""
        return self.pinned or (
            self.manual_override_until is not None and self.manual_override_until > now
        )


@dataclass(frozen=True, slots=True)
class Decision:
    """One decision for one fact, with what the history row needs to explain it."""

    action: Action
    target_id: str | None = None
    reason: str = ""
    confidence: float = 1.0
    contradicts: tuple[str, ...] = ()  # memory ids this fact conflicts with (both → disputed)
    batch_conflicts: tuple[int, ...] = ()  # indexes of facts of the same input it opposes
    corrects: tuple[int, ...] = ()  # indexes of earlier facts of the same input it corrects
    provider: str = "rules"
    model: str | None = None
    prompt_version: str | None = None

    @property
    def disputed(self) -> bool:
        return bool(self.contradicts or self.batch_conflicts)


def decide(fact: FactView, candidates: Sequence[Candidate], now: datetime) -> Decision:
    """The rule-based decision for one fact (see the module docstring)."""
    live = sorted((c for c in candidates if c.lifecycle in ACTIONABLE),
                  key=lambda c: (-c.similarity, c.id))
    duplicate = _duplicate(fact, live)
    if duplicate is not None:
        return duplicate
    for candidate in live:
        relation = _relation(fact, candidate)
        if relation == "same":
            return Decision(Action.NONE, candidate.id, "same subject and value as the memory",
                            confidence=0.9)
        if relation in ("conflict", "negation", "ends"):
            return _resolve_conflict(fact, candidate, relation, now)
    for candidate in live:
        if _replaces_by_cue(fact, candidate):
            return _resolve_conflict(fact, candidate, "conflict", now)
    return Decision(Action.ADD, reason="new information", confidence=0.9)


def decide_batch(
    facts: Sequence[FactView], candidates: Sequence[Sequence[Candidate]], now: datetime
) -> list[Decision]:
    """Decisions for all facts of one input: per-fact rules, then the batch rules of §11.3."""
    decisions = [decide(f, c, now) for f, c in zip(facts, candidates, strict=True)]
    decisions = _flag_opposing_claims(facts, candidates, decisions)
    return _one_decision_per_target(decisions)


def enforce_invariants(
    decision: Decision, candidates: Sequence[Candidate], now: datetime
) -> Decision:
    """Whatever proposed ``decision`` (rules or a model), a pinned or locked memory is never
    updated or deleted, and contradiction links point only at real candidates."""
    by_id = {c.id: c for c in candidates}
    contradicts = tuple(i for i in decision.contradicts if i in by_id)
    decision = replace(decision, contradicts=contradicts)
    if decision.action not in (Action.UPDATE, Action.DELETE):
        return decision
    target = by_id.get(decision.target_id or "")
    if target is None or not target.locked(now):
        return decision
    return replace(
        decision, action=Action.ADD, target_id=None,
        contradicts=tuple(dict.fromkeys((*contradicts, target.id))),
        reason=f"{decision.action.value} blocked: the memory is pinned or locked; "
               f"kept both, flagged as contradicting",
    )


def _duplicate(fact: FactView, live: Sequence[Candidate]) -> Decision | None:
    text = normalize(fact.content)
    for candidate in live:
        if normalize(candidate.content) == text:
            return Decision(Action.NONE, candidate.id, "exact duplicate", confidence=1.0)
    for candidate in live:
        if candidate.similarity > NEAR_DUPLICATE and candidate.negated == fact.negated \
                and not _other_value(fact, candidate) and not _value_unsaid(fact, candidate) \
                and not _other_numbers(fact.content, candidate.content):
            return Decision(Action.NONE, candidate.id,
                            f"near duplicate (cosine {candidate.similarity:.3f})", confidence=0.95)
    return None


def _other_numbers(first: str, second: str) -> bool:
    """Both say numbers, not the same ones: "graduated from ohio state in 2012" and "… in
    2014" embed at cosine 0.97 and say two things."""
    mine, theirs = set(_NUMBER.findall(first)), set(_NUMBER.findall(second))
    return bool(mine) and bool(theirs) and mine != theirs


_NUMBER = re.compile(r"\d+(?:[.,:/]\d+)*")


def _other_value(fact: FactView, candidate: Candidate) -> bool:
    """Both name the same slot with different values: however alike the sentences read (a
    phone number differs by a few digits), it is a change, never a near duplicate. In a slot
    that holds many, values with no word in common are two values ("arrives on Friday",
    "arrives on Saturday"), while "sushi" and "sushi rolls" may still be one."""
    if fact.subject is None or candidate.subject is None or fact.value is None \
            or candidate.value is None:
        return False
    if fact.subject == candidate.subject:
        return not _same_value(fact.value, candidate.value)
    return _slot_family(fact.subject) == _slot_family(candidate.subject) \
        and not _value_words(fact.value) & _value_words(candidate.value)


def _slot_family(subject: str) -> str:
    """``person:ana.arrives.friday`` → ``person:ana.arrives``: the holder and attribute."""
    return ".".join(subject.split(".")[:2])


def _value_unsaid(fact: FactView, candidate: Candidate) -> bool:
    """A memory with no slot (a verbatim turn) whose words lack the fact's value: "Tom's
    phone number is 555-9876" is not a near duplicate of "Tom's phone number is 555-1234."
    however alike the two sentences embed."""
    if fact.value is None or candidate.subject is not None:
        return False
    value = _value_words(fact.value)
    return bool(value) and not value <= _value_words(candidate.content)


#: Attributes that name one slot: where one is from is where one grew up; one's car is what
#: one drives.
_ONE_SLOT = {"grew_up_in": "from", "hometown": "from", "car": "drives",
             "wedding_anniversary": "anniversary",
             "cell": "phone", "mobile": "phone", "phone_number": "phone",
             "email_address": "email", "home_address": "address", "plate": "license_plate",
             "plate_number": "license_plate", "license_plate_number": "license_plate",
             "auto_insurance": "car_insurance"}


def one_slot(subject: str | None) -> str | None:
    """``subject`` with its attribute said the one way (``_ONE_SLOT``)."""
    if subject is None or subject.count(".") != 1:
        return subject
    holder, _, attribute = subject.partition(".")
    attribute = _ACCOUNT_TAIL.sub("", attribute)  # "steam username" is one's steam
    return f"{holder}.{_ONE_SLOT.get(attribute, attribute)}"


#: Qualifiers that tell one of several things of a kind apart ("work email", "home phone"):
#: the kind's bare name is not that one.
_ONE_OF_SEVERAL = frozenset("""work personal home office school business private backup
secondary second primary main other alt alternate old new cell mobile landline spare""".split())


#: What an account is named by, said after its name or not ("steam username" is "steam").
_ACCOUNT_WORDS = ("username", "user_name", "handle", "account", "login", "id", "name")
#: What a thing is given as, said after its name or not ("apple id email", "apple id").
_SAID_AS = frozenset({*_ACCOUNT_WORDS, "email", "address", "number"})


def _one_thing(first: str | None, second: str | None) -> bool:
    """The same slot, or one named by its head noun after the other ("lessons got moved to
    thursdays" after "piano lessons are tuesdays"; "code is QZ7N4P" after "flight
    confirmation code is QZ7M4P"): a holder's single-valued slots, one attribute a word that
    ends the other."""
    if first is None or second is None:
        return False
    if first == second:
        return True
    if first.count(".") != 1 or second.count(".") != 1:
        return False
    (holder, _, mine), (other, _, theirs) = first.partition("."), second.partition(".")
    short, long = sorted((mine, theirs), key=len)
    if holder == other and long.startswith(f"{short}_") \
            and set(long.removeprefix(f"{short}_").split("_")) <= _SAID_AS:
        return True  # "my apple id is j.barrow@icloud.com" after "my apple id email is …"
    return holder == other and "_" not in short and len(short) > 3 \
        and long.endswith(f"_{short}") \
        and not set(long.removesuffix(f"_{short}").split("_")) & _ONE_OF_SEVERAL


_ACCOUNT_TAIL = re.compile(rf"(?<=[a-z])_(?:{'|'.join(_ACCOUNT_WORDS)})$")


def _relation(fact: FactView, candidate: Candidate) -> str | None:
    """``same``, ``conflict`` (new value), ``negation`` (polarity flip), ``ends`` (a new state
    of the holder ends another slot) or None (unrelated)."""
    if fact.subject is not None and _one_thing(one_slot(fact.subject),
                                               one_slot(candidate.subject)):
        # said with a cue of change, "a travel nurse" after "a nurse" is the news
        same_value = _same_value(fact.value, candidate.value, loosely=not fact.explicit_change)
        if same_value and _other_years(fact.content, candidate.content):
            return None  # "visited Japan in 2018" and "… in 2023": two visits
        if same_value and fact.negated == candidate.negated:
            return "same"
        if same_value or fact.value is None or candidate.value is None:
            return "negation" if fact.negated != candidate.negated else "same"
        if fact.negated:
            return None  # "not in Paris" says nothing against "in Berlin"
        return "conflict"
    if _opposite_preferences(fact.subject, candidate.subject):
        return "conflict" if fact.negated == candidate.negated else None
    if _parts_with(fact, candidate) or _negates_narrower(fact, candidate) \
            or _off_the_thing_of(fact, candidate) \
            or _unfavours(fact, candidate):
        return "negation"
    if _ends_state(fact, candidate):
        return "ends"
    if _moves_school(fact, candidate) or _verb_names_slot(fact, candidate) \
            or _taken_over(fact, candidate):
        return "conflict"
    if _moves_out_of_home(fact, candidate) or _stops_doing(fact, candidate):
        return "negation"
    if fact.negated != candidate.negated and not _holders_differ(fact, candidate) \
            and _overlap(fact.content, candidate.content) >= SAME_CLAIM_OVERLAP:
        return "negation"
    return None


#: Attributes that say opposite things of the same value: "likes olives" / "hates olives".
_OPPOSITE_ATTRIBUTES = {"likes": "dislikes", "dislikes": "likes"}


def _opposite_preferences(first: str | None, second: str | None) -> bool:
    """Two multi-valued slots of one holder and value whose attributes oppose
    (``user.likes.olive`` and ``user.dislikes.olive``): one claim replaces or disputes the
    other, as a new value of a single-valued slot does."""
    if first is None or second is None:
        return False
    a, b = first.split(".", 2), second.split(".", 2)
    return len(a) == len(b) == 3 and a[0] == b[0] and a[2] == b[2] and \
        _OPPOSITE_ATTRIBUTES.get(a[1]) == b[1]


#: A school's name: what a teacher works at and a pupil goes to.
_SCHOOL_NAME = re.compile(r"\b(?:school|academy|college|university|elementary|primary|high)\b",
                          re.I)


def _moves_school(fact: FactView, candidate: Candidate) -> bool:
    """"Kim transferred to Pine High School" after "Kim teaches at Oak Middle School": one
    holder's school said as a workplace and as a school (where a teacher is, or a pupil)."""
    if not fact.explicit_change or fact.negated or candidate.negated or fact.subject is None \
            or candidate.subject is None or fact.subject.count(".") != 1 \
            or candidate.subject.count(".") != 1:
        return False
    (holder, attribute), (other, held) = (fact.subject.split("."),
                                          candidate.subject.split("."))
    return holder == other and {attribute, held} == {"school", "works_at"} \
        and all(v is not None and _SCHOOL_NAME.search(v) for v in (fact.value, candidate.value))


#: What one holder at a time does to a thing: an occasion has one host, a shop one owner.
_ONE_HOLDER_AT_A_TIME = frozenset({"hosts", "organizes", "organises", "leads", "chairs", "runs",
                                   "owns", "manages", "coordinates", "coaches", "captains"})


def _taken_over(fact: FactView, candidate: Candidate) -> bool:
    """"Change of plans, my in-laws are hosting Thanksgiving" after "We're hosting
    Thanksgiving": the same thing, a new holder, said as a change."""
    if not fact.explicit_change or fact.negated or candidate.negated or fact.subject is None \
            or candidate.subject is None:
        return False
    holder, _, rest = fact.subject.partition(".")
    other, _, held = candidate.subject.partition(".")
    return holder != other and rest == held \
        and rest.partition(".")[0] in _ONE_HOLDER_AT_A_TIME


def _verb_names_slot(fact: FactView, candidate: Candidate) -> bool:
    """"I've been ordering cortados instead" after "My coffee order is an oat latte": a
    changed habit whose verb is the noun of one of the holder's single-valued slots."""
    if not fact.explicit_change or fact.negated or candidate.negated or fact.subject is None \
            or candidate.subject is None or candidate.subject.count(".") != 1:
        return False
    holder, _, rest = fact.subject.partition(".")
    other, _, slot = candidate.subject.partition(".")
    verb = rest.partition(".")[0]
    noun = slot.rsplit("_", 1)[-1]
    return holder == other and "_" in slot and len(noun) > 3 and verb in (noun, f"{noun}s")


def _holders_differ(fact: FactView, candidate: Candidate) -> bool:
    """The fact and the memory are about different people ("my brother sold his Civic" says
    nothing of "I drive a Civic"), read from their slots, else from the memory's words."""
    holder = (fact.subject or "").partition(".")[0]
    if candidate.subject is not None:
        return bool(holder) and holder != candidate.subject.partition(".")[0]
    if holder.startswith("person:"):
        names = holder.removeprefix("person:").removeprefix("user_").split("_")
        return not any(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", candidate.content, re.I)
                       for n in names if n)
    return holder == "user" and about_another(candidate.content)


def _off_the_thing_of(fact: FactView, candidate: Candidate) -> bool:
    """"I'm no longer on lexapro" (``user.is.lexapro``, negated) retracts the slot named by
    the thing itself: "i take 20mg lexapro every morning" (``user.lexapro`` = 20mg, a
    drug's dose)."""
    if not fact.negated or candidate.negated or fact.subject is None \
            or candidate.subject is None or candidate.subject.count(".") != 1:
        return False
    holder, _, attribute = candidate.subject.partition(".")
    thing = _THING_LEAD.sub("", (fact.value or "").casefold()).strip().replace(" ", "_")
    return fact.subject.partition(".")[0] == holder and len(thing) > 2 and thing == attribute


_THING_LEAD = re.compile(r"^(?:on|off|taking|using|the|my|of)\s+(?:the\s+|my\s+)?")


def _parts_with(fact: FactView, candidate: Candidate) -> bool:
    """A possession ended ("sold my Honda Civic", "Rex passed away": no longer *has* it;
    "stopped using Twitter": no longer *uses* it) retracts what the same holder said of that
    very thing, whatever the attribute ("drives a Honda Civic", "has a dog called Rex", "my
    gym is Fitness First", "is on Twitter a lot")."""
    if not fact.negated or candidate.negated or fact.subject is None \
            or candidate.subject is None:
        return False
    holder, _, rest = fact.subject.partition(".")
    owner = candidate.subject.partition(".")[0]
    # "we gave Luna away": the household's, so the user's too
    if rest.split(".")[0] not in _PARTING or owner not in (holder, *_HOUSEHOLD.get(holder, ())):
        return False
    if _same_value(fact.value, candidate.value, loosely=False):
        return True
    held = candidate.subject.split(".")[1] if candidate.subject.count(".") else ""
    # A single-valued slot ("my car is a Honda Civic": user.car) holds its thing too.
    holds = held in _HOLDING or candidate.subject.count(".") == 1
    return holds and (_names_part_of(fact.value, candidate.value)
                      or _names_a_kind_of(fact.value, candidate.value)
                      or _no_vehicle(fact.value, held))


#: What no longer having one ends: "I don't have a car anymore" ends "I drive a 2009 Corolla".
_VEHICLES = frozenset({"car", "vehicle", "auto", "truck", "motorbike", "motorcycle"})


def _no_vehicle(value: str | None, held: str) -> bool:
    return held in ("drives", "car") and normalize(value or "") in _VEHICLES


#: What giving up a kind of thing gives up: "cut out alcohol" ends "drinks a glass of wine".
_KINDS = {
    "alcohol": frozenset("wine beer whiskey whisky vodka gin rum tequila cocktail cider "
                         "champagne sake liquor booze prosecco bourbon".split()),
    "caffeine": frozenset("coffee espresso latte cappuccino cortado americano "
                          "energy".split()),
    "sugar": frozenset("soda candy sweet dessert chocolate cake cookie".split()),
}


def _names_a_kind_of(kind: str | None, value: str | None) -> bool:
    """``kind`` is a kind the value's thing is of ("alcohol" / "glass of wine")."""
    if kind is None or value is None:
        return False
    members = _KINDS.get(normalize(kind), frozenset())
    return bool(members & _value_words(value))


#: Holders whose parting with a thing is the user's too ("we" said by the user).
_HOUSEHOLD = {"project": ("user",)}
#: Attributes that say the holder has a thing: "sold the Civic" retracts "drives a Honda
#: Civic", "Tofu died" retracts "has a cat named Tofu", "deleted my Twitter" "is on Twitter".
_HOLDING = frozenset({"has", "has_pet", "drives", "rides", "uses", "owns", "is", "plays",
                      "wears", "commute", "eats", "drinks", "smokes", "takes"})
#: Attributes whose negation parts with the thing: no longer has, uses, takes, rides or needs
#: it ("I don't take the bus anymore" retracts "I take the bus to work": a commute by bus;
#: "I don't need melatonin anymore" retracts "I take melatonin to sleep").
_PARTING = frozenset({"has", "uses", "takes", "rides", "drives", "needs"})


_YEAR = re.compile(r"\b(?:1[89]|20)\d\d\b")


def _other_years(first: str, second: str) -> bool:
    """Both name years, and not the same ones: two events, not one said twice."""
    a, b = set(_YEAR.findall(first)), set(_YEAR.findall(second))
    return bool(a) and bool(b) and a != b


#: Why a memory of another slot is replaced ("My uncle retired." replaces his job).
ENDED_BY_STATE = "a new state of the holder ends it"
#: The reason of an update that only gives a slot another value (no cue of change said).
NEW_VALUE = "same subject, new value"
#: Foods a diet leaves out: going vegetarian retracts "I eat meat".
_MEAT = frozenset("meat beef pork chicken bacon steak lamb ham sausage sausages burger burgers "
                  "turkey veal".split())
_FISH = frozenset("fish seafood salmon tuna shrimp prawns".split())
_ANIMAL = frozenset("dairy cheese milk egg eggs butter yogurt yoghurt honey".split())
_LEFT_OUT = {"vegetarian": _MEAT | _FISH, "vegan": _MEAT | _FISH | _ANIMAL,
             "pescatarian": _MEAT, "pescetarian": _MEAT}
_NOT_WORKING = frozenset({"retired", "unemployed", "jobless", "between jobs"})
#: What a person's death leaves true.
_LIFELONG = frozenset({"born_in", "birthday", "grew_up_in", "from", "name", "life_status"})


def _ends_state(fact: FactView, candidate: Candidate) -> bool:
    """A new state of a holder ends what another of its slots said: "my uncle retired"
    replaces "My uncle is a doctor" (and where he worked), "I went vegan" replaces "I eat
    cheese", "I'm dating Alex" replaces "I'm single" and "I'm single again" a partner."""
    if fact.negated or candidate.negated or fact.subject is None or candidate.subject is None:
        return False
    holder, _, attribute = fact.subject.partition(".")
    other, _, held = candidate.subject.partition(".")
    if other != holder:
        return False
    state, old = (fact.value or "").casefold(), (candidate.value or "").casefold()
    attribute, held = attribute.partition(".")[0], held.partition(".")[0]
    if attribute == "employment_status":
        return state in _NOT_WORKING and held in ("job_title", "works_at")
    if attribute == "diet":
        return held == "eats" and bool(set(old.split()) & _LEFT_OUT.get(state, frozenset()))
    if attribute == "eats" and held == "diet":  # "Jamal started eating meat again"
        return bool(set(state.split()) & _LEFT_OUT.get(old, frozenset()))
    if attribute == "relationship_status" and state == "single":
        return held == "partner"
    if attribute == "life_status":  # "my grandpa passed away": where he lived, what he did
        return held not in _LIFELONG
    if attribute == "lives_in" and fact.explicit_change:  # "I moved to Porto" after "I'm in
        return held == "located_in"                      # Lisbon": no longer there
    return attribute == "partner" and held == "relationship_status" and old == "single"


#: Whom a user lives with by role: "a roommate named Kevin" ends when Kevin moves out.
_HOUSEMATES = r"(?:room|house|flat)mate|lodger|tenant|au pair"


def _moves_out_of_home(fact: FactView, candidate: Candidate) -> bool:
    """"Kevin moved out" retracts "I have a roommate named Kevin"."""
    if not fact.negated or candidate.negated or fact.subject is None \
            or candidate.subject is None or not fact.subject.endswith(".lives_with") \
            or not fact.subject.startswith("person:") or not candidate.subject.startswith("user."):
        return False
    name = fact.subject.removeprefix("person:").partition(".")[0].replace("_", " ")
    return re.search(rf"\b(?:{_HOUSEMATES}) (?:named|called) {re.escape(name)}\b",
                     candidate.value or "", re.I) is not None


def _stops_doing(fact: FactView, candidate: Candidate) -> bool:
    """"I left teaching" (no longer teaches) retracts "I teach math at Lincoln High": a
    negated bare activity of the holder against what the holder was said to do with it."""
    if not fact.negated or candidate.negated or fact.subject is None \
            or candidate.subject is None:
        return False
    holder, _, rest = fact.subject.partition(".")
    attribute, _, verb = rest.partition(".")
    other, _, held = candidate.subject.partition(".")
    return attribute == "does" and len(verb) > 2 and other == holder \
        and held.partition(".")[0].startswith(verb)


def _unfavours(fact: FactView, candidate: Candidate) -> bool:
    """"Amir doesn't like pizza anymore" retracts "Amir's favourite food is pizza": a
    negated liking of the value a favourite of the same holder names."""
    if not fact.negated or candidate.negated or fact.subject is None \
            or candidate.subject is None:
        return False
    holder, _, rest = fact.subject.partition(".")
    favourite = candidate.subject.partition(".")
    return rest.split(".")[0] == "likes" and favourite[0] == holder \
        and favourite[2].startswith("favourite_") and _names_part_of(fact.value, candidate.value)


def _negates_narrower(fact: FactView, candidate: Candidate) -> bool:
    """"I don't go running anymore" retracts "I go running on Sundays": the same holder and
    attribute, said the other way round of a value the memory's value contains."""
    if not fact.negated or candidate.negated or fact.subject is None \
            or candidate.subject is None:
        return False
    return (_slot_family(fact.subject) == _slot_family(candidate.subject)
            and _names_part_of(fact.value, candidate.value))


def _names_part_of(part: str | None, whole: str | None) -> bool:
    """Every content word of ``part`` is in ``whole`` (singular and plural alike)."""
    if part is None or whole is None:
        return False
    inner = _value_words(part)
    return bool(inner) and inner <= _value_words(whole)


def _resolve_conflict(
    fact: FactView, candidate: Candidate, relation: str, now: datetime
) -> Decision:
    if candidate.locked(now):
        return Decision(Action.ADD, reason="conflicts with a pinned or locked memory; kept both",
                        confidence=0.8, contradicts=(candidate.id,))
    if fact.hedged or fact.confidence < MIN_DESTRUCTIVE_CONFIDENCE:
        return Decision(Action.ADD, reason="ambiguous conflict: the new claim is uncertain",
                        confidence=0.6, contradicts=(candidate.id,))
    if relation == "negation" and fact.negated:
        return Decision(Action.DELETE, candidate.id, "negated by the new fact",
                        confidence=0.9 if fact.explicit_change else 0.8)
    reason = "explicit correction" if fact.explicit_change else NEW_VALUE
    if relation == "ends":
        reason = ENDED_BY_STATE
    return Decision(Action.UPDATE, candidate.id, reason,
                    confidence=0.9 if fact.explicit_change else 0.8)


def _replaces_by_cue(fact: FactView, candidate: Candidate) -> bool:
    """A subject-less fact with a change cue replaces the memory it mostly repeats."""
    if not fact.explicit_change or (fact.subject is not None and candidate.subject is not None):
        return False
    return not _holders_differ(fact, candidate) and \
        _overlap(fact.content, candidate.content) >= CHANGE_OVERLAP


def _flag_opposing_claims(
    facts: Sequence[FactView], candidates: Sequence[Sequence[Candidate]],
    decisions: list[Decision],
) -> list[Decision]:
    result = list(decisions)
    for i, j in _opposing_pairs(facts):
        for me, other in ((i, j), (j, i)):
            related = tuple(c.id for c in candidates[me]
                            if c.subject == facts[me].subject and c.lifecycle in ACTIONABLE)
            prior = result[me]
            if prior.action is Action.NONE:  # already stored: flag it, add nothing again
                result[me] = replace(prior, batch_conflicts=(*prior.batch_conflicts, other))
                continue
            result[me] = Decision(
                Action.ADD, reason="opposing claims about one subject in the same input",
                confidence=0.6, contradicts=tuple(dict.fromkeys((*prior.contradicts, *related))),
                batch_conflicts=(*prior.batch_conflicts, other),
            )
    for i, j in _corrected_pairs(facts):
        result[i] = Decision(Action.NONE, reason=f"corrected by fact {j} of the same input",
                             confidence=0.8)
        result[j] = replace(result[j], corrects=(*result[j].corrects, i))
    return result


def _opposing_pairs(facts: Sequence[FactView]) -> list[tuple[int, int]]:
    pairs = []
    for i, first in enumerate(facts):
        for j in range(i + 1, len(facts)):
            second = facts[j]
            if first.explicit_change or second.explicit_change:
                continue
            if _claims_oppose(first, second):
                pairs.append((i, j))
    return pairs


def _corrected_pairs(facts: Sequence[FactView]) -> list[tuple[int, int]]:
    """(earlier, later) where the later fact explicitly corrects the earlier one."""
    return [(i, j) for i, first in enumerate(facts) for j in range(i + 1, len(facts))
            if facts[j].explicit_change and _claims_oppose(first, facts[j])]


def _claims_oppose(first: FactView, second: FactView) -> bool:
    if _opposite_preferences(first.subject, second.subject):
        return first.negated == second.negated
    if first.subject is None or first.subject != second.subject:
        return False
    if first.negated or second.negated:
        return first.negated != second.negated and _same_value(first.value, second.value)
    return not _same_value(first.value, second.value)


def _one_decision_per_target(decisions: list[Decision]) -> list[Decision]:
    """An UPDATE of a memory makes a DELETE of the same memory in the same input moot
    ("I don't live in Berlin anymore, I moved to Munich"), unless the update only follows
    from another slot: "I'm not vegetarian anymore, I eat fish now" retracts the diet, and
    eating fish is added beside the retraction."""
    deleted = {d.target_id for d in decisions if d.action is Action.DELETE}
    decisions = [Decision(Action.ADD, reason="new information; the memory it ends is retracted "
                          "by another fact of the input", confidence=d.confidence)
                 if d.action is Action.UPDATE and d.reason == ENDED_BY_STATE
                 and d.target_id in deleted else d for d in decisions]
    updated = {d.target_id for d in decisions if d.action is Action.UPDATE}
    return [
        Decision(Action.NONE, d.target_id, "the memory is updated by another fact of the input",
                 confidence=d.confidence)
        if d.action is Action.DELETE and d.target_id in updated else d
        for d in decisions
    ]


def _same_value(first: str | None, second: str | None, *, loosely: bool = True) -> bool:
    """One value, said the same way or (``loosely``) one within the other."""
    if first is None or second is None:
        return first is second
    said, other = _value_words(first), _value_words(second)
    if not said and not other:  # all stop words ("he/him", "they/them"): compare the text
        return normalize(first) == normalize(second)
    if _labels(first) != _labels(second):
        return False
    return said == other or (loosely and (_one_within(said, other) or _one_within(other, said)))


def _one_within(short: set[str], long: set[str]) -> bool:
    """Every word of ``short`` is (or abbreviates) one of ``long``, which adds no number but
    a year: "model 3" / "tesla model 3", "O neg" / "O negative", "St. Vincent's" / "St.
    Vincent's Hospital", "3 September" / "September 3, 1990" say one value."""
    if not short or len(short) > len(long):
        return False
    numbers = {w for w in short if w.isdigit()}
    extra = {w for w in long if w.isdigit()} - numbers
    if numbers - long or any(_YEAR.fullmatch(n) is None for n in extra):
        return False
    return all(w in long or (len(w) >= 3 and w.isalpha() and any(
        o.startswith(w) and len(o) - len(w) >= 2 for o in long)) for w in short)


def _labels(value: str) -> set[str]:
    """Capital letters standing alone, which stop words would hide: "A positive" / "O
    positive", "plan A" / "plan B", "vitamin D" / "vitamin C"."""
    return set(re.findall(r"\b(?!I\b)[A-Z]{1,2}\b", value))


def _value_words(value: str) -> set[str]:
    """A value's content words, plural nouns made singular and ordinals and small numbers as
    digits ("July 4th" is "July 4", "two cats" is "2 cats"): what value comparisons use."""
    value = _PROP_ONE.sub("", value)  # "rav4, 2019, white one": no count of one
    said = {as_digit(w) for w in keywords(_ORDINAL.sub(r"\1", singular_nouns(value)))}
    return {_SPELLED_OUT.get(w, w) for w in said} - _UNIT_MARKS


#: Abbreviations of an address's words and of a blood type's sign, said in full: "14 Willow
#: Ln #3B" and "14 willow lane, apt 3b" are one address.
_SPELLED_OUT = {"ln": "lane", "st": "street", "str": "street", "ave": "avenue", "av": "avenue",
                "rd": "road", "blvd": "boulevard", "ct": "court", "pl": "place",
                "hwy": "highway", "pkwy": "parkway", "sq": "square",
                "neg": "negative", "pos": "positive"}
#: Words that only mark the number after them ("apt 3b", "#3B").
_UNIT_MARKS = frozenset({"apt", "apartment", "unit", "suite", "ste", "no"})


_ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b", re.IGNORECASE)
#: "one" standing for the thing after a word that describes it ("the white one").
_PROP_ONE = re.compile(r"(?<=[a-z0-9]) one\b(?=\s*(?:[,.;!]|$))", re.IGNORECASE)


def _overlap(first: str, second: str) -> float:
    """Jaccard overlap of stemmed content words, ignoring negation and speaker words."""
    a = _claim_words(first)
    b = _claim_words(second)
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def _claim_words(text: str) -> set[str]:
    return {stem(w) for w in keywords(text)} - {stem(w) for w in _NEGATION_WORDS | _SPEAKER_WORDS}


def has_negation(text: str) -> bool:
    """Whether a plain sentence says something is not (or no longer) so."""
    return any(w in _NEGATION_WORDS or w.endswith("n't") for w in words(text))


#: Constructions that name the value a change leaves behind: "from X to", "instead of X",
#: "X, not Y", "left X", "no longer at X". The group is the old value.
_DISPLACED = re.compile(
    r"\bfrom\s+(?P<a>[\w.+#@-]+(?:\s+[A-Z][\w.+#-]*)*)\s+(?:to|for)\b"
    r"|\binstead\s+of\s+(?P<b>[\w.+#@-]+(?:\s+[A-Z][\w.+#-]*)*)"
    r"|,\s*not\s+(?P<c>[\w.+#@-]+(?:\s+[A-Z][\w.+#-]*)*)\s*[.!]?\s*$"
    r"|\b(?:left|quit)\s+(?P<d>[A-Z][\w.+#@-]*(?:\s+[A-Z][\w.+#-]*)*)",
)


def displaced_values(source: str) -> list[str]:
    """The old values a change sentence names ("I moved from Lisbon to Porto" → Lisbon)."""
    found = (v.strip().rstrip(".!,;:") for m in _DISPLACED.finditer(source)
             for v in m.groupdict().values() if v)
    return [v for v in found if v]


def with_named_old_value(
    fact: FactView, decision: Decision, source: str, candidates: Sequence[Candidate],
    now: datetime,
) -> Decision:
    """A new claim that names the value it replaces updates the live memory holding that
    value, when the rules found nothing to change. A pinned or locked one is kept, and the
    two are flagged as contradicting instead."""
    if decision.action is not Action.ADD or decision.disputed or fact.hedged:
        return decision
    for old in displaced_values(source):
        pattern = re.compile(rf"(?<!\w){re.escape(old)}(?!\w)", re.IGNORECASE)
        for candidate in sorted(candidates, key=lambda c: (c.value is None, -c.similarity)):
            if candidate.lifecycle not in ACTIONABLE or candidate.negated or \
                    not pattern.search(candidate.value or candidate.content) or \
                    _holders_differ(fact, candidate) or \
                    (about_another(source) and not about_another(candidate.content)):
                continue
            if pattern.search(fact.value or "") and not fact.negated:
                continue
            if candidate.locked(now):
                return replace(decision, contradicts=(candidate.id,),
                               reason="names a pinned or locked memory's value as old; "
                                      "kept both")
            return Decision(Action.UPDATE, candidate.id,
                            f"the change names the old value {old!r}", confidence=0.8)
    return decision


def disputed_when_unmarked(fact: FactView, decision: Decision,
                           candidates: Sequence[Candidate], plainly: bool) -> Decision:
    """A claim that gives a slot a plainly other value and says nothing of a change ("My
    manager is Dana Whitfield." … "My manager is Kevin Osei."; [002]: "if ambiguous: dispute
    both") updates nothing: both claims stay, disputed, until the user says which holds.
    ``plainly``: its turn has no cue of change, correction or time
    (``turn_succession.says_no_change``). Values that may be one said two ways ("night owl"
    / "night person", "NYC" / "New York City", "around 11" / "11pm") still update."""
    if not plainly or decision.action is not Action.UPDATE or decision.reason != NEW_VALUE:
        return decision
    target = next((c for c in candidates if c.id == decision.target_id), None)
    if target is None or not held_by_someone(fact.subject) or \
            not _other_values(fact.value, target.value):
        return decision
    return Decision(Action.ADD, reason="another value for the slot, said with no cue of "
                    "change: both disputed", confidence=0.6,
                    contradicts=tuple(dict.fromkeys((target.id, *decision.contradicts))),
                    provider=decision.provider, model=decision.model,
                    prompt_version=decision.prompt_version)


#: Longest value (in words) two claims can contradict each other with: a name, a number, a
#: kind ("Kevin Osei", "three kids", "O negative"), not a description ("my way of showing my
#: story …", which two turns of a chat give a thing without contradicting each other).
VALUE_WORDS = 4


def held_by_someone(subject: str | None) -> bool:
    """A slot of the user or of a person ("user.manager", "person:ana.lives_in"), not of a
    thing talked about ("project.pattern_colors": "The colors are so bright" … "so bold")."""
    return subject is not None and subject.startswith(("user.", "person:"))


def _other_values(first: str | None, second: str | None) -> bool:
    """Two short values that cannot be one said two ways: other numbers, or no word in
    common and neither the other's initials."""
    if not first or not second:
        return False
    first, second = _head_of(first), _head_of(second)  # "KPMG in the audit practice": KPMG
    if max(len(first.split()), len(second.split())) > VALUE_WORDS:
        return False
    if "@" in first and "@" in second:  # two addresses share "com", not their owner
        return first.strip().casefold() != second.strip().casefold()
    labels = _labels(first), _labels(second)
    if all(labels) and labels[0] != labels[1]:
        return True  # "A positive" / "B positive", "plan A" / "plan B"
    said, other = _value_words(first) - _TITLES, _value_words(second) - _TITLES
    numbers = [sorted({*re.findall(r"\d+", v), *(w for w in words if w.isdigit())})
               for v, words in ((first, said), (second, other))]
    if any(numbers):  # "three kids" / "two kids"; "around 11" / "11pm" may be one
        return numbers[0] != numbers[1]
    if said & other:  # "Lincoln Elementary" / "Roosevelt Elementary": other names of a kind
        return _names_of(first, said - other) and _names_of(second, other - said)
    return not _initials_of(first, second) and not _initials_of(second, first)


def _names_of(value: str, own: set[str]) -> bool:
    """``value`` says a name of its own: one of ``own`` (its value words the other value
    lacks) is capitalised in it or a word the lexicon does not know."""
    named = {_value_word(w) for w in re.findall(r"[A-Za-z][\w'-]*", value)
             if w[:1].isupper() or unknown_word(w)}
    return bool(own & named)


def _value_word(word: str) -> str:
    return next(iter(_value_words(word)), "")


#: Words before a name that say nothing of who: "dr. fong" and "dr. patel" share no one.
_TITLES = frozenset({"dr", "doctor", "mr", "mrs", "ms", "miss", "prof", "professor", "sir"})
_DETAIL = re.compile(r"\s*,.*$|\s+(?:in|at|on|for|with|near|from|and|so|but|because)\s.*$",
                     re.IGNORECASE)


def _head_of(value: str) -> str:
    """A value without the detail after it ("Deloitte in consulting": Deloitte), unless the
    value starts with that word."""
    return _DETAIL.sub("", value) or value


def _initials_of(short: str, long: str) -> bool:
    """``short`` is ``long``'s initials: "NYC" of "New York City"."""
    initials = "".join(w[0] for w in re.findall(r"[A-Za-z]+", long) if w[0].isupper())
    return len(initials) >= 2 and short.strip(" .").replace(".", "").upper() == initials
