"""The guard is derived from one policy table: every public facade method is guarded by a
rule of ``policy.GUARDED_RULES``, written out by hand (``policy.GUARDED_BY_HAND``) or
unguarded by design (``policy.UNGUARDED``), and each of them exactly once."""

from __future__ import annotations

import inspect

import pytest

from strata_recall.domain.models import Scope
from strata_recall.facade import Strata
from strata_recall.guarded import GuardedStrata
from strata_recall.policy import GUARDED_BY_HAND, GUARDED_RULES, UNGUARDED, Principal, Role, Target
from strata_recall.testing import memory_strata


def public_methods(cls: type) -> set[str]:
    return {name for name, value in vars(cls).items() if not name.startswith("_")
            and (inspect.isfunction(value) or isinstance(value, classmethod | staticmethod))}


def test_every_public_facade_method_is_guarded_or_unguarded_by_design() -> None:
    table, by_hand, unguarded = set(GUARDED_RULES), set(GUARDED_BY_HAND), set(UNGUARDED)
    assert not (table & by_hand) and not (table & unguarded) and not (by_hand & unguarded)
    assert public_methods(Strata) == table | by_hand | unguarded


def test_the_guard_offers_exactly_the_guarded_methods() -> None:
    offered = public_methods(GuardedStrata) | {
        name for name in GUARDED_RULES if name in vars(GuardedStrata)}
    assert offered - {"scope", "require", "call"} == set(GUARDED_RULES) | set(GUARDED_BY_HAND)
    assert not any(hasattr(GuardedStrata, name) for name in UNGUARDED)


def test_every_owned_target_takes_the_memory_id_first() -> None:
    for name, rule in GUARDED_RULES.items():
        parameters = list(inspect.signature(getattr(Strata, name)).parameters)
        if rule.target in (Target.OWNED, Target.OWNED_OR_DELETED):
            assert parameters[1] == "memory_id", name
        if rule.target is Target.TEAM:
            assert "team" in parameters and "scope" not in parameters, name
        if rule.target in (Target.SCOPE, Target.OWNED, Target.OWNED_OR_DELETED):
            assert "scope" in parameters, name
        assert ("actor" in parameters) == rule.acts, name


def test_a_derived_method_refuses_an_actor_or_a_team_of_the_callers_own() -> None:
    strata = memory_strata()
    guarded = strata.as_principal(Principal("p", Role.ADMIN, Scope(team="a"), "token"))
    with pytest.raises(TypeError, match="actor"):
        guarded.remember("I like tea", actor=guarded.actor)
    with pytest.raises(TypeError, match="team"):
        guarded.run_tiers(team="b")
    [memory_id] = guarded.remember("I like tea", raw=True).memory_ids
    assert guarded.get(memory_id).scope.team == "a"
    strata.close()
