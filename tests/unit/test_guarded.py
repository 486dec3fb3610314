"""``Strata.as_principal``: roles, scopes, ownership, rate limits and the bulk operations,
on every Store adapter."""

from __future__ import annotations

from pathlib import Path

import pytest

from strata_recall.domain.models import HistoryKind, Scope
from strata_recall.errors import (
    ConfirmationRequired,
    IdempotencyMismatch,
    InvalidInput,
    NotFound,
    PermissionDenied,
    RateLimited,
    ScopeDenied,
    Unauthenticated,
)
from strata_recall.facade import Strata
from strata_recall.guarded import GuardedStrata
from strata_recall.policy import Principal, Role
from strata_recall.ports import Store
from strata_recall.settings import load_settings
from strata_recall.testing import FakeClock, memory_strata
from tests.conftest import EMBEDDER, force_forget

A, B = Scope(team="a"), Scope(team="b")


def caller(strata: Strata, role: str, team: str = "a", **bound: str) -> GuardedStrata:
    _, secret = strata.create_token(role, team=team, **bound)
    return strata.as_principal(strata.authenticate(secret))


def test_a_token_stands_for_its_role_and_scope_until_revoked(strata: Strata) -> None:
    record, secret = strata.create_token("writer", team="a", user="u", label="ci")
    principal = strata.authenticate(secret)
    assert principal == Principal(record.id, Role.WRITER, Scope(team="a", user="u"), "token")
    assert secret not in repr(strata.tokens())
    strata.revoke_token(record.id)
    for bad in (secret, "strata_wrong", "", None):
        with pytest.raises(Unauthenticated):
            strata.authenticate(bad)
    with pytest.raises(NotFound):
        strata.revoke_token(record.id)


def test_writes_land_in_the_callers_team_and_name_it_in_history(strata: Strata) -> None:
    writer = caller(strata, "writer", team="a")
    with pytest.raises(ScopeDenied):  # naming another team is refused, never rewritten
        writer.remember("roadmap", scope={"team": "b"})
    result = writer.remember("roadmap")
    memory = strata.get(result.memory_ids[0], scope=A)
    assert memory.scope == A
    with pytest.raises(NotFound):
        strata.get(memory.id, scope=B)
    writer.modify(memory.id, reason="fix", content="roadmap v2")
    assert {row.actor for row in strata.history(memory.id, scope=A)} == {writer.principal.id}


def test_a_reader_reads_but_changes_nothing(strata: Strata) -> None:
    memory_id = strata.remember("the cat is Miso", scope=A).memory_ids[0]
    reader = caller(strata, "reader")
    assert reader.get(memory_id).content == "the cat is Miso"
    assert [h.memory.id for h in reader.recall("cat").hits] == [memory_id]
    assert [m.id for m in reader.list().items] == [memory_id]
    refused = [
        lambda: reader.remember("x"),
        lambda: reader.modify(memory_id, reason="r", content="y"),
        lambda: reader.forget(memory_id, reason="r"),
        lambda: reader.recover(memory_id, reason="r"),
        lambda: reader.modify_many([{"id": memory_id, "reason": "r", "content": "z"}]),
        lambda: reader.forget_preview("cat", scope={"team": "a", "user": "u"}),
        lambda: reader.export(),
        lambda: reader.import_records([{"text": "x"}]),
    ]
    for call in refused:
        with pytest.raises(PermissionDenied):
            call()
    assert strata.get(memory_id, scope=A).version == 1


def test_another_teams_ids_are_not_found_for_every_operation(strata: Strata) -> None:
    memory_id = strata.remember("team a secret", scope=A).memory_ids[0]
    strata.forget(memory_id, reason="to test recover", scope=A)
    other = caller(strata, "admin", team="b")
    for call in (
        lambda: other.get(memory_id, include_deleted=True),
        lambda: other.history(memory_id),
        lambda: other.evidence(memory_id),
        lambda: other.modify(memory_id, reason="r", content="mine"),
        lambda: other.forget(memory_id, reason="r", force=True),
        lambda: other.recover(memory_id, reason="r"),
    ):
        with pytest.raises(NotFound):
            call()
    result = other.modify_many([{"id": memory_id, "reason": "r", "content": "x"}])
    assert result.items[0].error is not None and result.items[0].error["code"] == "not_found"
    assert strata.get(memory_id, scope=A, include_deleted=True).version == 2


def test_a_user_token_reads_team_memories_but_changes_only_its_own(strata: Strata) -> None:
    team_wide = strata.remember("office opens at 9", scope=A).memory_ids[0]
    user = caller(strata, "writer", team="a", user="u")
    own = user.remember("my desk is by the window").memory_ids[0]
    assert strata.get(own, scope={"team": "a", "user": "u"}).scope.user == "u"
    assert user.get(team_wide).content == "office opens at 9"
    with pytest.raises(ScopeDenied):
        user.modify(team_wide, reason="r", content="office opens at 8")
    with pytest.raises(ScopeDenied):
        user.forget(team_wide, reason="r")
    assert user.modify(own, reason="moved", content="my desk is by the door").version == 2


def test_forcing_a_pinned_forget_takes_an_operator(strata: Strata) -> None:
    pinned = strata.remember("never forget", scope=A, pinned=True).memory_ids[0]
    with pytest.raises(PermissionDenied):
        caller(strata, "writer").forget(pinned, reason="r", force=True)
    with pytest.raises(ConfirmationRequired):
        caller(strata, "operator").forget(pinned, reason="r", force=True)
    gone = force_forget(caller(strata, "operator"), pinned, scope=None)
    assert gone.is_deleted


def test_forget_by_query_over_a_whole_team_takes_an_operator(strata: Strata) -> None:
    strata.remember("tea notes", scope=A)
    writer = caller(strata, "writer")
    with pytest.raises(PermissionDenied):
        writer.forget_preview("tea")
    assert writer.forget_preview("tea", scope={"team": "a", "user": "u"}).candidates == ()
    assert len(caller(strata, "operator").forget_preview("tea").candidates) == 1


def test_preview_then_execute_deletes_only_chosen_candidates(strata: Strata) -> None:
    ids = [strata.remember(f"tea note {i}", scope=A).memory_ids[0] for i in range(3)]
    pinned = strata.remember("tea pinned", scope=A, pinned=True).memory_ids[0]
    preview = strata.forget_preview("tea", scope=A, actor=None)
    assert {c.memory.id for c in preview.candidates} == {*ids, pinned}
    # 4 candidates <= threshold 10, but one is pinned: forcing it would need the confirmation
    assert preview.confirm_token is not None
    assert all(not strata.get(i, scope=A).is_deleted for i in ids)  # a preview changes nothing

    result = strata.forget_execute([ids[0], pinned], preview_token=preview.preview_token,
                                   reason="cleanup", scope=A)

    assert [(i.id, i.ok) for i in result.items] == [(ids[0], True), (pinned, False)]
    assert result.items[1].error is not None and result.items[1].error["code"] == "pinned"
    assert strata.get(ids[0], scope=A, include_deleted=True).is_deleted
    assert not strata.get(ids[1], scope=A).is_deleted
    assert strata.history(ids[0], scope=A)[-1].kind is HistoryKind.DELETE


def test_a_forget_preview_token_can_be_used_again_until_it_expires(strata: Strata) -> None:
    """Single use: the token binds each candidate's version, so a second execute (here after
    a recover) finds every item changed and forgets nothing."""
    memory_id = strata.remember("tea note", scope=A).memory_ids[0]
    writer = caller(strata, "writer", user="u")
    owned = writer.remember("tea with milk").memory_ids[0]
    for view, target, where in ((strata, memory_id, A), (writer, owned, None)):
        preview = view.forget_preview("tea", scope=where or {"user": "u"})
        token = preview.preview_token
        first = view.forget_execute([target], preview_token=token, reason="once", scope=where
                                    or {"user": "u"})
        assert first.items[0].ok
        strata.recover(target, reason="back", scope=Scope(team="a", user="u")
                       if where is None else A)
        again = view.forget_execute([target], preview_token=token, reason="twice",
                                    scope=where or {"user": "u"})
        assert not again.items[0].ok
        assert again.items[0].error is not None
        assert again.items[0].error["code"] == "version_conflict"
        assert not strata.get(target, scope=Scope(team="a", user="u") if where is None
                              else A).is_deleted


def altered(token: str) -> str:
    """``token`` with its last character changed (replacing it with "00" was a no-op for one
    token in 256: the MAC is hex)."""
    return token[:-1] + ("1" if token.endswith("0") else "0")


def test_execute_refuses_ids_tokens_and_callers_not_from_the_preview(strata: Strata) -> None:
    chosen = strata.remember("tea", scope=A).memory_ids[0]
    other = strata.remember("coffee beans", scope=A).memory_ids[0]
    preview = strata.forget_preview("tea", scope=A)
    token = preview.preview_token
    assert other not in {c.memory.id for c in preview.candidates}
    for ids, kwargs in (
        ([other], {}),  # not a candidate
        ([chosen], {"scope": Scope(team="a", user="u")}),  # another scope
        ([chosen], {"preview_token": altered(token)}),  # tampered
        ([], {}),
        ([chosen], {"reason": " "}),
    ):
        with pytest.raises(InvalidInput):
            strata.forget_execute(ids, **{"preview_token": token, "reason": "r", "scope": A,
                                          **kwargs})  # type: ignore[arg-type]
    operator = caller(strata, "operator")
    with pytest.raises(InvalidInput, match="another caller"):
        operator.forget_execute([chosen], preview_token=token, reason="r", scope=A)
    assert not strata.get(chosen, scope=A).is_deleted


def test_a_preview_expires(strata: Strata, clock: FakeClock) -> None:
    memory_id = strata.remember("tea", scope=A).memory_ids[0]
    preview = strata.forget_preview("tea", scope=A)
    clock.advance(seconds=strata.settings.forget_preview_ttl_s + 1)
    with pytest.raises(InvalidInput, match="expired"):
        strata.forget_execute([memory_id], preview_token=preview.preview_token, reason="r",
                              scope=A)


def test_above_the_threshold_execute_needs_the_confirm_token(strata: Strata) -> None:
    ids = [strata.remember(f"tea note {i}", scope=A).memory_ids[0] for i in range(12)]
    preview = strata.forget_preview("tea note", scope=A, limit=50)
    assert len(preview.candidates) == 12 and preview.confirm_token is not None
    with pytest.raises(ConfirmationRequired):
        strata.forget_execute(ids, preview_token=preview.preview_token, reason="r", scope=A)
    other = strata.forget_preview("tea", scope=A, limit=50)
    assert other.confirm_token is not None
    with pytest.raises(InvalidInput, match="another preview"):
        strata.forget_execute(ids, preview_token=preview.preview_token, reason="r", scope=A,
                              confirm_token=other.confirm_token)
    assert all(not strata.get(i, scope=A).is_deleted for i in ids)
    done = strata.forget_execute(ids, preview_token=preview.preview_token, reason="r", scope=A,
                                 confirm_token=preview.confirm_token)
    assert done.succeeded == 12


def test_batch_modify_is_atomic_per_item(strata: Strata) -> None:
    first = strata.remember("first budget note", scope=A).memory_ids[0]
    second = strata.remember("second budget note", scope=A).memory_ids[0]
    result = strata.modify_many([
        {"id": first, "reason": "r", "content": "first, edited", "if_version": 1},
        {"id": second, "reason": "r", "importance": 0.9, "if_version": 7},
        {"id": "missing", "reason": "r", "importance": 0.1},
    ], scope=A)
    assert [i.ok for i in result.items] == [True, False, False]
    assert [i.error["code"] for i in result.items[1:] if i.error] == [
        "version_conflict", "not_found"]
    assert strata.get(first, scope=A).content == "first, edited"
    assert strata.get(second, scope=A).version == 1
    for bad in ([], [{"reason": "no id"}], [{"id": first, "reason": "r", "scope": "b"}],
                [{"id": first, "reason": "r"}] * 101):
        with pytest.raises(InvalidInput):
            strata.modify_many(bad, scope=A)


def test_forget_and_modify_are_rate_limited_per_token(store: Store, clock: FakeClock) -> None:
    strata = Strata(store, EMBEDDER, clock=clock, settings=load_settings(
        home=Path("/nonexistent"), mutation_burst=2, mutation_rate_per_s=0.001))
    memory_id = strata.remember("x", scope=A).memory_ids[0]
    writer, other = caller(strata, "writer"), caller(strata, "writer")
    writer.modify(memory_id, reason="r", importance=0.1)
    writer.modify(memory_id, reason="r", importance=0.2)
    with pytest.raises(RateLimited) as limited:
        writer.forget(memory_id, reason="r")
    assert limited.value.details["retry_after_s"] >= 1
    assert strata.get(memory_id, scope=A).version == 3  # the refused call changed nothing
    other.modify(memory_id, reason="r", importance=0.3)  # another token, another bucket
    local = strata.as_principal(Principal.local())
    for value in (0.4, 0.5, 0.6):  # the local user is trusted
        local.modify(memory_id, reason="r", scope=A, importance=value)


def test_remember_and_shield_spend_the_tokens_write_budget(store: Store,
                                                          clock: FakeClock) -> None:
    strata = Strata(store, EMBEDDER, clock=clock, settings=load_settings(
        home=Path("/nonexistent"), write_budget_requests=3, write_budget_chars=100,
        write_budget_window_s=60))
    writer, other = caller(strata, "writer"), caller(strata, "writer", team="b")
    writer.remember("a" * 40, mode="raw")
    writer.shield([{"role": "user", "content": "I live in Oslo, b" + "b" * 30}])
    before = strata.stats(team="a")
    with pytest.raises(RateLimited) as limited:  # 100 - 40 - 47 characters left
        writer.remember("c" * 20, mode="raw")
    assert limited.value.details["retry_after_s"] >= 1
    assert strata.stats(team="a") == before  # the refused write stored nothing
    other.remember("d" * 100, mode="raw")  # another token, another budget
    clock.advance(seconds=60)
    local = strata.as_principal(Principal.local())
    for n in range(5):  # the local user is trusted
        local.remember(f"local {n}", scope=A, mode="raw")


def test_export_holds_only_what_the_caller_owns(strata: Strata) -> None:
    mine = strata.remember("mine: a budget note", scope=A).memory_ids[0]
    theirs = strata.remember("theirs: a travel note", scope=B).memory_ids[0]
    records = list(caller(strata, "operator").export())
    memory_ids = {r["id"] for r in records if r["record"] == "memory"}
    assert memory_ids == {mine}
    assert {r["memory_id"] for r in records if r["record"] == "history"} == {mine}
    assert all(r["scope"]["team"] == "a" for r in records if r["record"] == "event")
    assert theirs in {r["id"] for r in strata.export() if r["record"] == "memory"}


def test_import_refuses_records_outside_the_callers_scope(strata: Strata) -> None:
    source = memory_strata()
    source.remember("from b", scope=B)
    admin = caller(strata, "admin", team="a")
    with pytest.raises(ScopeDenied, match="outside yours"):
        admin.import_records(list(source.export()))
    assert strata.stats().memories == 0
    with pytest.raises(ScopeDenied):
        admin.import_records([{"text": "plain text"}], scope={"team": "b"})
    report = admin.import_records([{"text": "plain text"}])
    assert report.inserted == 1 and strata.list(scope=A).items[0].content == "plain text"


def test_remember_modes(strata: Strata) -> None:
    assert strata.remember("raw one", scope=A, raw=True).status == "raw_saved"
    queued = strata.remember("call Dr Lee later", scope=A, mode="async")
    assert (queued.status, queued.warnings, queued.derived_ids) == ("queued", (), ())
    assert queued.job_id is not None and strata.job(queued.job_id).status.value == "pending"
    now = strata.remember("I live in Berlin", scope=A, mode="sync", pipeline_timeout_ms=5000)
    assert (now.status, now.warnings) == ("processed", ())
    assert [strata.get(i, scope=A).content for i in now.derived_ids] == ["User lives in Berlin"]
    for bad in ({"mode": "eventually"}, {"pipeline_timeout_ms": 0},
                {"pipeline_timeout_ms": 10**9}, {"raw": "yes"}):
        with pytest.raises(InvalidInput):
            strata.remember("bad", scope=A, **bad)  # type: ignore[arg-type]
    strata.remember("keyed", scope=A, idempotency_key="k", mode="sync")
    with pytest.raises(IdempotencyMismatch):
        strata.remember("keyed", scope=A, idempotency_key="k", mode="async")


def test_a_job_is_found_only_within_the_scope_that_made_it(strata: Strata) -> None:
    with pytest.raises(NotFound):
        strata.job("any")
    job_id = strata.remember("later", scope=A, mode="async").job_id
    assert job_id is not None and strata.job(job_id, scope=A).id == job_id
    with pytest.raises(NotFound):
        strata.job(job_id, scope=B)
    with pytest.raises(NotFound):
        caller(strata, "admin", team="b").job(job_id)
    assert caller(strata, "reader", team="a").job(job_id).id == job_id


def test_graph_and_shield_follow_roles_scopes_and_ownership(strata: Strata) -> None:
    team_note = strata.remember("Lunch with Zed in Oslo.", scope=A).memory_ids[0]
    zed = next(e for e in strata.graph_entities(scope=A) if e.canonical_name == "zed")
    reader, user_writer = caller(strata, "reader"), caller(strata, "writer", user="u")
    with pytest.raises(PermissionDenied):
        reader.shield([{"content": "I moved to Rome."}])
    with pytest.raises(PermissionDenied):
        reader.index_graph(team_note, ["Zed"])
    with pytest.raises(ScopeDenied):  # visible to the user's token, not owned by it
        user_writer.index_graph(team_note, ["Quentin"])
    assert [e.canonical_name for e in reader.graph_entities()] == ["oslo", "zed"]
    assert reader.graph_neighbors(zed.id).entity.id == zed.id
    with pytest.raises(NotFound):
        caller(strata, "admin", team="b").graph_neighbors(zed.id)
    with pytest.raises(ScopeDenied):
        user_writer.shield([{"content": "My badge number is 4411."}], scope=B)
    shielded = user_writer.shield([{"content": "My badge number is 4411."}])
    stored = strata.get(shielded.facts[0].memory_id, scope=Scope(team="a", user="u"))
    assert stored.scope == Scope(team="a", user="u")  # the token's scope
