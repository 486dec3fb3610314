"""A deterministic bag-of-words embedder for tests: fast, no model, stable across processes."""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np

from strata_recall.embedders._common import check_texts, empty_matrix, l2_normalise
from strata_recall.errors import InvalidInput

if TYPE_CHECKING:
    from strata_recall.embedders._common import Matrix

_WORD = re.compile(r"\w+")
_EMPTY_FEATURE = "\x00empty"


def _features(text: str) -> Iterator[str]:
    """Lower-cased word unigrams and bigrams; a fixed marker for texts without words."""
    words = _WORD.findall(text.lower())
    if not words:
        yield _EMPTY_FEATURE
        return
    for word in words:
        yield "u:" + word
    for first, second in itertools.pairwise(words):
        yield f"b:{first} {second}"


def _bucket(feature: str, dim: int) -> tuple[int, float]:
    """Bucket index and sign of a feature.

    blake2b, unlike the built-in ``hash``, is not salted per process, so vectors written by
    one process match those computed by another.
    """
    digest = hashlib.blake2b(feature.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    sign = 1.0 if value >> 63 else -1.0
    return value % dim, sign


class HashingEmbedder:
    """Signed feature hashing of unigrams and bigrams, L2-normalised.

    Texts that share words get a positive cosine (up to rare bucket collisions); it knows
    nothing of meaning, so use it for unit tests only. A text of n words has 2n - 1 features
    (one for no words), an odd number of +-1 terms, so no row can cancel out to zero.
    """

    def __init__(self, dim: int = 384) -> None:
        if dim < 1:
            raise InvalidInput("dim must be positive", dim=dim)
        self._dim = dim

    @property
    def name(self) -> str:
        return f"hashing-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> Matrix:
        items = check_texts(texts)
        if not items:
            return empty_matrix(self._dim)
        rows = np.zeros((len(items), self._dim), dtype=np.float64)
        for row, text in zip(rows, items, strict=True):
            for feature in _features(text):
                index, sign = _bucket(feature, self._dim)
                row[index] += sign
        return l2_normalise(rows)
