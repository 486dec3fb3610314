"""The chat commands: [000]'s ``!remember``, ``!memreview``, ``!memapprove``, ``!memreject``,
its ``!meta.*`` curation of the backbone and links (chunk 17, over the facade's meta ops) and
the registry's ``!proposals``, ``!approve``, ``!reject``, ``!rollback``, ``!prompt``.

Every transport parses a message with ``run`` before the pipeline sees it; review and
registry commands are owner-only (``AgentConfig.owners``).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass

from strata_recall.agent.runtime import Agent, Incoming
from strata_recall.domain.lifecycle import Actor
from strata_recall.domain.meta.items import MetaItem, item_brief, ref_id
from strata_recall.domain.models import Scope
from strata_recall.errors import InvalidInput, StrataError

__all__ = ["CommandResult", "run"]

OWNER_ONLY = frozenset({"memreview", "memapprove", "memreject", "proposals", "approve",
                        "reject", "rollback", "meta.backbone.list", "meta.backbone.add",
                        "meta.backbone.remove", "meta.find", "meta.link"})


@dataclass(frozen=True, slots=True)
class CommandResult:
    command: str
    text: str
    ok: bool = True


def _options(words: list[str]) -> tuple[list[str], dict[str, str]]:
    """Positional words and ``key=value`` options."""
    plain = [w for w in words if "=" not in w]
    return plain, dict(w.split("=", 1) for w in words if "=" in w)


def run(agent: Agent, message: Incoming) -> CommandResult | None:
    """The command's answer, or None when the message is not a command."""
    text = message.text.strip()
    if not text.startswith("!") or text.lower().startswith("!northstar"):
        return None
    try:
        words = shlex.split(text[1:])
    except ValueError:
        words = text[1:].split()
    name = words[0].lower() if words else ""
    handler = HANDLERS.get(name)
    if handler is None:
        return CommandResult(name, f"unknown command !{name}", ok=False)
    if name in OWNER_ONLY and message.user not in agent.config.owners:
        return CommandResult(name, f"!{name} is for the bot's owners only", ok=False)
    try:
        return CommandResult(name, handler(agent, message, words[1:]))
    except StrataError as exc:
        return CommandResult(name, f"!{name} failed: {exc}", ok=False)


def _remember(agent: Agent, message: Incoming, words: list[str]) -> str:
    text = " ".join(words).strip()
    if not text:
        raise InvalidInput("usage: !remember <text>")
    result = agent.strata.remember(text, scope=agent.user_scope(message.user),
                                   author=message.user, importance=0.8,
                                   actor=Actor(message.user), mode="async")
    if not result.memory_ids:  # chit-chat: in the event log only (decision 0059)
        return "Nothing to remember in that: it is chit-chat (kept in the event log only)."
    return f"Remembered ({result.memory_ids[0]})."


def _memreview(agent: Agent, message: Incoming, words: list[str]) -> str:
    limit = int(words[0]) if words and words[0].isdigit() else 10
    page = agent.strata.review_queue(scope=agent.user_scope(message.user), limit=limit)
    if not page.items:
        return "No candidates to review."
    return "\n".join(f"{m.id} [{m.type}] {m.content[:120]}" for m in page.items)


def _memapprove(agent: Agent, message: Incoming, words: list[str]) -> str:
    plain, options = _options(words)
    if not plain:
        raise InvalidInput("usage: !memapprove <id> [tags=a,b] [topic=...] "
                           "[importance=0..4|0.0..1.0] [note=...]")
    tags = options["tags"].split(",") if "tags" in options else None
    memory = agent.strata.approve(
        plain[0], reason=options.get("note", "approved in chat"),
        scope=agent.user_scope(message.user), actor=Actor(message.user), tags=tags,
        topic=options.get("topic"), importance=options.get("importance"),
        note=options.get("note"))
    return f"Approved {memory.id} (importance {memory.importance:g})."


def _memreject(agent: Agent, message: Incoming, words: list[str]) -> str:
    plain, options = _options(words)
    if not plain:
        raise InvalidInput("usage: !memreject <id> [reason=...]")
    memory = agent.strata.reject(plain[0], reason=options.get("reason", "rejected in chat"),
                                 scope=agent.user_scope(message.user),
                                 actor=Actor(message.user))
    return f"Rejected {memory.id}."


def _proposals(agent: Agent, message: Incoming, words: list[str]) -> str:
    pending = agent.registry.pending()
    if not pending:
        return "No proposals pending."
    return "\n".join(f"{p.id} {p.data['prompt_key']} (from v{p.data['base_version']}, "
                     f"{p.data.get('reason', '')})" for p in pending)


def _approve(agent: Agent, message: Incoming, words: list[str]) -> str:
    if not words:
        raise InvalidInput("usage: !approve <proposal id>")
    merged = agent.registry.approve(words[0], approver=message.user)
    return f"Merged: {merged.name} is now version {merged.version}."


def _reject(agent: Agent, message: Incoming, words: list[str]) -> str:
    if not words:
        raise InvalidInput("usage: !reject <proposal id>")
    agent.registry.reject(words[0], approver=message.user)
    return "Proposal rejected."


def _rollback(agent: Agent, message: Incoming, words: list[str]) -> str:
    if len(words) != 2 or not words[1].isdigit():
        raise InvalidInput("usage: !rollback <prompt key> <version>")
    entry = agent.registry.rollback(words[0], int(words[1]), by=message.user)
    return f"{entry.name} rolled back to version {words[1]} (now version {entry.version})."


def _prompt(agent: Agent, message: Incoming, words: list[str]) -> str:
    entry = agent.registry.entry(words[0] if words else "chat")
    return f"{entry.name} v{entry.version}:\n{entry.data['template']}"


# -- [000] chunk 17: the meta backbone and links --------------------------------------------

def _meta_scope(agent: Agent, message: Incoming, word: str | None) -> Scope:
    """``team`` (the team-wide items only) or ``user`` (default: the team's and the
    speaker's own)."""
    if word in (None, "user"):
        return agent.user_scope(message.user)
    if word == "team":
        return Scope(team=agent.memory_team)
    raise InvalidInput(f"scope must be 'team' or 'user', not {word!r}", field="scope")


def _items(items: list[MetaItem]) -> str:
    if not items:
        return "No meta items."
    rows = [item_brief(i) for i in items]
    return "\n".join(f"{r['layer']} {'-' if r['priority'] is None else r['priority']} "
                     f"{r['id']} {r['kind']}: {r['content'][:80]}" for r in rows)


def _backbone_list(agent: Agent, message: Incoming, words: list[str]) -> str:
    scope = _meta_scope(agent, message, words[0] if words else None)
    return _items(agent.strata.meta_backbone_list(scope=scope))


def _backbone_add(agent: Agent, message: Incoming, words: list[str]) -> str:
    """``<layer> <meta_id> [scope] [priority]`` (either optional word may come alone)."""
    if len(words) < 2:
        raise InvalidInput("usage: !meta.backbone.add <layer> <meta_id> [team|user] [priority]")
    rest = words[2:]
    numbers = [w for w in rest if w.isdigit()]
    scopes = [w for w in rest if not w.isdigit()]
    if len(numbers) > 1 or len(scopes) > 1:
        raise InvalidInput("usage: !meta.backbone.add <layer> <meta_id> [team|user] [priority]")
    item = agent.strata.meta_backbone_add(
        ref_id(words[1]), words[0], int(numbers[0]) if numbers else 100,
        scope=_meta_scope(agent, message, scopes[0] if scopes else None),
        actor=Actor(message.user))
    return "Added to the backbone:\n" + _items([item])


def _backbone_remove(agent: Agent, message: Incoming, words: list[str]) -> str:
    if len(words) != 1:
        raise InvalidInput("usage: !meta.backbone.remove <meta_id>")
    item = agent.strata.meta_backbone_remove(ref_id(words[0]),
                                             scope=agent.user_scope(message.user),
                                             actor=Actor(message.user))
    return f"Removed {item.id} from the backbone."


def _meta_find(agent: Agent, message: Incoming, words: list[str]) -> str:
    if not words or len(words) > 3:
        raise InvalidInput('usage: !meta.find <query> [layer] [kind] (quote a query of '
                           'several words: !meta.find "dark mode")')
    return _items(agent.strata.meta_find(
        words[0], scope=agent.user_scope(message.user), layer=words[1] if len(words) > 1
        else None, kind=words[2] if len(words) > 2 else None))


def _meta_link(agent: Agent, message: Incoming, words: list[str]) -> str:
    if len(words) != 3:
        raise InvalidInput("usage: !meta.link <from_ref> <to_ref> <relation>")
    memory = agent.strata.meta_link(ref_id(words[0]), words[1], words[2],
                                    scope=agent.user_scope(message.user),
                                    actor=Actor(message.user))
    links = ", ".join(t for t in memory.tags if t.startswith("link:"))
    return f"Linked {memory.id} (v{memory.version}): {links}"


HANDLERS: dict[str, Callable[[Agent, Incoming, list[str]], str]] = {
    "remember": _remember, "memreview": _memreview, "memapprove": _memapprove,
    "memreject": _memreject, "proposals": _proposals, "approve": _approve, "reject": _reject,
    "rollback": _rollback, "prompt": _prompt, "meta.backbone.list": _backbone_list,
    "meta.backbone.add": _backbone_add, "meta.backbone.remove": _backbone_remove,
    "meta.find": _meta_find, "meta.link": _meta_link,
}
