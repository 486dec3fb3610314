import pytest

from strata_recall.domain.models import MemoryType, Scope
from strata_recall.domain.visibility import can_see

KYRA = Scope("t", user="sarah", agent="kyra")


@pytest.mark.parametrize(
    ("owner", "memory_type", "visible"),
    [
        (Scope("t"), MemoryType.SEMANTIC, True),  # unscoped: team-wide
        (Scope("other"), MemoryType.SHARED, False),  # never across teams
        (Scope("t", agent="luke"), MemoryType.SHARED, True),  # shared: team-wide
        (Scope("t", agent="luke"), MemoryType.AGENT_PRIVATE, False),
        (Scope("t", agent="kyra"), MemoryType.IDENTITY, True),
        (Scope("t", user="sarah", agent="luke"), MemoryType.USER_PROFILE, True),  # across agents
        (Scope("t", user="bob"), MemoryType.USER_PROFILE, False),  # another user's profile
        (Scope("t", user="bob"), MemoryType.SEMANTIC, False),
        (Scope("t", user="sarah", run="r9"), MemoryType.EPISODIC, False),  # another run
        (Scope("t", user="sarah"), MemoryType.EPISODIC, True),
    ],
)
def test_visibility_rules(owner: Scope, memory_type: MemoryType, visible: bool) -> None:
    assert can_see(KYRA, owner, memory_type) is visible


def test_scope_key_distinguishes_missing_fields() -> None:
    assert Scope("t", user="a").key != Scope("t", agent="a").key


@pytest.mark.parametrize("bad", [{"team": ""}, {"team": "a|b"}, {"tenant": "x"}, {"user": 5}])
def test_bad_scopes_are_refused(bad: dict[str, object]) -> None:
    from strata_recall.errors import InvalidInput

    with pytest.raises(InvalidInput):
        Scope.parse(bad)
