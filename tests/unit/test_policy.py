"""The pure rules of ``strata_recall.policy``: roles, narrowing, ownership, rate limits, signing."""

from __future__ import annotations

import pytest

from strata_recall.domain.models import Scope
from strata_recall.errors import (
    InvalidInput,
    PayloadTooLarge,
    PermissionDenied,
    RateLimited,
    ScopeDenied,
)
from strata_recall.policy import (
    Operation,
    Principal,
    RateLimiter,
    Role,
    Signer,
    WriteBudget,
    authorize,
    check_owns,
    hash_secret,
    is_broad,
    narrow,
    new_secret,
    owns,
    written_chars,
)

TEAM_WRITER = Principal("t1", Role.WRITER, Scope(team="a"), kind="token")
USER_WRITER = Principal("t2", Role.WRITER, Scope(team="a", user="u"), kind="token")


def test_roles_are_ordered_and_parsed_by_name() -> None:
    assert Role.READER < Role.WRITER < Role.OPERATOR < Role.ADMIN
    assert Role.parse("operator") is Role.OPERATOR and Role.parse(Role.ADMIN) is Role.ADMIN
    with pytest.raises(InvalidInput):
        Role.parse("root")


@pytest.mark.parametrize(("role", "allowed"), [
    (Role.READER, {Operation.READ}),
    (Role.WRITER, {Operation.READ, Operation.WRITE, Operation.ARCHIVE}),
    (Role.OPERATOR, {Operation.READ, Operation.WRITE, Operation.FORCE_FORGET,
                     Operation.BROAD_FORGET, Operation.EXPORT, Operation.METRICS,
                     Operation.ARCHIVE, Operation.MODERATE, Operation.MAINTAIN,
                     Operation.ROLLBACK}),
    (Role.ADMIN, set(Operation)),
])
def test_each_role_may_do_exactly_its_operations(role: Role, allowed: set[Operation]) -> None:
    principal = Principal("p", role, Scope(team="a"), kind="token")
    for operation in Operation:
        if operation in allowed:
            authorize(principal, operation)
        else:
            with pytest.raises(PermissionDenied):
                authorize(principal, operation)


def test_narrowing_fills_in_the_pinned_dimensions_and_keeps_the_rest() -> None:
    asked = {"user": "other", "agent": "bot", "run": "r1"}
    assert narrow(TEAM_WRITER, asked) == Scope(team="a", user="other", agent="bot", run="r1")
    assert narrow(USER_WRITER, {"agent": "bot"}) == Scope(team="a", user="u", agent="bot")
    assert narrow(USER_WRITER, Scope(team="a", user="u")) == Scope(team="a", user="u")
    assert narrow(USER_WRITER, None) == Scope(team="a", user="u")
    everything = Scope(team="b", user="other", agent="bot", run="r1")
    assert narrow(Principal.local(), everything) == everything


def test_silent_scope_substitution_is_refused_naming_the_allowed_scope() -> None:
    for principal, asked in ((TEAM_WRITER, {"team": "b"}), (TEAM_WRITER, "b"),
                             (USER_WRITER, {"user": "carol"}),
                             (USER_WRITER, Scope(team="a", user="carol")),
                             (USER_WRITER, Scope(team="default"))):
        with pytest.raises(ScopeDenied) as refused:
            narrow(principal, asked)
        assert refused.value.code == "scope_denied"
        assert refused.value.details["allowed_scope"] == principal.scope.to_dict()


def test_ownership_needs_every_named_dimension() -> None:
    assert owns(Scope(team="a"), Scope(team="a", user="u", agent="x"))
    assert owns(Scope(team="a", user="u"), Scope(team="a", user="u", run="r"))
    assert not owns(Scope(team="a", user="u"), Scope(team="a"))  # team-wide: read-only for u
    assert not owns(Scope(team="a"), Scope(team="b"))
    check_owns(Principal.local(), Scope(team="zzz"), "m")
    with pytest.raises(ScopeDenied):
        check_owns(USER_WRITER, Scope(team="a"), "m")


def test_a_scope_without_user_agent_or_run_is_broad() -> None:
    assert is_broad(Scope(team="a"))
    assert not is_broad(Scope(team="a", run="r"))


def test_secrets_are_random_and_only_their_hash_is_comparable() -> None:
    first, second = new_secret(), new_secret()
    assert first != second and first.startswith("strata_") and len(first) > 40
    assert hash_secret(first) == hash_secret(first) != hash_secret(second)
    assert first not in hash_secret(first)


def test_the_bucket_allows_a_burst_then_refills_at_the_rate() -> None:
    now = [0.0]
    limiter = RateLimiter(rate_per_s=2.0, burst=3, clock=lambda: now[0])
    for _ in range(3):
        limiter.take("t")
    with pytest.raises(RateLimited) as refused:
        limiter.take("t")
    assert refused.value.details["retry_after_s"] == 1
    limiter.take("other")  # buckets are per key
    now[0] = 0.5  # one call refilled
    limiter.take("t")
    with pytest.raises(RateLimited):
        limiter.take("t")


def test_write_budget_refuses_with_429_and_retry_after() -> None:
    now = [0.0]
    budget = WriteBudget(requests=3, chars=1_000, window_s=60, clock=lambda: now[0])
    budget.take("t", 600)
    with pytest.raises(RateLimited) as chars:  # 400 characters left: 600 more must wait
        budget.take("t", 600)
    assert chars.value.details["limit"] == "characters written"
    assert chars.value.details["retry_after_s"] == 12  # 200 characters at 1,000 per 60 s
    budget.take("t", 10)
    budget.take("t", 10)
    with pytest.raises(RateLimited) as requests:  # three writes per window
        budget.take("t", 1)
    assert requests.value.details["limit"] == "write requests"
    assert requests.value.details["retry_after_s"] == 20
    budget.take("other", 1_000)  # budgets are per key
    now[0] = 20.0
    budget.take("t", 300)  # a request and 333 characters came back; the refusals cost nothing
    with pytest.raises(PayloadTooLarge):  # never fits in one window: split it
        budget.take("other", 1_001)


def test_written_chars_counts_text_or_message_contents() -> None:
    assert written_chars("abc", None) == 3
    assert written_chars(None, [{"content": "ab"}, {"content": "cde"}, {"role": "x"}, 4]) == 5
    assert written_chars(None, "not a list") == 0


def test_signed_payloads_round_trip_and_refuse_tampering_and_expiry() -> None:
    signer = Signer(b"k" * 32)
    token = signer.sign({"ids": ["x"], "exp": 100.0})
    assert signer.verify(token, 50.0, "t")["ids"] == ["x"]
    body, _, mac = token.partition(".")
    forged = Signer(b"j" * 32).sign({"ids": ["x", "y"], "exp": 100.0})
    flipped = mac[:-1] + ("1" if mac.endswith("0") else "0")
    for bad in (forged, f"{body}x.{mac}", f"{body}.{flipped}", "ünïcode.abc", "", "."):
        with pytest.raises(InvalidInput):
            signer.verify(bad, 50.0, "t")
    with pytest.raises(InvalidInput, match="expired"):
        signer.verify(token, 101.0, "t")
