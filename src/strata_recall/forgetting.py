"""``Forgetting``: forget in two steps. ``forget_preview`` finds the candidates (by query, or
the memories named by id) and signs a preview token bound to the caller, the scope and those
candidates, and a confirm token when there are more than the threshold or any is pinned;
``forget_execute`` verifies them and soft-deletes the chosen ids one by one through the
facade's ``forget`` (or a guarded view's).

Force-forgetting a pinned memory ([003] §27.2: a reason, a preview and a confirmation, and the
DELETE history row names the actor) is only possible with a confirm token that lists that
memory at the version the preview showed: ``check_force`` is the one gate every front end's
forget passes through, by id or from a preview."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import Any

from strata_recall.domain.lifecycle import Actor, check_reason
from strata_recall.domain.models import LIVE, Filters, Memory, Scope, ScopeLike
from strata_recall.editing import one_item
from strata_recall.errors import ConfirmationRequired, InvalidInput, NotFound
from strata_recall.policy import Signer, owns
from strata_recall.ports import Clock, Store
from strata_recall.recall import RecallConfig, Retriever
from strata_recall.results import BatchResult, ForgetCandidate, ForgetPreview
from strata_recall.settings import MAX_PAGE, Settings


class Forgetting:
    """Preview, confirm tokens and execute, for one store's retriever and the facade's forget."""

    def __init__(self, store: Store, retriever: Retriever, settings: Settings, clock: Clock,
                 signer: Signer, config: Callable[[str | None], RecallConfig],
                 forget: Callable[..., Memory]) -> None:
        self._store = store
        self._retriever = retriever
        self.settings = settings
        self._clock = clock
        self._signer = signer
        self._config = config
        self.forget = forget

    def forget_preview(
        self,
        query: str | None = None,
        *,
        ids: Sequence[str] | None = None,
        scope: ScopeLike = None,
        filters: Filters | Mapping[str, Any] | None = None,
        limit: int = 20,
        actor: Actor | None = None,
    ) -> ForgetPreview:
        """What a forget would delete: the memories owned within ``scope`` (not merely
        visible to it) that match ``query`` lexically or closely by vector, best first, or
        the live ones of ``ids`` (exactly one of the two). Changes nothing; the tokens it
        returns are bound to ``actor``, ``scope`` and these candidates at their versions."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
            raise InvalidInput(f"limit must be an integer from 1 to {MAX_PAGE}")
        if (query is None) == (ids is None):
            raise InvalidInput("give either a query or ids to preview")
        where = Scope.parse(scope)
        candidates = (self._by_query(query, where, limit, filters) if query is not None
                      else self._by_ids(self._check_forget_ids(ids or ()), where))
        return self._signed(candidates, where, actor or Actor())

    def _by_query(self, query: str, where: Scope, limit: int,
                  filters: Filters | Mapping[str, Any] | None) -> tuple[ForgetCandidate, ...]:
        found = self._retriever.recall(
            query, where, min(limit, self.settings.max_k), 1, Filters.parse(filters),
            self._config(None),
        )
        return tuple(ForgetCandidate(h.memory, h.score) for h in found.hits
                     if owns(where, h.memory.scope) and self._matches(h.signals))

    def _by_ids(self, ids: Sequence[str], where: Scope) -> tuple[ForgetCandidate, ...]:
        """The named memories; one the scope does not own (or that does not exist) is 404,
        like forgetting it one by one."""
        found = {m.id: m for m in self._store.get_many(list(ids), where)
                 if owns(where, m.scope)}
        missing = [i for i in ids if i not in found]
        if missing:
            raise NotFound(f"memory {missing[0]} not found", ids=missing)
        return tuple(ForgetCandidate(found[i], 1.0) for i in ids
                     if found[i].lifecycle in LIVE)

    def _signed(self, candidates: tuple[ForgetCandidate, ...], where: Scope,
                actor: Actor) -> ForgetPreview:
        expires = self._clock.now() + timedelta(seconds=self.settings.forget_preview_ttl_s)
        bound = {"actor": actor.id, "scope": where.key, "exp": expires.timestamp()}
        preview_token = self._signer.sign({
            "kind": "forget_preview", **bound, "ids": [c.memory.id for c in candidates],
            "versions": [c.memory.version for c in candidates],
            "pinned": [c.memory.id for c in candidates if c.memory.pinned],
        })
        threshold = self.settings.forget_confirm_threshold
        pinned = [[c.memory.id, c.memory.version] for c in candidates if c.memory.pinned]
        confirm = None
        if len(candidates) > threshold or pinned:
            confirm = self._signer.sign({"kind": "forget_confirm", **bound, "pinned": pinned,
                                         "preview": _digest(preview_token)})
        return ForgetPreview(candidates, preview_token, confirm, threshold, expires)

    def check_force(self, memory: Memory, *, force: bool, confirm_token: str | None,
                    scope: Scope, actor: Actor) -> int | None:
        """Refuse to force-forget a pinned ``memory`` without a confirm token of a preview
        that showed it at this version, issued to ``actor`` in ``scope``
        (``ConfirmationRequired``, nothing changed). Unpinned memories pass (None); a
        confirmed one returns the version confirmed (the forget must find it unchanged)."""
        if not (force and memory.pinned):
            return None
        if confirm_token is None:
            raise ConfirmationRequired(
                f"memory {memory.id} is pinned: force-forgetting it needs a preview "
                "(forget_preview with its id) and that preview's confirm_token",
                id=memory.id, version=memory.version,
            )
        confirmed = self._signer.verify(confirm_token, self._clock.now().timestamp(),
                                        "confirm_token")
        if (confirmed.get("kind"), confirmed.get("actor"), confirmed.get("scope")) != (
            "forget_confirm", actor.id, scope.key
        ):
            raise InvalidInput("confirm_token was issued for another caller or scope")
        if [memory.id, memory.version] not in confirmed.get("pinned", ()):
            raise InvalidInput(f"confirm_token does not confirm memory {memory.id} at version "
                               f"{memory.version}; run the preview again", id=memory.id)
        return memory.version

    def _matches(self, signals: Mapping[str, float]) -> bool:
        """Recall always fills k; a forget candidate must actually match the query."""
        return signals.get("lexical", 0.0) > 0.0 or (
            signals.get("vector", 0.0) >= self.settings.forget_min_similarity
        )

    def forget_execute(
        self,
        ids: Sequence[str],
        *,
        preview_token: str,
        reason: str,
        scope: ScopeLike = None,
        confirm_token: str | None = None,
        force: bool = False,
        actor: Actor | None = None,
        forget: Callable[..., Memory] | None = None,
    ) -> BatchResult:
        """Soft-delete ``ids`` chosen from a preview, each on its own (one result per id).
        ``forget`` replaces the per-item call (a guarded view passes its own)."""
        reason = check_reason(reason)
        actor = actor or Actor()
        where = Scope.parse(scope)
        chosen = self._check_forget_ids(ids)
        now = self._clock.now().timestamp()
        shown = self._signer.verify(preview_token, now, "preview_token")
        if (shown.get("kind"), shown.get("actor"), shown.get("scope")) != (
            "forget_preview", actor.id, where.key
        ):
            raise InvalidInput("preview_token was issued for another caller or scope")
        outside = [i for i in chosen if i not in set(shown.get("ids", ()))]
        if outside:
            raise InvalidInput("ids must be chosen from the preview's candidates", ids=outside)
        pinned = sorted(set(shown.get("pinned", ())) & set(chosen)) if force else []
        if len(chosen) > self.settings.forget_confirm_threshold or pinned:
            self._check_confirm(confirm_token, preview_token, now, len(chosen), pinned)
        # Single use: each id is forgotten only at the version the preview showed, so a
        # second execute of the same token finds every item changed (version_conflict).
        versions = dict(zip(shown.get("ids", ()), shown.get("versions", ()), strict=False))
        apply = forget or self.forget
        return BatchResult(tuple(
            one_item({"id": memory_id}, lambda fields: apply(
                fields["id"], reason=reason, scope=where, force=force, actor=actor,
                if_version=versions.get(fields["id"]), confirm_token=confirm_token))
            for memory_id in chosen
        ))

    def _check_forget_ids(self, ids: Sequence[str]) -> tuple[str, ...]:
        if isinstance(ids, str) or not isinstance(ids, Sequence) or not ids:
            raise InvalidInput("ids must be a non-empty list chosen from a preview")
        if not all(isinstance(i, str) and i for i in ids):
            raise InvalidInput("ids must be strings")
        limit = self.settings.forget_max_ids
        if len(ids) > limit:
            raise InvalidInput(f"at most {limit} ids per forget", count=len(ids))
        return tuple(dict.fromkeys(ids))

    def _check_confirm(self, token: str | None, preview_token: str, now: float, count: int,
                       pinned: Sequence[str]) -> None:
        threshold = self.settings.forget_confirm_threshold
        if token is None:
            why = (f"force-forgetting {len(pinned)} pinned memories" if pinned else
                   f"forgetting {count} memories (more than {threshold})")
            raise ConfirmationRequired(f"{why} needs the preview's confirm_token", count=count,
                                       threshold=threshold, pinned=list(pinned))
        confirmed = self._signer.verify(token, now, "confirm_token")
        if (confirmed.get("kind"), confirmed.get("preview")) != (
            "forget_confirm", _digest(preview_token)
        ):
            raise InvalidInput("confirm_token belongs to another preview")



def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()[:32]

