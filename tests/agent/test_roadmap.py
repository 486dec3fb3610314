"""[004]'s roadmap steps 1-10, each named by its "Proves:" sentence, end to end: HTTP
transport → agent → the OpenAI-compatible client → a loopback server speaking that wire
format, over a SQLite store."""

from __future__ import annotations

import itertools
from datetime import timedelta

from strata_recall.agent.procedural import Archetype
from strata_recall.agent.runtime import FEEDBACK_MARK, UNDO_MARK
from strata_recall.agent.transports.http import build_app
from strata_recall.domain.models import Filters, MemoryType
from strata_recall.facade import Strata
from tests.agent.conftest import Bot, make_agent


def test_bot_is_alive_and_responsive(bot: Bot) -> None:
    reply = bot.say("hello there")
    assert reply["kind"] == "reply" and reply["text"].startswith("You said: hello there")
    assert bot.server.requests[-1].path == "/v1/chat/completions"
    streamed = bot.http.post("/chat", json={"text": "and streamed?", "user": "ana",
                                            "stream": True})
    assert streamed.text.startswith("You said: and streamed?")
    assert bot.server.requests[-1].json["stream"] is True


def test_the_bot_remembers_what_we_talked_about(bot: Bot) -> None:
    for text in ("I adopted a cat named Miso", "she likes tuna", "what is my cat's name?"):
        bot.say(text)
    assert "- user: I adopted a cat named Miso" in bot.last_prompt()
    turns = bot.strata.list(scope=bot.agent.user_scope("ana"), filters=Filters(
        conversation_id="c1", types=(MemoryType.EPISODIC,)), limit=20).items
    events = [bot.strata.evidence(m.id, scope=bot.agent.user_scope("ana"))[0]
              for m in reversed(turns)]
    assert [e.text for e in events[:2]] == ["I adopted a cat named Miso",
                                            events[1].text]
    assert all(later.parent_id == earlier.id for earlier, later in itertools.pairwise(events))
    assert len(events) == 6  # three user turns and three bot turns, chained


def test_the_bot_recalls_relevant_context_from_past_conversations(bot: Bot) -> None:
    bot.say("My sister Ana works at Google.", conversation="monday")
    bot.say("I had pasta for lunch.", conversation="monday")
    bot.work()
    reply = bot.say("what do you remember about where Ana works", conversation="friday")
    assert "Google" in reply["text"]
    assert "works at Google" in bot.last_prompt()


def test_the_bots_behavior_is_evolvable_via_data(bot: Bot) -> None:
    bot.say("hi")
    before = bot.agent.registry.entry("chat")
    proposal = bot.agent.registry.propose(
        "chat", before.data["template"] + "Always answer in one sentence.\n", by="ana",
        reason="shorter")
    bot.say("hi again")
    assert "one sentence" not in bot.last_prompt()  # proposals wait for approval
    merged = bot.say(f"!approve {proposal.id}")
    assert merged["kind"] == "command" and "version" in merged["text"]
    bot.say("and now?")
    assert "Always answer in one sentence." in bot.last_prompt()
    bot.say(f"!rollback chat {before.version}")
    bot.say("and after the rollback?")
    assert "one sentence" not in bot.last_prompt()


def test_the_bot_learns_my_goals_and_preferences_silently(bot: Bot) -> None:
    star = bot.say("My north star is to get healthier this year")
    assert star["kind"] == "north_star" and star["turn"]["message_id"] is None
    answer = bot.say("tell me something")
    feedback = bot.say("too long, keep it short", message_id="u-7",
                       reply_to=answer["turn"]["message_id"], reply_to_bot=True)
    assert feedback == {"kind": "feedback", "text": "", "reaction": FEEDBACK_MARK,
                        "turn": feedback["turn"]}
    turns = bot.agent.recent_turns("ana", "c1", 20)
    assert not any("north star" in t or "too long" in t for t in turns)
    assert [r.data["content"] for r in bot.agent.feedback.all()] == ["too long, keep it short"]
    bot.say("what next?")
    assert "- to get healthier this year" in bot.last_prompt()
    undo = bot.http.post("/reactions", json={"user": "ana", "emoji": UNDO_MARK,
                                             "message_id": "u-7"})
    assert undo.json()["undone"] is True and bot.agent.feedback.all() == []
    pinned = bot.agent.records.named("north_star", "ana")
    assert pinned is not None and pinned.memory.pinned


def test_the_bot_understands_relationships_not_just_facts(bot: Bot) -> None:
    bot.say("My sister Ana works at Google.", conversation="a")
    bot.say("Ana lives in Lisbon.", conversation="a")
    bot.work()
    reply = bot.say("what do you remember about Ana", conversation="b")
    prompt = bot.last_prompt()
    assert "Ana works_at Google" in prompt and "Ana lives_in Lisbon" in prompt
    assert "I know: Ana" in reply["text"]


def test_the_bot_initiates_helpful_check_ins(bot: Bot) -> None:
    bot.say("I want to run a marathon in May")
    bot.work()
    assert bot.http.post("/proactive/tick").json()["turns"] == []  # not due yet
    bot.clock[0] += timedelta(minutes=16)
    tick = bot.http.post("/proactive/tick").json()
    assert [t["kind"] for t in tick["turns"]] == ["proactive"]
    assert "run a marathon in May" in tick["turns"][0]["text"]
    assert bot.last_prompt().startswith("TASK: proactive_decision")
    logged = bot.agent.recent_turns("ana", "c1", 10)[-1]
    assert logged.startswith("bot: How is it going")
    assert bot.http.post("/proactive/tick").json()["turns"] == []  # reset to the base
    quiet = make_agent(bot.strata)  # no goals for "bo": the decision is to wait
    del quiet


def test_the_bot_adapts_its_context_retrieval_to_conversation_type(bot: Bot) -> None:
    bot.say("My sister Ana works at Google.")
    bot.work()
    casual = bot.say("good morning lol")
    assert casual["turn"]["archetype"] == "casual"
    recall = bot.say("what do you remember about me")
    assert recall["turn"]["archetype"] == "recall"
    bot.agent.archetypes.save(Archetype(
        "work", "Questions about jobs", ("where does she work", "what is her job"),
        8, 10, 0.5, 3))
    assert bot.say("where does she work")["turn"]["archetype"] == "work"


def test_memory_extraction_doesnt_block_responses(bot: Bot) -> None:
    reply = bot.say("I live in Porto and I want to learn the cello.")
    assert reply["kind"] == "reply"
    queued = {j.kind.value: j.status.value for j in bot.strata.jobs()}
    assert queued == {"extract": "pending", "agent": "pending"}  # consolidation comes later
    assert bot.agent.goals.objectives("ana") == []
    bot.work()
    done = {j.kind.value: (j.status.value, j.result) for j in bot.strata.jobs()}
    assert done["extract"][0] == "done" and done["extract"][1]["facts"] >= 1
    assert [r.data["description"] for r in bot.agent.goals.objectives("ana")] == [
        "learn the cello"]
    bot.say("My sister is called Ana.")
    bot.say("she works at Google now.")  # de-contextualized in the background
    bot.work()
    resolved = bot.strata.list(scope=bot.agent.user_scope("ana"),
                               filters=Filters(tags_all=("decontextualized",))).items
    assert "Ana works at Google now." in [m.content for m in resolved]


def test_the_bot_improves_itself_over_time(bot: Bot) -> None:
    answer = bot.say("explain tides")
    bot.say("use fewer words", message_id="f1", reply_to=answer["turn"]["message_id"],
            reply_to_bot=True)
    template_before = bot.agent.registry.template("chat")
    dream = bot.http.post("/dream").json()
    assert dream["feedback"] == 1 and dream["proposal"]
    assert bot.agent.registry.template("chat") == template_before  # not merged yet
    feed = bot.http.get("/feed").json()
    assert feed[-1]["kind"] == "dream_proposal" and "use fewer words" in feed[-1]["text"]
    refused = bot.say(f"!approve {dream['proposal']}", user="mallory")
    assert refused["kind"] == "error"
    bot.say(f"!approve {dream['proposal']}")
    bot.say("explain waves")
    assert "- use fewer words" in bot.last_prompt()
    assert bot.http.post("/dream").json()["proposals"] == []


def test_the_websocket_transport_chats(local_strata: Strata) -> None:
    from fastapi.testclient import TestClient

    agent = make_agent(local_strata)
    with TestClient(build_app(agent)) as client, client.websocket_connect("/ws") as ws:
        ws.send_json({"text": "hello over a socket", "user": "ana", "conversation": "w"})
        reply = ws.receive_json()
    assert reply["kind"] == "reply" and reply["text"].startswith("You said: hello over")
