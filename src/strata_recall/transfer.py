"""Moving a store's data out and back in: the export format, import, and what a caller may
import into its scope. The facade and ``strata_recall.stores.operations`` (copy) stay thin over it.

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
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, get_args

from strata_recall.domain.compression.representations import MemoryVersion
from strata_recall.domain.graph_rules import facts_from_dict
from strata_recall.domain.lifecycle import Actor
from strata_recall.domain.models import Event, HistoryEvent, Memory, Scope
from strata_recall.domain.secrets import masked_text
from strata_recall.errors import InvalidInput, ScopeDenied
from strata_recall.history.imports import ImportedHistory
from strata_recall.ingest import memory_search_text
from strata_recall.policy import narrow_to, owns
from strata_recall.ports import Embedder, ExportKind, ExportRecord, Store
from strata_recall.results import ImportReport
from strata_recall.stores.common import encode_vector

#: Checks (and may rewrite) one data record of an import, given its line number.
Admit = Callable[[Mapping[str, Any], int], Mapping[str, Any]]

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
    objects, checks the header and checksum, and backfills missing history rows. ``admit``
    (a caller's ``TenantImport``) sees every data record after the checksum has."""

    def __init__(self, store: Store, embedder: Embedder, remember: RememberPlain, *,
                 batch_size: int, actor: Actor | None, admit: Admit | None = None) -> None:
        self.store, self.embedder, self.remember = store, embedder, remember
        self.batch_size, self.actor, self.admit = batch_size, actor, admit
        self.pending: list[ExportRecord] = []
        self.digest = Digest()
        self.watched = ImportedHistory()  # memories without their history row
        self.read = self.inserted = 0

    def run(self, records: Iterable[Any], on_progress: Callable[[int], None] | None
            ) -> ImportReport:
        try:
            for line_no, record in enumerate(records, start=1):
                self._one(record, line_no)
                if on_progress is not None:
                    on_progress(self.read)
        except (InvalidInput, ScopeDenied) as exc:
            self._flush()  # what was valid before the bad record is kept, and said so
            self.watched.backfill(self.store, self.actor or Actor())
            exc.details.update(records_before_error=self.read,
                               inserted_before_error=self.inserted)
            raise
        self._flush()
        self.watched.backfill(self.store, self.actor or Actor())
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
            self.digest.add(record)  # the file as it was sent
            admitted = self.admit(record, line_no) if self.admit else record
            self.pending.append(parse_record(admitted, line_no))
            self.watched.note(admitted)
            if len(self.pending) >= self.batch_size:
                self._flush()
        else:
            fields = _plain_fields(record, line_no)
            admitted = self.admit(fields, line_no) if self.admit else fields
            self.inserted += self.remember(dict(admitted), self.actor)
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

#: Keys whose string values (or lists of them) name a record of the store, at any depth.
REFERENCE_KEYS = frozenset({
    "id", "memory_id", "memory_ids", "event_id", "event_ids", "parent_id", "version_id",
    "active_version_id", "supersedes", "contradicts", "context_memory_ids", "target_id",
    "summary_id", "source_id", "episode_id", "derived_ids",
})
_RENAMED = uuid.UUID("8d0f5a52-4b7e-4c38-9a3e-2f1c6b7d9e01")  # the uuid5 namespace


class TenantImport:
    """What an import by a scope-bound caller (a token) may write, record by record: every
    record's scope is checked against the caller's, never trusted.

    * A plain record's ``scope`` is narrowed like an API body's
    (``strata_recall.policy.narrow_to``): naming another team, user or agent is ``ScopeDenied``.
    * An exported record must lie within the caller's scope (``ScopeDenied``), and history,
      versions and graph links must belong to a memory imported here or owned.
    * Ids the caller does not already own are renamed, the same way every time (``rename``):
      so whether an id exists in another tenant changes nothing the caller can observe, a
      record can never land on (or vouch for) another tenant's row, and importing the same
      file twice, or one's own export, still skips what is there (decision 0024).
    """

    def __init__(self, own: Scope, store: Store) -> None:
        self.own, self.store = own, store
        self.imported: set[str] = set()
        self._owned: frozenset[str] | None = None

    def __call__(self, record: Mapping[str, Any], line_no: int) -> Mapping[str, Any]:
        if "record" not in record:
            return self._narrowed_plain(record, line_no)
        renamed = {key: self._renamed(value, key) for key, value in record.items()}
        self._check_owned(renamed, line_no)
        return renamed

    def rename(self, record_id: str) -> str:
        """``record_id`` if the caller owns it, else a name derived from it and the caller's
        scope (a UUIDv5: another tenant's import of the same id gets another name)."""
        if record_id in self.owned():
            return record_id
        return str(uuid.uuid5(_RENAMED, f"{self.own.key}\n{record_id}"))

    def owned(self) -> frozenset[str]:
        """The ids of every event, memory, history row and version the caller owns."""
        if self._owned is None:
            self._owned = frozenset(str(r["id"]) for r in export_lines(self.store, self.own)
                                    if r.get("record") in _REQUIRED and "id" in r)
        return self._owned

    def _renamed(self, value: Any, key: str = "") -> Any:
        if isinstance(value, Mapping):
            return {k: self._renamed(v, k) for k, v in value.items()}
        if key in REFERENCE_KEYS and isinstance(value, str):
            return self.rename(value)
        if key in REFERENCE_KEYS and isinstance(value, list):
            return [self.rename(v) if isinstance(v, str) else v for v in value]
        return value

    def _narrowed_plain(self, record: Mapping[str, Any], line_no: int) -> Mapping[str, Any]:
        if record.get("scope") is None:
            return record
        try:
            scope = narrow_to(self.own, record["scope"])
        except ScopeDenied as exc:
            raise ScopeDenied(f"record {line_no}: {exc.message}", **exc.details) from None
        return {**record, "scope": scope.to_dict()}

    def _check_owned(self, record: Mapping[str, Any], line_no: int) -> None:
        kind = record.get("record")
        if kind in _OF_A_MEMORY:
            memory_id = str(record.get("memory_id"))
            if memory_id not in self.imported and memory_id not in self.owned():
                raise ScopeDenied(f"record {line_no}: {kind} of a memory neither in this "
                                  "import nor yours", allowed_scope=self.own.to_dict())
            for snapshot in (record.get("before"), record.get("after")):
                if isinstance(snapshot, Mapping) and "scope" in snapshot:
                    self._check_scope(snapshot["scope"], line_no)  # time travel reads them
            return
        self._check_scope(record.get("scope"), line_no)
        if kind == "memory":
            self.imported.add(str(record.get("id")))

    def _check_scope(self, scope: Any, line_no: int) -> None:
        try:
            owner = Scope.parse(scope)
        except (InvalidInput, TypeError) as exc:
            raise InvalidInput(f"record {line_no}: malformed scope") from exc
        if not owns(self.own, owner):
            raise ScopeDenied(f"record {line_no}: scope {owner.key!r} is outside yours",
                              allowed_scope=self.own.to_dict())


def admission(own: Scope | None, store: Store) -> Admit | None:
    """How an import by a caller of scope ``own`` admits records (None: unrestricted)."""
    return TenantImport(own, store) if own is not None else None
