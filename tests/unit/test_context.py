from datetime import UTC, datetime

from strata.domain.context import PREAMBLE, build_context
from strata.domain.models import Lifecycle, Memory, MemoryType, Scope
from strata.domain.text import content_hash

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def mem(i: int, content: str, type: MemoryType = MemoryType.SEMANTIC, **kw: object) -> Memory:
    scope = Scope("t", agent="kyra")
    return Memory(id=f"m{i}", scope=scope, type=type, content=content,
                  content_hash=content_hash(content), created_at=T0, updated_at=T0, **kw)  # type: ignore[arg-type]


def test_sections_group_by_type_and_mark_disputed() -> None:
    ranked = [
        mem(1, "User prefers Python", lifecycle=Lifecycle.DISPUTED),
        mem(2, "I am Kyra", MemoryType.IDENTITY),
        mem(3, "Shipped v2", MemoryType.EPISODIC, valid_from=datetime(2026, 2, 9, tzinfo=UTC)),
    ]
    context = build_context(ranked, 500)
    lines = context.text.splitlines()
    assert lines[0] == PREAMBLE
    assert lines.index("## Identity") < lines.index("## What you know") < lines.index("## Events")
    assert "- User prefers Python [DISPUTED]" in lines
    assert "- Shipped v2 (2026-02-09)" in lines
    assert context.memory_ids == ("m1", "m2", "m3")  # in rank order
    assert not context.truncated


def test_budget_trims_by_rank_but_never_identity_and_pinned_first() -> None:
    filler = [mem(i, f"fact number {i} " + "x" * 60) for i in range(10)]
    identity = mem(99, "I am Kyra, a research assistant " + "y" * 200, MemoryType.IDENTITY)
    pinned = mem(50, "Never deploy on Fridays", pinned=True)
    context = build_context([*filler, pinned, identity], budget_tokens=60)
    assert "m99" in context.memory_ids  # identity survives a budget it alone exceeds
    assert "m50" not in context.memory_ids or context.memory_ids.index("m50") >= 0
    context = build_context([*filler, pinned], budget_tokens=40)
    assert context.memory_ids[0] in {"m0", "m50"} and "m50" in context.memory_ids
    assert context.truncated and context.tokens <= 40


def test_empty_selection_gives_empty_context() -> None:
    context = build_context([], 100)
    assert context.text == "" and context.memory_ids == () and context.tokens == 0
