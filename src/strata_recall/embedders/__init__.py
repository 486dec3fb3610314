"""Embedder adapters behind the ``strata_recall.ports.Embedder`` protocol.

- ``onnx``: all-MiniLM-L6-v2, int8, on onnxruntime (the default: no torch when serving);
- ``onnx-fp32``: the same export without quantization;
- ``torch``: the same model through sentence-transformers (the reference);
- ``hashing``: a bag-of-words stand-in for unit tests.

Submodules load on first use of a name, so importing this package stays cheap and
``python -m strata_recall.embedders.onnx`` runs without a double import.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from strata_recall.errors import InvalidInput
from strata_recall.ports import Embedder

if TYPE_CHECKING:
    from strata_recall.embedders.cache import CachedEmbedder, CacheStats
    from strata_recall.embedders.hashing import HashingEmbedder
    from strata_recall.embedders.minilm import SentenceTransformerEmbedder
    from strata_recall.embedders.onnx import OnnxEmbedder, ensure_onnx_model

__all__ = [
    "KINDS",
    "CacheStats",
    "CachedEmbedder",
    "HashingEmbedder",
    "OnnxEmbedder",
    "SentenceTransformerEmbedder",
    "ensure_onnx_model",
    "make_embedder",
]

KINDS = ("onnx", "onnx-fp32", "torch", "hashing")

_LAZY = {
    "CacheStats": "strata_recall.embedders.cache",
    "CachedEmbedder": "strata_recall.embedders.cache",
    "HashingEmbedder": "strata_recall.embedders.hashing",
    "SentenceTransformerEmbedder": "strata_recall.embedders.minilm",
    "OnnxEmbedder": "strata_recall.embedders.onnx",
    "ensure_onnx_model": "strata_recall.embedders.onnx",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def make_embedder(kind: str, *, cache_dir: Path, cache_size: int) -> Embedder:
    """The embedder ``kind``, behind an LRU cache of ``cache_size`` vectors (0: no cache).

    Models load lazily, on the first ``embed`` call.
    """
    inner = _make_inner(kind, cache_dir)
    if cache_size < 0:
        raise InvalidInput("cache_size must not be negative", cache_size=cache_size)
    if cache_size == 0:
        return inner
    from strata_recall.embedders.cache import CachedEmbedder

    return CachedEmbedder(inner, max_entries=cache_size)


def _make_inner(kind: str, cache_dir: Path) -> Embedder:
    if kind == "hashing":
        from strata_recall.embedders.hashing import HashingEmbedder

        return HashingEmbedder()
    if kind == "torch":
        from strata_recall.embedders.minilm import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder()
    if kind in ("onnx", "onnx-fp32"):
        from strata_recall.embedders.onnx import OnnxEmbedder

        return OnnxEmbedder(cache_dir, quantize=kind == "onnx")
    raise InvalidInput(
        f"unknown embedder kind {kind!r}; expected one of {', '.join(KINDS)}",
        kind=kind,
        expected=list(KINDS),
    )
