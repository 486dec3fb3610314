"""Secrets out before any remote call ([003] §10.2), back in locally.

``Redactor.redact`` replaces every secret ``strata_recall.domain.secrets`` finds (and every
configured sensitive term) with a placeholder such as ``[REDACTED_AWS_ACCESS_KEY_1]``; the returned
map lets the caller restore the originals in the provider's answer without the secret ever leaving
the machine. The same secret gets the same placeholder within one call.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from strata_recall.domain.secrets import Secret, find_secrets, without_overlaps

#: The kind of a configured sensitive term's placeholder.
TERM = "term"


@dataclass(frozen=True, slots=True)
class Redacted:
    text: str
    placeholders: Mapping[str, str] = field(default_factory=dict)  # placeholder -> original

    def restore(self, text: str) -> str:
        """Put the originals back into ``text`` (e.g. a provider's answer)."""
        for placeholder, original in self.placeholders.items():
            text = text.replace(placeholder, original)
        return text


class Redactor:
    """The secret detector plus configured sensitive terms."""

    def __init__(self, terms: Iterable[str] = ()) -> None:
        cleaned = sorted({t.strip() for t in terms if t and t.strip()}, key=len, reverse=True)
        alternatives = "|".join(re.escape(t) for t in cleaned)
        self._terms = (re.compile(rf"(?i)(?<!\w)(?:{alternatives})(?!\w)") if cleaned
                       else None)

    def redact(self, text: str) -> Redacted:
        placeholders: dict[str, str] = {}
        by_secret: dict[str, str] = {}
        counts: dict[str, int] = {}
        parts: list[str] = []
        at = 0
        for found in self._found(text):
            secret = text[found.start:found.end]
            if secret not in by_secret:
                name = found.kind.upper()
                counts[name] = counts.get(name, 0) + 1
                by_secret[secret] = f"[REDACTED_{name}_{counts[name]}]"
                placeholders[by_secret[secret]] = secret
            parts += [text[at:found.start], by_secret[secret]]
            at = found.end
        parts.append(text[at:])
        return Redacted("".join(parts), placeholders)

    def _found(self, text: str) -> tuple[Secret, ...]:
        terms = [] if self._terms is None else [
            Secret(TERM, m.start(), m.end()) for m in self._terms.finditer(text)]
        return without_overlaps([*find_secrets(text), *terms])
