"""One scenario, run through the in-process facade and through the client against the real
HTTP app (sync: a live server; async: the ASGI app in-process): the same results, the same
types, the same error classes."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio.from_thread
import httpx
import pytest

from strata_recall.api.app import create_app
from strata_recall.client import AsyncStrataClient, StrataClient
from strata_recall.domain.compression.escalation_rules import VersionInfo
from strata_recall.domain.models import Filters, HistoryEvent, MemoryType
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.errors import NeedMoreContext, StrataError
from strata_recall.facade import Strata
from strata_recall.ports import Page
from strata_recall.results import LeveledMemory, Recall
from strata_recall.testing import FakeClock
from tests.live_server import serving

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
ALICE = {"user": "alice"}
BULK = {"user": "alice", "run": "bulk"}


def scenario(api: Any, tick: Callable[[], object], compress: Callable[[str], object]
             ) -> list[Any]:
    """remember → recall → get → list → modify → forget → recover → history, with the
    refusals along the way, then levels and escalation; every answer (or error) in order.
    ``compress`` compresses a memory on the facade behind ``api`` (there is no such route)."""
    out: list[Any] = []

    def step(method: str, *args: Any, **kwargs: Any) -> Any:
        tick()
        try:
            result = getattr(api, method)(*args, **kwargs)
            if method == "export":
                result = list(result)
        except StrataError as exc:
            out.append(exc)
            return None
        out.append(result)
        return result

    first = step("remember", "The user's favourite tea is oolong.", scope=ALICE, tags=["tea"],
                 importance=0.8, idempotency_key="k1")
    step("remember", "The user's favourite tea is oolong.", scope=ALICE, tags=["tea"],
         importance=0.8, idempotency_key="k1")
    step("remember", "Other words.", scope=ALICE, idempotency_key="k1")  # key reused: refused
    step("remember", messages=[{"role": "user", "content": "I moved to Lisbon."},
                               {"role": "assistant", "content": "Noted: Lisbon."}],
         scope=ALICE, conversation_id="c1", type=MemoryType.EPISODIC)
    step("remember", "Team rule: deploy on Tuesdays.", pinned=True)
    memory_id = first.memory_ids[0]
    step("recall", "favourite tea", scope=ALICE, k=3)
    step("recall", "Lisbon", scope=ALICE, filters=Filters(types=(MemoryType.EPISODIC,)),
         budget_tokens=50, preset_name="rrf")
    step("recall", "   ", scope=ALICE)
    step("get", memory_id, scope=ALICE)
    step("get", memory_id, scope={"user": "bob"})
    page = step("list", scope=ALICE, limit=2)
    step("list", scope=ALICE, limit=2, cursor=page.next_cursor)
    step("list", scope=ALICE, filters=Filters(tags_any=("tea",), min_importance=0.5))
    step("modify", memory_id, reason="corrected", scope=ALICE,
         content="The user's favourite tea is sencha.", tags=["tea", "green"], if_version=1)
    step("modify", memory_id, reason="stale", scope=ALICE, importance=0.1, if_version=1)
    step("forget", memory_id, reason="asked to", scope=ALICE)
    step("get", memory_id, scope=ALICE)
    step("get", memory_id, scope=ALICE, include_deleted=True)
    step("list", scope=ALICE, filters=Filters(include_deleted=True), limit=10)
    step("recover", memory_id, reason="by mistake", scope=ALICE)
    step("archive", memory_id, reason="old news", scope=ALICE)
    step("archive", memory_id, reason="again", scope=ALICE)  # already archived: refused
    step("unarchive", memory_id, reason="still true", scope=ALICE, if_version=5)
    step("history", memory_id, scope=ALICE)
    step("review_queue", scope=ALICE, limit=5)
    step("approve", memory_id, reason="r", scope=ALICE, importance="high")  # a bad edit
    step("approve", memory_id, reason="r", scope=ALICE, tags=["kind:fact"])  # not a candidate
    step("forget", memory_id, reason="x", scope=ALICE, if_version=99)
    time_travel_operations(step, memory_id)
    bulk_operations(step, memory_id)
    level_operations(step, compress)
    step("remember", "The build cache lives on the NAS.", scope=ALICE, mode="raw",
         defer_embedding=True)
    step("remember", "The build cache lives on the NAS.", scope=ALICE,
         defer_embedding=True)  # the pipeline needs vectors: refused
    return out


def time_travel_operations(step: Callable[..., Any], memory_id: str) -> None:
    """The state at a few times (whole, and one page) and rollback, with its refusals."""
    for minute in (0, 12, 10_000):
        step("state_at", datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=minute),
             scope=ALICE)
    step("state_at", datetime(2027, 1, 1, tzinfo=UTC), scope=ALICE, limit=1,
         include_deleted=True)
    step("rollback", memory_id, 1, reason="undo", scope=ALICE)
    step("rollback", memory_id, 99, reason="no such version", scope=ALICE)
    step("rollback", memory_id, 2, reason="stale", scope=ALICE, if_version=1)


def bulk_operations(step: Callable[..., Any], memory_id: str) -> None:
    """Batch modify, forget by query (with the confirm token above the threshold), jobs,
    export and import, with their refusals."""
    step("modify_many", [{"id": memory_id, "reason": "batch", "importance": 0.6},
                         {"id": "missing", "reason": "batch", "importance": 0.1},
                         {"id": memory_id, "reason": "stale", "pinned": True, "if_version": 1}],
         scope=ALICE)
    step("modify_many", [], scope=ALICE)
    for i in range(3):
        step("remember", f"Bulk note about kites number {i}.", scope=BULK)
    preview = step("forget_preview", "kites", scope=BULK, limit=5)
    step("forget_preview", "kites", scope=BULK, limit=0)
    ids = [c.memory.id for c in preview.candidates]
    step("forget_execute", ids, preview_token=preview.preview_token, reason="bulk",
         scope=BULK)  # three ids, threshold two: the confirm token is missing
    step("forget_execute", ids, preview_token="not-a-token", reason="bulk", scope=BULK,
         confirm_token=preview.confirm_token)
    step("forget_execute", ids, preview_token=preview.preview_token, reason="bulk",
         scope=BULK, confirm_token=preview.confirm_token)
    pinned_forget(step)
    step("job", "no-such-job")
    exported = step("export")
    step("import_records", [{"text": "Imported note about owls."}], scope=ALICE)
    step("import_records", exported)  # everything is there already: all skipped
    step("import_records", [{"record": "memory", "id": "x"}])  # malformed: refused
    step("list", scope=BULK, filters=Filters(include_deleted=True))


def pinned_forget(step: Callable[..., Any]) -> None:
    """Force-forgetting a pinned memory ([003] §27.2): refused without the confirm token of
    a preview of its id, done with it."""
    pinned = step("remember", "Never fly kites in storms.", scope=BULK, pinned=True)
    memory_id = pinned.memory_ids[0]
    step("forget", memory_id, reason="tidy", scope=BULK, force=True)
    shown = step("forget_preview", ids=[memory_id], scope=BULK)
    step("forget", memory_id, reason="tidy", scope=BULK, force=True,
         confirm_token=shown.confirm_token)


def level_operations(step: Callable[..., Any], compress: Callable[[str], object]) -> None:
    """get at a level, more, evidence (whole, one witness, a foreign one), versions, recall
    with reroll and NEED_MORE_CONTEXT in both modes, with their refusals."""
    said = step("remember", messages=[
        {"role": "user", "content": "Hi there! Our staging database runs PostgreSQL 16 on "
                                    "port 5433. Could you keep that in mind?"},
        {"role": "assistant", "content": "Noted: staging uses PostgreSQL 16 on port 5433."},
        {"role": "user", "content": "The nightly backup job starts at 02:30 UTC."}],
        scope=ALICE, conversation_id="ops", type=MemoryType.EPISODIC)
    other = step("remember", "Unrelated note about gardening.", scope=ALICE)
    episode = said.episode_id
    for memory_id in (episode, *said.memory_ids):
        compress(memory_id)
    step("get", episode, scope=ALICE, level="auto")
    r3 = step("get", episode, scope=ALICE, level="more", have="R1")
    step("get", episode, scope=ALICE, level="more", have="R3")
    step("get", episode, scope=ALICE, level="R5")
    step("get", episode, scope=ALICE, level="R2")  # unused level: refused
    step("get", episode, scope=ALICE, have="R3")  # have without level: refused
    step("evidence", episode, scope=ALICE)
    step("evidence", episode, scope=ALICE, witness=r3.served.witnesses[0].event_id)
    step("evidence", episode, scope=ALICE, witness=other.event_ids[0])  # foreign: 404
    step("evidence", episode, scope=ALICE, witness="ops:2-1")  # malformed range: refused
    step("versions", episode, scope=ALICE)
    step("versions", episode, scope={"user": "bob"})
    for reroll in (0, 1, 2):
        step("recall", "staging database port", scope=ALICE, k=1, reroll=reroll)
    step("recall", "staging database port", scope=ALICE, k=1, need_more_context=True,
         escalation="auto")
    step("recall", "staging database port", scope=ALICE, k=1, need_more_context=True,
         escalation="ask")
    step("recall", "staging database port", scope=ALICE, reroll=-1)


class Versions:
    """The facade, with ``versions`` as the HTTP API serves them: metadata, no content."""

    def __init__(self, strata: Strata) -> None:
        self.strata = strata

    def __getattr__(self, name: str) -> Any:
        return getattr(self.strata, name)

    def versions(self, memory_id: str, **options: Any) -> list[VersionInfo]:
        found = self.strata.versions(memory_id, **options)
        active = self.strata.get(memory_id, include_deleted=True, **options).active_version_id
        return [VersionInfo.of(v, active) for v in found]


def normal(results: list[Any]) -> Any:
    """JSON-ready, with ids (also within messages) numbered by first appearance; cursors,
    timings, the history's actor (the server names its own: ``api``) and the forget
    preview's signed tokens (they sign the actor) elided."""
    ids: dict[str, str] = {}

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: ("…" if k in ELIDED and v else walk(v)) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [walk(v) for v in value]
        if isinstance(value, str):  # ids, also inside messages
            return UUID.sub(lambda found: ids.setdefault(found[0], f"id{len(ids)}"), value)
        return value

    def plain(result: Any) -> Any:
        if isinstance(result, StrataError):
            return {"error": type(result).__name__, "code": result.code}
        if isinstance(result, list):
            return [row if isinstance(row, dict) else row.to_dict() for row in result]
        return result.to_dict()

    return walk([plain(r) for r in results])


#: (an export's ``sha256`` covers the history's actor, so it differs with it)
ELIDED = frozenset({"timings_ms", "next_cursor", "actor", "preview_token", "confirm_token",
                    "sha256"})


def run_on(strata: Strata, clock: FakeClock, api: Any | None = None) -> list[Any]:
    def tick() -> None:
        # The fake clock moves a minute a step, past a job's lease: it moves once the
        # write-behind thread (decision 0051) has run what the last step left it.
        strata.writer.settle(everyone=True)
        strata.reader.access.flush()  # recall's access counts, written within 1 s (0050)
        clock.advance(minutes=1)

    return scenario(api or Versions(strata), tick,
                    lambda memory_id: strata.compress(memory_id, reason="conformance",
                                                      scope=ALICE))


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[tuple[Strata, FakeClock], tuple[Strata, FakeClock]]]:
    """Two facades with equal fake clocks on fresh SQLite stores: one local, one served."""
    made = []
    for name in ("local", "served"):
        clock = FakeClock()
        # no embedded worker: its background jobs (the graph's) would land at different
        # moments on the two sides, and the export holds the graph
        made.append((Strata.open(tmp_path / name, embedder=HashingEmbedder(), clock=clock,
                                 forget_confirm_threshold=2, embedded_worker=False), clock))
    yield made[0], made[1]
    for strata, _ in made:
        strata.close()


def test_the_sync_client_gives_what_the_facade_gives(pair: Any) -> None:
    (local, local_clock), (served, served_clock) = pair
    expected = run_on(local, local_clock)
    with serving(create_app(served)) as url, StrataClient(url) as client:
        got = run_on(served, served_clock, client)
    assert [type(r) for r in got] == [type(r) for r in expected]
    assert normal(got) == normal(expected)
    assert [type(r).__name__ for r in got if isinstance(r, StrataError)] == [
        "IdempotencyMismatch", "InvalidInput", "NotFound", "VersionConflict", "NotFound",
        "InvalidInput", "InvalidInput",  # the review steps
        "InvalidInput", "VersionConflict", "NotFound",  # the time-travel steps
        "VersionConflict", "InvalidInput", "InvalidInput", "ConfirmationRequired",
        "InvalidInput", "ConfirmationRequired",  # the pinned force-forget without its token
        "NotFound", "InvalidInput",
        "InvalidInput", "InvalidInput", "NotFound", "InvalidInput", "NotFound",
        "NeedMoreContext", "InvalidInput",
        "InvalidInput"]  # a deferred embedding outside raw mode
    leveled = [r for r in got if isinstance(r, LeveledMemory)]
    assert [r.served.level.name for r in leveled] == ["R3", "R3", "R4", "R5"]
    assert leveled[-1].served.events and not leveled[0].served.events
    asked = next(r for r in got if isinstance(r, NeedMoreContext))
    assert asked.details["recommended_next_level"] == "R4"
    assert asked.details["witnesses_available"] is True
    recalls = [r for r in got if isinstance(r, Recall)][-4:]
    assert [(r.used_level, r.escalated) for r in recalls] == [
        ("auto", False), ("R4", False), ("R5", False), ("R4", True)]
    assert [r.hits[0].level for r in recalls] == ["R3", "R4", "R5", "R4"]
    assert len({r.context for r in recalls[:3]}) == 3  # never the same context twice
    assert recalls[0].hits[0].witnesses and not recalls[1].hits[0].witnesses
    history = next(r for r in reversed(got) if isinstance(r, list) and r
                   and isinstance(r[0], HistoryEvent))
    assert {row.actor for row in history} == {"api"}
    exported = next(r for r in got if isinstance(r, list) and r and isinstance(r[0], dict))
    assert {r["record"] for r in exported} == {"header", "event", "memory", "history", "graph",
                                               "checksum"}
    listed = next(r for r in reversed(got) if isinstance(r, Page))
    bulk = [m for m in listed.items if m.scope.run == "bulk"]
    # the three notes, and the facts derived from them (forgotten with them)
    assert len(bulk) >= 3 and {m.lifecycle.value for m in bulk} == {"deleted"}


class Blocking:
    """An async client's methods, called from sync code through an event loop thread."""

    def __init__(self, client: AsyncStrataClient, portal: Any) -> None:
        self.client = client
        self.portal = portal

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.client, name)
        return lambda *args, **kwargs: self.portal.call(functools.partial(method, *args,
                                                                          **kwargs))

    def export(self) -> list[dict[str, Any]]:
        async def collect() -> list[dict[str, Any]]:
            return [record async for record in await self.client.export()]
        result: list[dict[str, Any]] = self.portal.call(collect)
        return result


def test_the_async_client_gives_what_the_facade_gives(pair: Any) -> None:
    (local, local_clock), (served, served_clock) = pair
    expected = run_on(local, local_clock)
    transport = httpx.ASGITransport(app=create_app(served))
    with anyio.from_thread.start_blocking_portal() as portal:
        client = AsyncStrataClient(http=httpx.AsyncClient(transport=transport,
                                                          base_url="http://strata"))
        got = run_on(served, served_clock, Blocking(client, portal))
        portal.call(client.aclose)
    assert [type(r) for r in got] == [type(r) for r in expected]
    assert normal(got) == normal(expected)
