"""The Discord handlers with discord.py's own objects, built offline: a ConnectionState over
an HTTP double that records what the bot would send (no network, no token)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest

discord = pytest.importorskip("discord")
from discord.state import ConnectionState  # noqa: E402

from strata.agent.dreaming import Dreamer  # noqa: E402
from strata.agent.runtime import FEEDBACK_MARK, UNDO_MARK, Agent, AgentConfig  # noqa: E402
from strata.agent.transports.discord_bot import DiscordTransport, DreamView, feed_embed  # noqa: E402
from strata.facade import Strata  # noqa: E402

T = TypeVar("T")
BOT = {"id": "1", "username": "strata", "discriminator": "0", "avatar": None, "bot": True}
ANA = {"id": "42", "username": "ana", "discriminator": "0", "avatar": None}
MALLORY = {"id": "66", "username": "mallory", "discriminator": "0", "avatar": None}


class RecordingHTTP:
    """The part of discord.py's HTTPClient the handlers reach, recording each call."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.next_id = 900

    async def send_message(self, channel_id: int, *, params: Any) -> dict[str, Any]:
        self.next_id += 1
        payload = params.payload or {}
        self.calls.append(("send", channel_id, payload))
        return message_data(str(self.next_id), payload.get("content") or "", BOT, channel_id)

    async def add_reaction(self, channel_id: int, message_id: int, emoji: str) -> None:
        self.calls.append(("react", message_id, emoji))

    async def remove_reaction(self, channel_id: int, message_id: int, emoji: str,
                              member_id: int) -> None:
        self.calls.append(("unreact", message_id, emoji, member_id))

    async def remove_own_reaction(self, channel_id: int, message_id: int, emoji: str) -> None:
        self.calls.append(("unreact", message_id, emoji, 1))


def message_data(mid: str, content: str, author: dict[str, Any], channel: int = 7,
                 **extra: Any) -> dict[str, Any]:
    return {"id": mid, "channel_id": str(channel), "content": content, "author": author,
            "attachments": [], "embeds": [], "mentions": [], "mention_roles": [],
            "pinned": False, "mention_everyone": False, "tts": False,
            "timestamp": "2026-01-01T00:00:00+00:00", "edited_timestamp": None, "type": 0,
            "flags": 0, **extra}


class Harness:
    def __init__(self, strata: Strata) -> None:
        self.http = RecordingHTTP()
        self.state = ConnectionState(dispatch=lambda *a, **k: None, handlers={}, hooks={},
                                     http=self.http, intents=discord.Intents.default())
        me = discord.ClientUser(state=self.state, data=BOT)
        self.channel = discord.DMChannel(me=me, state=self.state,
                                         data={"id": "7", "type": 1, "recipients": [ANA]})
        self.feed = discord.DMChannel(me=me, state=self.state,
                                      data={"id": "8", "type": 1, "recipients": [ANA]})
        self.agent = Agent(strata, config=AgentConfig(owners=frozenset({"42"})))
        self.transport = DiscordTransport(self.agent, bot_user_id=1, feed_channel=self.feed)

    def message(self, mid: str, content: str, author: dict[str, Any] = ANA,
                **extra: Any) -> discord.Message:
        return discord.Message(state=self.state, channel=self.channel,
                               data=message_data(mid, content, author, **extra))

    def sent(self, channel: int = 7) -> list[dict[str, Any]]:
        return [c[2] for c in self.http.calls if c[0] == "send" and c[1] == channel]


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


@pytest.fixture
def harness(local_strata: Strata) -> Harness:
    return Harness(local_strata)


def test_a_message_gets_a_reply_and_a_dream_feed_card(harness: Harness) -> None:
    reply = run(harness.transport.on_message(harness.message("100", "hello bot")))
    assert reply is not None and reply.kind == "reply"
    assert harness.sent()[0]["content"].startswith("You said: hello bot")
    card = harness.sent(channel=8)[0]
    assert card["embeds"][0]["title"] == "Reactive response"
    labels = [c["label"] for row in card["components"] for c in row["components"]]
    assert labels == ["View prompt", "Feedback"]


def test_the_bots_own_messages_are_ignored(harness: Harness) -> None:
    assert run(harness.transport.on_message(harness.message("100", "echo", BOT))) is None
    assert harness.http.calls == []


def test_a_reply_to_the_bot_is_invisible_feedback_and_the_bin_undoes_it(
        harness: Harness) -> None:
    run(harness.transport.on_message(harness.message("100", "hello")))
    bot_message = message_data("901", "You said: hello", BOT)
    quote = harness.message("101", "shorter please", message_reference={
        "message_id": "901", "channel_id": "7"}, referenced_message=bot_message, type=19)
    reply = run(harness.transport.on_message(quote))
    assert reply is not None and reply.kind == "feedback"
    assert ("react", 101, FEEDBACK_MARK) in harness.http.calls
    assert len(harness.sent()) == 1  # no answer posted to the conversation
    assert not any("shorter" in t for t in harness.agent.recent_turns("42", "7", 10))
    assert [f.data["referenced_message_id"] for f in harness.agent.feedback.all()] == ["901"]
    payload = discord.RawReactionActionEvent(
        {"message_id": "101", "channel_id": "7", "user_id": "42", "type": 0, "burst": False},
        discord.PartialEmoji(name=UNDO_MARK), "REACTION_ADD")
    assert run(harness.transport.on_raw_reaction_add(payload, harness.channel))
    assert harness.agent.feedback.all() == []
    assert harness.http.calls[-1][:3] == ("unreact", 101, FEEDBACK_MARK)


def test_commands_and_owner_only_enforcement(harness: Harness) -> None:
    run(harness.transport.on_message(harness.message("100", "!remember my cat is Miso")))
    assert harness.sent()[-1]["content"].startswith("Remembered")
    run(harness.transport.on_message(harness.message("101", "!memreview", MALLORY)))
    assert "owners only" in harness.sent()[-1]["content"]
    run(harness.transport.on_message(harness.message("102", "!memreview")))
    assert harness.sent()[-1]["content"] == "No candidates to review."


def test_dream_proposals_carry_approve_and_reject_for_owners_only(harness: Harness) -> None:
    agent = harness.agent
    turn = agent.handle(discord_incoming("hello"))
    agent.feedback.add(content="fewer emojis", referenced_message_id=turn.message_id or "",
                       user_message_id="f1", user="42")
    result = Dreamer(agent).run()
    posted = run(harness.transport.flush_feed())
    card = harness.sent(channel=8)[-1]
    assert card["embeds"][0]["title"] == "Dreaming proposal" and len(posted) >= 1
    labels = [c["label"] for row in card["components"] for c in row["components"]]
    assert labels == ["View prompt", "Feedback", "Approve", "Reject"]
    proposal = str(result["proposal"])
    assert "owners" in harness.transport.decide_proposal("66", proposal, True)
    assert agent.registry.pending()
    assert "version" in harness.transport.decide_proposal("42", proposal, True)
    assert agent.registry.pending() == [] and "fewer emojis" in agent.registry.template("chat")


def test_the_feed_card_shows_the_turn(harness: Harness) -> None:
    async def build() -> DreamView:
        turn = harness.agent.handle(discord_incoming("hi"))
        assert feed_embed(turn, None).fields[0].name == "Bot"
        return DreamView(harness.transport, turn)

    view = run(build())
    assert [item.custom_id for item in view.children] == [  # type: ignore[attr-defined]
        "strata:prompt", "strata:feedback"]


def discord_incoming(text: str) -> Any:
    from strata.agent.runtime import Incoming

    return Incoming(text, "42", "7")
