"""Text helpers shared by the write and read paths: normalisation, hashing, token estimates."""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata

_WS = re.compile(r"\s+")
_WORD = re.compile(r"[0-9a-z]+(?:'[a-z]+)?")

#: Characters per token used for budget estimates ([002] step 5: len / 3.5).
CHARS_PER_TOKEN = 3.5

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t don didn doesn isn wasn aren weren won shouldn couldn wouldn ll ve re d m o y""".split()
)


def normalize(text: str) -> str:
    """Canonical form for duplicate detection: NFKC, case-folded, whitespace collapsed."""
    return _WS.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def content_hash(text: str) -> str:
    return hashlib.sha256(normalize(text).encode("utf-8")).hexdigest()


def estimate_tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))


def words(text: str) -> list[str]:
    """Lower-case word tokens (letters and digits), keeping simple contractions together."""
    return _WORD.findall(normalize(text))


def keywords(text: str) -> list[str]:
    """Content words of a query, in order, without stop words or repeats."""
    seen: dict[str, None] = {}
    for word in words(text):
        base = word.split("'", 1)[0]
        if base and base not in STOPWORDS and base not in seen:
            seen[base] = None
    return list(seen)
