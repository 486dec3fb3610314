"""Discord (discord.py, the ``discord`` extra): messages, [000]'s ``!`` commands, [004]'s
reactions (🫡 marks invisible feedback, 🗑️ on it undoes it) and the dream channel, a feed of
every autonomous action as an embed with "View prompt", "Feedback" and, for proposals,
"Approve" / "Reject" buttons (owners only).

The handlers take discord.py's own objects (``Message``, ``RawReactionActionEvent``,
``Interaction``); the agent runs in a worker thread so the event loop never blocks on it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import discord

from strata_recall.agent.dreaming import Dreamer
from strata_recall.agent.runtime import FEEDBACK_MARK, UNDO_MARK, Agent, Incoming, Turn
from strata_recall.agent.scheduler import ProactiveScheduler
from strata_recall.agent.transports.port import Reply, dispatch
from strata_recall.errors import StrataError

__all__ = ["DiscordTransport", "DreamView", "feed_embed"]

MAX_MESSAGE = 2000
NOT_OWNER = "Only the bot's owners can do that."
FOOTER_PREFIX = "id "
KEPT_PROMPTS = 500  # rendered prompts kept for "View prompt" (the newest cards')
NO_PROMPT = "(the rendered prompt is not kept across a restart of the bot)"


def feed_embed(turn: Turn, message: Incoming | None) -> discord.Embed:
    """The dream channel's card for one autonomous action ([004] §4.2)."""
    title = {"reply": "Reactive response", "proactive": "Proactive check-in",
             "wait": "Proactive decision: wait", "dream_proposal": "Dreaming proposal",
             "feedback": "Feedback recorded", "north_star": "North Star stored",
             "blocked": "Blocked by the cost guard"}.get(turn.kind, turn.kind)
    if turn.key:
        title = f"{title}: {turn.key}"
    embed = discord.Embed(title=title)
    if message is not None:
        embed.add_field(name="User message", value=message.text[:1024] or "-", inline=False)
    embed.add_field(name="Bot" if turn.kind != "dream_proposal" else "Proposed template",
                    value=turn.text[:1024] or "-", inline=False)
    metrics = ", ".join(f"{k} {v:.1f} ms" for k, v in turn.timings_ms.items())
    embed.add_field(name="Metrics", value=metrics or "-", inline=False)
    embed.add_field(name="Context", value=f"archetype {turn.archetype or '-'}, tier "
                    f"{turn.tier or '-'}", inline=False)
    if turn.message_id:  # what the persistent view's buttons act on
        embed.set_footer(text=f"{FOOTER_PREFIX}{turn.message_id}")
    return embed


class DreamView(discord.ui.View):
    """The buttons under a dream-channel card. Persistent (decision 0036): no timeout, fixed
    custom ids, and the card's turn found from its embed's footer, so the view that
    ``DiscordTransport.persistent_view`` registers at startup answers the buttons of cards
    posted before a restart."""

    def __init__(self, transport: DiscordTransport, turn: Turn | None = None) -> None:
        super().__init__(timeout=None)
        self.transport = transport
        self.turn = turn
        self.add_item(_Button("View prompt", "prompt", self._view_prompt))
        self.add_item(_Button("Feedback", "feedback", self._feedback))
        if turn is None or turn.kind == "dream_proposal":
            self.add_item(_Button("Approve", "approve", self._approve,
                                  discord.ButtonStyle.success))
            self.add_item(_Button("Reject", "reject", self._reject, discord.ButtonStyle.danger))

    def target(self, interaction: discord.Interaction) -> str:
        """The id of the card's turn (a proposal's id): this view's turn, else the
        footer of the clicked card."""
        if self.turn is not None:
            return self.turn.message_id or ""
        embeds = interaction.message.embeds if interaction.message is not None else []
        footer = embeds[0].footer.text if embeds and embeds[0].footer.text else ""
        return footer.removeprefix(FOOTER_PREFIX) if footer.startswith(FOOTER_PREFIX) else ""

    async def _view_prompt(self, interaction: discord.Interaction) -> None:
        """Owners only: the rendered prompt holds the user's memories."""
        if not self.transport.is_owner(interaction.user.id):
            await interaction.response.send_message(NOT_OWNER, ephemeral=True)
            return
        prompt = self.turn.prompt if self.turn is not None else self.transport.prompts.get(
            self.target(interaction), NO_PROMPT)
        await interaction.response.send_modal(PromptModal(prompt))

    async def _feedback(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_modal(FeedbackModal(self.transport,
                                                            self.target(interaction)))

    async def _approve(self, interaction: discord.Interaction) -> None:
        await self._decide(interaction, approve=True)

    async def _reject(self, interaction: discord.Interaction) -> None:
        await self._decide(interaction, approve=False)

    async def _decide(self, interaction: discord.Interaction, *, approve: bool) -> None:
        text = await asyncio.to_thread(self.transport.decide_proposal, str(interaction.user.id),
                                       self.target(interaction), approve)
        await interaction.response.send_message(text, ephemeral=True)


class _Button(discord.ui.Button[DreamView]):
    def __init__(self, label: str, key: str,
                 action: Callable[[discord.Interaction], Awaitable[None]],
                 style: discord.ButtonStyle = discord.ButtonStyle.secondary) -> None:
        super().__init__(label=label, style=style, custom_id=f"strata:{key}")
        self.action = action

    async def callback(self, interaction: discord.Interaction) -> None:
        await self.action(interaction)


class PromptModal(discord.ui.Modal, title="Rendered prompt"):
    def __init__(self, prompt: str) -> None:
        super().__init__()
        self.add_item(discord.ui.TextInput(label="Prompt", style=discord.TextStyle.paragraph,
                                           default=prompt[:4000], required=False))


class FeedbackModal(discord.ui.Modal, title="Feedback"):
    def __init__(self, transport: DiscordTransport, target: str) -> None:
        super().__init__()
        self.transport = transport
        self.target = target
        self.rating: discord.ui.TextInput[FeedbackModal] = discord.ui.TextInput(
            label="positive / negative / neutral", max_length=10)
        self.comment: discord.ui.TextInput[FeedbackModal] = discord.ui.TextInput(
            label="Comment", style=discord.TextStyle.paragraph, required=False)
        self.add_item(self.rating)
        self.add_item(self.comment)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        await asyncio.to_thread(
            self.transport.agent.feedback.add,
            content=f"{self.rating.value}: {self.comment.value}".strip(": "),
            referenced_message_id=self.target, user=str(interaction.user.id),
            user_message_id=f"modal:{interaction.id}")
        await interaction.response.send_message(FEEDBACK_MARK, ephemeral=True)


class DiscordTransport:
    """The agent on Discord. ``feed_channel`` (optional) receives the dream feed."""

    def __init__(self, agent: Agent, *, bot_user_id: int | None = None,
                 feed_channel: discord.abc.Messageable | None = None,
                 scheduler: ProactiveScheduler | None = None,
                 dreamer: Dreamer | None = None) -> None:
        self.agent = agent
        self.dreamer = dreamer
        self.bot_user_id = bot_user_id
        self.feed_channel = feed_channel
        self.scheduler = scheduler
        self._feed: list[tuple[Turn, Incoming | None]] = []
        self._last_ack: dict[int, int] = {}  # feedback message id -> channel id
        self._answers: dict[int, str] = {}  # the bot's Discord message id -> its turn's id
        self.prompts: dict[str, str] = {}  # a card's turn id -> its rendered prompt
        agent.feed = lambda turn, message: self._feed.append((turn, message))

    def is_owner(self, user_id: int) -> bool:
        return str(user_id) in self.agent.config.owners

    # -- events -----------------------------------------------------------------------------

    async def on_message(self, message: discord.Message) -> Reply | None:
        if message.author.bot or message.author.id == self.bot_user_id:
            return None
        if self.feed_channel is not None and message.channel.id == getattr(
                self.feed_channel, "id", None):
            return None
        incoming = self.incoming(message)
        reply = await asyncio.to_thread(self._dispatch, incoming)
        if reply.reaction:
            await message.add_reaction(reply.reaction)
            self._last_ack[message.id] = message.channel.id
        if reply.text:
            for start in range(0, len(reply.text), MAX_MESSAGE):
                sent = await message.channel.send(reply.text[start:start + MAX_MESSAGE])
                if reply.turn is not None and reply.turn.message_id:
                    self._answers[sent.id] = reply.turn.message_id
        await self.flush_feed()
        return reply

    def incoming(self, message: discord.Message) -> Incoming:
        reference = message.reference
        resolved = reference.resolved if reference is not None else None
        to_bot = isinstance(resolved, discord.Message) and (
            resolved.author.id == self.bot_user_id or resolved.author.bot)
        return Incoming(message.content, str(message.author.id), str(message.channel.id),
                        str(message.id),
                        str(reference.message_id) if reference and reference.message_id
                        else None, to_bot)

    def _dispatch(self, incoming: Incoming) -> Reply:
        reply = dispatch(self.agent, incoming)
        if self.scheduler is not None and reply.kind == "reply":
            self.scheduler.touch(incoming.user, incoming.conversation)
        return reply

    async def on_raw_reaction_add(self, payload: discord.RawReactionActionEvent,
                                  channel: discord.abc.Messageable | None = None
                                  ) -> str | None:
        """🗑️ on a message the bot marked 🫡: the feedback is deleted and the mark removed
        (``feedback_undone``); 🗑️ on one of the bot's answers: an implicit signal for the
        dreaming cycle (``undo``)."""
        if str(payload.emoji) != UNDO_MARK or payload.user_id == self.bot_user_id:
            return None
        target_id = self._answers.get(payload.message_id, str(payload.message_id))
        effect = await asyncio.to_thread(self.agent.react, str(payload.user_id), target_id,
                                         UNDO_MARK)
        if effect == "feedback_undone" and isinstance(
                channel, discord.DMChannel | discord.TextChannel):
            target = channel.get_partial_message(payload.message_id)
            await target.remove_reaction(FEEDBACK_MARK, discord.Object(self.bot_user_id or 0))
        return effect

    # -- the dream channel ------------------------------------------------------------------

    async def flush_feed(self) -> list[discord.Message]:
        posted: list[discord.Message] = []
        while self._feed:
            turn, message = self._feed.pop(0)
            if turn.message_id and turn.prompt:
                self.prompts[turn.message_id] = turn.prompt
                while len(self.prompts) > KEPT_PROMPTS:
                    self.prompts.pop(next(iter(self.prompts)))
            if self.feed_channel is not None:
                posted.append(await self.feed_channel.send(embed=feed_embed(turn, message),
                                                           view=DreamView(self, turn)))
        return posted

    def persistent_view(self) -> DreamView:
        """The view to register at startup (``Client.add_view``): it answers every card's
        buttons, those posted before a restart included."""
        return DreamView(self)

    def decide_proposal(self, user: str, proposal_id: str, approve: bool) -> str:
        if user not in self.agent.config.owners:
            return "Only the bot's owners can approve or reject proposals."
        try:
            if approve:
                merged = self.agent.registry.approve(proposal_id, approver=user)
                return f"Merged: {merged.name} is now version {merged.version}."
            self.agent.registry.reject(proposal_id, approver=user)
        except StrataError as exc:
            return f"Not done: {exc}"
        return "Proposal rejected."

    # -- running ----------------------------------------------------------------------------

    def run(self, token: str, *, feed_channel_id: int | None = None,
            tick_s: float = 60.0) -> None:  # pragma: no cover - needs a real bot token
        intents = discord.Intents.default()
        intents.message_content = True
        client = discord.Client(intents=intents)

        @client.event
        async def on_ready() -> None:
            assert client.user is not None
            self.bot_user_id = client.user.id
            client.add_view(self.persistent_view())  # the buttons of earlier cards
            if feed_channel_id is not None:
                channel: Any = client.get_channel(feed_channel_id)
                self.feed_channel = channel
            client.loop.create_task(self._ticks(client, tick_s))

        @client.event
        async def on_message(message: discord.Message) -> None:
            await self.on_message(message)

        @client.event
        async def on_raw_reaction_add(payload: discord.RawReactionActionEvent) -> None:
            channel: Any = client.get_channel(payload.channel_id)
            await self.on_raw_reaction_add(payload, channel)

        client.run(token)

    async def _ticks(self, client: discord.Client, tick_s: float
                     ) -> None:  # pragma: no cover - the live loop
        delivered: list[tuple[Turn, str, str]] = []
        if self.scheduler is not None:
            self.scheduler.deliver = lambda turn, user, conv: delivered.append(
                (turn, user, conv))
        while not client.is_closed():
            if self.scheduler is not None:
                await asyncio.to_thread(self.scheduler.tick)
            if self.dreamer is not None:  # daily from 03:00, once a day
                await asyncio.to_thread(self.dreamer.schedule, self.agent.now())
            await asyncio.to_thread(self.agent.strata.work)
            while delivered:
                turn, _, conversation = delivered.pop(0)
                channel: Any = client.get_channel(int(conversation))
                if channel is not None:
                    await channel.send(turn.text[:MAX_MESSAGE])
            await self.flush_feed()
            await asyncio.sleep(tick_s)
