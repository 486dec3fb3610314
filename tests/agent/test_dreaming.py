"""The dreaming cycle ([004] §4.3) end to end through the HTTP transport: implicit signals
and feedback → template and extraction proposals → nothing changes until a human approves →
each merge a new registry version → rollback. Plus the signal rules on their own."""

from __future__ import annotations

from typing import Any

import pytest

from strata_recall.agent.extraction import EXTRACTION_TEMPLATE, ExtractionRules, RelationRule
from strata_recall.agent.llm import SIGNAL_LESSONS
from strata_recall.agent.runtime import EXTRACTED_TAG, UNDO_MARK, Agent, Incoming
from strata_recall.agent.signals import LoggedTurn, detect
from strata_recall.domain.models import Filters
from strata_recall.errors import InvalidInput
from strata_recall.facade import Strata
from tests.agent.conftest import Bot

LONG = " ".join(f"word{i}" for i in range(45))


def turns(*texts: str) -> list[LoggedTurn]:
    """Alternating user / bot turns of one conversation."""
    return [LoggedTurn(f"t{i}", "c", "ana", i % 2 == 1, text) for i, text in enumerate(texts)]


def test_the_signals_read_from_a_conversation() -> None:
    found = detect(turns("where do I live?", "You live somewhere.",
                         "no, that's wrong", "Sorry.",
                         "tell me about tides", LONG,
                         "ok", "Fine.",
                         "where do I live again?", "Porto.",
                         "thanks for that, good night", "Night."))
    assert [(s.kind, s.turn_id) for s in found] == [
        ("correction", "t2"), ("short_reply", "t6"), ("repeat", "t8")]
    assert found[0].answer == "You live somewhere."
    assert detect(turns("hi", "hello", "how are you", "fine")) == []
    assert detect(turns("ok")) == []  # a first turn answers nothing


def test_the_extraction_strategy_is_data() -> None:
    rules = ExtractionRules.parse(EXTRACTION_TEMPLATE)
    assert rules.objectives("I want to run a marathon. Hi.") == ["run a marathon"]
    assert rules.triples("Bob mentors Carla") == []
    template = rules.with_relations(EXTRACTION_TEMPLATE, [RelationRule("mentors", "mentors")])
    richer = ExtractionRules.parse(template)
    assert richer.triples("Bob mentors Carla and I mentors Dan") == [
        ("Bob", "mentors", "Carla"), ("User", "mentors", "Dan")]
    assert richer.objectives("my goal is to sleep more") == ["sleep more"]
    with pytest.raises(InvalidInput):
        ExtractionRules.parse(EXTRACTION_TEMPLATE + "- Bad Rule: x;y\n")


def proposals(bot: Bot) -> dict[str, dict[str, Any]]:
    """The pending proposals by registry key."""
    return {str(p.data["prompt_key"]): {"id": p.id, **p.data}
            for p in bot.agent.registry.pending()}


def test_implicit_signals_become_a_template_proposal_merged_only_when_approved(
        bot: Bot) -> None:
    bot.say(f"tell me everything about tides {LONG}")
    bot.say("ok")  # a short reply after a long answer
    bot.say("where is the nearest beach?")
    bot.say("no, that is not what I asked")  # a correction
    bot.say("what's the weather in Porto tomorrow")
    bot.say("what's the weather in Porto tomorrow again?")  # asked again
    before = bot.agent.registry.entry("chat")
    dream = bot.http.post("/dream").json()
    assert dream["feedback"] == 0
    assert dream["signals"] == {"short_reply": 1, "correction": 1, "repeat": 1}
    pending = proposals(bot)
    assert set(pending) == {"chat"}  # nothing there names a missed relation
    chat = pending["chat"]
    for kind in ("short_reply", "correction", "repeat"):
        assert SIGNAL_LESSONS[kind] in chat["proposed_template"]
    assert "signals: 1 short_reply" in chat["reason"]
    card = [c for c in bot.http.get("/feed").json() if c["kind"] == "dream_proposal"]
    assert card[0]["key"] == "chat" and "## Signals" in card[0]["prompt"]
    assert bot.agent.registry.entry("chat").version == before.version  # not merged
    bot.say("tell me a joke")
    assert SIGNAL_LESSONS["repeat"] not in bot.last_prompt()

    assert bot.say(f"!approve {chat['id']}", user="mallory")["kind"] == "error"
    merged = bot.say(f"!approve {chat['id']}")
    assert f"version {before.version + 1}" in merged["text"]
    bot.say("tell me another joke")
    assert SIGNAL_LESSONS["repeat"] in bot.last_prompt()
    back = bot.say(f"!rollback chat {before.version}")
    assert "rolled back" in back["text"]
    assert bot.agent.registry.template("chat") == before.data["template"]
    bot.say("one more joke")
    assert SIGNAL_LESSONS["repeat"] not in bot.last_prompt()
    assert bot.http.post("/dream").json()["signals"] == {}  # reviewed once only


def test_a_missed_relation_becomes_an_extraction_proposal_then_a_versioned_rule(
        bot: Bot) -> None:
    bot.say("Bob mentors Carla at the lab.")
    bot.say("who is Carla's mentor?")
    bot.say("no, I told you Bob mentors Carla")  # the bot did not know
    bot.work()
    rules_before = bot.agent.registry.entry("extraction")
    dream = bot.http.post("/dream").json()
    extraction = proposals(bot)["extraction"]
    assert extraction["id"] in dream["proposals"]
    assert "- mentors: mentors" in extraction["proposed_template"]
    bot.say("Dan mentors Eve on Fridays.")  # before approval: the old rules apply
    bot.work()
    assert extracted(bot) == []

    bot.say(f"!approve {extraction['id']}")
    entry = bot.agent.registry.entry("extraction")
    assert entry.version == rules_before.version + 1
    bot.say("Fay mentors Gus every week.")
    bot.work()
    facts = extracted(bot)
    assert [m.content for m in facts] == ["Fay mentors Gus"]
    assert f"extraction-v{entry.version}" in facts[0].tags
    assert "user: Fay mentors Gus every week." in bot.agent.recent_turns("ana", "c1", 30)
    bot.say("what does Fay do")
    assert "Fay mentors Gus" in bot.last_prompt()  # the triple is in the graph context

    bot.say(f"!rollback extraction {rules_before.version}")
    bot.say("Hal mentors Ida too.")
    bot.work()
    assert [m.content for m in extracted(bot)] == ["Fay mentors Gus"]


def extracted(bot: Bot) -> list[Any]:
    return list(bot.strata.list(scope=bot.agent.user_scope("ana"),
                                filters=Filters(tags_all=(EXTRACTED_TAG,))).items)


def test_the_bin_on_an_answer_is_a_signal_and_feedback_still_counts(bot: Bot) -> None:
    answer = bot.say("write me a limerick")
    removed = bot.http.post("/reactions", json={"user": "ana", "emoji": UNDO_MARK,
                                                "message_id": answer["turn"]["message_id"]})
    assert removed.json() == {"undone": False, "effect": "undo"}
    bot.http.post("/reactions", json={"user": "ana", "emoji": UNDO_MARK,
                                      "message_id": "not-a-bot-message"})
    bot.say("be funnier", message_id="f1", reply_to=answer["turn"]["message_id"],
            reply_to_bot=True)
    dream = bot.http.post("/dream").json()
    assert dream["signals"] == {"undo": 1} and dream["feedback"] == 1
    chat = proposals(bot)["chat"]["proposed_template"]
    assert SIGNAL_LESSONS["undo"] in chat and "- be funnier" in chat


def test_a_rejected_or_stale_proposal_never_merges(local_strata: Strata) -> None:
    agent = Agent(local_strata)
    from strata_recall.agent.dreaming import Dreamer

    dreamer = Dreamer(agent)
    turn = agent.handle(Incoming("hello", "ana", "c"))
    agent.feedback.add(content="more warmth", referenced_message_id=turn.message_id or "",
                       user_message_id="f1", user="ana")
    first = str(dreamer.run()["proposal"])
    agent.feedback.add(content="fewer questions", referenced_message_id="x",
                       user_message_id="f2", user="ana")
    second = str(dreamer.run()["proposal"])
    template = agent.registry.template("chat")
    agent.registry.reject(first, approver="owner")
    assert agent.registry.template("chat") == template
    agent.registry.approve(second, approver="owner")
    third = agent.registry.propose("chat", "TASK: chat\nold base", by="ai", reason="x")
    agent.registry.rollback("chat", 1, by="owner")
    with pytest.raises(InvalidInput, match="reject it"):
        agent.registry.approve(third.id, approver="owner")
