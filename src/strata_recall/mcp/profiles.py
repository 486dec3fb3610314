"""Which MCP tools a server publishes: a lean default and opt-in profiles.

Every tool definition is sent to the model on every turn, so the default profile keeps to
what a model and its host need (search, store, get, update, forget, and the session hook
that injects context); the rest are opt-in by name. Pure: names only, no SDK.
"""

from __future__ import annotations

from collections.abc import Iterable

from strata_recall.errors import InvalidInput

DEFAULT = ("memory_search", "memory_store", "memory_get", "memory_modify", "memory_forget",
           "session_start")
HOOKS = ("session_start", "user_prompt_submit", "session_end", "pre_compaction",
         "compaction_complete")
MODERATION = ("memory_list", "memory_history", "memory_rollback", "memory_archive",
              "memory_unarchive", "memory_review_list", "memory_approve", "memory_reject",
              "memory_compress", "memory_promote_version", "memory_pin")
EVIDENCE = ("memory_more", "memory_evidence")
DOCUMENTS = ("document_ingest",)
CONTEXT = ("memory_context", "meta_backbone_list", "meta_backbone_add", "meta_backbone_remove",
           "meta_find", "meta_link")

PROFILES: dict[str, tuple[str, ...]] = {
    "default": DEFAULT, "hooks": HOOKS, "moderation": MODERATION, "evidence": EVIDENCE,
    "documents": DOCUMENTS, "context": CONTEXT,
}
PROFILES["all"] = tuple(dict.fromkeys(name for tools in PROFILES.values() for name in tools))


def parse_profiles(spec: str | Iterable[str] | None) -> tuple[str, ...]:
    """Profile names from ``"hooks,moderation"`` or a list (the default profile always
    included); an unknown name is ``InvalidInput``."""
    names = spec.split(",") if isinstance(spec, str) else list(spec or ())
    chosen = ["default", *(n.strip().lower() for n in names if n.strip())]
    unknown = sorted(set(chosen) - set(PROFILES))
    if unknown:
        raise InvalidInput(f"unknown MCP profile {', '.join(unknown)}; choose from "
                           f"{', '.join(PROFILES)}", profiles=unknown)
    return tuple(dict.fromkeys(chosen))


def tools_of(profiles: Iterable[str], order: Iterable[str]) -> tuple[str, ...]:
    """The tools the profiles publish, in ``order`` (every known tool, as registered)."""
    wanted = {name for profile in profiles for name in PROFILES[profile]}
    return tuple(name for name in order if name in wanted)
