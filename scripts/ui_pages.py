"""The moderator UI in a real headless Chromium: screenshots of every page, and how long each
page takes to render its first screen over a large store.

    PYTHONPATH=src python scripts/ui_pages.py screenshots            # -> docs/ui/*.png
    PYTHONPATH=src python scripts/ui_pages.py render-time --memories 100000

Both serve ``strata_recall.api.app.create_app`` over real HTTP on a SQLite store (hashing embedder)
and drive the system's chromium (``STRATA_CHROMIUM`` or ``chromium`` on the PATH) with
Playwright; no browser is downloaded. A page's render time is measured in the browser, from
the route's start to its first screen drawn (``document.body.dataset.renderMs``, set by
``strata/ui/js/app.js``): the time a moderator waits after clicking a page. For each page it
prints the median and max over ``--runs`` and the API call its first screen waited longest for
(``slowest_api``, from the browser's resource timing), with the machine's load average.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.live_server

from tests.live_server import serving

from strata_recall.api.app import create_app
from strata_recall.domain.ids import new_id
from strata_recall.domain.models import Memory, MemoryType, Scope, Tier
from strata_recall.domain.text import content_hash
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata
from strata_recall.ports import NewMemory, WriteBatch

DOCS = Path(__file__).resolve().parent.parent / "docs" / "ui"
PAGES = ("overview", "memories", "memory", "review", "history", "forget", "jobs", "graph")
SCOPE = {"team": "default"}
TURNS = [
    "Hi there! Our staging database runs PostgreSQL 16 on port 5433. Could you keep that "
    "in mind?",
    "We decided to move the weekly sync to Thursdays at 10:00. Alice from Acme will run it.",
]


def chromium() -> str:
    path = os.environ.get("STRATA_CHROMIUM") or shutil.which("chromium")
    if path is None:
        sys.exit("no chromium: apt-get install chromium, or set STRATA_CHROMIUM")
    return path


@contextmanager
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium(),
                                              args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


def open_store(home: Path) -> Strata:
    return Strata.open(home, embedder=HashingEmbedder(), review_mode="capture_only",
                       embedded_worker=False)


def show(page: Any, base: str, route: str) -> float:
    """Navigate within the loaded UI to ``route``; the first screen's render time in ms."""
    return show_timed(page, base, route)[0]


#: The API calls the first screen waited for (started by the route, ended before it was
#: drawn), from the browser's resource timing: ``[path, ms]``, slowest first.
FIRST_SCREEN_CALLS = """() => {
  const start = Number(document.body.dataset.renderStart);
  const end = start + Number(document.body.dataset.renderMs);
  return performance.getEntriesByType('resource')
    .filter((e) => e.initiatorType === 'fetch' && e.startTime >= start - 1
                   && e.responseEnd <= end + 1)
    .map((e) => [new URL(e.name).pathname, Math.round(e.duration)])
    .sort((a, b) => b[1] - a[1]);
}"""


def show_timed(page: Any, base: str, route: str) -> tuple[float, list[tuple[str, float]]]:
    """``show``, and the API calls its first screen waited for (slowest first)."""
    name = route.split("?")[0].split("/")[0]
    page.evaluate("delete document.body.dataset.rendered; performance.clearResourceTimings()")
    page.goto(f"{base}/ui/#/{route}")
    page.wait_for_selector(f"body[data-rendered='{name}']", timeout=60_000)
    calls = [(path, float(ms)) for path, ms in page.evaluate(FIRST_SCREEN_CALLS)]
    return float(page.evaluate("Number(document.body.dataset.renderMs)")), calls


# -- screenshots ----------------------------------------------------------------------------


def seed_demo(strata: Strata) -> dict[str, str]:
    """A small store with something on every page; returns the ids the shots need."""
    compressed = strata.remember(TURNS[0], scope=SCOPE, author="ana", mode="raw").memory_ids[0]
    strata.compress(compressed, scope=SCOPE, reason="demo")
    sync = strata.remember(TURNS[1], scope=SCOPE, author="bob", mode="raw").memory_ids[0]
    strata.index_graph(sync, ["Alice", "Acme", "weekly sync"],
                       [("Alice", "works_at", "Acme"), ("Alice", "runs", "weekly sync")],
                       scope=SCOPE)
    for text in ("I live in Berlin", "I work at Acme as a data engineer",
                 "My manager is Tom", "I prefer green tea"):
        strata.remember(text, scope=SCOPE, author="ana", mode="sync")
    edited = strata.remember("The office opens at 9", scope=SCOPE, mode="raw").memory_ids[0]
    strata.modify(edited, content="The office opens at 10", reason="new hours", scope=SCOPE)
    strata.modify(edited, importance=0.9, reason="people ask daily", scope=SCOPE)
    gone = strata.remember("Old deploy notes for the 2019 cluster", scope=SCOPE,
                           mode="raw").memory_ids[0]
    strata.forget(gone, reason="stale", scope=SCOPE)
    for _ in range(3):
        strata.recall("staging database port", scope=SCOPE)
    strata.work()
    return {"compressed": compressed, "edited": edited}


def screenshots(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        strata = open_store(Path(home))
        ids = seed_demo(strata)
        entity = strata.graph_entities(scope=SCOPE, prefix="alice", limit=1)[0].id
        with serving(create_app(strata)) as base, browser() as chrome:
            shoot_pages(chrome, base, ids, entity, out)
        with serving(create_app(strata, auth_mode="token")) as base, browser() as chrome:
            page = chrome.new_page(viewport={"width": 1280, "height": 720})
            page.goto(f"{base}/ui/")
            page.wait_for_selector("body[data-rendered='signin']")
            page.screenshot(path=str(out / "signin.png"))
        strata.close()


def shoot_pages(chrome: Any, base: str, ids: dict[str, str], entity: str, out: Path) -> None:
    routes = {
        "overview": "overview", "memories": "memories", "search": "memories?q=staging+port",
        "memory": f"memory/{ids['compressed']}", "history-memory": f"memory/{ids['edited']}",
        "review": "review", "time-travel": "history", "forget": "forget", "jobs": "jobs",
        "graph": f"graph/{entity}",
    }
    page = chrome.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{base}/ui/")
    page.wait_for_selector("body[data-rendered]")
    for query in ("staging port", "weekly sync", "office hours", "green tea"):
        # recalls over HTTP, with the overview visited between them: points on its chart
        page.evaluate("q => fetch('/v1/recall', {method: 'POST', headers: {'Content-Type': "
                      "'application/json'}, body: JSON.stringify({query: q})})", query)
        show(page, base, "forget")  # away and back: a hash change re-renders
        show(page, base, "overview")
        page.wait_for_selector("[aria-busy]", state="detached")
    show(page, base, "forget")
    for name, route in routes.items():
        show(page, base, route)
        page.wait_for_selector("[aria-busy]", state="detached")  # below the fold too
        page.wait_for_timeout(150)
        page.screenshot(path=str(out / f"{name}.png"), full_page=True)
    show(page, base, f"memory/{ids['compressed']}")
    page.locator(".level[data-level=R3] .witness").first.click()
    page.wait_for_selector(".popover tr.evidence-row")
    page.screenshot(path=str(out / "witness-popover.png"))
    show(page, base, "forget")
    page.fill("input[name=query]", "deploy notes staging")
    page.click("button[type=submit]:has-text('Preview')")
    page.wait_for_selector("#forget-preview table")
    page.screenshot(path=str(out / "forget-preview.png"), full_page=True)
    phone = chrome.new_page(viewport={"width": 390, "height": 844}, color_scheme="dark")
    phone.goto(f"{base}/ui/#/review")
    phone.wait_for_selector("body[data-rendered='review']")
    phone.screenshot(path=str(out / "review-phone-dark.png"), full_page=True)
    dark = chrome.new_page(viewport={"width": 1280, "height": 900}, color_scheme="dark")
    dark.goto(f"{base}/ui/#/memory/{ids['compressed']}")
    dark.wait_for_selector("body[data-rendered='memory']")
    dark.screenshot(path=str(out / "memory-dark.png"))


# -- render time over a large store --------------------------------------------------------

BATCH = 2_000
TYPES = (MemoryType.SEMANTIC, MemoryType.EPISODIC, MemoryType.USER_PROFILE,
         MemoryType.PROCEDURAL)


def fill(strata: Strata, memories: int) -> None:
    """``memories`` memories in the default team, written straight to the store in batches
    (what ``remember`` would store, minus the raw events)."""
    rng = np.random.default_rng(7)
    dim = strata.embedder.dim
    start = datetime.now(UTC) - timedelta(seconds=memories)
    for offset in range(0, memories, BATCH):
        batch = []
        for i in range(offset, min(memories, offset + BATCH)):
            text = f"benchmark fact number {i}: the service {i % 97} runs on port {1000 + i}"
            vector = rng.standard_normal(dim).astype(np.float32)
            when = start + timedelta(seconds=i)
            memory = Memory(id=new_id(), scope=Scope(team="default"), type=TYPES[i % 4],
                            content=text, content_hash=content_hash(text), created_at=when,
                            updated_at=when, tier=(Tier.HOT, Tier.WARM, Tier.COLD)[i % 3],
                            importance=(i % 5) / 4)
            batch.append(NewMemory(memory, vector / np.linalg.norm(vector)))
        strata.store.write(WriteBatch(events=(), memories=batch, actor="bench", reason="bench"))


def render_time(memories: int, runs: int, home: Path | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as scratch:
        strata = open_store(home or Path(scratch))
        began = time.perf_counter()
        some = strata.list(scope=SCOPE, limit=1).items
        if not some:  # a --home filled before is reused as it is
            fill(strata, memories)
            for text in ("I live in Berlin", "I work at Acme"):
                strata.remember(text, scope=SCOPE, author="ana", mode="sync")
            some = strata.list(scope=SCOPE, limit=1).items
        built = time.perf_counter() - began
        live = strata.stats().live_memories
        routes = {name: name for name in PAGES} | {"memory": f"memory/{some[0].id}"}
        runs_of: dict[str, list[tuple[float, list[tuple[str, float]]]]] = {n: [] for n in routes}
        with serving(create_app(strata)) as base, browser() as chrome:
            page = chrome.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"{base}/ui/")
            page.wait_for_selector("body[data-rendered]")
            for _ in range(runs + 1):  # the first round warms the caches and is dropped
                for name, route in routes.items():
                    runs_of[name].append(show_timed(page, base, route))
        strata.close()
    return {"memories": live, "build_s": round(built, 1), "runs": runs,
            "load_1min": round(os.getloadavg()[0], 2),
            "pages": {name: page_summary(timed[1:]) for name, timed in runs_of.items()}}


def page_summary(timed: list[tuple[float, list[tuple[str, float]]]]) -> dict[str, Any]:
    """A page's render times over the runs, and the API call its first screen waited
    longest for (the path slowest in most runs, with its median time)."""
    times = [ms for ms, _ in timed]
    slowest: dict[str, list[float]] = {}
    for _, calls in timed:
        if calls:
            slowest.setdefault(calls[0][0], []).append(calls[0][1])
    summary: dict[str, Any] = {"median_ms": statistics.median(times), "max_ms": max(times)}
    if slowest:
        path, durations = max(slowest.items(), key=lambda item: len(item[1]))
        summary |= {"slowest_api": path, "slowest_api_ms": statistics.median(durations)}
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    shots = commands.add_parser("screenshots", help="docs/ui/*.png")
    shots.add_argument("--out", type=Path, default=DOCS)
    timing = commands.add_parser("render-time", help="first-screen render time per page")
    timing.add_argument("--memories", type=int, default=100_000)
    timing.add_argument("--runs", type=int, default=5)
    timing.add_argument("--home", type=Path, help="Keep the store here (reused if filled).")
    args = parser.parse_args()
    if args.command == "screenshots":
        screenshots(args.out)
    else:
        print(json.dumps(render_time(args.memories, args.runs, args.home), indent=2))


if __name__ == "__main__":
    main()
