"""The agent's extraction strategy as data ([004] §4.3 "extraction strategies"): the registry
entry ``extraction`` holds the phrases that mark an objective and the relation rules the
consolidation applies to each user turn (the store's own extractor still derives the facts
and most triples). The dreaming cycle proposes new rules; a human approves them; each merge
is a registry version that ``rollback`` undoes.

A rule is a line ``- <relation>: <phrase>`` under ``## Relations``: a turn saying
"<Name> <phrase> <Name>" (or "I" / "me") yields the triple (Name, relation, Name), with
"User" for the speaker, the store's name for them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from strata_recall.errors import InvalidInput

__all__ = ["EXTRACTION_TEMPLATE", "ExtractionRules", "RelationRule", "parse_rule_lines",
           "sections"]

EXTRACTION_TEMPLATE = """TASK: extraction
The agent's consolidation rules (the store's extractor derives facts and most triples).
## Objective phrases
- i want to
- i'd like to
- i need to
- my goal is to
- i plan to
- i'm trying to
- i am trying to
## Relations
"""

_SECTION = re.compile(r"^## (?P<name>[^\n]+)\n(?P<body>.*?)(?=^## |\Z)", re.M | re.S)
_RELATION = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
_PHRASE = re.compile(r"^[a-z][a-z' ]{0,40}[a-z]$")
_PARTY = r"(?:[A-Z][a-z]{1,30}|I|me)"
SPEAKER = "User"


def sections(text: str) -> dict[str, list[str]]:
    """The ``## Name`` sections of a template or a rendered prompt, as their non-empty
    ``- `` lines (the offline model reads prompts with it too)."""
    return {m["name"].strip().lower(): [ln[2:].strip() for ln in m["body"].splitlines()
                                        if ln.startswith("- ") and ln[2:].strip()]
            for m in _SECTION.finditer(text)}


@dataclass(frozen=True, slots=True)
class RelationRule:
    relation: str
    phrase: str

    @property
    def line(self) -> str:
        return f"- {self.relation}: {self.phrase}"

    def pattern(self) -> re.Pattern[str]:
        words = r"\s+".join(map(re.escape, self.phrase.split()))
        return re.compile(rf"\b(?P<s>{_PARTY})\s+{words}\s+(?P<o>{_PARTY})\b")


def parse_rule_lines(lines: Sequence[str]) -> list[RelationRule]:
    """``relation: phrase`` lines as rules; ``InvalidInput`` names the first bad one."""
    rules: list[RelationRule] = []
    for line in lines:
        relation, sep, phrase = line.removeprefix("- ").partition(":")
        relation, phrase = relation.strip().lower(), " ".join(phrase.lower().split())
        if not sep or not _RELATION.match(relation) or not _PHRASE.match(phrase):
            raise InvalidInput(f"bad relation rule {line!r}: expected 'relation: phrase' "
                               "(relation: lower-case letters, digits, _; phrase: words)")
        rules.append(RelationRule(relation, phrase))
    return rules


@dataclass(frozen=True, slots=True)
class ExtractionRules:
    objective_phrases: tuple[str, ...]
    relations: tuple[RelationRule, ...]

    @classmethod
    def parse(cls, template: str) -> ExtractionRules:
        found = sections(template)
        return cls(tuple(p.lower() for p in found.get("objective phrases", [])),
                   tuple(parse_rule_lines(found.get("relations", []))))

    def objectives(self, text: str) -> list[str]:
        if not self.objective_phrases:
            return []
        phrases = "|".join(re.escape(p) for p in self.objective_phrases)
        pattern = re.compile(rf"\b(?:{phrases})\s+(?P<goal>[^.!?\n]{{3,120}})", re.I)
        return [m["goal"].strip() for m in pattern.finditer(text)]

    def triples(self, text: str) -> list[tuple[str, str, str]]:
        found = [(_party(m["s"]), rule.relation, _party(m["o"]))
                 for rule in self.relations for m in rule.pattern().finditer(text)]
        return list(dict.fromkeys(t for t in found if t[0] != t[2]))

    def with_relations(self, template: str, added: Sequence[RelationRule]) -> str:
        """``template`` with the rules not yet known appended to its ``## Relations``."""
        known = {r.relation for r in self.relations}
        lines = "".join(f"{r.line}\n" for r in dict.fromkeys(added) if r.relation not in known)
        if "## Relations\n" not in template:
            template = template.rstrip("\n") + "\n## Relations\n"
        head, _, tail = template.partition("## Relations\n")
        body, sep, rest = tail.partition("\n## ")
        body = body.rstrip("\n") + "\n" if body.strip() else ""
        return head + "## Relations\n" + body + lines + (("\n## " + rest) if sep else "")


def _party(word: str) -> str:
    return SPEAKER if word in ("I", "me") else word

