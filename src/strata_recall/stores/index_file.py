"""The exact vector index saved next to the database, so opening a large store is fast.

Loading 100k rows' vectors and scope columns from SQLite takes about a second (reading the
rows, then building the columns); the same index read back from one file takes tens of
milliseconds, with the vector matrix memory-mapped copy-on-write (decision 0044).

The file (``<db>.vectors``) is a cache, never the truth: a header says which store
(``store_id``), embedder and change counter (``rev``) it covers, and the store checks a loaded
file against its rows before trusting it (``SQLiteStore`` compares how many rows at or before
``rev`` there are and the sum of their revs). Any doubt (another store, a purge, a torn or
foreign file) means the index is built from the rows, as without a file.

Layout: 8 magic bytes, a little-endian uint32 header length, a JSON header, then each array's
raw bytes at a 64-byte aligned offset the header names. The matrix holds spare zero rows past
the saved ones (a sparse hole on disk): the rows written after the save, applied when the
store opens, go into those copy-on-write pages instead of copying the whole mapped matrix
into a larger one (at 100k rows that copy took 40-340 ms of an open).
"""

from __future__ import annotations

import json
import os
import struct
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from strata_recall.stores.vector_index import IndexState, VectorIndex

MAGIC = b"STRATAVX"
#: Bytes per read when a file is read through into the page cache: small reads, so that a
#: search's own page reads do not queue behind a long one (with 4 MiB reads the first
#: answer after a cold open took 410-684 ms at 100k; with 256 KiB 214-275 ms).
READ_THROUGH_CHUNK = 256 << 10
#: Bump when the layout or the meaning of a field changes: older files are then rebuilt.
FORMAT = 1
_ALIGN = 64
_COLUMNS = ("team", "user", "agent", "run", "type", "lifecycle")
_INTERNED = ("team", "user", "agent", "run")
#: Joins the ids in one array (an id holding it is not saved: the index is rebuilt instead).
_ID_SEPARATOR = "\x00"
#: Spare matrix rows a saved file holds: more than the rows a store writes before the file is
#: stale enough to be saved again (``SAVED_INDEX_STALE``, 2 %).
SPARE_ROWS_MIN = 1024
SPARE_ROWS_FRACTION = 1 / 32


@dataclass(frozen=True, slots=True)
class IndexFileMeta:
    """What a saved index covers."""

    store_id: str
    embedder: str
    dim: int
    rev: int


def save_index(path: Path, index: VectorIndex, meta: IndexFileMeta) -> bool:
    """Write ``index`` to ``path`` by atomic rename; False when it cannot be saved (an id
    that holds the separator). Raises OSError when the directory is not writable."""
    state = index.state()
    if any(_ID_SEPARATOR in memory_id for memory_id in state.ids):
        return False
    arrays: dict[str, npt.NDArray[Any]] = {
        "ids": np.frombuffer(_ID_SEPARATOR.join(state.ids).encode(), dtype=np.uint8),
        "keys": state.keys, "revs": state.revs, "matrix": state.matrix,
        **{f"col_{name}": state.columns[name] for name in _COLUMNS},
    }
    header: dict[str, dict[str, Any]] = {}
    offsets: dict[str, int] = {}
    offset = 0
    for name, array in arrays.items():
        shape = list(array.shape)
        if name == "matrix":  # spare rows: zeros the file leaves as a hole (never written)
            shape[0] += spare_rows(len(state.ids))
        offsets[name] = offset
        header[name] = {"offset": offset, "dtype": array.dtype.str, "shape": shape}
        offset = _aligned(offset + int(np.prod(shape)) * array.dtype.itemsize)
    head = json.dumps({
        "format": FORMAT, "store_id": meta.store_id, "embedder": meta.embedder,
        "dim": meta.dim, "rev": meta.rev, "rows": len(state.ids), "arrays": header,
        "interned": {name: state.interned[name] for name in _INTERNED},
    }).encode()
    start = _aligned(len(MAGIC) + 4 + len(head))
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with partial.open("wb") as out:
            out.write(MAGIC + struct.pack("<I", len(head)) + head)
            for name, array in arrays.items():
                out.seek(start + offsets[name])
                np.ascontiguousarray(array).tofile(out)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return True


def load_index(path: Path, meta: IndexFileMeta) -> tuple[VectorIndex, int] | None:
    """The index saved at ``path`` and the rev it covers, if its header fits ``meta`` (same
    store, embedder and dimension; a rev not ahead of ``meta.rev``); None otherwise."""
    try:
        header, start = _read_header(path)
        if not _fits(header, meta):
            return None
        arrays = {name: _array(path, start, spec) for name, spec in header["arrays"].items()}
        ids = arrays["ids"].tobytes().decode().split(_ID_SEPARATOR) if header["rows"] else []
        state = IndexState(
            ids=ids, keys=arrays["keys"], revs=arrays["revs"], matrix=arrays["matrix"],
            columns={name: arrays[f"col_{name}"] for name in _COLUMNS},
            interned={name: [str(v) for v in header["interned"][name]] for name in _INTERNED},
        )
        if not _consistent(state, header["rows"], meta.dim):
            return None
        return VectorIndex.from_state(meta.dim, state), int(header["rev"])
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError, struct.error):
        return None


def spare_rows(rows: int) -> int:
    """The zero rows saved past ``rows`` for the rows written before the next save."""
    return SPARE_ROWS_MIN + int(rows * SPARE_ROWS_FRACTION)


def _read_header(path: Path) -> tuple[dict[str, Any], int]:
    with path.open("rb") as handle:
        if handle.read(len(MAGIC)) != MAGIC:
            raise ValueError("not a saved vector index")
        (length,) = struct.unpack("<I", handle.read(4))
        header = json.loads(handle.read(length))
    if not isinstance(header, dict):
        raise ValueError("malformed header")
    return header, _aligned(len(MAGIC) + 4 + length)


def _fits(header: dict[str, Any], meta: IndexFileMeta) -> bool:
    return bool(
        header.get("format") == FORMAT and header.get("store_id") == meta.store_id
        and header.get("embedder") == meta.embedder and header.get("dim") == meta.dim
        and isinstance(header.get("rev"), int) and header["rev"] <= meta.rev
    )


def _array(path: Path, start: int, spec: dict[str, Any]) -> npt.NDArray[Any]:
    """One array: the matrix memory-mapped copy-on-write (pages load as searches touch
    them), the small ones read."""
    dtype, shape = np.dtype(spec["dtype"]), tuple(int(d) for d in spec["shape"])
    offset = start + int(spec["offset"])
    count = int(np.prod(shape)) if shape else 1
    if len(shape) == 2 and count:  # a plain array over the map: no memmap subclass per slice
        mapped = np.memmap(path, dtype=dtype, mode="c", offset=offset, shape=shape)
        return mapped.view(np.ndarray)
    array = np.fromfile(path, dtype=dtype, count=count, offset=offset)
    if array.size != count:
        raise ValueError("truncated file")
    return array.reshape(shape)


def _consistent(state: IndexState, rows: int, dim: int) -> bool:
    """Every array has one entry per row, of the type the index keeps (a torn or edited file
    does not)."""
    sizes = {len(state.ids), len(state.keys), len(state.revs),
             *(len(column) for column in state.columns.values())}
    types = {state.keys.dtype == np.int64, state.revs.dtype == np.int64,
             state.matrix.dtype == np.float32,
             *(column.dtype == np.int32 for column in state.columns.values())}
    shaped = state.matrix.ndim == 2 and state.matrix.shape[1] == dim
    spare = len(state.matrix) >= rows  # the saved rows, then spare zero rows
    return sizes == {rows} and types == {True} and spare and (rows == 0 or shaped)


def _aligned(offset: int) -> int:
    return -(-offset // _ALIGN) * _ALIGN


def read_through(paths: Sequence[Path], stop: threading.Event,
                 chunk: int = READ_THROUGH_CHUNK) -> int:
    """Read each file to its end (the bytes are dropped) so that its pages are in the page
    cache before searches touch them through a map; returns the bytes read. A mapped index
    that was evicted from the cache otherwise faults on disk a page at a time: at 1M rows
    the first searches after an open took 15-30 ms more at p50. Stops when ``stop`` is set;
    a file that cannot be read is skipped (the searches fault it in as before)."""
    buffer = bytearray(chunk)
    done = 0
    for path in paths:
        try:
            with path.open("rb", buffering=0) as file:
                while not stop.is_set():
                    got = file.readinto(buffer)
                    if not got:
                        break
                    done += got
        except OSError:
            continue
    return done
