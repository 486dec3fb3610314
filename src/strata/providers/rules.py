"""The built-in rule-based provider: deterministic English extraction and decisions.

Extraction splits the text into clauses, drops chatter and questions, reads the cues that
matter for decisions (negation, explicit change, hedging, "remember this"), then matches the
clause against a small set of slot patterns. A slot pattern gives a dot-notation subject
("user.location"), a value ("Berlin") and a standalone sentence ("User lives in Berlin").
A declarative clause that matches no pattern is kept as a casual mention (importance 3) without
a subject. Importance follows the scale of [002]; "remember this" gives 10 and pins the fact.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from strata.domain.decisions import Candidate, Decision, decide
from strata.domain.text import keywords
from strata.providers.base import (
    Capabilities,
    ExtractedFact,
    Extraction,
    Relation,
    Reliability,
)

PROMPT_VERSION = "rules-1"
MIN_CONTENT_WORDS = 1

_CLAUSE_SPLIT = re.compile(
    r"(?<=[.!?;])\s+|\n+|,?\s+but\s+|,\s*(?:and\s+)?(?=(?:i|i'm|i've|we|we're|my|our)\s)",
    re.IGNORECASE,
)
_TRAILING = re.compile(r"[\s.!;:,]+$")
_REMEMBER = re.compile(
    r"^(?:please\s+)?(?:remember|don't forget|do not forget|never forget|note|keep in mind|"
    r"for the record|fyi)(?:\s+(?:this|that))?\s*(?:[:,-]\s*|\s+that\s+|\s+)",
    re.IGNORECASE,
)
_LEADING_CUE = re.compile(
    r"^(?:(?:oh|well|so|ok|okay|um|hmm|also|and|btw|by the way|no wait|wait|sorry|oops)"
    r"[,!.]?\s+)+",
    re.IGNORECASE,
)
_CHANGE_PREFIX = re.compile(
    r"^(?:actually|correction|update|to correct myself|scratch that|i was wrong|"
    r"i misspoke|as of (?:today|now|this week|this month|this year))[,:!.-]?\s*(?:i meant\s+)?",
    re.IGNORECASE,
)
_CHANGE_WORDS = re.compile(
    r"\b(?:now|no longer|anymore|any more|these days|from now on|moved|switched|changed|"
    r"instead|recently|just started|not \w+ anymore|has been (?:moved|pushed|changed)|"
    r"was (?:moved|pushed|changed)|got (?:moved|pushed)|pushed (?:back|out)|nowadays)\b",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\b(?:i think|i guess|i believe|i suppose|maybe|perhaps|probably|possibly|might|"
    r"not sure|apparently|i heard|someone (?:said|told me)|rumou?r|supposedly|kind of|"
    r"sort of|could be)\b",
    re.IGNORECASE,
)
_CHATTER = re.compile(
    r"^(?:hi|hello|hey|yo|thanks|thank you|thx|ok|okay|k|cool|great|sure|yes|yeah|yep|no|nope|"
    r"bye|goodbye|see you|good (?:morning|night|evening|afternoon)|lol|haha|nice|awesome|"
    r"got it|sounds good|perfect|np|no problem|you're welcome|welcome|alright|right|hmm|"
    r"interesting|wow|oh|ah|i see|makes sense|fair enough|good|fine|cheers|how are you|"
    r"what's up|never mind|nevermind)\b",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    r"^(?:what|who|where|when|why|how|which|can|could|would|should|do|does|did|is|are|will|"
    r"shall|may)\b", re.IGNORECASE,
)
_NEGATION = re.compile(
    r"\b(?:not|never|no longer|don't|doesn't|didn't|isn't|aren't|wasn't|won't|can't|"
    r"do not|does not|did not|stopped|quit)\b|n't\b",
    re.IGNORECASE,
)

# Categories whose preference is single-valued: a new "I prefer X" replaces the old one.
_CATEGORIES: dict[str, tuple[str, ...]] = {
    "language": ("python", "java", "javascript", "typescript", "go", "golang", "rust", "c++",
                 "c#", "ruby", "kotlin", "swift", "scala", "php", "elixir", "haskell", "clojure",
                 "perl", "r", "julia", "dart", "zig", "ocaml", "f#", "lua"),
    "editor": ("vim", "neovim", "emacs", "vscode", "vs code", "visual studio code", "intellij",
               "pycharm", "sublime", "sublime text", "nano", "zed", "cursor", "helix", "atom"),
    "os": ("linux", "macos", "mac", "windows", "ubuntu", "arch", "fedora", "debian"),
    "database": ("postgres", "postgresql", "mysql", "sqlite", "mongodb", "mongo", "redis",
                 "dynamodb", "cassandra", "mariadb", "oracle", "clickhouse", "duckdb"),
    "cloud": ("aws", "gcp", "azure", "google cloud", "digitalocean", "hetzner", "fly.io",
              "heroku", "vercel", "netlify", "cloudflare"),
    "theme": ("dark mode", "light mode", "dark theme", "light theme"),
    "drink": ("coffee", "tea", "espresso", "green tea", "black coffee", "decaf", "matcha"),
    "shell": ("bash", "zsh", "fish", "powershell"),
    "browser": ("firefox", "chrome", "safari", "edge", "brave", "arc"),
    "frontend": ("react", "vue", "angular", "svelte", "solid", "htmx"),
    "test_runner": ("pytest", "unittest", "jest", "vitest", "mocha"),
    "vcs_host": ("github", "gitlab", "bitbucket"),
    "chat": ("slack", "teams", "discord", "email", "zoom"),
    "indentation": ("tabs", "spaces"),
}
_ROLE_NOUNS = frozenset(
    """engineer developer manager designer scientist analyst teacher student doctor nurse
    lawyer consultant founder ceo cto cfo coo researcher architect intern lead director writer
    accountant programmer professor lecturer administrator admin sre devops owner officer
    editor journalist pharmacist dentist physician therapist chef recruiter marketer""".split()
)


@dataclass(frozen=True, slots=True)
class Cues:
    negated: bool
    explicit_change: bool
    hedged: bool
    remember: bool


@dataclass(frozen=True, slots=True)
class Slot:
    """A matched pattern: what the clause says, in a form the decision rules can compare."""

    subject: str
    value: str
    content: str
    type: str
    importance: int
    predicate: str


Groups = dict[str, str]
Builder = Callable[[Groups], Slot | None]
Pattern = tuple[re.Pattern[str], Builder]


def _slug(text: str) -> str:
    words = keywords(text)[:3]
    return "_".join(words) if words else "misc"


def _category(value: str) -> str | None:
    lowered = value.casefold()
    for category, names in _CATEGORIES.items():
        for name in names:
            if re.search(rf"(?<![\w+#]){re.escape(name)}(?![\w+#])", lowered):
                return category
    return None


_TIME_TAIL = re.compile(
    r"\s+(?:last|this|next) (?:week|month|year|weekend|spring|summer|fall|autumn|winter)$|"
    r"\s+(?:yesterday|today|recently|lately|a while ago|(?:a few|two|three) \w+ ago|"
    r"since \w+(?: \d{4})?|in \d{4})$",
    re.IGNORECASE,
)


def _clean_value(value: str) -> str:
    value = _TIME_TAIL.sub("", _TRAILING.sub("", value.strip()))
    value = re.sub(r"\s+(?:now|anymore|any more|these days|nowadays|instead|too|as well)$", "",
                   value.strip(), flags=re.IGNORECASE)
    value = re.sub(r"^(?:the|a|an)\s+(?=\S+\s+\S)", "", value, flags=re.IGNORECASE)
    return _TRAILING.sub("", value)


def _identity(subject: str, template: str, predicate: str, importance: int = 9,
              kind: str = "user_profile") -> Builder:
    def build(match: Groups) -> Slot | None:
        value = _clean_value(match["v"])
        if not keywords(value):
            return None
        return Slot(subject, value, template.format(v=value), kind, importance, predicate)
    return build


def _role(match: Groups) -> Slot | None:
    value = _clean_value(match["v"])
    org = match.get("org")
    words = keywords(value)
    if not words or words[-1] not in _ROLE_NOUNS:
        return None
    content = f"User works as {_article(value)} {value}"
    if org:
        content += f" at {_clean_value(org)}"
    return Slot("user.role", value, content, "user_profile", 9, "works_as")


def _article(value: str) -> str:
    return "an" if value[:1].lower() in "aeiou" else "a"


def _my_attribute(match: Groups) -> Slot | None:
    key = match["k"].strip().casefold()
    value = _clean_value(match["v"])
    if not keywords(key) or not keywords(value):
        return None
    relatives = {"wife", "husband", "partner", "son", "daughter", "dog", "cat", "brother",
                 "sister", "mother", "father", "mom", "dad", "manager", "boss", "girlfriend",
                 "boyfriend", "kid", "child", "cofounder", "co-founder"}
    key = re.sub(r"'s name$| name$", "", key) if key.split()[0] in relatives else key
    importance = 8 if key.startswith(("favorite", "favourite")) else 6
    subject = "user.preference." + _slug(key) if importance == 8 else "user." + _slug(key)
    return Slot(subject, value, f"User's {key} is {value}", "user_profile", importance, key)


def _preference(match: Groups) -> Slot | None:
    value = _clean_value(re.split(r"\s+(?:over|to|rather than|instead of)\s+",
                                  match["v"], maxsplit=1)[0])
    if not keywords(value):
        return None
    key = _category(value) or _slug(value)
    return Slot(f"user.preference.{key}", value, f"User prefers {value}", "semantic", 8,
                "prefers")


def _opinion(strength: int, verb: str, sentiment: str) -> Builder:
    def build(match: Groups) -> Slot | None:
        value = _clean_value(match["v"])
        if not keywords(value):
            return None
        return Slot(f"user.opinion.{_slug(value)}", sentiment, f"User {verb} {value}",
                    "semantic", strength, verb)
    return build


def _uses(owner: str) -> Builder:
    def build(match: Groups) -> Slot | None:
        value = _clean_value(re.split(r"\s+for\s+", match["v"], maxsplit=1)[0])
        if not keywords(value):
            return None
        who = "User" if owner == "user" else "The team"
        key = _category(value) or _slug(value)
        return Slot(f"{owner}.tool.{key}", value, f"{who} uses {value}", "semantic",
                    5, "uses")
    return build


def _switched(owner: str) -> Builder:
    def build(match: Groups) -> Slot | None:
        value = _clean_value(match["v"])
        old = match.get("old", "")
        key = _category(value) or _category(old) or _slug(value)
        who = "User" if owner == "user" else "The team"
        return Slot(f"{owner}.tool.{key}", value, f"{who} uses {value}", "semantic", 6, "uses")
    return build


def _first_person(owner: str) -> Builder:
    """'I eat meat', 'I'm vegetarian', 'we ship on Fridays': a slot keyed by the claim itself,
    so only the same claim said the other way round (a negation) conflicts with it."""
    def build(match: Groups) -> Slot | None:
        verb = match.get("verb", "is").casefold()
        value = _clean_value(match["v"])
        if not keywords(value) or verb in _NOT_VERBS:
            return None
        who = "User" if owner == "user" else "The team"
        said_verb = _third(verb) if owner == "user" else verb
        said = f"is {value}" if verb == "is" else f"{said_verb} {value}"
        return Slot(f"{owner}.{verb}.{_slug(value)}", value, f"{who} {said}",
                    "semantic", 4, verb)
    return build


def _third(verb: str) -> str:
    """drink → drinks, watch → watches, study → studies."""
    if verb.endswith(("s", "sh", "ch", "x", "o")):
        return verb + "es"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


_NOT_VERBS = frozenset({"think", "guess", "believe", "suppose", "mean", "meant", "wonder",
                        "hope", "wish", "need", "want", "will", "would", "can", "could",
                        "should", "was", "were", "had", "did"})


def _decision(match: Groups) -> Slot | None:
    value = _clean_value(match["v"])
    if not keywords(value):
        return None
    key = _category(value) or _slug(value)
    return Slot(f"project.decision.{key}", value, f"The team decided: {value}", "episodic", 7,
                "decided")


def _project_fact(match: Groups) -> Slot | None:
    key = match["k"].strip().casefold()
    value = _clean_value(match["v"])
    if not keywords(value):
        return None
    return Slot(f"project.{_slug(key)}", value, f"The {key} is {value}", "semantic", 6, key)


def _thing_fact(match: Groups) -> Slot | None:
    owner = "project" if match["d"].casefold() == "our" else "topic"
    key = match["k"].strip()
    verb = match["p"].strip().casefold()
    value = _clean_value(match["v"])
    if not keywords(value) or not keywords(key) or len(key.split()) > 4:
        return None
    det = "Our" if owner == "project" else "The"
    subject = f"{owner}.{_slug(key)}.{_slug(verb) if verb not in ('is', 'are') else 'is'}"
    return Slot(subject, value, f"{det} {key} {verb} {value}", "semantic", 5, verb)


_P = re.IGNORECASE
PATTERNS: list[Pattern] = [
    (re.compile(r"^my name is (?P<v>.+)$|^(?:call me|i go by|i'm called) (?P<v2>.+)$", _P),
     _identity("user.name", "User's name is {v}", "named")),
    (re.compile(r"^i (?:now )?(?:work|am working) (?:at|for) (?P<v>.+)$|"
                r"^i(?:'ve| have)? (?:just |recently )?(?:joined|started (?:working )?at) "
                r"(?P<v2>.+)$", _P),
     _identity("user.employer", "User works at {v}", "works_at")),
    (re.compile(r"^i (?:now )?work as (?P<v>.+?)(?: (?:at|for) (?P<org>.+))?$|"
                r"^i(?: am|'m) (?:now )?(?:a|an) (?P<v2>.+?)(?: (?:at|for) (?P<org2>.+))?$", _P),
     _role),
    (re.compile(r"^i (?:now )?(?:live|am living|'m living|reside) in (?P<v>.+)$|"
                r"^i(?:'ve| have)? (?:just |recently )?(?:moved|relocated) to (?P<v2>.+)$|"
                r"^i(?: am|'m) (?:now )?based in (?P<v3>.+)$", _P),
     _identity("user.location", "User lives in {v}", "lives_in", 7)),
    (re.compile(r"^i(?: am|'m) (?:originally )?from (?P<v>.+)$", _P),
     _identity("user.hometown", "User is from {v}", "from", 6)),
    (re.compile(r"^i(?: am|'m) (?P<v>\d{1,3})(?: years old)?$", _P),
     _identity("user.age", "User is {v} years old", "age", 6)),
    (re.compile(r"^my (?P<k>[a-z' -]{2,40}?) (?:is|are|was) (?:called |named )?(?P<v>.+)$", _P),
     _my_attribute),
    (re.compile(r"^i (?:really |strongly |generally |usually )?prefer (?P<v>.+)$", _P),
     _preference),
    (re.compile(r"^i (?:really |absolutely )?(?:love|adore) (?P<v>.+)$", _P),
     _opinion(8, "loves", "positive")),
    (re.compile(r"^i (?:really |absolutely )?(?:hate|can't stand|detest|despise) (?P<v>.+)$",
                _P), _opinion(8, "hates", "negative")),
    (re.compile(r"^i (?:really )?(?:like|enjoy) (?P<v>.+)$", _P),
     _opinion(4, "likes", "positive")),
    (re.compile(r"^i (?:dislike) (?P<v>.+)$", _P), _opinion(4, "dislikes", "negative")),
    (re.compile(r"^i(?:'ve| have)? (?:just )?(?:switched|moved|migrated) (?:from (?P<old>.+?) )?"
                r"to (?P<v>.+)$", _P), _switched("user")),
    (re.compile(r"^we(?:'ve| have)? (?:just )?(?:switched|moved|migrated) "
                r"(?:from (?P<old>.+?) )?to (?P<v>.+)$", _P), _switched("project")),
    (re.compile(r"^i (?:mainly |mostly |now )?use (?P<v>.+)$", _P), _uses("user")),
    (re.compile(r"^we (?:mainly |mostly |now )?use (?P<v>.+)$", _P), _uses("project")),
    (re.compile(r"^(?:we|i)(?:'ve| have)? (?:decided|agreed) (?:to |that |on )?(?P<v>.+)$|"
                r"^let's (?:go with|use) (?P<v2>.+)$|^we(?:'ll| will) go with (?P<v3>.+)$", _P),
     _decision),
    (re.compile(r"^(?:the |our )?(?P<k>deadline|due date|launch date|launch|release date|"
                r"release|demo|budget|go-live date|code freeze)(?: for [\w ]+)? "
                r"(?:is|was|has been|will be)(?: moved| pushed| changed)?(?: back)?"
                r"(?: to| on| for)? (?P<v>.+)$", _P), _project_fact),
    (re.compile(r"^(?P<d>the|our) (?P<k>[a-z][\w -]{1,40}?) (?P<p>is|are|runs on|run on|"
                r"is hosted on|is on|lives in|is deployed to|uses|use|is written in|"
                r"is located in|is stored in|costs|starts at|meets on|is due)(?: now)? "
                r"(?P<v>.+)$", _P), _thing_fact),
    (re.compile(r"^i(?: am|'m) (?P<v>.+)$", _P), _first_person("user")),
    (re.compile(r"^we(?: are|'re) (?P<v>.+)$", _P), _first_person("project")),
    (re.compile(r"^i (?:always |usually |often |mostly |generally |normally )?"
                r"(?P<verb>[a-z]+) (?P<v>.+)$", _P), _first_person("user")),
    (re.compile(r"^we (?:always |usually |often |mostly |generally |normally )?"
                r"(?P<verb>[a-z]+) (?P<v>.+)$", _P), _first_person("project")),
]


def split_clauses(text: str) -> list[str]:
    return [c.strip() for c in _CLAUSE_SPLIT.split(text) if c and c.strip()]


def is_chatter(clause: str) -> bool:
    """Greetings, acknowledgements and questions: importance 1-2, not stored ([002])."""
    bare = _TRAILING.sub("", clause.strip())
    if not bare or clause.rstrip().endswith("?") or _QUESTION_START.match(bare):
        return True
    if _CHATTER.match(bare) and len(keywords(_CHATTER.sub("", bare, count=1))) < 2:
        return True
    return len(keywords(bare)) < MIN_CONTENT_WORDS


def read_cues(clause: str) -> tuple[str, Cues]:
    """Strip leading cue words and report what they said."""
    remember = False
    text = _LEADING_CUE.sub("", clause.strip())
    if _REMEMBER.match(text):
        remember = True
        text = _REMEMBER.sub("", text, count=1)
    change_prefix = _CHANGE_PREFIX.match(text) is not None
    text = _CHANGE_PREFIX.sub("", text, count=1)
    text = _LEADING_CUE.sub("", text)
    text = _TRAILING.sub("", text)
    cues = Cues(
        negated=_NEGATION.search(text) is not None,
        explicit_change=change_prefix or _CHANGE_WORDS.search(text) is not None,
        hedged=_HEDGE.search(text) is not None,
        remember=remember,
    )
    return text, cues


_UNNEGATE: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b(?:i think|i guess|i believe|i suppose|maybe|perhaps|probably|possibly|"
                r"apparently|i heard that|i heard|supposedly)\s*,?\s*", _P), ""),
    (re.compile(r"\b(?:don't|do not|doesn't|does not|didn't|did not)\s+", _P), ""),
    (re.compile(r"\b(?:no longer|never)\s+", _P), ""),
    (re.compile(r"\b(am|is|are|'m|was|were)\s+not\b", _P), r"\1"),
    (re.compile(r"\b(i)(?:'m| am)n't\b", _P), r"\1'm"),
    (re.compile(r"\b(is|are|was|were)n't\b", _P), r"\1"),
    (re.compile(r"\bcan't\s+", _P), ""),
    (re.compile(r"\b(?:stopped|quit)\s+(\w+?)ing\b", _P), r"\1"),
    (re.compile(r"\s+(?:anymore|any more)\b", _P), ""),
    (re.compile(r"\bnot\s+", _P), ""),
]
_ING_FIXES = {"us": "use", "liv": "live", "hav": "have", "mak": "make", "writ": "write",
              "driv": "drive", "cod": "code", "tak": "take", "smok": "smoke", "bak": "bake"}


def affirmative(text: str) -> str:
    """The clause without negation and hedges, so slot patterns see the plain claim."""
    for pattern, replacement in _UNNEGATE:
        text = pattern.sub(replacement, text)
    for stem, verb in _ING_FIXES.items():
        text = re.sub(rf"\b(i|we) {stem}\b", rf"\1 {verb}", text, flags=re.IGNORECASE)
    return re.sub(r"\s+", " ", text).strip()


def third_person(text: str) -> str:
    """'I don't drink coffee' → 'User don't drink coffee': a standalone, if plain, sentence."""
    replacements = [(r"^i'm\b|^i am\b", "User is"), (r"^i've\b", "User has"),
                    (r"^i\b", "User"), (r"\bmy\b", "User's"), (r"\bme\b", "the user"),
                    (r"\bmyself\b", "the user"), (r"\bi\b", "the user"),
                    (r"^User don't\b", "User doesn't"), (r"^User do not\b", "User does not")]
    for pattern, replacement in replacements:
        text = re.sub(pattern, replacement, text, flags=re.IGNORECASE)
    return text[:1].upper() + text[1:]


def match_slot(claim: str) -> Slot | None:
    for pattern, build in PATTERNS:
        match = pattern.match(claim)
        if match is not None:
            slot = build(_merged(match))
            if slot is not None:
                return slot
    return None


def _merged(match: re.Match[str]) -> Groups:
    """Named groups with alternatives folded: ``v2``/``v3`` → ``v``, ``org2`` → ``org``."""
    groups: Groups = {}
    for name, value in match.groupdict().items():
        if value is not None:
            groups.setdefault(name.rstrip("0123456789"), value)
    return groups


def extract_clause(clause: str) -> ExtractedFact | None:
    """One fact from one clause, or None for chatter."""
    if is_chatter(clause):
        return None
    text, cues = read_cues(clause)
    if not text or is_chatter(text):
        return None
    slot = match_slot(affirmative(text))
    confidence = 0.5 if cues.hedged else (0.9 if slot is not None else 0.7)
    if slot is None:
        return _mention(text, cues, confidence)
    content = third_person(text) if cues.negated else slot.content
    importance = 10 if cues.remember else slot.importance
    if cues.explicit_change:
        importance = max(importance, 7)  # [002]: extract corrections with high importance
    return ExtractedFact(
        content=content, type=slot.type, subject=slot.subject, importance=importance,
        confidence=confidence, entities=("User", slot.value), pinned=cues.remember,
        relations=(Relation("User", slot.predicate, slot.value, confidence),),
        value=slot.value, negated=cues.negated, explicit_change=cues.explicit_change,
        hedged=cues.hedged,
    )


def _mention(text: str, cues: Cues, confidence: float) -> ExtractedFact:
    names = tuple(dict.fromkeys(re.findall(r"(?<!^)\b[A-Z][\w.+#-]*(?:\s+[A-Z][\w.+#-]*)*",
                                           text)))
    return ExtractedFact(
        content=third_person(text), type="semantic", subject=None,
        importance=10 if cues.remember else 3, confidence=confidence, entities=names,
        pinned=cues.remember, negated=cues.negated, explicit_change=cues.explicit_change,
        hedged=cues.hedged,
    )


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
        facts = [f for f in (extract_clause(c) for c in split_clauses(text)) if f is not None]
        entities = tuple(dict.fromkeys(e for f in facts for e in f.entities))
        relations = tuple(r for f in facts for r in f.relations)
        return Extraction(facts=tuple(facts), entities=entities, relations=relations,
                          provider=self.name, prompt_version=self.prompt_version)

    def decide(self, fact: ExtractedFact, candidates: Sequence[Candidate]) -> Decision:
        return decide(fact.view, candidates, self._now())
