"""``Forgetting``: forget by query in two steps. ``forget_preview`` finds the candidates and
signs a preview token (and a confirm token above the threshold) bound to the caller, the scope
and those candidates; ``forget_execute`` verifies them and soft-deletes the chosen ids one by
one through the ``Editor``'s ``forget`` (or a guarded view's)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import Any

from strata.domain.lifecycle import Actor, check_reason
from strata.domain.models import Filters, Memory, Scope, ScopeLike
from strata.editing import one_item
from strata.errors import ConfirmationRequired, InvalidInput
from strata.policy import Signer, owns
from strata.ports import Clock
from strata.recall import RecallConfig, Retriever
from strata.results import BatchResult, ForgetCandidate, ForgetPreview
from strata.settings import MAX_PAGE, Settings


class Forgetting:
    """Preview, confirm tokens and execute, for one store's retriever and editor."""

    def __init__(self, retriever: Retriever, settings: Settings, clock: Clock, signer: Signer,
                 config: Callable[[str | None], RecallConfig],
                 forget: Callable[..., Memory]) -> None:
        self._retriever = retriever
        self.settings = settings
        self._clock = clock
        self._signer = signer
        self._config = config
        self.forget = forget

    def forget_preview(
        self,
        query: str,
        *,
        scope: ScopeLike = None,
        filters: Filters | Mapping[str, Any] | None = None,
        limit: int = 20,
        actor: Actor | None = None,
    ) -> ForgetPreview:
        """What a forget by ``query`` would delete: memories owned within ``scope`` (not merely
        visible to it) that match it lexically or closely by vector, best first. Changes
        nothing; the tokens it returns are bound to ``actor``, ``scope`` and these candidates."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
            raise InvalidInput(f"limit must be an integer from 1 to {MAX_PAGE}")
        where = Scope.parse(scope)
        found = self._retriever.recall(
            query, where, min(limit, self.settings.max_k), 1, Filters.parse(filters),
            self._config(None),
        )
        candidates = tuple(ForgetCandidate(h.memory, h.score) for h in found.hits
                           if owns(where, h.memory.scope) and self._matches(h.signals))
        expires = self._clock.now() + timedelta(seconds=self.settings.forget_preview_ttl_s)
        preview_token = self._signer.sign({
            "kind": "forget_preview", "actor": (actor or Actor()).id, "scope": where.key,
            "ids": [c.memory.id for c in candidates], "exp": expires.timestamp(),
            "versions": [c.memory.version for c in candidates],
        })
        threshold = self.settings.forget_confirm_threshold
        confirm = None
        if len(candidates) > threshold:
            confirm = self._signer.sign({"kind": "forget_confirm", "exp": expires.timestamp(),
                                         "preview": _digest(preview_token)})
        return ForgetPreview(candidates, preview_token, confirm, threshold, expires)

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
        if len(chosen) > self.settings.forget_confirm_threshold:
            self._check_confirm(confirm_token, preview_token, now, len(chosen))
        # Single use: each id is forgotten only at the version the preview showed, so a
        # second execute of the same token finds every item changed (version_conflict).
        versions = dict(zip(shown.get("ids", ()), shown.get("versions", ()), strict=False))
        apply = forget or self.forget
        return BatchResult(tuple(
            one_item({"id": memory_id}, lambda fields: apply(
                fields["id"], reason=reason, scope=where, force=force, actor=actor,
                if_version=versions.get(fields["id"])))
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

    def _check_confirm(self, token: str | None, preview_token: str, now: float, count: int) -> None:
        threshold = self.settings.forget_confirm_threshold
        if token is None:
            raise ConfirmationRequired(
                f"forgetting {count} memories (more than {threshold}) needs the preview's "
                "confirm_token", count=count, threshold=threshold,
            )
        confirmed = self._signer.verify(token, now, "confirm_token")
        if (confirmed.get("kind"), confirmed.get("preview")) != (
            "forget_confirm", _digest(preview_token)
        ):
            raise InvalidInput("confirm_token belongs to another preview")



def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()[:32]

