"""Moving a store's data out and back in: the export format, import, and what a caller may
import into its scope. The facade and ``strata.stores.operations`` (copy) stay thin over it.

The export format, version ``FORMAT_VERSION``, is JSON Lines:

* a ``header`` record: ``{"record": "header", "format": "strata-export", "format_version": n}``;
* every record the store holds (API tokens and jobs excluded), in the store's export order:
  ``event``, ``memory`` (with its vector and search text), ``history`` (every change,
  including review decisions and the other audited actions), ``version`` (representation
  levels), ``graph`` (a memory's knowledge-graph links, by name: entity ids are the store's);
* a ``checksum`` record: the count per kind and the SHA-256 of the canonical JSON (sorted keys,
  one line each) of every record between the header and it.

A file without header or checksum (older exports, hand-made files) still imports; a checksum
that does not match, or a newer format version, is refused.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, get_args

from strata.domain.compression.representations import MemoryVersion
from strata.domain.graph_rules import facts_from_dict
from strata.domain.lifecycle import Actor
from strata.domain.models import Event, HistoryEvent, Memory, Scope
from strata.domain.secrets import masked_text
from strata.errors import InvalidInput
from strata.history.imports import ImportedHistory
from strata.ingest import memory_search_text
from strata.policy import owns
from strata.ports import Embedder, ExportKind, ExportRecord, Store
from strata.results import ImportReport
from strata.stores.common import encode_vector

FORMAT = "strata-export"
FORMAT_VERSION = 1
#: The data record kinds, in export order.
KINDS: tuple[str, ...] = get_args(ExportKind)
_REQUIRED: dict[str, tuple[str, ...]] = {
    "event": ("id", "scope", "conversation_id", "seq", "ts", "text", "content_hash"),
    "memory": ("id", "scope", "type", "content", "content_hash", "created_at", "updated_at"),
    "history": ("id", "memory_id", "kind", "ts", "actor", "reason"),
    "version": ("id", "memory_id", "level", "kind", "content", "created_at"),
    "graph": ("memory_id", "entities", "relations"),
}
_PARSERS: dict[str, Callable[[Mapping[str, Any]], object]] = {
    "event": Event.from_dict, "memory": Memory.from_dict, "history": HistoryEvent.from_dict,
    "version": MemoryVersion.from_dict, "graph": facts_from_dict,
}
#: Record kinds that belong to a memory (``memory_id``) and have no scope of their own.
_OF_A_MEMORY = frozenset({"history", "version", "graph"})
#: Plain objects remembered as new memories: the fields ``remember`` takes.
PLAIN_FIELDS = frozenset({"text", "scope", "type", "importance", "pinned", "tags",
                          "conversation_id", "author", "meta", "idempotency_key"})

#: Remembers one plain object (its fields, the import's actor); returns 1 if it was new.
RememberPlain = Callable[[dict[str, Any], Actor | None], int]


# -- export -----------------------------------------------------------------------------------


def canonical(record: Mapping[str, Any]) -> bytes:
    return json.dumps(record, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode()


@dataclass(slots=True)
class Digest:
    """The running checksum of the data records of an export (or an import)."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    sha: Any = field(default_factory=hashlib.sha256)

    def add(self, line: Mapping[str, Any]) -> None:
        self.counts[str(line["record"])] += 1
        self.sha.update(canonical(line) + b"\n")

    def record(self) -> dict[str, Any]:
        return {"record": "checksum", "counts": dict(self.counts), "sha256": self.sha.hexdigest()}


def export_lines(store: Store, scope: Scope | None = None, *, include_secrets: bool = False
                 ) -> Iterator[dict[str, Any]]:
    """The store in the export format; with ``scope``, only what is owned within it (history
    and versions: of the memories exported). Secrets in marked events and memories (and in
    the memory snapshots of history rows) are masked unless ``include_secrets``."""
    yield {"record": "header", "format": FORMAT, "format_version": FORMAT_VERSION}
    digest, kept = Digest(), set[str]()
    for record in store.export():
        if scope is not None and not _exported_within(record, scope, kept):
            continue
        data = record.data if include_secrets else without_secrets(record.kind, record.data)
        line = {"record": record.kind, **data}
        digest.add(line)
        yield line
    yield digest.record()


def without_secrets(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """An export record with the secrets of its marked text masked (the mark stays)."""
    if kind == "event":
        return {**data, "text": masked_text(data["text"], data.get("meta") or {})}
    if kind == "memory":
        return _masked_snapshot(data)
    if kind == "history":
        return {**data, **{side: _masked_snapshot(data[side]) for side in ("before", "after")
                           if isinstance(data.get(side), dict)}}
    return data  # versions and graph links are derived from masked text already


def _masked_snapshot(memory: dict[str, Any]) -> dict[str, Any]:
    content = memory.get("content")
    if not isinstance(content, str):
        return memory
    return {**memory, "content": masked_text(content, memory.get("meta") or {})}


def _exported_within(record: ExportRecord, scope: Scope, kept: set[str]) -> bool:
    """Export order is events, memories, then history and versions: those go with their
    memory."""
    if record.kind in _OF_A_MEMORY:
        return str(record.data.get("memory_id")) in kept
    if not owns(scope, Scope.parse(record.data["scope"])):
        return False
    if record.kind == "memory":
        kept.add(str(record.data["id"]))
    return True


# -- import -----------------------------------------------------------------------------------


def parse_record(record: Mapping[str, Any], line_no: int) -> ExportRecord:
    """Check an exported data record's shape; a bad one is refused before anything is
    written."""
    kind = record["record"]
    if kind not in _REQUIRED:
        raise InvalidInput(f"record {line_no}: unknown record type {kind!r}")
    data = {k: v for k, v in record.items() if k != "record"}
    missing = [name for name in _REQUIRED[kind] if name not in data]
    if missing:
        raise InvalidInput(f"record {line_no}: {kind} without {missing}")
    try:
        _PARSERS[kind](data)
    except (KeyError, ValueError, TypeError) as exc:
        raise InvalidInput(f"record {line_no}: malformed {kind}: {exc}") from exc
    return ExportRecord(kind, data)


class Importer:
    """One import run: batches exported records into ``store.restore``, remembers plain
    objects, checks the header and checksum, and backfills missing history rows."""

    def __init__(self, store: Store, embedder: Embedder, remember: RememberPlain, *,
                 batch_size: int, actor: Actor | None) -> None:
        self.store, self.embedder, self.remember = store, embedder, remember
        self.batch_size, self.actor = batch_size, actor
        self.pending: list[ExportRecord] = []
        self.digest = Digest()
        self.read = self.inserted = 0

    def run(self, records: Iterable[Any], on_progress: Callable[[int], None] | None
            ) -> ImportReport:
        watched = ImportedHistory()  # memories without their history row
        try:
            for line_no, record in enumerate(watched.watch(records), start=1):
                self._one(record, line_no)
                if on_progress is not None:
                    on_progress(self.read)
        except InvalidInput as exc:
            self._flush()  # what was valid before the bad record is kept, and said so
            watched.backfill(self.store, self.actor or Actor())
            exc.details.update(records_before_error=self.read,
                               inserted_before_error=self.inserted)
            raise
        self._flush()
        watched.backfill(self.store, self.actor or Actor())
        return ImportReport(read=self.read, inserted=self.inserted,
                            skipped=self.read - self.inserted)

    def _one(self, record: Any, line_no: int) -> None:
        if not isinstance(record, Mapping):
            raise InvalidInput(f"record {line_no} is not a JSON object")
        kind = record.get("record")
        if kind == "header":
            _check_header(record, line_no)
            return
        if kind == "checksum":
            _check_checksum(record, self.digest, line_no)
            return
        if "record" in record:
            self.pending.append(parse_record(record, line_no))
            self.digest.add(record)
            if len(self.pending) >= self.batch_size:
                self._flush()
        else:
            self.inserted += self.remember(_plain_fields(record, line_no), self.actor)
        self.read += 1

    def _flush(self) -> None:
        if self.pending:
            self.inserted += self.store.restore(with_vectors(self.pending, self.embedder))
        self.pending.clear()


def _plain_fields(record: Mapping[str, Any], line_no: int) -> dict[str, Any]:
    unknown = set(record) - PLAIN_FIELDS
    if unknown:
        raise InvalidInput(f"record {line_no}: unknown fields {sorted(unknown)}")
    return dict(record)


def _check_header(record: Mapping[str, Any], line_no: int) -> None:
    version = record.get("format_version")
    if record.get("format") != FORMAT or not isinstance(version, int):
        raise InvalidInput(f"record {line_no}: not a {FORMAT} header")
    if version > FORMAT_VERSION:
        raise InvalidInput(f"record {line_no}: export format {version} is newer than this "
                           f"Strata reads ({FORMAT_VERSION}); upgrade Strata")


def _check_checksum(record: Mapping[str, Any], digest: Digest, line_no: int) -> None:
    expected = digest.record()
    if record.get("counts") != expected["counts"] or record.get("sha256") != expected["sha256"]:
        raise InvalidInput(f"record {line_no}: checksum mismatch: the file is truncated or was "
                           "changed after export", expected=record.get("counts"),
                           found=expected["counts"])


def with_vectors(records: list[ExportRecord], embedder: Embedder) -> list[ExportRecord]:
    """Embed exported memories that come without a vector (or from another model), and
    analyse those without a search text."""
    for record in records:
        if record.kind == "memory" and not isinstance(record.data.get("search_text"), str):
            record.data["search_text"] = memory_search_text(record.data["content"], None)
    missing = [r for r in records if r.kind == "memory"
               and (not r.data.get("embedding")
                    or r.data.get("embedding_model", embedder.name) != embedder.name)]
    if missing:
        vectors = embedder.embed([r.data["content"] for r in missing])
        for record, vector in zip(missing, vectors, strict=True):
            record.data["embedding"] = encode_vector(vector)
            record.data["embedding_model"] = embedder.name
    return list(records)


# -- what a caller may import -----------------------------------------------------------------


def within_scope(records: Iterable[Any], own: Scope | None, store: Store
                 ) -> Iterator[Any]:
    """``records`` as they are, refusing (``InvalidInput``) an exported record outside
    ``own``: a record of another scope, history or versions of a memory neither imported
    here nor owned, or a memory whose id the store already holds under another scope (it
    would not be written, and must not vouch for the history records that follow it)."""
    imported: set[str] = set()
    for line_no, record in enumerate(records, start=1):
        if (own is not None and isinstance(record, Mapping)
                and record.get("record") in _REQUIRED):
            _check_owned(record, own, store, imported, line_no)
        yield record


def _check_owned(record: Mapping[str, Any], own: Scope, store: Store, imported: set[str],
                 line_no: int) -> None:
    if record.get("record") in _OF_A_MEMORY:
        memory_id = str(record.get("memory_id"))
        if memory_id not in imported and not _owns_stored(store, memory_id, own):
            raise InvalidInput(f"record {line_no}: {record.get('record')} of a memory outside "
                               "your scope")
        return
    try:
        owner = Scope.parse(record.get("scope"))
    except (InvalidInput, TypeError) as exc:
        raise InvalidInput(f"record {line_no}: malformed scope") from exc
    if not owns(own, owner):
        raise InvalidInput(f"record {line_no}: scope {owner.key!r} is outside yours")
    if record.get("record") == "memory":
        memory_id = str(record.get("id"))
        if store.history(memory_id) and not _owns_stored(store, memory_id, own):
            raise InvalidInput(f"record {line_no}: memory id {memory_id} is taken by a memory "
                               "outside your scope")
        imported.add(memory_id)


def _owns_stored(store: Store, memory_id: str, own: Scope) -> bool:
    memory = store.get(memory_id, own, include_deleted=True)
    return memory is not None and owns(own, memory.scope)
