"""The Discord handlers with discord.py's own objects, built offline: a ConnectionState over
an HTTP double that records what the bot would send (no network, no token)."""

from __future__ import annotations

import asyncio
import types
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest

discord = pytest.importorskip("discord")
from discord.state import ConnectionState  # noqa: E402

from strata_recall.agent.dreaming import Dreamer  # noqa: E402
from strata_recall.agent.runtime import FEEDBACK_MARK, UNDO_MARK, Agent, AgentConfig  # noqa: E402
from strata_recall.agent.transports.discord_bot import DiscordTransport, DreamView, feed_embed  # noqa: E402
from strata_recall.domain.models import MemoryType, Scope  # noqa: E402
from strata_recall.facade import Strata  # noqa: E402

T = TypeVar("T")
BOT = {"id": "1", "username": "strata", "discriminator": "0", "avatar": None, "bot": True}
ANA = {"id": "42", "username": "ana", "discriminator": "0", "avatar": None}
MALLORY = {"id": "66", "username": "mallory", "discriminator": "0", "avatar": None}


class RecordingHTTP:
    """The part of discord.py's HTTPClient the handlers reach, recording each call."""

    proxy = None
    proxy_auth = None
    _HTTPClient__session = None  # what an Interaction reads as its aiohttp session

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.next_id = 900

    async def send_message(self, channel_id: int, *, params: Any) -> dict[str, Any]:
        self.next_id += 1
        payload = params.payload or {}
        self.calls.append(("send", channel_id, payload, self.next_id))
        return message_data(str(self.next_id), payload.get("content") or "", BOT, channel_id)

    async def add_reaction(self, channel_id: int, message_id: int, emoji: str) -> None:
        self.calls.append(("react", message_id, emoji))

    async def remove_reaction(self, channel_id: int, message_id: int, emoji: str,
                              member_id: int) -> None:
        self.calls.append(("unreact", message_id, emoji, member_id))

    async def remove_own_reaction(self, channel_id: int, message_id: int, emoji: str) -> None:
        self.calls.append(("unreact", message_id, emoji, 1))


class RecordingAdapter:
    """discord.py's webhook adapter (the ``async_context`` an interaction responds
    through), recording each interaction response instead of calling Discord."""

    def __init__(self) -> None:
        self.responses: list[dict[str, Any]] = []

    async def create_interaction_response(self, interaction_id: int, token: str, *,
                                          session: Any, proxy: Any, proxy_auth: Any,
                                          params: Any) -> dict[str, Any]:
        self.responses.append(params.payload)
        return {"interaction": {"id": str(interaction_id), "type": 3}}


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
        self.adapter = RecordingAdapter()
        client = types.SimpleNamespace(user=me)  # what an Interaction asks its client for
        self.state._get_client = lambda: client  # type: ignore[method-assign]
        self.interactions = 5000

    async def click(self, card: discord.Message, custom_id: str,
                    user: dict[str, Any] = ANA) -> dict[str, Any]:
        """A button press on ``card`` as Discord's gateway delivers it (INTERACTION_CREATE
        type 3), through discord.py's own dispatch to the view; the response it made."""
        return await self._interact(user, {"type": 3, "message": self._card(card), "data": {
            "custom_id": custom_id, "component_type": 2}})

    async def submit(self, modal: dict[str, Any], values: list[str],
                     user: dict[str, Any] = ANA) -> dict[str, Any]:
        """A modal's submission (type 5) filling its text inputs with ``values``."""
        inputs = [c for row in modal["components"] for c in _inputs(row)]
        rows = [{"type": 1, "components": [{"type": 4, "custom_id": c["custom_id"], "value": v}]}
                for c, v in zip(inputs, values, strict=True)]
        return await self._interact(user, {"type": 5, "data": {
            "custom_id": modal["custom_id"], "components": rows}})

    async def _interact(self, user: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
        from discord.webhook.async_ import async_context

        self.interactions += 1
        async_context.set(self.adapter)  # type: ignore[arg-type]
        before = len(self.adapter.responses)
        self.state.parse_interaction_create({  # type: ignore[typeddict-item]
            "id": str(self.interactions), "application_id": "1", "token": "t", "version": 1,
            "attachment_size_limit": 8 << 20, "channel": {"id": "8", "type": 1},
            "channel_id": "8", "user": user, **fields})
        for _ in range(50):  # the view's callback runs as a task of discord.py's
            await asyncio.sleep(0.01)
            if len(self.adapter.responses) > before:
                break
        assert len(self.adapter.responses) == before + 1, "the interaction got no response"
        return self.adapter.responses[-1]

    def _card(self, card: discord.Message) -> dict[str, Any]:
        return message_data(str(card.id), "", BOT, channel=8)

    def message(self, mid: str, content: str, author: dict[str, Any] = ANA,
                **extra: Any) -> discord.Message:
        return discord.Message(state=self.state, channel=self.channel,
                               data=message_data(mid, content, author, **extra))

    def sent(self, channel: int = 7) -> list[dict[str, Any]]:
        return [c[2] for c in self.http.calls if c[0] == "send" and c[1] == channel]


def _inputs(component: dict[str, Any]) -> list[dict[str, Any]]:
    """The text inputs (type 4) inside a modal's rows or labels."""
    if component.get("type") == 4:
        return [component]
    inner = component.get("components") or ([component["component"]]
                                            if "component" in component else [])
    return [c for child in inner for c in _inputs(child)]


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
    assert run(harness.transport.on_raw_reaction_add(payload, harness.channel)) == \
        "feedback_undone"
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
    assert card["embeds"][0]["title"] == "Dreaming proposal: chat" and len(posted) >= 1
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
    from strata_recall.agent.runtime import Incoming

    return Incoming(text, "42", "7")


def reaction(message_id: str, user: str = "42", emoji: str = UNDO_MARK) -> Any:
    return discord.RawReactionActionEvent(
        {"message_id": message_id, "channel_id": "7", "user_id": user, "type": 0,
         "burst": False}, discord.PartialEmoji(name=emoji), "REACTION_ADD")


def test_the_bin_on_an_answer_is_an_implicit_signal_for_the_dream(harness: Harness) -> None:
    run(harness.transport.on_message(harness.message("100", "write a poem")))
    answer_id = [c[3] for c in harness.http.calls if c[:2] == ("send", 7)][-1]
    assert run(harness.transport.on_raw_reaction_add(reaction(str(answer_id)),
                                                     harness.channel)) == "undo"
    assert run(harness.transport.on_raw_reaction_add(reaction(str(answer_id), emoji="👍"),
                                                     harness.channel)) is None
    assert Dreamer(harness.agent).run()["signals"] == {"undo": 1}


def test_the_dream_cards_buttons_through_discords_interactions(harness: Harness) -> None:
    agent = harness.agent
    turn = agent.handle(discord_incoming("hello"))
    agent.feedback.add(content="fewer emojis", referenced_message_id=turn.message_id or "",
                       user_message_id="f1", user="42")
    proposal = str(Dreamer(agent).run()["proposal"])

    async def scenario() -> None:
        cards = await harness.transport.flush_feed()
        card = cards[-1]
        assert harness.sent(channel=8)[-1]["embeds"][0]["title"] == "Dreaming proposal: chat"
        shown = await harness.click(card, "strata:prompt")
        assert shown["type"] == 9 and shown["data"]["title"] == "Rendered prompt"
        assert "fewer emojis" in str(shown["data"]["components"])
        refused = await harness.click(card, "strata:prompt", MALLORY)
        assert refused["type"] == 4 and "owners" in refused["data"]["content"]
        denied = await harness.click(card, "strata:approve", MALLORY)
        assert "owners" in denied["data"]["content"] and denied["data"]["flags"] == 64
        assert agent.registry.pending()
        modal = (await harness.click(card, "strata:feedback", MALLORY))["data"]
        assert modal["title"] == "Feedback"
        thanks = await harness.submit(modal, ["negative", "too long"], MALLORY)
        assert thanks["data"]["content"] == FEEDBACK_MARK
        approved = await harness.click(card, "strata:approve")
        assert "version 2" in approved["data"]["content"]
        again = await harness.click(card, "strata:reject")
        assert again["data"]["content"].startswith("Not done")

    run(scenario())
    assert agent.registry.pending() == [] and "fewer emojis" in agent.registry.template("chat")
    assert "negative: too long" in [f.data["content"] for f in agent.feedback.all()]
    assert proposal in {p.id for p in agent.records.all("proposal")}


def test_a_rejected_proposal_from_the_card_is_not_merged(harness: Harness) -> None:
    agent = harness.agent
    agent.feedback.add(content="shout more", referenced_message_id="x",
                       user_message_id="f1", user="42")
    Dreamer(agent).run()
    template = agent.registry.template("chat")

    async def scenario() -> str:
        card = (await harness.transport.flush_feed())[-1]
        return str((await harness.click(card, "strata:reject"))["data"]["content"])

    assert run(scenario()) == "Proposal rejected."
    assert agent.registry.pending() == [] and agent.registry.template("chat") == template


def test_meta_commands_curate_the_backbone_and_links_for_owners_only(
        harness: Harness) -> None:
    strata = harness.agent.strata
    team = Scope(team=harness.agent.memory_team)
    core = strata.remember("Ana prefers direct feedback", scope=team,
                           type=MemoryType.PERSON_CORE, raw=True).memory_ids[0]
    policy = strata.remember("Never share secrets", scope=team, type=MemoryType.POLICY,
                             raw=True).memory_ids[0]

    def say(text: str, author: dict[str, Any] = ANA) -> str:
        run(harness.transport.on_message(harness.message(str(harness.http.next_id + 1000),
                                                         text, author)))
        return str(harness.sent()[-1]["content"])

    assert "owners only" in say("!meta.backbone.list", MALLORY)
    assert "owners only" in say(f"!meta.backbone.add people meta:{core}", MALLORY)
    assert say("!meta.backbone.list") == "No meta items."
    added = say(f"!meta.backbone.add people meta:{core} team 5")
    assert added.startswith("Added to the backbone") and f"people 5 {core}" in added
    say(f"!meta.backbone.add controller {policy}")
    listing = say("!meta.backbone.list team").splitlines()
    assert listing[0].startswith(f"controller 100 {policy}")
    assert listing[1].startswith(f"people 5 {core}")
    found = say('!meta.find "direct feedback" people')
    assert core in found and policy not in found
    assert "unknown layer" in say("!meta.find feedback nowhere")
    linked = say(f"!meta.link meta:{core} meta:{policy} about")
    assert f"link:about:meta:{policy}" in linked
    assert "bad ref" in say(f"!meta.link meta:{core} nothing:1 about")
    assert say(f"!meta.backbone.remove {core}") == f"Removed {core} from the backbone."
    assert core not in say("!meta.backbone.list")
    history = strata.history(core, scope=team)
    assert {e.actor for e in history} >= {"42"}  # audited: the owner who curated


def test_the_dream_cards_buttons_work_after_a_restart(local_strata: Strata) -> None:
    """A card posted before a restart: the view registered at startup (persistent: no
    timeout, fixed custom ids) finds the proposal from the card's footer and merges it."""
    before = Harness(local_strata)
    turn = before.agent.handle(discord_incoming("hello"))
    before.agent.feedback.add(content="fewer emojis", referenced_message_id=turn.message_id
                              or "", user_message_id="f1", user="42")
    proposal = str(Dreamer(before.agent).run()["proposal"])
    card = run(before.transport.flush_feed())[-1]
    embeds = before.sent(channel=8)[-1]["embeds"]
    assert embeds[0]["footer"]["text"] == f"id {proposal}"
    after = Harness(local_strata)  # a new process: a fresh agent, transport and view store

    async def scenario() -> list[dict[str, Any]]:
        view = after.transport.persistent_view()
        assert view.timeout is None and view.is_persistent()
        after.state.store_view(view)  # what Client.add_view does at startup

        async def click(custom_id: str, user: dict[str, Any] = ANA) -> dict[str, Any]:
            return await after._interact(user, {"type": 3, "message": message_data(
                str(card.id), "", BOT, channel=8, embeds=embeds), "data": {
                "custom_id": custom_id, "component_type": 2}})

        return [await click("strata:approve", MALLORY), await click("strata:prompt"),
                await click("strata:approve"), await click("strata:reject")]

    denied, prompt, approved, again = run(scenario())
    assert "owners" in denied["data"]["content"]
    assert "not kept across a restart" in str(prompt["data"]["components"])
    assert "version 2" in approved["data"]["content"]
    assert again["data"]["content"].startswith("Not done")
    assert after.agent.registry.pending() == []
    assert "fewer emojis" in after.agent.registry.template("chat")
