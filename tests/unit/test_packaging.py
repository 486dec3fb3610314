"""The slim runtime: optional extras say which one is missing, the one-time model export
says what it is doing, and the torch-free graph reads safetensors exactly."""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from strata_recall.embedders.bert_graph import BertConfig, read_safetensors
from strata_recall.embedders.onnx import _announce
from strata_recall.errors import EmbedderError, StoreError
from strata_recall.stores.factory import backend_of


def test_a_postgres_url_without_psycopg_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg -> ImportError
    with pytest.raises(StoreError, match=r"strata-recall\[postgres\]"):
        backend_of("postgresql://localhost/strata")
    assert backend_of("sqlite:///x.db") == "sqlite"


def test_the_first_export_prints_a_progress_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _announce(tmp_path / "model-int8.onnx"):
        pass
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("strata: preparing the embedding model all-MiniLM-L6-v2")
    assert str(tmp_path) in err[0]
    assert err[1].startswith("strata: embedding model ready (")


def _write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        data = np.ascontiguousarray(array).tobytes()
        dtype = {np.dtype(np.float32): "F32", np.dtype(np.int64): "I64"}[array.dtype]
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    encoded = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(encoded)) + encoded + b"".join(blobs))


def test_safetensors_are_read_exactly(tmp_path: Path) -> None:
    weights = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([7], np.int64)}
    _write_safetensors(tmp_path / "m.safetensors", weights)
    read = read_safetensors(tmp_path / "m.safetensors")
    assert set(read) == {"a", "b"}
    np.testing.assert_array_equal(read["a"], weights["a"])
    np.testing.assert_array_equal(read["b"], weights["b"])


def test_a_non_bert_config_is_refused(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    with pytest.raises(EmbedderError, match="not a BERT model"):
        BertConfig.from_file(tmp_path / "config.json")
