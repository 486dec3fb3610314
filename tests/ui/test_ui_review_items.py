"""The review page shows the agent runtime's dream proposals (decision 0036) with their diff
and evidence, and approving or rejecting one there merges or drops it like ``!approve`` /
``!reject`` do (a real ``strata serve`` app on SQLite, a real Chromium)."""

from __future__ import annotations

from typing import Any

from strata_recall.agent.dreaming import Dreamer
from strata_recall.agent.runtime import Agent, AgentConfig, Incoming
from strata_recall.facade import Strata
from tests.ui.conftest import ui_page

WHERE = {"team": "default", "user": "moderator"}


def dream(agent: Agent, feedback: str) -> str:
    turn = agent.handle(Incoming("hello", "42", "7"))
    agent.feedback.add(content=feedback, referenced_message_id=turn.message_id or "",
                       user_message_id=f"f:{feedback}", user="42")
    return str(Dreamer(agent).run()["proposal"])


def test_the_review_page_approves_and_rejects_the_dreams_proposals(
        browser: Any, local_server: tuple[str, Strata]) -> None:
    base, strata = local_server
    agent = Agent(strata, config=AgentConfig(owners=frozenset({"42"})))
    proposal = dream(agent, "fewer emojis")
    page = ui_page(browser, base, "review", scope=WHERE)
    card = page.locator(f"article.review-item[data-id='{proposal}']")
    card.wait_for()
    assert "fewer emojis" in card.locator("pre.diff ins").all_inner_texts()[-1]
    assert "feedback: fewer emojis" in card.locator("ul.evidence").inner_text()
    card.locator("button.approve-item").click()
    page.wait_for_selector(f"article.review-item[data-id='{proposal}']", state="detached")
    entry = agent.registry.entry("chat")
    assert entry.version == 2 and "fewer emojis" in entry.data["template"]
    history = strata.history(entry.id, scope=agent.records.scope)
    assert history[-1].actor == "api"  # the reviewer (the local principal), not the agent

    second = dream(agent, "shout more")
    page = ui_page(browser, base, "review", scope=WHERE)
    page.locator(f"article.review-item[data-id='{second}'] button.reject-item").click()
    page.fill("dialog textarea[name=reason]", "no shouting")
    page.click("dialog button[type=submit]")
    page.wait_for_selector(f"article.review-item[data-id='{second}']", state="detached")
    assert agent.registry.pending() == [] and agent.registry.entry("chat").version == 2
    assert agent.records.get(second).data["status"] == "rejected"
    assert page.errors == []
