"""Browser tests of the moderator UI: a real headless Chromium (the system's ``chromium``, or
``STRATA_CHROMIUM``; Playwright never downloads one) against real servers on SQLite, one
browser for the session. ``make test`` installs chromium when it can (apt-get, as root); if
it is still missing, these tests skip and say why."""

from __future__ import annotations

import os
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from strata_recall.api.app import create_app
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata
from tests.live_server import serving


def chromium_path() -> str | None:
    return os.environ.get("STRATA_CHROMIUM") or shutil.which("chromium") or shutil.which(
        "chromium-browser")


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright "
                                   "(the dev extra) to run the browser tests")
    path = chromium_path()
    if path is None:
        reason = ("NO CHROMIUM: the UI browser tests did NOT run. Install it (apt-get install "
                  "chromium) or set STRATA_CHROMIUM to a Chromium binary.")
        warnings.warn(reason, stacklevel=1)
        pytest.skip(reason)
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield launched
        launched.close()


def open_strata(home: Path) -> Strata:
    return Strata.open(home, embedder=HashingEmbedder(), review_mode="capture_only",
                       embedded_worker=False)


@pytest.fixture(scope="module")
def local_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Strata]]:
    """``strata serve``'s app in local mode on a SQLite store, served over real HTTP."""
    home = tmp_path_factory.mktemp("ui-local")
    strata = open_strata(home)
    with serving(create_app(strata)) as base:
        yield base, strata
    strata.close()


@pytest.fixture(scope="module")
def token_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Strata]]:
    home = tmp_path_factory.mktemp("ui-token")
    strata = open_strata(home)
    with serving(create_app(strata, auth_mode="token")) as base:
        yield base, strata
    strata.close()


def ui_page(browser: Any, base: str, route: str, scope: dict[str, str] | None = None,
            token: str | None = None, expect: str | None = None) -> Any:
    """A fresh tab (its own sessionStorage) at ``/ui/#/<route>`` with a scope chosen."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    seeds = []
    if scope:
        seeds.append(f"sessionStorage.setItem('strata.scope', {_js(scope)});")
    if token:
        seeds.append(f"sessionStorage.setItem('strata.token', {_js(token)});")
    if seeds:
        context.add_init_script("if (!sessionStorage.getItem('seeded')) {"
                                + "".join(seeds) + "sessionStorage.setItem('seeded', '1'); }")
    page = context.new_page()
    page.set_default_timeout(10_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.errors = errors
    goto(page, base, route, expect)
    return page


def goto(page: Any, base: str, route: str, expect: str | None = None) -> None:
    """Show ``route`` and wait until its first screen is rendered (or ``expect``'s)."""
    name = expect or route.split("?")[0].split("/")[0]
    page.evaluate("delete document.body.dataset.rendered") if page.url.startswith(base) else None
    page.goto(f"{base}/ui/#/{route}")
    page.wait_for_selector(f"body[data-rendered='{name}']")


def _js(value: Any) -> str:
    import json

    return json.dumps(json.dumps(value) if not isinstance(value, str) else value)
