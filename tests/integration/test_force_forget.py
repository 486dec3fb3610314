"""Force-deleting a pinned memory ([003] §27.2, issue 13): operator-only, with a reason, a
preview and its confirmation, and an audited DELETE row naming the actor; a force without a
confirmation is refused and changes nothing. The library front end, on every store adapter
(the HTTP API, CLI and MCP ones are in their own test directories)."""

from __future__ import annotations

from pathlib import Path

import pytest

from strata_recall.domain.lifecycle import Actor
from strata_recall.domain.models import HistoryKind, Lifecycle, Memory, Scope
from strata_recall.errors import ConfirmationRequired, InvalidInput, PermissionDenied
from strata_recall.facade import Strata
from strata_recall.ports import Store
from strata_recall.settings import load_settings
from strata_recall.testing import FakeClock
from tests.conftest import EMBEDDER, force_forget
from tests.unit.test_guarded import caller

A = Scope(team="a")


def _unchanged(strata: Strata, before: Memory) -> None:
    after = strata.get(before.id, scope=A)
    assert (after.version, after.lifecycle, after.pinned) == (before.version, Lifecycle.ACTIVE,
                                                              True)
    assert [h.kind for h in strata.history(before.id, scope=A)] == [HistoryKind.ADD]


def _pinned(strata: Strata, text: str = "Never deploy on Fridays.") -> Memory:
    memory_id = strata.remember(text, scope=A, pinned=True, raw=True).memory_ids[0]
    return strata.get(memory_id, scope=A)


def test_force_deleting_a_pinned_memory_needs_no_preview_or_confirmation(
    strata: Strata,
) -> None:
    pinned = _pinned(strata)
    with pytest.raises(ConfirmationRequired) as refused:
        strata.forget(pinned.id, reason="cleanup", scope=A, force=True)
    assert refused.value.code == "confirmation_required" and refused.value.http_status == 428
    _unchanged(strata, pinned)

    preview = strata.forget_preview(ids=[pinned.id], scope=A, actor=Actor("ops"))
    assert [c.memory.id for c in preview.candidates] == [pinned.id]
    assert preview.confirm_token is not None
    _unchanged(strata, pinned)  # a preview changes nothing
    gone = strata.forget(pinned.id, reason="cleanup", scope=A, force=True, actor=Actor("ops"),
                         confirm_token=preview.confirm_token)
    assert gone.is_deleted
    delete = strata.history(pinned.id, scope=A)[-1]
    assert (delete.kind, delete.actor, delete.reason) == (HistoryKind.DELETE, "ops", "cleanup")


def test_a_confirmation_covers_only_its_memory_version_caller_and_scope(
    strata: Strata,
) -> None:
    pinned, other = _pinned(strata), _pinned(strata, "Backups run at midnight.")
    token = strata.forget_preview(ids=[pinned.id], scope=A).confirm_token
    with pytest.raises(InvalidInput, match="does not confirm"):
        strata.forget(other.id, reason="r", scope=A, force=True, confirm_token=token)
    with pytest.raises(InvalidInput, match="another caller"):
        strata.forget(pinned.id, reason="r", scope=A, force=True, confirm_token=token,
                      actor=Actor("someone-else"))
    strata.modify(pinned.id, reason="reword", scope=A, content="Never deploy on a Friday.")
    with pytest.raises(InvalidInput, match="run the preview again"):
        strata.forget(pinned.id, reason="r", scope=A, force=True, confirm_token=token)
    assert not strata.get(pinned.id, scope=A).is_deleted
    assert force_forget(strata, pinned.id, scope=A).is_deleted


def test_forget_execute_of_a_pinned_candidate_needs_the_confirm_token(strata: Strata) -> None:
    pinned = _pinned(strata)
    loose = strata.remember("Deploys are on Tuesdays.", scope=A, raw=True).memory_ids[0]
    preview = strata.forget_preview(ids=[pinned.id, loose], scope=A)
    with pytest.raises(ConfirmationRequired, match="pinned"):
        strata.forget_execute([pinned.id, loose], preview_token=preview.preview_token,
                              reason="r", scope=A, force=True)
    _unchanged(strata, pinned)
    assert not strata.get(loose, scope=A).is_deleted, "a refused batch changed something"
    done = strata.forget_execute([pinned.id, loose], preview_token=preview.preview_token,
                                 reason="r", scope=A, force=True,
                                 confirm_token=preview.confirm_token)
    assert all(item.ok for item in done.items), done.to_dict()
    assert strata.get(pinned.id, scope=A, include_deleted=True).is_deleted


def test_force_forget_is_operator_only_even_with_a_confirmation(strata: Strata) -> None:
    pinned = _pinned(strata)
    writer, operator = caller(strata, "writer"), caller(strata, "operator")
    token = writer.forget_preview(ids=[pinned.id]).confirm_token
    with pytest.raises(PermissionDenied):
        writer.forget(pinned.id, reason="r", force=True, confirm_token=token)
    with pytest.raises(ConfirmationRequired):
        operator.forget(pinned.id, reason="r", force=True)
    _unchanged(strata, pinned)
    assert force_forget(operator, pinned.id, scope=None).is_deleted


def test_forgetting_a_memory_does_not_cascade_onto_a_pinned_derived_copy(
    store: Store, clock: FakeClock
) -> None:
    """A derived copy the user pinned was never shown in a preview: forgetting its source
    (even with force) leaves it, and forgets the unpinned copies."""
    strata = Strata(store, EMBEDDER, clock=clock, settings=load_settings(
        home=Path("/nonexistent"), review_mode="off"))
    said = strata.remember("My phone number is 555 0199.", scope=A, mode="sync")
    assert said.derived_ids, "the rules derive a fact from it"
    source = next(i for i in said.memory_ids if i not in said.derived_ids)
    kept = said.derived_ids[0]
    strata.modify(kept, reason="keep this", scope=A, pinned=True)
    strata.forget(source, reason="privacy", scope=A, force=True)
    assert strata.get(source, scope=A, include_deleted=True).is_deleted
    assert not strata.get(kept, scope=A).is_deleted
