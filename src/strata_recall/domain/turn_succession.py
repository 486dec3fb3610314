"""Turns read as turns when the reader found no slot (decision 0056). Pure.

The fact-level decisions (``decisions.py``) need a slot on both sides: "I live in Lisbon" …
"I moved to Porto" works because both read as ``user.lives_in``. Said in other words ("I run
10 km every week" … "I'm up to 25 km a week now"; "The staging server is staging-2" …
"Staging moved to staging-5"), no slot is read and the old turn kept winning recall; and a
claim said again in other words ("Our dog Biscuit is a beagle" … "Biscuit, our pup, is a
beagle and full of energy") stayed two memories. Two fallbacks compare the turns themselves:

- ``succeeded``: a new turn that says a change (``says_change``) supersedes the one earlier
  turn it is most plainly about, when the earlier turn is a short plain present claim
  (``is_claim``: superseding a long turn would hide everything else it says), both are close
  in meaning and share a content word beyond the generic ones, the new turn adds nothing to
  a list ("too", "also", "another one"), and the earlier one is not pinned, locked by a
  manual edit, or disputed;
- ``restated``: a new turn that says no change folds into the earlier claim it only says
  again: close in meaning, leaning the same way, and saying everything specific in the new
  turn (``anchors``).

They only run when the reader's decisions changed nothing for the turn, and each is undone
like any decision (``undo`` of the new turn, or of the claim a restatement folded into).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache

from strata_recall.domain.decisions import has_negation
from strata_recall.domain.english import RELATIVES, SAID_IT_WRONG, unknown_word
from strata_recall.domain.text import STOPWORDS, as_digit, stem, words

#: Longest earlier turn (in words) a later turn may supersede: a claim, not a story.
CLAIM_WORDS = 20
#: Longest new turn (in words) read this way.
NEW_TURN_WORDS = 30
#: Cosine at which two turns are about the same thing (with a content word in common), and
#: the lower one that does with two content words in common.
SAME_TOPIC = 0.39
SAME_TOPIC_TWO_WORDS = 0.36

#: Words that say the state of something changed, or that an earlier claim was wrong.
_CHANGE = re.compile(
    r"\b(?:(?<!for a while )(?<!for ages )(?<!right )(?<!just )now|anymore|any more|"
    r"no longer|no more|these days|nowadays|lately|instead|"
    r"(?-i:new)|^New|"  # not "New York"
    r"switch(?:ed|ing)?|chang(?:ed|ing)|mov(?:ed|ing)|relocat(?:ed|ing)|transferr?(?:ed|ing)|"
    r"upgrad(?:ed|ing)|downgrad(?:ed|ing)|replac(?:ed|ing)|swapp?(?:ed|ing)|ditch(?:ed|ing)|"
    r"dropp(?:ed|ing)|quit|stopp(?:ed|ing)|sold|cancell?(?:ed|ing)|gave up|given up|"
    r"lapsed?|expired|ran out|closed|shut down|for good|done with|died|passed away|"
    r"pulled (?:\w+ ){0,2}out|went with|trad(?:ed|ing) in|ported|rewrote|rewritten|"
    r"postponed|rescheduled|as of|"
    r"(?:raised|lowered|bumped|pushed|upped|moved|increased|decreased|cut)"
    r"(?: \w+){0,3} (?:up|down|back|to)|(?:raised|lowered|increased|hiked) (?:the|my|our)|"
    r"went back to|got rid of|broke up|split up|took over|"
    r"left|retired|resigned|stepped (?:down|away)|finished|ended|not any ?more|"
    r"(?<!yeah )(?<!yes )(?<!yep )(?<!yeah, )(?<!yes, )(?<!oh )actually|"  # not "yeah actually"
    r"correction|scratch that|"
    r"oops|whoops|no wait|(?<![a-z] )i mean|i meant|misspoke|typo|"  # not "from afar i mean"
    r"mixed (?:it|that|them|those) up|"
    r"was wrong|(?:had|got) (?:\w+ ){0,2}wrong)\b",
    re.IGNORECASE,
)
#: An earlier turn that is not a plain present claim: a question, a reaction ("Thanks, …",
#: "Wow, …"), or a claim tied to its own past ("in 2015", "years ago", "used to", "my old
#: X"), which a
#: change now leaves true.
_NOT_A_CLAIM = re.compile(
    r"\?|^\W*(?:thanks|thank you|wow|hey|hi|hello|yay|omg|haha|lol|aw+|oh|ooh|nice|cool|great)\b|"
    r"\b(?:in|back in|during|until) (?:1[89]|20)\d\d\b|\bago\b|\bused to\b|\bwhen i was\b|"
    r"\b(?:my|our|his|her|their) (?:old|former|previous|ex)\b",
    re.IGNORECASE)
#: Not just after a title or an abbreviation whose full stop ends no sentence ("Dr. Lin"):
#: what a pattern for a sentence's end opens with.
NOT_AFTER_A_TITLE = "".join(rf"(?<!\b{t})" for t in ("mr", "mrs", "ms", "dr", "st", "jr", "sr",
                                                        "vs", "mt"))
#: A sentence's end.
_SENTENCE_END = re.compile(NOT_AFTER_A_TITLE + r"[.!?](?:\s|$)", re.IGNORECASE)
#: Words that add to what was said rather than replace it ("too" only ending a clause: "me
#: too", not "too crowded").
_ADDS = re.compile(r"\btoo\b(?=\s*(?:[.!,;]|$))|\b(?:also|as well|in addition|another one|"
                   r"one more|besides|(?:my|our|his|her|their|the) other)\b", re.IGNORECASE)
#: Content words too general to name a topic on their own.
_GENERIC = frozenset(stem(w) for w in """
    have has had get got go going went like love want need make made take took use used
    really just still also well good great new old lot lots thing things stuff day days week
    weeks month months year years today tomorrow yesterday time times now since ago last next
    first one two three every much many little bit way back right sure think know said say
    yeah yes ok okay oh hey well actually anymore longer more lately always usually often
    sometimes""".split())


@dataclass(frozen=True, slots=True)
class Turn:
    """A verbatim turn as this rule sees it: its id, words, when it was said, and (for an
    earlier turn) its cosine to the new one and whether a decision may change it."""

    id: str
    text: str
    said_at: datetime
    similarity: float = 0.0
    changeable: bool = True
    author: str | None = None  # who said it: a turn never supersedes another speaker's
    holds_slot: bool = False  # it carries its own fact (a slot a correction looks for)
    #: the same speaker's turn just before the new one, in the same input (only the other
    #: speaker's turns between): what a correction that opens the next turn corrects
    just_before: bool = False


#: A turn that opens by taking back what was just said ("no sorry, UA 842", "oops it's 8
#: people", "hmm actually make it 10.5", "scratch that, it's 4D").
_TAKES_BACK = re.compile(
    r"^\W*(?:(?:hmm+|um+|uh+|ugh|oh|ah|ok|okay|wait|lol|lmao|haha|ha)\W+)*(?:"
    r"sorry(?! to hear| for| about| you)|no(?! problem| prob| worries| doubt| way| rush)|nope|nah|"
    r"oops|whoops|"
    r"wait|correction|scratch that|i meant|i mean|actually|my bad|my mistake|typo|"
    r"(?:i\s+)?(?:miscounted|misremembered|misspoke|misread|misheard|mistyped)|"
    rf"autocorrect|ignore that|{SAID_IT_WRONG})\b", re.IGNORECASE)


#: A turn that says only that something said was wrong: "hold on i misread the itinerary",
#: "oops i mixed them up", "my mistake".
_SAYS_WRONG = re.compile(
    r"^\W*(?:(?:hold on|wait|oops|whoops|sorry|ugh|hmm+|oh|no|ah)\W+)*(?:i\s+)?(?:misread|"
    r"misspoke|mistyped|was wrong|got (?:it|that|this|them) wrong|mixed (?:it|that|them) up|"
    r"made a (?:typo|mistake)|my (?:mistake|bad))\b"
    r"(?:\s+(?:the|that|this|it|them|earlier|before|my|your)\b[\w\s']{0,25})?\W*$",
    re.IGNORECASE)  # and nothing more: "I was wrong, I use Helix." is the correction


def says_it_was_wrong(text: str) -> bool:
    return _SAYS_WRONG.match(text) is not None


@lru_cache(maxsize=4096)
def takes_back(text: str) -> bool:
    """The turn opens by correcting what its speaker just said, and adds to no list."""
    return _TAKES_BACK.match(text) is not None and _ADDS.search(text) is None


#: Words that place a claim in time or tell news: said with them, a new value for a slot is
#: an update ("weighed in this morning: 78.4kg", "turned 30 today"), not a conflict.
_NEWS = re.compile(
    r"\b(?:today|tonight|yesterday|this (?:morning|afternoon|evening|week|weekend|month|year|"
    r"semester|term|season|spring|summer|fall|autumn|winter)|last (?:week|weekend|month|year|"
    r"night|time|\w+day)|recently|just|finally|currently|at the moment|as of|since|starting|"
    r"from now on|going forward|again|already|update|updated|heads up|news|guess what|"
    r"turns? out|turned|bec[oa]me|got|gotten|started|joined|hired|promoted|bought|adopted|"
    r"married|engaged|divorced|sorry|my bad|renewed|reissued|changes?|"
    r"took (?:a |an |the |up )?(?:new )?(?:job|position|role|post|offer))\b",
    re.IGNORECASE)


@lru_cache(maxsize=4096)
def says_no_change(text: str) -> bool:
    """The turn says its claim plainly: no cue of a change, a correction or news, and no
    time it became so. A new value said so for a known slot is a conflict. The cues are
    looked for in the claim, not in a request beside it ("I'm 185 cm, need a new wetsuit")."""
    claim = claim_of(text) or text
    return not says_change(claim) and _TAKES_BACK.match(text) is None \
        and _NEWS.search(claim) is None and _ENDS.search(claim) is None


@lru_cache(maxsize=4096)
def says_change(text: str) -> bool:
    """The turn says something changed (or was wrong) and adds nothing to a list."""
    return _CHANGE.search(text) is not None and _ADDS.search(text) is None


@lru_cache(maxsize=4096)
def is_claim(text: str) -> bool:
    """A turn that makes one short, plain, present claim (``claim_of``), which a later
    change can replace."""
    return claim_of(text) is not None


#: A piece of a turn that asks rather than claims: a question without its question mark
#: ("any tips for the first day", "what time should I leave"), what the user means to do
#: ("I'm trying to build a budget", "looking for new running shoes") or why it tells it
#: ("keep that in mind for recipes", "in case you need it"): the frame of a request.
_ASKS = re.compile(
    r"^(?:(?:so|and|but|also|btw|oh|ok|okay|hey|hi)\W+)*(?:"
    r"any (?:\w+ )?(?:tips|ideas|suggestions|recommendations|advice|thoughts)\b|"
    r"keep (?:that|this|it) in mind\b|(?:just )?in case\b|if (?:that|it) (?:matters|helps)\b|"
    r"for the (?:form|record|file)\b|"
    r"(?:what|which|how|when|where|who|why|should|do|does|is|are)(?:'s)? .*\b(?:i|we|you|my)\b|"
    r"(?:i'?m |i am |we'?re |we are )?(?:trying|looking|planning|hoping|wanting) "
    r"(?:to|for|on)\b|(?:i |we )?(?:need|want|wanna|would like) (?:a |an |some |the |your )?"
    r"(?:[\w-]+ ){0,4}?(?:help|ideas?|tips?|advice|suggestions?|recommendations?|recs?)\b)",
    re.IGNORECASE)
#: A request: it and the rest of its sentence ask ("please ship the order to 14 Rowan Lane,
#: Apt 3B", "can you block my calendar").
_REQUEST = re.compile(
    r"^(?:(?:so|and|but|also|btw|oh|ok|okay|hey|hi)\W+)*(?:(?:can|could|would|will) (?:you|u)\b|"
    r"please\b|pls\b|plz\b|help me\b|remind me\b|let me know\b|lmk\b|"
    r"(?:schedule|book|find|check|add|send|order|set up|block|ship|suggest|recommend|"
    r"make sure|get me|show me|tell me)\b)", re.IGNORECASE)
#: Words that hand over a claim rather than ask ("can you remember I have a reservation …",
#: "fyi, …"): the claim is what follows.
_HANDS_OVER = re.compile(
    r"^(?:(?:can|could|would|will) (?:you|u) (?:please )?(?:remember|note|keep in mind)|"
    r"please (?:remember|note)|remember|note|fyi|just so you know|for the record|heads up|btw)"
    r"(?: that)?[,:]?\s+(?=\S)", re.IGNORECASE)
#: A tail that says why the user tells it, not what is so ("… in case you need it for the
#: form", "… if that matters", "… so schedule deliveries for those days").
_PURPOSE_TAIL = re.compile(
    r"\s+(?:(?:just )?in case\b|if (?:that|it|this) (?:matters|helps)\b|for (?:the|your) "
    r"(?:form|records?|file)\b|so (?:please |pls )?(?:you|schedule|book|plan|remind|use|keep|"
    r"make sure|no|don'?t|avoid|send|order)\b).*$", re.IGNORECASE)
#: A clause: up to a comma, a semicolon or a sentence's end (a dot inside "3.5" or "Dr."
#: is part of it).
def asks(piece: str) -> bool:
    """A piece of a turn that asks rather than claims ("so any phone tips should be for
    Android", "keep that in mind for recipes")."""
    return _ASKS.match(piece.strip(" ,;.!")) is not None


def compared_text(text: str) -> str:
    """What an earlier turn is embedded as to be compared: the claim it makes, without the
    request around it ("I'm flying to Lisbon on the 12th" of "…, any tips for the first
    day?"); a turn that is its claim, as said."""
    claim = claim_of(text)
    return text if claim is None or claim == text.strip().rstrip(".!") else \
        _with_its_person(text, claim)


def _with_its_person(text: str, claim: str) -> str:
    """``claim`` with a leading "he" or "she" read as the one relative the rest of ``text``
    names ("what's a good gift for my brother eli, he's turning 30": Eli is turning 30)."""
    pronoun = _HE_OR_SHE.match(claim)
    named = _KIN_NAMED.findall(text[:text.find(claim)] if claim in text else "")
    if pronoun is None or len(set(named)) != 1:
        return claim
    name = named[0]
    return f"{name[:1].upper()}{name[1:]} is {claim[pronoun.end():]}" if pronoun["is"] else \
        f"{name[:1].upper()}{name[1:]} {claim[pronoun.end():]}"


_HE_OR_SHE = re.compile(r"^(?:he|she)(?P<is>'s| is)?\s+", re.IGNORECASE)
_KIN_NAMED = re.compile(rf"\b(?:my|our)\s+(?:(?:little|older|younger|big|baby)\s+)?"
                        rf"(?:{'|'.join(RELATIVES)})\s+(?P<name>[A-Za-z][a-z'-]+)\b",
                        re.IGNORECASE)


#: A claim said in the past tense ("We were teammates for four years"): a change now leaves
#: it true, though a correction may still take it back.
_PAST = re.compile(r"^\W*(?:\w+\W+){0,3}?(?:was|were|had|did)\b", re.IGNORECASE)


@lru_cache(maxsize=4096)
def _in_the_past(text: str) -> bool:
    return _PAST.match(claim_of(text) or text) is not None


#: A reaction to what the other speaker said, which is left beside a question back ("That's
#: cool, Jon! What got you into this?", "Sure thing, John. Let me know …").
_REACTS = re.compile(
    r"^\W*(?:that(?:'s| is| was| sounds)|it(?:'s| is) (?:so |really )?(?:great|nice|cool|"
    r"awesome|amazing|good)|sounds|glad|sure|happy|awesome|great|cool|nice|wow|aw+|oh|haha|"
    r"lol|yeah|yes|yep|no worries|congrats|congratulations|well)\b", re.IGNORECASE)
#: A name the turn calls someone by: after a greeting, thanks or an acknowledgement, or
#: standing alone between punctuation ("No problem, Nate!", "Got it Nate, I'll …").
_CALLED = re.compile(r"(?:\b(?:it|great|thanks|thank you|hey|hi|hello|yeah|yes|wow|congrats|"
                     r"sure|sorry|ok|okay|bye|soon|man|dude),?\s+|(?:^|[,.!?]\s*))"
                     r"(?P<name>[A-Z][a-z]+)(?=\s*(?:[,!?.]|$))")


def called(text: str) -> frozenset[str]:
    """The stems of the names ``text`` calls someone by (``_CALLED``)."""
    return frozenset(stem(m["name"].casefold()) for m in _CALLED.finditer(text))


#: A name the turn opens by calling ("Caroline, awesome news …").
_VOCATIVE = re.compile(r"^\W*[A-Z][a-z]+,\s+")
_PIECE = re.compile(r"(?:[^,;!?.]|[.!?](?![\s]|$))+(?:[,;]|[!?.]+(?=\s|$)|$)")


@lru_cache(maxsize=4096)
def dated_claim_of(text: str) -> str | None:
    """``claim_of``, a claim tied to its year too ("i graduated from ohio state in 2012"): a
    thing done once, which another year said for it contradicts."""
    claim = claim_of(text)
    if claim is not None or _A_YEAR.search(text) is None:
        return claim
    # the year joined up, which ``_NOT_A_CLAIM`` then lets be
    joined = claim_of(_A_YEAR.sub(lambda m: " " + m.group(0).strip().replace(" ", "_"), text))
    return None if joined is None else joined.replace("_", " ")


def _person_claim_of(text: str) -> str | None:
    """``dated_claim_of``, its "he" or "she" read as the relative the rest of it names."""
    claim = dated_claim_of(text)
    return None if claim is None else _with_its_person(text, claim)


#: A year a claim is tied to ("in 2012", "back in 1998").
_A_YEAR = re.compile(r"\s(?:in|back in|during|until) (?:1[89]|20)\d\d\b", re.IGNORECASE)


@lru_cache(maxsize=4096)
def claim_of(text: str) -> str | None:
    """The one short, plain, present claim ``text`` makes, once what it asks (a question, a
    request, what the user means to do) and why it tells it (a purpose tail) are set aside:
    "I'm flying to Lisbon on the 12th, any tips for the first day?" claims "I'm flying to
    Lisbon on the 12th". ``None`` for a turn with no claim or with claims in several
    sentences (superseding it would hide the others), a long one, or one tied to its past."""
    text = text.strip()
    spans: list[tuple[int, int]] = []
    sentences: set[int] = set()
    sentence, asking = 0, False
    for match in _PIECE.finditer(text):
        piece = match.group(0)
        ends = piece.rstrip()[-1:] in ("!", "?", ".") and \
            _SENTENCE_END.search(piece.rstrip() + " ") is not None
        start = match.start() + len(piece) - len(piece.lstrip())
        lead = _HANDS_OVER.match(piece.strip())
        if lead is not None:
            start += lead.end()
        bare = _PURPOSE_TAIL.sub("", text[start:match.end()].rstrip(" ,;.!"))
        asking = asking or _REQUEST.match(bare) is not None
        if bare.strip() and not asking and not piece.rstrip().endswith("?") \
                and not _ASKS.match(bare):
            spans.append((start, start + len(bare)))
            sentences.add(sentence)
        if ends:
            sentence, asking = sentence + 1, False
    if not spans or len(sentences) > 1:
        return None
    claim = text[spans[0][0]:spans[-1][1]].strip(" ,;")
    if len(claim.split()) > CLAIM_WORDS or _NOT_A_CLAIM.search(claim) is not None \
            or (claim != text.rstrip(" .!") and _REACTS.match(_VOCATIVE.sub("", claim))):
        return None  # what is left beside a question is a reaction ("That's cool, Jon!")
    return claim


@lru_cache(maxsize=4096)
def topic_words(text: str) -> frozenset[str]:
    """The content words of ``text`` (stemmed) that can name a topic."""
    return frozenset(s for w in words(text) if (base := w.split("'", 1)[0])
                     and base not in STOPWORDS and not base.isdigit()
                     and (s := stem(base)) not in _GENERIC)


#: Where a turn splits into the clauses compared on their own: a change is often one
#: clause of a longer turn ("Hurt my knee, so no more Sunday basketball for me, doctor's
#: orders"), and the rest dilutes the whole turn's embedding.
_CLAUSE_BREAK = re.compile(r"[.!;:]+\s+|,\s+|\s+(?:because|since|so|but|and then)\s+",
                           re.IGNORECASE)
#: Clauses compared at most, and the fewest words one needs.
MAX_CLAUSES = 4
MIN_CLAUSE_WORDS = 3


def clauses(text: str) -> list[str]:
    """The clauses of ``text`` worth comparing on their own (none for a one-clause turn)."""
    parts = [p.strip(" .,!;:") for p in _CLAUSE_BREAK.split(text.strip())]
    kept = [p for p in parts if len(p.split()) >= MIN_CLAUSE_WORDS]
    return kept[:MAX_CLAUSES] if len(kept) > 1 else []


def _shared_topic(text: str, topic: frozenset[str], other: str) -> frozenset[str]:
    """The topic words ``text`` (of ``topic``) shares with ``other``, an acronym standing for
    the words it abbreviates ("PT" / "physical therapy": both words)."""
    # a name two turns both call the other by ("Got it Nate, I'll …" / "Sounds great, Nate!")
    # is whom they are said to, not what they are about
    found = set(topic & topic_words(other)) - (called(text) & called(other))
    for short, long in ((text, other), (other, text)):
        spelled = _initials(long)
        for acronym in _acronyms(short):
            found.update(spelled.get(acronym, ()))
    return frozenset(found)


_ACRONYM = re.compile(r"\b[A-Z]{2,4}\b")


@lru_cache(maxsize=4096)
def _acronyms(text: str) -> frozenset[str]:
    return frozenset(a.casefold() for a in _ACRONYM.findall(text))


@lru_cache(maxsize=4096)
def _initials(text: str) -> dict[str, tuple[str, ...]]:
    """Each run of two to four words by its initials, with the stems of its content words
    ("physical therapy": "pt"; "work from home": "wfh")."""
    said = [w for w in words(text) if w.isalpha()]
    return {"".join(w[0] for w in said[i:i + n]):
            tuple(stem(w) for w in said[i:i + n] if w not in STOPWORDS)
            for n in (2, 3, 4) for i in range(len(said) - n + 1)}


def _same_topic(similarity: float, shared: frozenset[str]) -> bool:
    return bool(shared) and (similarity >= SAME_TOPIC or
                             (len(shared) >= 2 and similarity >= SAME_TOPIC_TWO_WORDS))


#: Cosine from which a turn opening with a correction ("sorry I meant codeine") corrects an
#: earlier claim of its speaker that shares a topic word with it, said before its last turn.
CORRECTED_FROM = 0.33


def _corrected(text: str, earlier: Turn) -> bool:
    """``text`` opens with a correction and ``earlier`` is a claim on its topic, a little
    less alike than a change needs ("I'm allergic to sulfa drugs, please flag it" … "sorry I
    meant codeine — that's the one I'm allergic to"): the opener says a claim was wrong."""
    return takes_back(text) and earlier.similarity >= CORRECTED_FROM and bool(
        topic_words(text) & topic_words(claim_of(earlier.text) or earlier.text))


def _taken_back(text: str, earlier: Turn) -> bool:
    """``text`` takes back ``earlier``, the claim its speaker made just before: it opens
    with a correction and names the same thing or gives another number ("my flight is UA
    482" … "no sorry, UA 842"; "I wear a size 10" … "hmm actually make it 10.5"; "my manager's
    name is Katherine Boyle" … "sorry it's Kathryn, with a y"), however little the two read
    alike."""
    return earlier.just_before and takes_back(text) and (
        bool(topic_words(text) & topic_words(earlier.text))
        or (bool(_numbers(text)) and bool(_numbers(earlier.text)))
        or _respells(text, earlier.text))


#: Letters a name spelled anew keeps from the one it corrects ("Kathryn" / "Katherine").
RESPELLED_PREFIX = 4
_NAME = re.compile(r"\b[A-Z][a-z]{3,}\b")


def _respells(text: str, other: str) -> bool:
    """``text`` gives a name ``other`` spells otherwise: the same first letters, not the
    same name."""
    theirs = {n.casefold() for n in _NAME.findall(other)}
    mine = {n.casefold() for n in _NAME.findall(text)} - theirs
    return any(n[:RESPELLED_PREFIX] == o[:RESPELLED_PREFIX] for n in mine for o in theirs)


@lru_cache(maxsize=4096)
def worth_reading(text: str) -> bool:
    """Whether a new turn may supersede anything: short, no question, says a change (the
    cheap test before any search)."""
    if len(text.split()) > NEW_TURN_WORDS:
        return False
    claim: str | None = text
    if "?" in text:  # "switched to an iPhone 15!! how do i move my chats over?": the claim
        claim = claim_of(text)  # ... unless the claim is itself asked ("…, right?")
        if claim is None or "?" in claim or _TAG_QUESTION.search(text) is not None:
            return False
        changes = says_change(claim)
    else:
        changes = _says_change_in_claim(text)
    return changes or takes_back(claim) or _reports_a_number(claim)


#: A claim asked back ("Staging moved to staging-5, right?").
_TAG_QUESTION = re.compile(r"[,\s](?:right|correct|yes|no|yeah|ok|okay|true|is(?:n't| not) it|"
                           r"are(?:n't| not) they|did(?:n't| not) (?:i|we|it)|huh)\s*\?+\s*$",
                           re.IGNORECASE)


def _says_change_in_claim(text: str) -> bool:
    """The claim of the turn says a change, not the request beside it ("I'm 185 cm, need a
    new wetsuit size recommendation": the new wetsuit is asked for, the height is not new);
    in a turn of several sentences, one about the speaker's own ("You can use coconut oil
    instead of butter" advises, "Making a switch could open up new opportunities" muses)."""
    claim = claim_of(text)
    if claim is not None:
        return says_change(claim)
    return any(says_change(s) and _MUSES.search(s) is None
               for s in _SENTENCE_END.split(text))


#: A sentence that advises or muses rather than tells: said to "you", or of what can, could
#: or might be.
_MUSES = re.compile(r"^\W*(?:you|making|it'?s|that'?s)\b|\b(?:can|could|might|would)\b",
                    re.IGNORECASE)


@lru_cache(maxsize=4096)
def _reports_a_number(text: str) -> bool:
    """A number given with news or a time it holds from ("weighed in this morning: 78.4kg"):
    a new reading of a measure, which replaces an earlier one with another number."""
    return _NEWS.search(text) is not None and bool(_numbers(text)) and _ADDS.search(text) is None


def _other_numbers(text: str, other: str) -> bool:
    mine, theirs = Counter(_numbers(text)), Counter(_numbers(other))
    return bool(mine) and bool(theirs) and mine != theirs


def succeeded(new: Turn, earlier: Sequence[Turn]) -> Turn | None:
    """The earlier turn ``new`` supersedes, or ``None``: the most similar one that qualifies
    (ties: the latest said)."""
    if not worth_reading(new.text):
        return None
    topic = topic_words(new.text)
    if not topic:
        return None
    back = takes_back(new.text)
    said_so = back or _says_change_in_claim(new.text)  # else: a number
    fits = [t for t in earlier
            if t.changeable and t.id != new.id and t.said_at <= new.said_at
            and t.author == new.author
            # a claim tied to its year may be taken back, never changed
            and (is_claim(t.text) or (back and dated_claim_of(t.text) is not None))
            and (said_so or _other_numbers(new.text, t.text))
            and not _about_other_kin(new.text, t.text)
            and (back or not _in_the_past(t.text))
            and (_same_topic(t.similarity, _shared_topic(new.text, topic, t.text))
                 or _taken_back(new.text, t) or _corrected(new.text, t))
            and not _says_more(t.text, new.text)]
    return max(fits, key=lambda t: (t.similarity, t.said_at, t.id), default=None)


#: Items of a list, each naming something a change does not, from which an earlier turn is a
#: list of claims rather than one claim said with its details.
SAYS_MORE_AT = 3
_LIST_BREAK = re.compile(r";|,(?!\d{3}\b)|:(?!\d)|\band\b", re.IGNORECASE)  # not "6:15", "4,200"


def _says_more(old: str, new: str) -> bool:
    """``old`` lists several things ``new`` does not name ("my meds: levothyroxine 75mcg,
    vitamin D 2000 IU, and sertraline 50mg" … "doc raised my sertraline to 100mg"): a list of
    claims, of which a change replaces one. Superseded whole, the others would be lost with
    it; the turn stays, and the newer turn outranks it on what changed (decision 0057). One
    claim with its details ("My flight to Denver lands at 4:15 pm on Friday") is no list."""
    theirs = _anchors(new)
    items = [p for p in _LIST_BREAK.split(claim_of(old) or old) if p.strip()]
    typed_lowercase = _CAPITALISED.search(old) is None  # no capitals to tell names by
    named = topic_words(new)
    # of a list of three or more, two others said are enough ("I'm 5'9", about 170 lbs, and
    # my blood type is O negative" … "down to 162 lbs now")
    at_least = SAYS_MORE_AT - (len(items) >= SAYS_MORE_AT)
    return sum((bool(_anchors(f"and {p.strip()}") - theirs - _KIN_ANCHORS)
                or (typed_lowercase and bool(topic_words(p)) and not topic_words(p) & named))
               and _names_a_thing(p) for p in items) >= at_least


#: A capitalised word other than "I": a text typed with capitals marks its names.
_CAPITALISED = re.compile(r"\b(?!I\b)[A-Z][a-z]")


def _names_a_thing(item: str) -> bool:
    """An item of a list names what it gives a value for ("sertraline 50mg"); the parts of
    one address or name ("42 Maple Ave", "Apt 3B", "Somerville MA") name nothing else."""
    return any(w.isalpha() and w.islower() and w not in STOPWORDS and len(w) > 2
               for w in _TOKEN.findall(item))


#: Cosine at which a turn that says no change restates an earlier claim (with nothing
#: specific the earlier one does not say).
RESTATES = 0.7
RESTATES_SAID_ALIKE = 0.5
_TOKEN = re.compile(r"[\w@.+'-]+")
_HAS_DIGIT_OR_AT = re.compile(r"[\d@]")
_KIN = frozenset(w for r in RELATIVES for w in r.split())
_KIN_STEMS = frozenset(stem(w) for w in _KIN)
_KIN_ANCHORS = frozenset("=" + k for k in _KIN_STEMS)
#: Words of liking and disliking: "I love X" and "I hate X" are no restatement of each other.
_DISLIKE = re.compile(r"\b(?:hate|hates|dislike|dislikes|detest|loathe|can't stand|"
                      r"cannot stand|not a fan)\b", re.IGNORECASE)
#: What one's body cannot take: said of a thing avoided, as "I can't eat gluten" is.
_CANNOT_TAKE = re.compile(r"\b(?:allergic|allerg(?:y|ies)|intolerant|intolerance|sensitivity|"
                          r"sensitive to)\b", re.IGNORECASE)
_TAKES_IT = re.compile(r"\b(?:not|no|never|n't|no longer|nothing)\s+(?:\w+\s+){0,2}?"
                       r"(?:allergic|allerg|intoleran|sensitiv)", re.IGNORECASE)
#: More change words a restatement never holds (on top of ``_CHANGE``).
_ENDS = re.compile(r"\b(?:laid off|fired|outgr[eo]wn?|cut (?:out|back|down)|stepped down|"
                   r"unsubscribed|shaved|got (?:\w+ ){0,2}off|flew away|ran away|own)\b",
                   re.IGNORECASE)


def anchors(text: str, values: Sequence[str] = ()) -> frozenset[str]:
    """What is specific in ``text`` (``_anchors``) and in the values the reader found in it."""
    return _anchors(text) | _value_anchors(tuple(values))


@lru_cache(maxsize=4096)
def _value_anchors(values: tuple[str, ...]) -> frozenset[str]:
    return frozenset("=" + stem(as_digit(w.split("'", 1)[0]))
                     for value in values for w in words(value.split(",", 1)[0])
                     if w.split("'", 1)[0] not in STOPWORDS)


@lru_cache(maxsize=4096)
def _anchors(text: str) -> frozenset[str]:
    """What is specific in ``text``, each as a claim that says it too must say it: names and
    other capitalised words inside a sentence (``^`` + stem: capitalised there too; a
    sentence's first word may be any word), codes, numbers and addresses ("ana@corp.com",
    "7KLM392", "3rd"), the people it names by relation ("my dad"), and the words of each value
    the reader found in it, up to its first comma (``=`` + stem: in any case)."""
    found: set[str] = set()
    opening = True
    for token in _TOKEN.findall(text):
        base = token.strip(".'-").split("'", 1)[0]
        ends = token.rstrip("'").endswith((".", "!", "?", ":", ";")) and \
            base.casefold() not in _TITLES
        if base:
            if _HAS_DIGIT_OR_AT.search(base):
                found |= {"=" + _bare_number(w) for w in words(base)}
            elif base[0].isupper() and not opening and (
                    base.casefold() not in STOPWORDS or (len(base) == 1 and base != "I")):
                found.add("^" + stem(base.casefold()))
            elif base.casefold() in _KIN:
                found.add("=" + stem(base.casefold()))
            opening = False
        opening = opening or ends
    return frozenset(found)


def said_in(text: str, anchor: str) -> bool:
    """``text`` says ``anchor`` (one of ``anchors``)."""
    return _says(text, anchor)


def _says(text: str, anchor: str) -> bool:
    """``text`` says ``anchor``: a stem in any case (``=``), or capitalised (``^``)."""
    wanted = anchor[1:]
    said = _stems_said(text) if anchor.startswith("=") else _capitalised_said(text)
    return wanted in said or (wanted.isalpha() and any(
        _abbreviates(w, wanted) or _abbreviates(wanted, w) or _one_stem(w, wanted)
        for w in said if w.isalpha()))


def _one_stem(first: str, second: str) -> bool:
    """Two stems of one word the stemmer cut apart ("allerg" / "allergi": allergic,
    allergy), five letters at least in common."""
    short, long = sorted((first, second), key=len)
    return len(short) >= 5 and long.startswith(short)


@lru_cache(maxsize=4096)
def _stems_said(text: str) -> frozenset[str]:
    return frozenset(_bare_number(stem(as_digit(w.split("'", 1)[0]))) for w in words(text))


@lru_cache(maxsize=4096)
def _capitalised_said(text: str) -> frozenset[str]:
    return frozenset(stem(t.casefold())
                     for t in (t.strip(".'-").split("'", 1)[0] for t in _TOKEN.findall(text))
                     if t and t[0].isupper())


def _covers(text: str, specific: frozenset[str], other: str) -> bool:
    """``text`` says every anchor of ``other`` (``specific``), each number as often ("process
    3 private fact 3" is not said by "process 3 private fact 33")."""
    return all(_says(text, a) for a in specific) and not Counter(_numbers(other)) - Counter(
        _numbers(text))


@lru_cache(maxsize=4096)
def _numbers(text: str) -> tuple[str, ...]:
    """The numbers ``text`` says, in digits ("two" is 2, "5th" is 5, "11pm" is 11; "one" is
    too often a pronoun)."""
    return tuple(n for w in words(text)
                 if w != "one" and (n := _bare_number(as_digit(w))).isdigit())


#: Titles and abbreviations whose full stop ends no sentence ("Dr. Lin", "Elm St. 4").
_TITLES = frozenset("mr mrs ms dr st jr sr vs mt ave rd prof".split())
_NUMBER_SUFFIX = re.compile(r"^(\d+)(?:st|nd|rd|th|am|pm|kg|g|mg|lbs?|km|mi|cm|mm|ml|k|"
                            r"hrs?|mins?|yo)$")


def _bare_number(word: str) -> str:
    """A number without its ordinal, clock or unit suffix ("5th", "11pm", "82kg": 5, 11,
    82); a code keeps its letters ("4B" is not "4D")."""
    return _NUMBER_SUFFIX.sub(r"\1", word)


@lru_cache(maxsize=4096)
def _leaning(text: str) -> bool:
    """The claim's polarity: negated, or a dislike (each flips it); a thing one cannot take
    ("allergic", "intolerant") leans as "can't eat it" does, unless it is denied ("not
    allergic", "no allergies")."""
    if _CANNOT_TAKE.search(text):
        return _TAKES_IT.search(text) is None
    return has_negation(text) != (_DISLIKE.search(text) is not None)


#: Words each side may have that the other lacks and still be one word swapped for another.
SWAP_WORDS = 2


@lru_cache(maxsize=4096)
def _swaps_a_word(new: frozenset[str], old: frozenset[str]) -> bool:
    """The two say the same but for a word or two swapped ("tea notes for the office" /
    "… for the kitchen", "I drink tea" / "I drink coffee"): a look-alike or a change, never a
    restatement (which says the claim over in words of its own)."""
    only_new, only_old = new - old, old - new
    added = {w for w in only_new if not any(_one_word(w, d) for d in only_old)}
    dropped = {d for d in only_old if not any(_one_word(w, d) for w in only_new)}
    return 0 < len(added) <= SWAP_WORDS and 0 < len(dropped) <= SWAP_WORDS


def _one_word(first: str, second: str) -> bool:
    """Two stems of one word ("allerg" / "allergi", "fluent" / "fluentli")."""
    short, long = sorted((first, second), key=len)
    return len(short) >= 4 and long.startswith(short)


def _abbreviates(short: str, long: str) -> bool:
    """``short`` abbreviates ``long`` ("st" / "street", "ave" / "avenu"): its first letter, then
    the rest of its letters in order."""
    if len(short) < 2 or len(short) > 4 or len(short) >= len(long) or short[0] != long[0]:
        return False
    rest = iter(long[1:])
    return all(c in rest for c in short[1:])


@dataclass(frozen=True, slots=True)
class Restatement:
    """An earlier claim said again, and which of the two stays: the earlier one, unless the
    new turn says everything specific in it and more (``keeps_new``)."""

    claim: Turn
    keeps_new: bool


def restated(new: Turn, earlier: Sequence[Turn], values: Sequence[str] = ()
             ) -> Restatement | None:
    """The earlier claim ``new`` says again, or ``None``: a turn that says no change, leaning
    the same way (negation, dislike), close in meaning (``RESTATES``) to a short claim by the
    same speaker, one of the two saying everything specific in the other (``anchors``;
    ``values``: what the reader found in ``new``) and not only a word swapped; the most
    similar such claim. The one that says more stays (when the earlier says something
    specific at all); a claim that holds a slot always does (a later correction looks for
    it)."""
    text = new.text if "?" not in new.text else (claim_of(new.text) or new.text)
    if not _may_restate(text):
        return None
    specific = anchors(text, values)
    leaning = _leaning(text)
    topic = topic_words(text)
    found: list[Restatement] = []
    for t in earlier:
        if t.id == new.id or t.said_at > new.said_at or t.author != new.author \
                or t.similarity < _restates_at(specific, t.text) \
                or not topic & topic_words(t.text) \
                or not is_claim(t.text) or _leaning(t.text) != leaning \
                or (_swaps_a_word(topic, topic_words(t.text))
                    and not _names_agree(text, specific, t.text)):
            continue
        if _covers(t.text, specific, text) or (
                t.holds_slot and _names_agree(text, specific, t.text)):
            # a slot's value typed in lower case once ("our internet provider is spectrum")
            found.append(Restatement(t, keeps_new=False))
        elif not t.holds_slot and (said := anchors(t.text)) and _covers(text, said, t.text):
            found.append(Restatement(t, keeps_new=True))
    return max(found, key=lambda r: (r.claim.similarity, r.claim.said_at, r.claim.id),
               default=None)


def _restates_at(specific: frozenset[str], other: str) -> float:
    """The cosine a restatement needs: ``RESTATES``, or ``RESTATES_SAID_ALIKE`` when both say
    the same number or name ("175cm" / "175 cm", "Dr. Nwosu" / "Dr. Amara Nwosu"): said again
    in other words around it, which read less alike."""
    shared = {a for a in specific & anchors(other) if a[1:2].isdigit() or a.startswith("^")}
    return RESTATES_SAID_ALIKE if shared else RESTATES


#: Cosine at which a plain claim giving other numbers or names contradicts an earlier one.
CONTRADICTS = 0.7


def conflicted(new: Turn, earlier: Sequence[Turn]) -> Turn | None:
    """The earlier claim ``new`` contradicts, or ``None`` ([002]: "if ambiguous: dispute
    both"): ``new`` says its claim plainly (``says_no_change``), and a short earlier claim by
    the same speaker, close in meaning, leaning the same way, about the same relatives and
    sharing a topic word, gives other numbers or other names for it ("My license plate is KJX
    4420" … "My car's license plate is KJX 4402"), not both (two things, then)."""
    claim = dated_claim_of(new.text)
    if claim is None or not says_no_change(new.text):
        return None
    topic = topic_words(claim)
    fits = [t for t in earlier
            if t.changeable and t.id != new.id and t.said_at <= new.said_at
            and t.author == new.author and topic & topic_words(t.text)
            and (old := _person_claim_of(t.text)) is not None
            and t.similarity >= _contradicts_at(claim, old) and _contradicts(claim, old)]
    return max(fits, key=lambda t: (t.similarity, t.said_at, t.id), default=None)


#: Cosine from which two claims naming the same one (a pet, a person, a place) contradict.
CONTRADICTS_NAMING_ALIKE = 0.6


def _contradicts_at(claim: str, old: str) -> float:
    """``CONTRADICTS``, or ``CONTRADICTS_NAMING_ALIKE`` when both name one (``_one_named``)."""
    return CONTRADICTS_NAMING_ALIKE if _one_named(claim, old) else CONTRADICTS


def _one_named(claim: str, old: str) -> bool:
    """The two claims name someone or something alike: a capitalised name, or a word the
    lexicon does not know ("mochi", "pepper" said of a cat is known: then its capital)."""
    return bool(_name_stems(claim) & _name_stems(old)) or bool(_names(claim) & _names(old))


def _names(text: str) -> frozenset[str]:
    """The capitalised anchors of ``text`` (``^`` + stem)."""
    return frozenset(a for a in _anchors(text) if a.startswith("^"))


#: A claim about someone it does not name.
_UNNAMED = re.compile(r"^\W*(?:he|she|they|it|his|her|their|its)\b", re.IGNORECASE)


def _contradicts(claim: str, old: str) -> bool:
    """Two claims about one thing (a topic word in common, the same relatives, the same
    leaning) that give it other numbers or other names, not both."""
    if _leaning(claim) != _leaning(old) or not topic_words(claim) & topic_words(old) \
            or _UNNAMED.match(claim) or _UNNAMED.match(old):
        return False  # "She lives in Rome." / "She lives in Paris.": who is she?
    if _kin_of(claim) != _kin_of(old) and not _one_named(claim, old):
        return False  # "my dad's number" / "my mom's number": two holders, two claims
    numbers = Counter(_numbers(claim)), Counter(_numbers(old))
    names = _differing(_names(claim), _names(old))
    other_numbers = bool(numbers[0]) and bool(numbers[1]) and numbers[0] != numbers[1]
    # other names and other numbers too: two things ("My train to Lyon leaves at 8:10" /
    # "My train to Lille leaves at 9:50"), not two values of one
    return other_numbers != (bool(names[0]) and bool(names[1]))


#: The speaker among those a turn is about ("my wife and I moved", "we just had …").
_SPEAKER = re.compile(r"\b(?:i|i'm|i've|i'd|me|we|we're|we've|us|im)\b", re.IGNORECASE)


def _about_other_kin(new: str, old: str) -> bool:
    """``new`` opens on a relative ``old`` does not name, and is not about the speaker too
    ("my son wears a kids size 4, need new sneakers" changes no "my shoe size is 9.5")."""
    opening = _OPENS_ON_KIN.match(new)
    return opening is not None and stem(opening["kin"].casefold()) in _KIN_STEMS and \
        "=" + stem(opening["kin"].casefold()) not in _kin_of(old) and \
        _SPEAKER.search(new) is None


_OPENS_ON_KIN = re.compile(r"^\W*(?:my|our)\s+(?:(?:little|older|younger|big|baby|step|"
                           r"oldest|youngest)\s+)?(?P<kin>\w+)", re.IGNORECASE)


def _kin_of(text: str) -> frozenset[str]:
    """The relatives ``text`` names (anchors)."""
    return frozenset(a for a in _anchors(text) if a[1:] in _KIN_STEMS)


def _names_agree(text: str, specific: frozenset[str], other: str) -> bool:
    """One of the two names something (a name, a number, a code) and each says all the other
    names, in any case: what differs between them is wording ("My favorite cuisine is Thai"
    / "Thai food is my absolute favorite")."""
    said = anchors(other)
    if not specific and not said:
        return False
    unsaid = {a for a in said if not _says(text, "=" + a[1:])} | \
        {a for a in specific if not _says(other, "=" + a[1:])}
    if not unsaid:
        return True
    # "St. Vincent's Hospital" / "St. Vincent's": a name both say, and only the common words
    # of a name ("Hospital", "Elementary") said by one alone
    named = {a[1:] for a in said | specific if a[1:] in _name_stems(text)
             and a[1:] in _name_stems(other)}
    return bool(named) and all(a.startswith("^") for a in unsaid) and \
        {a[1:] for a in unsaid} <= _common_stems(text) | _common_stems(other)


@lru_cache(maxsize=4096)
def _name_stems(text: str) -> frozenset[str]:
    """The stems of the words of ``text`` the lexicon does not know: names."""
    return frozenset(stem(w) for w in _plain_words(text) if unknown_word(w))


@lru_cache(maxsize=4096)
def _common_stems(text: str) -> frozenset[str]:
    """The stems of the words of ``text`` the lexicon knows."""
    return frozenset(stem(w) for w in _plain_words(text) if w.isalpha() and not unknown_word(w))


def _plain_words(text: str) -> list[str]:
    return [w.split("'", 1)[0] for w in words(text) if w.split("'", 1)[0]]


def _differing(first: frozenset[str], second: frozenset[str]) -> tuple[set[str], set[str]]:
    """The anchors of each side the other lacks, an abbreviation counting as its word."""
    def lacks(mine: frozenset[str], theirs: frozenset[str]) -> set[str]:
        return {a for a in mine if not any(
            a[1:] == b[1:] or _abbreviates(a[1:], b[1:]) or _abbreviates(b[1:], a[1:])
            for b in theirs)}
    return lacks(first, second), lacks(second, first)


def word_matches(new: Turn, earlier: Sequence[Turn], *, changes: bool,
                 values: Sequence[str] = (), restating: bool = True) -> list[Turn]:
    """The earlier turns the rule (``succeeded`` when ``changes``, else ``restated`` when
    ``restating``, or ``conflicted``) would take if they were as close in meaning as can be:
    the only ones worth embedding."""
    close = [replace(t, similarity=1.0) for t in earlier]
    if changes:
        if not worth_reading(new.text):
            return []
        return [t for t, c in zip(earlier, close, strict=True) if succeeded(new, [c])]
    restates = restating and _may_restate(
        new.text if "?" not in new.text else (claim_of(new.text) or new.text))
    return [t for t, c in zip(earlier, close, strict=True)
            if (restates and restated(new, [c], values)) or conflicted(new, [c])]


@lru_cache(maxsize=4096)
def _may_restate(text: str) -> bool:
    return len(text.split()) <= NEW_TURN_WORDS and "?" not in text and \
        not _CHANGE.search(text) and not _ENDS.search(text)
