"""Text helpers shared by the write and read paths: normalisation, hashing, token estimates."""

from __future__ import annotations

import hashlib
import math
import re
import threading
import unicodedata
from functools import lru_cache
from typing import Any

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


#: Small numbers said in words, from zero: "two cats" and "2 cats" say the same.
NUMBER_WORDS = tuple("zero one two three four five six seven eight nine ten eleven twelve"
                     .split())
_NUMBER_WORDS = {w: str(n) for n, w in enumerate(NUMBER_WORDS)}


def as_digit(word: str) -> str:
    """``word`` as a digit when it is a small number said in words ("four" → "4")."""
    return _NUMBER_WORDS.get(word, word)


def normalize(text: str) -> str:
    """Canonical form for duplicate detection: NFKC, case-folded, whitespace collapsed."""
    return _WS.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


_EDGE_MARKS = re.compile(r"^[\W_]+|[\W_]+$")


def words_key(text: str) -> str:
    """``normalize`` without the marks around the words: "Ana's manager is Ben." and "ana's
    manager is Ben" say the same words (a fact that repeats its turn)."""
    return _EDGE_MARKS.sub("", normalize(text))


def content_hash(text: str) -> str:
    return hashlib.sha256(normalize(text).encode("utf-8")).hexdigest()


def estimate_tokens(text: str) -> int:
    return tokens_for(len(text))


def tokens_for(chars: int) -> int:
    """The token estimate of a text of ``chars`` characters (``estimate_tokens``)."""
    return max(1, math.ceil(chars / CHARS_PER_TOKEN))


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


# -- lexical analysis -------------------------------------------------------------------------
# Documents and queries go through the same ``analyze`` before any store sees them, so the
# SQLite, Postgres and in-memory adapters rank exactly the same tokens: a store only splits its
# search text on non-alphanumerics (``index_tokens``), which is what FTS5's unicode61 and
# Postgres' ``simple`` configuration do too.

_TOKEN = re.compile(r"[^\W_]+")


def fold(text: str) -> str:
    """Case-folded, without diacritics (é → e), compatibility forms unified."""
    if text.isascii():  # nothing to decompose or drop (most text; ~20x faster)
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def index_tokens(text: str) -> list[str]:
    """How every store splits an (already analysed) search text or query into terms."""
    return _TOKEN.findall(fold(text))


_THREAD = threading.local()


def _stemmer() -> Any:
    """This thread's English Snowball stemmer, built on first use (a process that only reads
    rows, ``strata list``, need not load it). One per thread: a stemmer keeps the word it is
    working on in itself, so two threads stemming with one (a remember on the caller's thread,
    a pipeline job on the write-behind thread) corrupt each other's words or fail with an
    IndexError."""
    stemmer = getattr(_THREAD, "stemmer", None)
    if stemmer is None:
        import snowballstemmer

        stemmer = _THREAD.stemmer = snowballstemmer.stemmer("english")
    return stemmer


@lru_cache(maxsize=65_536)
def stem(token: str) -> str:
    return str(_stemmer().stemWord(token)) if token.isalpha() else token


def analyze(text: str) -> list[str]:
    """Search terms of ``text`` in order, repeats kept (they are term frequency): folded,
    split on non-alphanumerics, stop words dropped, Snowball-stemmed."""
    return [stem(t) for t in index_tokens(text) if t not in STOPWORDS]


def search_text(text: str) -> str:
    """The analysed form a store indexes for ``text``."""
    return " ".join(analyze(text))
