"""Differential test: random sequences of facade calls give the same observable results on
every Store adapter as on the in-memory reference (ids aside, which are mapped by position)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from strata_recall.domain.models import Filters, Memory, Scope
from strata_recall.errors import StrataError
from strata_recall.facade import Strata
from strata_recall.settings import load_settings
from strata_recall.testing import FakeClock
from tests.conftest import EMBEDDER, STORE_ADAPTERS

SCOPES = [Scope("acme"), Scope("acme", user="ana"), Scope("acme", agent="kyra"), Scope("globex")]
WORDS = ["tea", "coffee", "deploy", "friday", "ana", "porto", "budget", "cat", "rust", "sql"]

texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
scopes = st.sampled_from(SCOPES)


def _view(memory: Memory, ids: dict[str, int]) -> tuple[Any, ...]:
    """What must agree across adapters: everything but the ids and time of creation."""
    return (ids.get(memory.id), memory.content, memory.version, memory.lifecycle.value,
            memory.importance, memory.pinned, memory.tags, memory.scope.key)


class SameBehaviour(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self._tmp = TemporaryDirectory()
        self.clock = FakeClock()
        self.facades = {
            name: Strata(make(Path(self._tmp.name) / name), EMBEDDER, clock=self.clock,
                         settings=load_settings(home=Path(self._tmp.name)))
            for name, make in STORE_ADAPTERS.items()
        }
        self.ids: dict[str, list[str]] = {name: [] for name in self.facades}

    def teardown(self) -> None:
        for facade in self.facades.values():
            facade.close()
        self._tmp.cleanup()

    def _all(self, call: Callable[[Strata, str], Any]) -> dict[str, Any]:
        """Run ``call`` on every adapter; an error counts as its code, so errors must agree."""
        outcomes = {}
        for name, facade in self.facades.items():
            try:
                outcomes[name] = ("ok", call(facade, name))
            except StrataError as exc:
                outcomes[name] = ("error", exc.code)
        return outcomes

    def _index(self, name: str) -> dict[str, int]:
        return {memory_id: i for i, memory_id in enumerate(self.ids[name])}

    def _agree(self, outcomes: dict[str, Any], normalise: Callable[[str, Any], Any]) -> None:
        seen = {name: (kind, normalise(name, value) if kind == "ok" else value)
                for name, (kind, value) in outcomes.items()}
        assert len({repr(v) for v in seen.values()}) == 1, seen

    @rule(text=texts, scope=scopes, pinned=st.booleans())
    def remember(self, text: str, scope: Scope, pinned: bool) -> None:
        self.clock.advance(seconds=1)
        # raw: this compares what stores keep; the job queue has its own contract suite
        outcomes = self._all(lambda f, _: f.remember(text, scope=scope, pinned=pinned,
                                                     mode="raw"))
        for name, (kind, result) in outcomes.items():
            if kind == "ok" and not result.deduplicated[0]:
                self.ids[name].append(result.memory_ids[0])
        self._agree(outcomes, lambda name, r: (self._index(name).get(r.memory_ids[0]),
                                               r.deduplicated))

    @precondition(lambda self: self.ids["memory"])
    @rule(data=st.data(), scope=scopes, action=st.sampled_from(["modify", "forget", "recover"]))
    def change(self, data: st.DataObject, scope: Scope, action: str) -> None:
        position = data.draw(st.integers(0, len(self.ids["memory"]) - 1))
        text = data.draw(texts)
        self.clock.advance(seconds=1)

        def call(facade: Strata, name: str) -> Memory:
            memory_id = self.ids[name][position]
            if action == "modify":
                return facade.modify(memory_id, scope=scope, content=text, reason="r")
            if action == "forget":
                return facade.forget(memory_id, scope=scope, reason="r")
            return facade.recover(memory_id, scope=scope, reason="r")

        self._agree(self._all(call), lambda name, m: _view(m, self._index(name)))

    @invariant()
    def lists_and_recalls_agree(self) -> None:
        for scope in SCOPES:
            listed = self._all(lambda f, _, s=scope: f.list(scope=s, limit=500).items)
            self._agree(listed, lambda name, items: sorted(
                repr(_view(m, self._index(name))) for m in items))
            deleted = self._all(lambda f, _, s=scope: f.list(
                scope=s, limit=500, filters=Filters(include_deleted=True)).items)
            self._agree(deleted, lambda name, items: sorted(
                repr(_view(m, self._index(name))) for m in items))
            # Lexical scoring is adapter-specific (FTS5 bm25 with stemming vs a plain BM25), so
            # what must agree is which memories a recall can return, not their order.
            found = self._all(lambda f, _, s=scope: f.recall("tea deploy ana", scope=s, k=100).hits)
            self._agree(found, lambda name, hits: sorted(
                repr(_view(h.memory, self._index(name))) for h in hits))

    @invariant()
    def histories_agree(self) -> None:
        for position in range(len(self.ids["memory"])):
            rows = {
                name: ("ok", facade.store.history(self.ids[name][position]))
                for name, facade in self.facades.items()
            }
            self._agree(rows, lambda _, history: [(h.kind.value, h.reason) for h in history])


SameBehaviour.TestCase.settings = settings(
    max_examples=40, stateful_step_count=30, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_adapters_behave_the_same = SameBehaviour.TestCase
