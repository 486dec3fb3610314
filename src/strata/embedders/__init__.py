"""Embedder adapters behind the ``strata.ports.Embedder`` protocol.

- ``onnx``: all-MiniLM-L6-v2, int8, on onnxruntime (the default: no torch when serving);
- ``onnx-fp32``: the same export without quantization;
- ``torch``: the same model through sentence-transformers (the reference);
- ``hashing``: a bag-of-words stand-in for unit tests.

Submodules load on first use of a name, so importing this package stays cheap and
``python -m strata.embedders.onnx`` runs without a double import.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from strata.errors import InvalidInput
from strata.ports import Embedder

if TYPE_CHECKING:
    from strata.embedders.cache import CachedEmbedder, CacheStats
    from strata.embedders.hashing import HashingEmbedder
    from strata.embedders.minilm import SentenceTransformerEmbedder
    from strata.embedders.onnx import OnnxEmbedder, ensure_onnx_model

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
    "CacheStats": "strata.embedders.cache",
    "CachedEmbedder": "strata.embedders.cache",
    "HashingEmbedder": "strata.embedders.hashing",
    "SentenceTransformerEmbedder": "strata.embedders.minilm",
    "OnnxEmbedder": "strata.embedders.onnx",
    "ensure_onnx_model": "strata.embedders.onnx",
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
    from strata.embedders.cache import CachedEmbedder

    return CachedEmbedder(inner, max_entries=cache_size)


def _make_inner(kind: str, cache_dir: Path) -> Embedder:
    if kind == "hashing":
        from strata.embedders.hashing import HashingEmbedder

        return HashingEmbedder()
    if kind == "torch":
        from strata.embedders.minilm import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder()
    if kind in ("onnx", "onnx-fp32"):
        from strata.embedders.onnx import OnnxEmbedder

        return OnnxEmbedder(cache_dir, quantize=kind == "onnx")
    raise InvalidInput(
        f"unknown embedder kind {kind!r}; expected one of {', '.join(KINDS)}",
        kind=kind,
        expected=list(KINDS),
    )
