"""Adapter details the shared contract does not cover: the hashing embedder, the factory,
load failures, and the ONNX cache's keying and atomic writes. None of these loads a model."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from strata_recall.embedders import (
    KINDS,
    CachedEmbedder,
    HashingEmbedder,
    OnnxEmbedder,
    SentenceTransformerEmbedder,
    make_embedder,
)
from strata_recall.embedders._common import bundled_model_dir
from strata_recall.embedders.onnx import _atomic_write, onnx_model_path
from strata_recall.errors import EmbedderError, InvalidInput

# --- hashing ------------------------------------------------------------------------------


def test_hashing_shares_words_positively() -> None:
    vectors = HashingEmbedder().embed(["red apple pie", "apple crumble", "blue sky"])
    assert float(vectors[0] @ vectors[1]) > 0.2
    assert float(vectors[0] @ vectors[2]) < float(vectors[0] @ vectors[1])


def test_hashing_ignores_case_and_punctuation() -> None:
    a, b = HashingEmbedder().embed(["Hello, World!", "hello world"])
    np.testing.assert_allclose(a, b)


def test_hashing_name_and_dim() -> None:
    embedder = HashingEmbedder(dim=64)
    assert (embedder.name, embedder.dim) == ("hashing-64", 64)
    assert embedder.embed(["x"]).shape == (1, 64)
    with pytest.raises(InvalidInput):
        HashingEmbedder(dim=0)


@pytest.mark.slow
def test_hashing_is_stable_across_processes() -> None:
    """Python's ``hash`` is salted per process; the hashing embedder must not be."""
    code = (
        "from strata_recall.embedders import HashingEmbedder as H\n"
        "print(H().embed(['a b c']).tobytes().hex())"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == HashingEmbedder().embed(["a b c"]).tobytes().hex()


# --- factory ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "cls", "name"),
    [
        ("hashing", HashingEmbedder, "hashing-384"),
        ("torch", SentenceTransformerEmbedder, "all-MiniLM-L6-v2/torch"),
        ("onnx", OnnxEmbedder, "all-MiniLM-L6-v2/onnx-int8"),
        ("onnx-fp32", OnnxEmbedder, "all-MiniLM-L6-v2/onnx-fp32"),
    ],
)
def test_make_embedder_builds_lazily(kind: str, cls: type, name: str, tmp_path: Path) -> None:
    cache_dir = tmp_path / "models"
    plain = make_embedder(kind, cache_dir=cache_dir, cache_size=0)
    assert isinstance(plain, cls)
    assert (plain.name, plain.dim) == (name, 384)
    cached = make_embedder(kind, cache_dir=cache_dir, cache_size=100)
    assert isinstance(cached, CachedEmbedder)
    assert isinstance(cached.inner, cls)
    assert not cache_dir.exists()  # nothing exported or loaded before the first embed


def test_make_embedder_rejects_unknown_kinds(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=r"unknown embedder kind 'bert'.*onnx") as caught:
        make_embedder("bert", cache_dir=tmp_path, cache_size=0)
    assert caught.value.details["expected"] == list(KINDS)
    with pytest.raises(InvalidInput):
        make_embedder("hashing", cache_dir=tmp_path, cache_size=-1)


# --- load failures ------------------------------------------------------------------------


def test_torch_embedder_without_model_files_raises_embedder_error(tmp_path: Path) -> None:
    with pytest.raises(EmbedderError, match="no sentence-transformers model"):
        SentenceTransformerEmbedder(model_dir=tmp_path).embed(["hello"])


def test_onnx_embedder_without_model_files_raises_embedder_error(tmp_path: Path) -> None:
    embedder = OnnxEmbedder(tmp_path / "cache", model_dir=tmp_path / "missing")
    with pytest.raises(EmbedderError, match="no model files"):
        embedder.embed(["hello"])


def test_a_corrupt_cached_model_raises_embedder_error(tmp_path: Path) -> None:
    target = onnx_model_path(tmp_path, quantize=True)
    target.parent.mkdir(parents=True)
    target.write_bytes(b"not an onnx model")
    with pytest.raises(EmbedderError, match="could not load the ONNX model"):
        OnnxEmbedder(tmp_path, threads=1).embed(["hello"])


def test_invalid_settings_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput):
        OnnxEmbedder(tmp_path, threads=0)
    with pytest.raises(InvalidInput):
        OnnxEmbedder(tmp_path, batch_size=0)
    with pytest.raises(InvalidInput):
        SentenceTransformerEmbedder(batch_size=0)


# --- ONNX cache ---------------------------------------------------------------------------


@pytest.fixture
def model_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "model"
    shutil.copytree(bundled_model_dir(), copy)
    return copy


def test_cache_key_follows_model_content_not_location(model_copy: Path, tmp_path: Path) -> None:
    bundled = onnx_model_path(tmp_path)
    assert onnx_model_path(tmp_path, model_dir=model_copy) == bundled
    (model_copy / "README.md").write_text("documentation only")
    assert onnx_model_path(tmp_path, model_dir=model_copy) == bundled
    config = model_copy / "config.json"
    config.write_text(config.read_text() + "\n")
    changed = onnx_model_path(tmp_path, model_dir=model_copy)
    assert changed.parent != bundled.parent
    assert changed.name == bundled.name == "model-int8.onnx"
    assert onnx_model_path(tmp_path, quantize=False).name == "model-fp32.onnx"


def test_the_model_fingerprint_is_kept_across_processes(
    model_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A start does not hash the weights again while their files are unchanged."""
    from strata_recall.embedders import onnx

    cache = tmp_path / "cache"
    first = onnx_model_path(cache, model_dir=model_copy)
    assert (cache / "fingerprints.json").is_file()
    monkeypatch.setattr(onnx, "_FINGERPRINTS", {})  # a new process
    hashed: list[Path] = []
    real_hash = onnx._hash_file
    monkeypatch.setattr(onnx, "_hash_file", lambda path, digest: (hashed.append(path),
                                                                   real_hash(path, digest)))
    assert onnx_model_path(cache, model_dir=model_copy) == first
    assert hashed == []
    config = model_copy / "config.json"
    config.write_text(config.read_text() + "\n")  # changed: its size and mtime differ
    monkeypatch.setattr(onnx, "_FINGERPRINTS", {})
    assert onnx_model_path(cache, model_dir=model_copy).parent != first.parent
    assert hashed
    (cache / "fingerprints.json").write_text("not json")  # a damaged cache: hashed again
    monkeypatch.setattr(onnx, "_FINGERPRINTS", {})
    assert onnx_model_path(cache, model_dir=model_copy).parent != first.parent


def test_atomic_write_leaves_nothing_behind_when_the_producer_fails(tmp_path: Path) -> None:
    target = tmp_path / "model.onnx"

    def half_written(path: Path) -> None:
        path.write_bytes(b"half a model")
        raise EmbedderError("killed mid-export")

    with pytest.raises(EmbedderError):
        _atomic_write(target, half_written)
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_moves_the_complete_file_into_place(tmp_path: Path) -> None:
    target = tmp_path / "model.onnx"

    def complete(path: Path) -> None:
        path.write_bytes(b"complete")

    _atomic_write(target, complete)
    assert target.read_bytes() == b"complete"
    assert list(tmp_path.iterdir()) == [target]
    assert target.stat().st_mode & 0o777 == 0o644
