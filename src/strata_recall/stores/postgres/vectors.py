"""psycopg adapters for pgvector's ``vector`` type: numpy float32 arrays in binary format.

Binary both ways, so a vector round-trips bit for bit (export checksums compare equal with
SQLite's) and 384 floats never go through decimal text. The wire format of pgvector's
``vector_send``/``vector_recv``: int16 dim, int16 unused, dim big-endian float32.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

import numpy as np
import psycopg
from psycopg.adapt import Buffer, Dumper, Loader
from psycopg.pq import Format

from strata_recall.errors import StoreError

if TYPE_CHECKING:
    from strata_recall.ports import Vector

_HEADER = struct.Struct(">HH")


def vector_to_wire(vector: Vector) -> bytes:
    array = np.asarray(vector, dtype=">f4")
    return _HEADER.pack(array.shape[0], 0) + array.tobytes()


def vector_from_wire(data: Buffer) -> Vector:
    dim, _ = _HEADER.unpack_from(data)
    return np.frombuffer(bytes(data), dtype=">f4", count=dim, offset=_HEADER.size).astype(
        np.float32
    )


class VectorDumper(Dumper):
    format = Format.BINARY

    def dump(self, obj: Any) -> Buffer:
        return vector_to_wire(obj)


class VectorBinaryLoader(Loader):
    format = Format.BINARY

    def load(self, data: Buffer) -> Vector:
        return vector_from_wire(data)


class VectorTextLoader(Loader):
    def load(self, data: Buffer) -> Vector:
        text = bytes(data).decode("ascii")
        return np.array(text.strip("[]").split(","), dtype=np.float32)


def register_vector(conn: psycopg.Connection[Any]) -> None:
    """Teach ``conn`` to send numpy arrays as ``vector`` and read ``vector`` as numpy."""
    row = conn.execute("SELECT 'vector'::regtype::oid").fetchone()
    if row is None:
        raise StoreError("the pgvector extension is not installed in this database")
    oid = int(row[0])
    dumper = type("BoundVectorDumper", (VectorDumper,), {"oid": oid})
    conn.adapters.register_dumper(np.ndarray, dumper)
    conn.adapters.register_loader(oid, VectorBinaryLoader)
    conn.adapters.register_loader(oid, VectorTextLoader)
