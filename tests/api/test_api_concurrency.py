"""Concurrent requests through the real ASGI app and thread pool, on SQLite."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from strata_recall.api.app import create_app
from strata_recall.facade import Strata


async def _gather(facade: Strata, requests: list[dict[str, Any]]) -> list[httpx.Response]:
    transport = httpx.ASGITransport(app=create_app(facade))
    async with httpx.AsyncClient(transport=transport, base_url="http://strata") as http:
        return list(await asyncio.gather(*(http.request(**r) for r in requests)))


def test_64_concurrent_remembers_with_one_key_make_one_memory(facade: Strata) -> None:
    body = {"text": "a note for the team: exactly once", "scope": {"team": "a"},
            "idempotency_key": "k-64"}
    responses = asyncio.run(_gather(facade, [
        {"method": "POST", "url": "/v1/remember", "json": body} for _ in range(64)]))

    assert {r.status_code for r in responses} == {200}
    assert len({r.content for r in responses}) == 1  # 64 byte-identical bodies
    replays = [r.headers["Idempotent-Replayed"] for r in responses]
    assert replays.count("false") == 1 and replays.count("true") == 63
    assert facade.stats().memories == 1 and facade.stats().events == 1
    memory_id = responses[0].json()["memory_ids"][0]
    assert [h.kind.value for h in facade.history(memory_id, scope={"team": "a"})] == ["ADD"]


def test_32_concurrent_patches_on_one_version_let_exactly_one_through(facade: Strata) -> None:
    memory_id = facade.remember("v1", scope={"team": "a"}).memory_ids[0]
    rows_before = len(facade.history(memory_id, scope={"team": "a"}))
    responses = asyncio.run(_gather(facade, [
        {"method": "PATCH", "url": f"/v1/memories/{memory_id}", "params": {"team": "a"},
         "json": {"content": f"v2 from writer {i}", "reason": "race", "if_version": 1}}
        for i in range(32)]))

    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200] + [409] * 31
    assert all(r.json()["error"]["code"] == "version_conflict"
               for r in responses if r.status_code == 409)
    winner = next(r.json() for r in responses if r.status_code == 200)
    stored = facade.get(memory_id, scope={"team": "a"})
    assert (stored.version, stored.content) == (2, winner["content"])
    history = facade.history(memory_id, scope={"team": "a"})
    assert len(history) == rows_before + 1 and history[-1].after is not None
    assert history[-1].after["content"] == winner["content"]
