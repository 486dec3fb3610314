"""Maintenance jobs beside the write pipeline: ``reembed`` (recompute vectors with the current
embedder) and ``decide`` (not run on its own: decisions happen inside ``extract``).

A reembed job's payload is ``{"memory_ids": [...]}``; the handler reads those memories (the
live ones the job's scope sees), embeds them as ``modify`` does (the content with its source
event's speaker) and returns one ``MemoryChange`` per memory carrying the new vector: a new
version with an UPDATE history row saying which embedder, committed with the job's completion
under its lease. Content, search text and graph links are unchanged.
"""

from __future__ import annotations

from strata.domain.ids import new_id
from strata.domain.jobs import Job, JobKind
from strata.domain.models import Event, HistoryEvent, HistoryKind, Memory
from strata.errors import UnsupportedJob
from strata.ingest import memory_embedding_text
from strata.ports import Clock, Embedder, MemoryChange, Store, WriteBatch
from strata.worker import Handler, JobOutput

#: Memories one reembed job covers (one embedder call, one transaction).
REEMBED_BATCH = 128


class Maintenance:
    def __init__(self, store: Store, embedder: Embedder, clock: Clock) -> None:
        self.store = store
        self.embedder = embedder
        self.clock = clock

    def handlers(self) -> dict[JobKind, Handler]:
        return {JobKind.REEMBED: self.reembed, JobKind.DECIDE: decide}

    def reembed(self, job: Job) -> JobOutput:
        wanted = [str(i) for i in job.payload.get("memory_ids", ())]
        memories = self.store.get_many(wanted, job.scope)
        if not memories:
            return JobOutput({"reembedded": 0, "memory_ids": []})
        sources = self._sources(memories)
        vectors = self.embedder.embed([memory_embedding_text(m.content, sources.get(m.id))
                                       for m in memories])
        now = self.clock.now()
        reason = f"reembed with {self.embedder.name}"
        changes = []
        for memory, vector in zip(memories, vectors, strict=True):
            after = memory.evolve(version=memory.version + 1, updated_at=now)
            history = HistoryEvent(
                id=new_id(), memory_id=memory.id, kind=HistoryKind.UPDATE, ts=now,
                actor="worker", reason=reason, before=memory.to_dict(), after=after.to_dict())
            changes.append(MemoryChange(after, memory.version, history, embedding=vector))
        batch = WriteBatch(events=(), memories=(), actor="worker", reason="reembed",
                           changes=changes)
        return JobOutput({"reembedded": len(changes), "memory_ids": [m.id for m in memories],
                          "embedder": self.embedder.name}, batch)

    def _sources(self, memories: list[Memory]) -> dict[str, Event]:
        first = {m.id: m.provenance.event_ids[0] for m in memories if m.provenance.event_ids}
        events = {e.id: e for e in self.store.events(list(dict.fromkeys(first.values())))}
        return {mid: events[eid] for mid, eid in first.items() if eid in events}


def decide(job: Job) -> JobOutput:
    """Decisions need the facts' vectors and candidates, which ``extract`` computes: they run
    there, in one pass. An enqueued ``decide`` job is dead-lettered at once."""
    raise UnsupportedJob(f"job {job.id}: decide jobs are not run on their own; decisions "
                         "run inside the extract job", id=job.id)
