"""The agent: one pipeline for reactive and proactive turns ([004] §3.1).

ingestion → short-circuits (North Star, invisible feedback) → episodic logging → context
analysis (archetype) → retrieval (facts, graph triples, recent turns) → routing and the cost
guard → generation from a registry template → asynchronous consolidation (the store's extract
job for facts and triples, the agent's own ``consolidate`` job for objectives).

Everything is read and written through the ``Strata`` facade.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from strata_recall.agent.costs import BudgetCheck, CostGuard
from strata_recall.agent.extraction import ExtractionRules
from strata_recall.agent.llm import ChatModel, Message, OfflineModel, estimate_tokens
from strata_recall.agent.procedural import (
    Archetype,
    Archetypes,
    Feedback,
    Goals,
    PromptRegistry,
    bullets,
    render,
)
from strata_recall.agent.records import Records
from strata_recall.agent.review import register as register_proposals
from strata_recall.agent.router import ComplexityScorer, ModelRouter, ModelTier, RouterConfig
from strata_recall.domain.jobs import Job, JobKind
from strata_recall.domain.models import Filters, Lifecycle, MemoryType, Scope
from strata_recall.facade import Strata
from strata_recall.worker import JobOutput

__all__ = ["Agent", "AgentConfig", "Incoming", "Turn"]

NORTH_STAR = re.compile(r"^\s*(?:!northstar\b|my north star(?: is|:)|north star:)\s*(?P<goal>.+)",
                        re.I | re.S)
PRONOUN = re.compile(r"\b(he|she|him|her|his)\b", re.I)
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,})\b")
FEEDBACK_MARK = "\N{SALUTING FACE}"
UNDO_MARK = "\N{WASTEBASKET}\N{VARIATION SELECTOR-16}"
#: The canonical log: a turn awaiting review (review mode "all") is still part of the
#: conversation, and so is one a newer fact superseded (truth maintenance may replace the
#: verbatim turn "I live in Porto" by "I moved to Lisbon", or by a fact derived from it).
TURN_LIFECYCLES = (Lifecycle.ACTIVE, Lifecycle.CANDIDATE, Lifecycle.DISPUTED,
                   Lifecycle.SUPERSEDED)
USER_TAG = "turn:user"
BOT_TAG = "turn:assistant"
EXTRACTED_TAG = "agent-extracted"  # a fact the agent's own relation rules derived


@dataclass(frozen=True, slots=True)
class Incoming:
    """A message as a transport hands it over."""

    text: str
    user: str
    conversation: str
    message_id: str | None = None
    reply_to: str | None = None  # the message this one replies to or quotes
    reply_to_bot: bool = False  # ... and that message was the bot's


@dataclass(frozen=True, slots=True)
class Turn:
    """What the pipeline did with one message or check-in."""

    kind: str  # reply | proactive | wait | north_star | feedback | blocked
    text: str
    message_id: str | None = None  # the bot turn's event id (None when nothing was logged)
    reaction: str | None = None  # a reaction the transport should add to the user message
    prompt: str = ""  # the rendered system prompt (the dream feed's "view prompt")
    archetype: str | None = None
    tier: str | None = None
    model: str | None = None
    budget: BudgetCheck | None = None
    timings_ms: Mapping[str, float] = field(default_factory=dict)
    key: str | None = None  # a dream proposal's registry key (chat, extraction, ...)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, "message_id": self.message_id,
                "reaction": self.reaction, "archetype": self.archetype, "tier": self.tier,
                "model": self.model, "budget": self.budget.message if self.budget else None,
                "timings_ms": dict(self.timings_ms), "key": self.key}


@dataclass(frozen=True, slots=True)
class AgentConfig:
    name: str = "strata"
    team: str = "default"
    router: RouterConfig = field(default_factory=RouterConfig)
    owners: frozenset[str] = frozenset()  # users allowed the owner-only commands


@dataclass
class _Context:
    archetype: Archetype
    similarity: float
    facts: list[str]
    relations: list[str]
    recent: list[str]


class Agent:
    """A companion over one ``Strata``. Thread-compatible: one turn at a time per
    conversation (transports serialise per conversation)."""

    def __init__(self, strata: Strata, model: ChatModel | None = None,
                 config: AgentConfig | None = None, *, classifier: ChatModel | None = None,
                 feed: Callable[[Turn, Incoming | None], None] | None = None,
                 now: Callable[[], datetime] | None = None) -> None:
        self.strata = strata
        self._now = now
        self._memory_team: str | None = None
        self.model = model or OfflineModel()
        self.config = config or AgentConfig()
        self.records = Records(strata, Scope(team=self.config.team, agent=self.config.name))
        self.registry = PromptRegistry(self.records)
        self.archetypes = Archetypes(self.records)
        self.goals = Goals(self.records)
        self.feedback = Feedback(self.records)
        self.router = ModelRouter(self.config.router)
        self.scorer = ComplexityScorer(classifier)
        self.costs = CostGuard(self.records, self.router)
        self.feed = feed  # the dream channel: every autonomous action is mirrored here
        self.registry.ensure_defaults()
        self.archetypes.ensure_defaults()
        strata.add_job_handler(JobKind.AGENT, self._run_job)
        register_proposals(strata, self.config.name)  # proposals in the review queue
        self._tasks: dict[str, Callable[[Mapping[str, Any]], Mapping[str, Any]]] = {
            "consolidate": self._consolidate, "charge": self._run_charge}

    # -- scopes -----------------------------------------------------------------------------

    def user_scope(self, user: str) -> Scope:
        return Scope(team=self.memory_team, user=user)

    @property
    def memory_team(self) -> str:
        """The team namespace holding users' turns and facts (``reindex.switch`` moves it)."""
        if self._memory_team is None:
            found = self.records.named("index", "active")
            self._memory_team = str(found.data["team"]) if found else self.config.team
        return self._memory_team

    def set_memory_team(self, team: str) -> None:
        found = self.records.named("index", "active")
        if found is None:
            self.records.add("index", "active", {"team": team})
        else:
            self.records.update(found, {"team": team}, reason=f"switch memory to {team}")
        self._memory_team = team

    def now(self) -> datetime:
        return self._now() if self._now is not None else datetime.now(UTC)

    # -- the pipeline -----------------------------------------------------------------------

    def handle(self, message: Incoming, on_piece: Callable[[str], None] | None = None) -> Turn:
        """A user's message through the whole pipeline (the reactive entry)."""
        short = self._short_circuit(message)
        if short is not None:
            return self._mirror(short, message)
        started = time.perf_counter()
        self._log(message.text, message.user, message.conversation, USER_TAG,
                  {"message_id": message.message_id})
        self.enqueue("consolidate", {"user": message.user, "text": message.text,
                                     "message_id": message.message_id,
                                     "conversation": message.conversation})
        turn = self._generate(message.user, message.conversation, message.text, "chat",
                              proactive=False, started=started, on_piece=on_piece)
        return self._mirror(turn, message)

    def _short_circuit(self, message: Incoming) -> Turn | None:
        goal = NORTH_STAR.match(message.text)
        if goal:
            self.goals.set_north_star(message.user, goal["goal"].strip(),
                                      origin=message.message_id)
            return Turn("north_star", "Noted. I'll keep that North Star in mind.")
        if message.reply_to_bot and message.reply_to:
            self.feedback.add(content=message.text, referenced_message_id=message.reply_to,
                              user_message_id=message.message_id or str(uuid.uuid4()),
                              user=message.user)
            return Turn("feedback", "", reaction=FEEDBACK_MARK)
        return None

    def undo_feedback(self, user_message_id: str) -> bool:
        """The 🗑️ reaction on a 🫡-marked message: the feedback row is removed."""
        return self.feedback.undo(user_message_id)

    def react(self, user: str, message_id: str, emoji: str) -> str | None:
        """A reaction. 🗑️ on a 🫡-marked message undoes its feedback (``feedback_undone``);
        🗑️ on anything else is taken as the bot's answer removed, an implicit signal for
        the dreaming cycle (``undo``; it keeps only ids the log knows as the bot's)."""
        if emoji != UNDO_MARK:
            return None
        if self.feedback.undo(message_id):
            return "feedback_undone"
        self.records.add("signal", f"undo:{message_id}", {
            "kind": "undo", "message_id": message_id, "user": user},
            idempotency_key=f"agent-undo:{user}:{message_id}")
        return "undo"

    def _generate(self, user: str, conversation: str, text: str, key: str, *, proactive: bool,
                  started: float, on_piece: Callable[[str], None] | None) -> Turn:
        timings: dict[str, float] = {}
        context = self._context(user, conversation, text, timings)
        prompt = self._prompt(key, user, context)
        messages: list[Message] = [{"role": "system", "content": prompt},
                                   {"role": "user", "content": text}]
        tier = self.router.route(self.scorer.score(text, context.recent))
        budget = self._budget(user, tier, prompt + text)
        if budget is not None and not budget.allowed:
            return Turn("blocked", budget.message, prompt=prompt, tier=tier.name,
                        archetype=context.archetype.name, budget=budget,
                        timings_ms={**timings, "pipeline": _ms(started)})
        model_started = time.perf_counter()
        reply = self._call(messages, tier, on_piece)
        timings["model"] = _ms(model_started)
        self._charge(user, tier, prompt + text, reply)
        kind = "proactive" if proactive else "reply"
        if proactive:
            if reply.strip().upper().startswith("WAIT"):
                timings["pipeline"] = round(_ms(started) - timings["model"], 3)
                return Turn("wait", "", prompt=prompt, tier=tier.name,
                            archetype=context.archetype.name, timings_ms=timings)
            reply = re.sub(r"^\s*MESSAGE:\s*", "", reply)
        event_id = self._log(reply, self.config.name, conversation, BOT_TAG,
                             {"proactive": proactive, "user": user})
        timings["pipeline"] = round(_ms(started) - timings["model"], 3)  # all but the model
        return Turn(kind, reply, message_id=event_id, prompt=prompt, tier=tier.name,
                    model=tier.model_name, archetype=context.archetype.name,
                    budget=budget, timings_ms=timings)

    def _call(self, messages: list[Message], tier: ModelTier,
              on_piece: Callable[[str], None] | None) -> str:
        model = None if tier.name == "single" or isinstance(self.model, OfflineModel) \
            else tier.model_name
        if on_piece is None:
            return self.model.complete(messages, model=model).text
        pieces: list[str] = []
        for piece in self.model.stream(messages, model=model):
            pieces.append(piece)
            on_piece(piece)
        return "".join(pieces)

    # -- context ----------------------------------------------------------------------------

    def _context(self, user: str, conversation: str, text: str,
                 timings: dict[str, float]) -> _Context:
        started = time.perf_counter()
        archetype, similarity = self.archetypes.classify(text)
        timings["analysis"] = _ms(started)
        started = time.perf_counter()
        facts = self._facts(user, text, archetype)
        timings["facts"] = _ms(started)
        started = time.perf_counter()
        relations = self._relations(user, text, archetype.triple_depth)
        timings["graph"] = _ms(started)
        started = time.perf_counter()
        recent = self.recent_turns(user, conversation, archetype.context_turns)
        timings["recent"] = _ms(started)
        return _Context(archetype, similarity, facts, relations, recent)

    def _facts(self, user: str, text: str, archetype: Archetype) -> list[str]:
        if archetype.context_vectors == 0:
            return []
        recall = self.strata.recall(
            text, scope=self.user_scope(user), k=archetype.context_vectors,
            filters=Filters(types_not=(MemoryType.PROCEDURAL,), tags_none=(BOT_TAG,)))
        return [hit.memory.content for hit in recall.hits
                if hit.memory.content != text and _relevant(hit.signals, archetype)]

    def _relations(self, user: str, text: str, depth: int) -> list[str]:
        if depth == 0:
            return []
        lowered = text.lower()
        scope = self.user_scope(user)
        mentioned = [e for e in self.strata.graph_entities(scope=scope, limit=200)
                     if len(e.canonical_name) > 2 and re.search(
                         rf"\b{re.escape(e.canonical_name)}\b", lowered)]
        lines: list[str] = []
        for entity in mentioned[:3]:
            hood = self.strata.graph_neighbors(entity.id, depth=depth, scope=scope)
            names = {e.id: e.name for e, _ in hood.entities} | {entity.id: entity.name}
            lines += [f"{names.get(e.source_id, '?')} {e.relation} {names.get(e.target_id, '?')}"
                      for e in hood.edges]
        return list(dict.fromkeys(lines))[:20]

    def recent_turns(self, user: str, conversation: str, limit: int) -> list[str]:
        """The last ``limit`` canonical turns of the conversation, oldest first."""
        page = self.strata.list(scope=self.user_scope(user), filters=Filters(
            conversation_id=conversation, types=(MemoryType.EPISODIC,),
            tags_any=(USER_TAG, BOT_TAG), lifecycles=TURN_LIFECYCLES), limit=limit)
        return [f"{'bot' if BOT_TAG in m.tags else 'user'}: {m.content}"
                for m in reversed(page.items)]

    def _prompt(self, key: str, user: str, context: _Context) -> str:
        objectives = [str(r.data["description"]) for r in self.goals.objectives(user)]
        return render(self.registry.template(key), {
            "agent": self.config.name, "user": user,
            "north_star": bullets([s for s in [self.goals.north_star(user)] if s]),
            "objectives": bullets(objectives), "facts": bullets(context.facts),
            "relations": bullets(context.relations), "recent": bullets(context.recent)})

    # -- logging and consolidation ----------------------------------------------------------

    def _log(self, text: str, author: str, conversation: str, tag: str,
             meta: Mapping[str, Any]) -> str:
        """Log one canonical turn; the store chains it to the previous one (``parent_id``).
        A user turn is extracted asynchronously; a bot turn is kept raw. Both are kept as
        sent, chit-chat too (an explicit type, decision 0059): the transcript is canonical."""
        user = str(meta.get("user", author))
        result = self.strata.remember(
            text, scope=self.user_scope(user), conversation_id=conversation, author=author,
            tags=(tag,), mode="raw" if tag == BOT_TAG else "async", type=MemoryType.EPISODIC,
            meta={k: v for k, v in meta.items() if v is not None})
        return result.event_ids[0]

    def enqueue(self, task: str, payload: Mapping[str, Any], *,
                dedup_key: str | None = None) -> str:
        return self.strata.enqueue_job(JobKind.AGENT, {"task": task, **payload},
                                       scope=Scope(team=self.config.team),
                                       dedup_key=dedup_key)

    def _run_job(self, job: Job) -> JobOutput:
        task = str(job.payload.get("task"))
        if task not in self._tasks:
            raise KeyError(f"no agent task {task!r}")
        return JobOutput(dict(self._tasks[task](job.payload)))

    def add_task(self, name: str, handler: Callable[[Mapping[str, Any]], Mapping[str, Any]]
                 ) -> None:
        self._tasks[name] = handler

    def extraction_rules(self) -> tuple[ExtractionRules, int]:
        """The active extraction strategy (the registry's ``extraction``) and its version."""
        entry = self.registry.entry("extraction")
        return ExtractionRules.parse(str(entry.data["template"])), entry.version

    def _consolidate(self, payload: Mapping[str, Any]) -> Mapping[str, Any]:
        """Objectives and the relation rules' triples from a user turn (the registry's
        ``extraction`` strategy), and the turn de-contextualized when a pronoun has one
        clear antecedent (facts and most triples come from the store's own extract job,
        queued with the turn; the resolved sentence goes through it too)."""
        text, user = str(payload["text"]), str(payload["user"])
        rules, version = self.extraction_rules()
        found = rules.objectives(text)
        for goal in found:
            self.goals.add_objective(user, goal, origin=payload.get("message_id"))
        triples = rules.triples(text)
        if triples:
            remember_triples(self.strata, self.user_scope(user), user, triples, version,
                             payload.get("message_id"))
        resolved = self._resolve_pronouns(user, str(payload.get("conversation", "")), text)
        if resolved is not None:
            self.strata.remember(resolved, scope=self.user_scope(user), author=user,
                                 tags=("decontextualized",), mode="async",
                                 meta={"resolved_from": payload.get("message_id")})
        return {"objectives": found, "resolved": resolved, "triples": [list(t) for t in triples]}

    def _resolve_pronouns(self, user: str, conversation: str, text: str) -> str | None:
        """``text`` with he/she/him/her (his: a possessive) replaced by the name in the
        nearest previous user turn that names one (and only one) that ``text`` does not;
        None when there is no pronoun or no single such name."""
        if not PRONOUN.search(text) or not conversation:
            return None
        earlier = [t[len("user: "):] for t in self.recent_turns(user, conversation, 8)
                   if t.startswith("user: ") and t[len("user: "):] != text][-3:]
        named = [_names(turn) - _names(text) for turn in reversed(earlier)]
        names = next((n for n in named if n), set())  # the nearest turn naming someone
        if len(names) != 1:
            return None
        name = names.pop()
        return PRONOUN.sub(lambda m: name + ("'s" if m.group(0).lower() == "his" else ""),
                           text)

    # -- costs ------------------------------------------------------------------------------

    def _budget(self, user: str, tier: ModelTier, prompt: str) -> BudgetCheck | None:
        if not self.config.router.cost_guard or not self.config.router.enable_model_routing:
            return None
        return self.costs.check(user, self.config.team, tier, estimate_tokens(prompt), 300,
                                self.now())

    def _charge(self, user: str, tier: ModelTier, prompt: str, reply: str) -> None:
        """Queue the call's cost: the counters are updated by the worker, off the reply's
        path (a check may run before an earlier charge lands; decision 0027)."""
        if self.config.router.cost_guard and self.config.router.enable_model_routing:
            self.enqueue("charge", {"user": user, "tier": tier.name,
                                    "input_tokens": estimate_tokens(prompt),
                                    "output_tokens": estimate_tokens(reply),
                                    "at": self.now().isoformat(),
                                    "request_id": str(uuid.uuid4())})

    def _run_charge(self, payload: Mapping[str, Any]) -> Mapping[str, Any]:
        usd = self.costs.charge(str(payload["user"]), self.config.team,
                                self.router.tier(str(payload["tier"])),
                                int(payload["input_tokens"]), int(payload["output_tokens"]),
                                datetime.fromisoformat(str(payload["at"])),
                                str(payload["request_id"]))
        return {"usd": usd}

    # -- proactive --------------------------------------------------------------------------

    def check_in(self, user: str, conversation: str) -> Turn:
        """The proactive entry: the same pipeline with the decision template; a ``wait``
        logs nothing, a message is logged with ``proactive`` set."""
        started = time.perf_counter()
        turn = self._generate(user, conversation, "(proactive check-in)", "proactive_decision",
                              proactive=True, started=started, on_piece=None)
        return self._mirror(turn, None)

    def _mirror(self, turn: Turn, message: Incoming | None) -> Turn:
        if self.feed is not None:
            self.feed(turn, message)
        return turn


def remember_triples(strata: Strata, scope: Scope, user: str,
                     triples: list[tuple[str, str, str]], version: int, message_id: Any) -> None:
    """The relation rules' triples as one fact of the user's, its graph links exactly these
    triples (``reindex`` derives them again from the log, hence a function)."""
    result = strata.remember(
        "; ".join(" ".join(t) for t in triples), scope=scope, author=user, raw=True,
        type=MemoryType.SEMANTIC, tags=(EXTRACTED_TAG, f"extraction-v{version}"),
        meta={"extraction_version": version, "from_message": message_id})
    strata.index_graph(result.memory_ids[0], [n for t in triples for n in (t[0], t[2])],
                       triples, scope=scope)


def _names(text: str) -> set[str]:
    """Capitalised words inside a sentence: names, roughly (never the sentence's first)."""
    return {m.group(1) for m in _NAME.finditer(text.strip())}


def _relevant(signals: Mapping[str, float], archetype: Archetype) -> bool:
    """The archetype's similarity threshold applies to the vector signal; a hit that the
    words themselves matched (lexical) is kept below it."""
    return (signals.get("vector", 0.0) >= archetype.similarity_threshold
            or signals.get("lexical", 0.0) > 0)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
