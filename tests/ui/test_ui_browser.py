"""The moderator UI driven in a real headless Chromium against real servers on SQLite:
review, witness popovers, rollback and recover, time travel, and token mode's limits."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from typer.testing import CliRunner

from strata_recall.cli.main import app as cli_app
from strata_recall.domain.models import Lifecycle
from strata_recall.facade import Strata
from tests.ui.conftest import goto, ui_page

TURN = ("Hi there! Our staging database runs PostgreSQL 16 on port 5433. "
        "Could you keep that in mind?")


def scope(name: str) -> dict[str, str]:
    return {"team": "default", "user": name}


def test_review_approves_with_edits_and_rejects_with_a_reason(
        browser: Any, local_server: tuple[str, Strata]) -> None:
    base, strata = local_server
    where = scope("reviewer")
    [berlin] = strata.remember("I live in Berlin", scope=where, mode="sync").derived_ids
    [acme] = strata.remember("I work at Acme", scope=where, mode="sync").derived_ids
    page = ui_page(browser, base, "review", scope=where)
    card = page.locator(f"article.candidate[data-id='{berlin}']")
    card.locator("input[name=topic]").fill("home")
    card.locator("select[name=importance]").select_option("4")
    card.locator("button.approve").click()
    page.wait_for_selector(f"article.candidate[data-id='{berlin}']", state="detached")
    approved = strata.get(berlin, scope=where)
    assert approved.lifecycle == Lifecycle.ACTIVE and approved.importance == 1.0
    assert "topic:home" in approved.tags
    page.locator(f"article.candidate[data-id='{acme}'] button.reject").click()
    page.fill("dialog textarea[name=reason]", "not about the user")
    page.click("dialog button[type=submit]")
    page.wait_for_selector(f"article.candidate[data-id='{acme}']", state="detached")
    assert strata.get(acme, scope=where, include_deleted=True).lifecycle == Lifecycle.DEPRECATED
    assert strata.history(acme, scope=where)[-1].reason == "rejected: not about the user"
    assert page.errors == []


def test_review_keyboard_shortcuts_approve_the_focused_candidate(
        browser: Any, local_server: tuple[str, Strata]) -> None:
    base, strata = local_server
    where = scope("keys")
    [lisbon] = strata.remember("I live in Lisbon", scope=where, mode="sync").derived_ids
    page = ui_page(browser, base, "review", scope=where)
    page.keyboard.press("j")
    page.keyboard.press("a")
    page.wait_for_selector(f"article.candidate[data-id='{lisbon}']", state="detached")
    assert strata.get(lisbon, scope=where).lifecycle == Lifecycle.ACTIVE


def test_witness_popover_shows_what_strata_evidence_prints(
        browser: Any, local_server: tuple[str, Strata], tmp_path: Path) -> None:
    base, strata = local_server
    where = scope("witness")
    [memory_id] = strata.remember(TURN, scope=where, author="ana", mode="raw").memory_ids
    strata.compress(memory_id, scope=where, reason="test")
    page = ui_page(browser, base, f"memory/{memory_id}", scope=where)
    chip = page.locator(".level[data-level=R3] .witness").first
    witness = chip.get_attribute("data-witness")
    chip.click()
    rows = page.locator(".popover tr.evidence-row")
    rows.first.wait_for()
    shown = [{"author": rows.nth(i).locator(".ev-author").inner_text(),
              "ts": rows.nth(i).locator(".ev-ts").get_attribute("title"),
              "text": rows.nth(i).locator(".ev-text").inner_text()}
             for i in range(rows.count())]
    home = strata.settings.sqlite_path
    printed = CliRunner().invoke(cli_app, [
        "--home", str(home), "--embedder", "hashing", "evidence", memory_id, "--witness",
        str(witness), "--team", "default", "--user", "witness", "--json"])
    assert printed.exit_code == 0, printed.output
    expected = [{"author": e["author"] or e["role"] or "", "ts": e["ts"], "text": e["text"]}
                for e in json.loads(printed.output)["items"]]
    assert shown == expected and expected[0]["text"] == TURN
    page.keyboard.press("Escape")
    assert page.locator(".popover").count() == 0


def test_rollback_and_recover_show_in_the_history(
        browser: Any, local_server: tuple[str, Strata]) -> None:
    base, strata = local_server
    where = scope("rollback")
    [memory_id] = strata.remember("The office opens at 9", scope=where, mode="raw").memory_ids
    strata.modify(memory_id, content="The office opens at 10", reason="new hours", scope=where)
    page = ui_page(browser, base, f"memory/{memory_id}", scope=where)
    page.get_by_role("button", name="Roll back to v1").click()
    page.fill("dialog textarea[name=reason]", "the change was wrong")
    page.click("dialog button[type=submit]")
    page.wait_for_selector(".history-row[data-kind=ROLLBACK]")
    assert page.inner_text("#memory-content") == "The office opens at 9"
    assert "the change was wrong" in page.inner_text(".history-row[data-kind=ROLLBACK]")
    page.get_by_role("button", name="Forget…").click()
    page.fill("dialog textarea[name=reason]", "cleanup")
    page.click("dialog button[type=submit]")
    page.wait_for_selector("#recover").click()
    page.fill("dialog textarea[name=reason]", "forgotten by mistake")
    page.click("dialog button[type=submit]")
    page.wait_for_selector(".history-row[data-kind=RECOVER]")
    kinds = page.locator(".history-row").evaluate_all("rows => rows.map(r => r.dataset.kind)")
    assert kinds[-3:] == ["ROLLBACK", "DELETE", "RECOVER"]
    assert strata.get(memory_id, scope=where).lifecycle == Lifecycle.ACTIVE


def test_time_slider_shows_a_past_state(browser: Any, local_server: tuple[str, Strata]) -> None:
    base, strata = local_server
    where = scope("traveller")
    [memory_id] = strata.remember("Tea is green", scope=where, mode="raw").memory_ids
    time.sleep(0.05)
    between = datetime.now(UTC).isoformat()
    time.sleep(0.05)
    strata.modify(memory_id, content="Tea is black", reason="changed", scope=where)
    page = ui_page(browser, base, f"history?from={quote(between)}", scope=where)
    assert "Tea is black" in page.inner_text("#state")
    page.focus("#slider")
    page.keyboard.press("Home")  # the slider's start: the moment between the two versions
    page.locator("#state td", has_text="Tea is green").wait_for()
    assert "Tea is black" not in page.inner_text("#state")
    assert page.input_value("#at") == datetime.fromisoformat(between).isoformat(
        timespec="milliseconds").replace("+00:00", "Z")


def test_token_mode_hides_what_a_reader_may_not_do_and_the_server_refuses_it(
        browser: Any, token_server: tuple[str, Strata]) -> None:
    base, strata = token_server
    where = {"team": "acme"}
    [candidate] = strata.remember("I live in Oslo", scope=where, mode="sync").derived_ids
    [memory_id] = strata.remember("Deploys happen on Fridays", scope=where,
                                  mode="raw").memory_ids
    _, reader = strata.create_token("reader", team="acme")
    page = ui_page(browser, base, "overview", expect="signin")
    page.fill("#token", reader)
    page.click("form.signin button[type=submit]")
    page.wait_for_selector("body[data-rendered='overview']")
    assert "token mode · reader" in page.inner_text("#who")
    assert page.evaluate("document.cookie") == ""
    goto(page, base, "review")
    assert page.locator(f"article.candidate[data-id='{candidate}']").count() == 1
    assert page.locator("button.approve, button.reject, #bulk-approve").count() == 0
    goto(page, base, f"memory/{memory_id}")
    assert page.locator("[data-needs]").count() == 0
    assert page.get_by_role("button", name="Forget…").count() == 0
    refused = page.evaluate("""async (id) => {
        const r = await fetch(`/v1/memories/${id}/approve`, {method: 'POST',
          headers: {'Content-Type': 'application/json',
                    Authorization: `Bearer ${sessionStorage.getItem('strata.token')}`},
          body: JSON.stringify({reason: 'sneaky'})});
        return [r.status, (await r.json()).error.code];
    }""", candidate)
    assert refused == [403, "permission_denied"]
    assert strata.get(candidate, scope=where).lifecycle == Lifecycle.CANDIDATE
    goto(page, base, "jobs")
    assert "answers the local user only" in page.inner_text("main")
    page.click("#signout")
    page.wait_for_selector("body[data-rendered='signin']")
    assert page.evaluate("sessionStorage.getItem('strata.token')") is None


def test_a_writer_token_sees_the_actions(browser: Any, token_server: tuple[str, Strata]
                                         ) -> None:
    base, strata = token_server
    [memory_id] = strata.remember("Lunch is at noon", scope={"team": "acme"},
                                  mode="raw").memory_ids
    _, writer = strata.create_token("writer", team="acme")
    page = ui_page(browser, base, f"memory/{memory_id}", token=writer)
    assert page.get_by_role("button", name="Forget…").count() == 1
    assert page.get_by_role("button", name="Compress now").count() == 0  # operators only
    assert page.input_value("#scopebar input[name=team]") == "acme"
    assert page.is_disabled("#scopebar input[name=team]")


def test_search_shows_the_per_signal_breakdown_and_the_list_sorts(
        browser: Any, local_server: tuple[str, Strata]) -> None:
    base, strata = local_server
    where = scope("searcher")
    strata.remember("The staging database listens on port 5433", scope=where, mode="raw")
    strata.remember("Lunch is served at noon", scope=where, mode="raw", importance=0.9)
    page = ui_page(browser, base, "memories?q=staging+database+port", scope=where)
    first = page.locator("tr.hit").first
    assert "port 5433" in first.inner_text()
    expected = strata.recall("staging database port", scope=where, k=50).hits[0]
    for name in expected.signals:
        assert name in first.locator(".signals").inner_text()
    goto(page, base, "memories?sort=importance&dir=desc")
    assert "Lunch is served" in page.locator("tr.memory-row").first.inner_text()
    assert page.locator("th[aria-sort=descending]").inner_text().startswith("importance")


def test_forget_by_query_previews_then_forgets_after_confirmation(
        browser: Any, local_server: tuple[str, Strata]) -> None:
    base, strata = local_server
    where = scope("forgetter")
    [old] = strata.remember("Old deploy notes for the 2019 cluster", scope=where,
                            mode="raw").memory_ids
    page = ui_page(browser, base, "forget", scope=where)
    page.fill("input[name=query]", "old deploy notes")
    page.click("button:has-text('Preview')")
    page.wait_for_selector("tr.candidate-row")
    assert strata.get(old, scope=where).lifecycle == Lifecycle.ACTIVE  # a preview changes nothing
    page.click("#forget-execute")
    page.fill("dialog textarea[name=reason]", "stale")
    page.click("dialog button[type=submit]")
    page.wait_for_selector("#forget-preview [role=status]")
    assert strata.get(old, scope=where, include_deleted=True).lifecycle == Lifecycle.DELETED
    goto(page, base, "jobs")
    assert page.locator("[data-count=done]").count() == 1  # the local user's job desk
