"""The Embedder contract, run against every adapter (real models, no mocks).

The ONNX export goes to ``$STRATA_MODEL_CACHE`` or ``~/.cache/strata/models``: the same
cache the application uses, so the ~10 s export happens once per machine, not once per test
run. Sharing it is safe: entries are keyed by a hash of the model files and written
atomically. If that directory is not writable, a per-session temporary directory is used.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from strata_recall.embedders import (
    HashingEmbedder,
    OnnxEmbedder,
    SentenceTransformerEmbedder,
    ensure_onnx_model,
)
from strata_recall.embedders.onnx import main as onnx_main
from strata_recall.errors import InvalidInput
from strata_recall.ports import Embedder

TEXTS = [
    "Caroline: I went to the LGBTQ support group yesterday and it was so powerful!",
    "Melanie: Nice! I painted a sunset with the kids last weekend.",
    "",
    "ok",
    "Émilie a mangé une crêpe 🥞 à Paris.",
    "a very long turn " * 200,  # past the 256-token truncation
]


@pytest.fixture(scope="session")
def model_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    configured = os.environ.get("STRATA_MODEL_CACHE")
    path = Path(configured or "~/.cache/strata/models").expanduser()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return tmp_path_factory.mktemp("models")
    return path if os.access(path, os.W_OK) else tmp_path_factory.mktemp("models")


@pytest.fixture(
    scope="session",
    params=[
        pytest.param("hashing"),
        pytest.param("torch", marks=pytest.mark.slow),
        pytest.param("onnx-int8", marks=pytest.mark.slow),
        pytest.param("onnx-fp32", marks=pytest.mark.slow),
    ],
)
def embedder(request: pytest.FixtureRequest, model_cache_dir: Path) -> Iterator[Embedder]:
    kind: str = request.param
    if kind == "hashing":
        yield HashingEmbedder()
    elif kind == "torch":
        pytest.importorskip("sentence_transformers", reason="the torch reference: 'parity' extra")
        yield SentenceTransformerEmbedder()
    else:
        yield OnnxEmbedder(model_cache_dir, quantize=kind == "onnx-int8")


def is_real_model(embedder: Embedder) -> bool:
    return not isinstance(embedder, HashingEmbedder)


def test_satisfies_the_protocol(embedder: Embedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.name
    assert embedder.dim == 384


def test_shape_dtype_and_unit_norm(embedder: Embedder) -> None:
    vectors = embedder.embed(TEXTS)
    assert vectors.shape == (len(TEXTS), embedder.dim)
    assert vectors.dtype == np.float32
    assert np.all(np.isfinite(vectors))
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_deterministic(embedder: Embedder) -> None:
    np.testing.assert_array_equal(embedder.embed(TEXTS), embedder.embed(TEXTS))


def test_batch_equals_single(embedder: Embedder) -> None:
    batch = embedder.embed(TEXTS)
    singles = np.vstack([embedder.embed([text]) for text in TEXTS])
    np.testing.assert_allclose(batch, singles, atol=1e-5)


def test_order_is_preserved(embedder: Embedder) -> None:
    forward = embedder.embed(TEXTS)
    backward = embedder.embed(TEXTS[::-1])
    np.testing.assert_allclose(forward, backward[::-1], atol=1e-5)


def test_empty_input(embedder: Embedder) -> None:
    vectors = embedder.embed([])
    assert vectors.shape == (0, embedder.dim)
    assert vectors.dtype == np.float32


@pytest.mark.parametrize("bad", [["ok", 3], [None], [b"bytes"], "a bare string"])
def test_non_string_input_is_rejected(embedder: Embedder, bad: object) -> None:
    with pytest.raises(InvalidInput):
        embedder.embed(bad)  # type: ignore[arg-type]


def test_related_texts_score_higher(embedder: Embedder) -> None:
    if is_real_model(embedder):
        query = "Someone is strumming a guitar on stage."
        related = "A man is playing a guitar."
        unrelated = "The stock market fell sharply this morning."
    else:  # the hashing stand-in only knows shared words
        query = "Caroline went to the support group."
        related = "The support group met on Tuesday; Caroline went."
        unrelated = "Melanie painted a lake at sunrise."
    q, r, u = embedder.embed([query, related, unrelated])
    assert float(q @ r) > float(q @ u) + 0.1


def test_text_past_the_token_limit_is_truncated(embedder: Embedder) -> None:
    if not is_real_model(embedder):
        pytest.skip("the hashing stand-in has no token limit")
    head = "word " * 300
    a, b = embedder.embed([head + "apples", head + "a different ending"])
    np.testing.assert_allclose(a, b, atol=1e-6)


# --- runtime parity: the ONNX exports against the torch reference --------------------------


@pytest.mark.slow
def test_onnx_fp32_matches_torch(model_cache_dir: Path) -> None:
    pytest.importorskip("sentence_transformers", reason="the torch reference: 'parity' extra")
    reference = SentenceTransformerEmbedder().embed(TEXTS)
    exported = OnnxEmbedder(model_cache_dir, quantize=False).embed(TEXTS)
    assert float(np.abs(exported - reference).max()) < 1e-4


@pytest.mark.slow
def test_onnx_int8_stays_close_to_torch(model_cache_dir: Path) -> None:
    pytest.importorskip("sentence_transformers", reason="the torch reference: 'parity' extra")
    reference = SentenceTransformerEmbedder().embed(TEXTS)
    quantized = OnnxEmbedder(model_cache_dir).embed(TEXTS)
    assert float((reference * quantized).sum(axis=1).min()) > 0.96


@pytest.mark.slow
def test_the_build_step_reuses_the_cached_export(model_cache_dir: Path) -> None:
    path = ensure_onnx_model(model_cache_dir)
    before = path.stat().st_mtime_ns
    assert onnx_main(["--cache-dir", str(model_cache_dir)]) == 0
    assert path.stat().st_mtime_ns == before
    assert path.name == "model-int8.onnx"


@pytest.mark.slow
def test_a_wheels_prebuilt_model_is_used_as_is(model_cache_dir: Path, tmp_path: Path) -> None:
    """A wheel carries the tokenizer and the int8 model already exported, without the fp32
    weights: embedding reads that file (same vectors), exports nothing into the cache, and a
    request for the fp32 model says what is missing."""
    from strata_recall.embedders._common import PREBUILT_INT8, bundled_model_dir
    from strata_recall.errors import EmbedderError

    packaged = tmp_path / "weights"
    packaged.mkdir()
    for name in ("config.json", "tokenizer.json"):
        (packaged / name).write_bytes((bundled_model_dir() / name).read_bytes())
    (packaged / PREBUILT_INT8).write_bytes(ensure_onnx_model(model_cache_dir).read_bytes())
    empty_cache = tmp_path / "cache"
    assert ensure_onnx_model(empty_cache, model_dir=packaged) == packaged / PREBUILT_INT8
    vectors = OnnxEmbedder(empty_cache, model_dir=packaged).embed(TEXTS)
    np.testing.assert_array_equal(vectors, OnnxEmbedder(model_cache_dir).embed(TEXTS))
    assert not empty_cache.exists() or not any(empty_cache.iterdir())
    with pytest.raises(EmbedderError, match=r"no model\.safetensors"):
        OnnxEmbedder(empty_cache, quantize=False, model_dir=packaged).embed(["hello"])
