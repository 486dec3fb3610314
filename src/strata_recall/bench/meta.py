"""``strata bench meta``: the layered-meta gates of [000] chunk 18 over the fixture scenarios
in ``data/meta_scenarios.json`` — registry precedence, quota allocation, seriousness gating,
contract override and policy adherence.

Each scenario seeds a fresh in-memory store through the facade (registry entries through
``meta_backbone_add``, as an operator would), asks one ``context`` and checks what it
expects. The gates pass when every scenario passes and no policy is violated (a standing
policy, identity or pinned memory missing from a context, a gated layer present, or an
envelope that does not end with its own delimiter). The ``meta_layered`` setting is on by
default because they do (``tests/bench/test_meta_bench.py``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strata_recall.assembly import ContextResult
from strata_recall.domain.context import END
from strata_recall.domain.models import Scope
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata
from strata_recall.settings import load_settings
from strata_recall.stores.memory import InMemoryStore
from strata_recall.testing import FakeClock

DEFAULT_SCENARIOS = Path(__file__).parent / "data" / "meta_scenarios.json"
GATES = ("registry_precedence", "quota_allocation", "seriousness_gating", "contract_override",
         "policy_adherence")
SCOPE = Scope("bench", user="ana", agent="kyra")
TOLERANCE = 0.011


@dataclass(frozen=True, slots=True)
class ScenarioResult:
    name: str
    gate: str
    failures: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.failures


@dataclass(frozen=True, slots=True)
class MetaReport:
    results: tuple[ScenarioResult, ...]
    policy_violations: int
    gates: Mapping[str, bool] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(self.gates.values()) and self.policy_violations == 0

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "gates": dict(self.gates),
                "policy_violations": self.policy_violations,
                "scenarios": [{"name": r.name, "gate": r.gate, "passed": r.passed,
                               "failures": list(r.failures)} for r in self.results]}


def run_meta(path: Path = DEFAULT_SCENARIOS) -> MetaReport:
    data = json.loads(path.read_text(encoding="utf-8"))
    results, violations = [], 0
    for scenario in data["scenarios"]:
        items = data["pool"] if scenario["items"] == "pool" else scenario["items"]
        result, broken = _play(scenario, items)
        results.append(result)
        violations += broken
    gates = {gate: all(r.passed for r in results if r.gate == gate) for gate in GATES}
    return MetaReport(tuple(results), violations, gates)


def _play(scenario: Mapping[str, Any], items: list[Mapping[str, Any]]
          ) -> tuple[ScenarioResult, int]:
    strata = Strata(InMemoryStore(dim=HashingEmbedder().dim, embedder_name="hashing"),
                    HashingEmbedder(), clock=FakeClock(),
                    settings=load_settings(home=Path("/nonexistent"), graph=False))
    try:
        ids = {item["key"]: _seed(strata, item) for item in items}
        out = strata.context(scenario.get("query", "what matters now?"), scope=SCOPE,
                             situation=scenario.get("situation"),
                             meta_budget=scenario.get("meta_budget"),
                             budget_tokens=scenario.get("budget_tokens", 2000))
    finally:
        strata.close()
    failures = tuple(_check(scenario["expect"], out, ids))
    broken = _violations(out, ids, items, scenario)
    return ScenarioResult(scenario["name"], scenario["gate"], failures), broken


def _seed(strata: Strata, item: Mapping[str, Any]) -> str:
    memory_id = strata.remember(
        item["text"], scope=SCOPE, type=item["type"], tags=item.get("tags", ()),
        importance=item.get("importance"), pinned=item.get("pinned", False),
        raw=True).memory_ids[0]
    if "backbone" in item:
        layer, priority = item["backbone"]
        strata.meta_backbone_add(memory_id, layer, priority, scope=SCOPE)
    return memory_id


def _check(expect: Mapping[str, Any], out: ContextResult, ids: Mapping[str, str]
           ) -> list[str]:
    pack = out.meta_pack
    if pack is None:
        return ["no meta pack: is meta_layered off?"]
    key_of = {v: k for k, v in ids.items()}
    cited = {c.partition(":")[2] for c in out.assembled.cited}
    failures = []

    def expect_equal(name: str, got: object, want: object) -> None:
        if got != want:
            failures.append(f"{name}: expected {want}, got {got}")

    if "backbone" in expect:
        expect_equal("backbone", [key_of.get(i.id) for i in pack.backbone], expect["backbone"])
    if "mode" in expect:
        expect_equal("mode", pack.mode, expect["mode"])
    if "quotas" in expect:
        expect_equal("quotas", dict(pack.quotas), expect["quotas"])
    if "focus_counts" in expect:
        expect_equal("focus_counts", {k: len(v) for k, v in pack.focus.items()},
                     expect["focus_counts"])
    if "focus_total" in expect:
        expect_equal("focus_total", sum(len(v) for v in pack.focus.values()),
                     expect["focus_total"])
    for key in expect.get("included", ()):
        if ids[key] not in cited:
            failures.append(f"{key} not in the context")
    for key in expect.get("excluded", ()):
        if ids[key] in cited:
            failures.append(f"{key} in the context")
    if "included_any" in expect and not any(ids[k] in cited for k in expect["included_any"]):
        failures.append(f"none of {expect['included_any']} in the context")
    for layer in expect.get("layer_empty", ()):
        if pack.focus.get(layer) or any(i.layer == layer for i in pack.backbone):
            failures.append(f"layer {layer} not empty")
    for mode, weight in expect.get("blend", {}).items():
        if abs(pack.mode_blend.get(mode, 0.0) - weight) > TOLERANCE:
            failures.append(f"blend {mode}: expected {weight}, got {pack.mode_blend.get(mode)}")
    identity = {c.partition(":")[2] for c in out.assembled.layers.get("identity", ())}
    failures.extend(f"{k} not in the identity layer" for k in expect.get("in_identity", ())
                    if ids[k] not in identity)
    for layer, keys in expect.get("excluded_layers", {}).items():
        shown = {c.partition(":")[2] for c in out.assembled.layers.get(layer, ())}
        failures.extend(f"{k} in layer {layer}" for k in keys if ids[k] in shown)
    return failures


def _violations(out: ContextResult, ids: Mapping[str, str], items: list[Mapping[str, Any]],
                scenario: Mapping[str, Any]) -> int:
    """Policy violations in one context: a standing policy, identity or pinned memory
    missing; a joke when seriousness is high; an envelope not closed by its own tag."""
    cited = {c.partition(":")[2] for c in out.assembled.cited}
    always = [ids[i["key"]] for i in items
              if i["type"] in ("policy", "identity") or i.get("pinned")]
    broken = sum(1 for memory_id in always if memory_id not in cited)
    if (scenario.get("situation") or {}).get("seriousness") == "high":
        broken += sum(1 for i in items if i["type"] in ("inside_joke", "texture")
                      and ids[i["key"]] in cited)
    text = out.assembled.text
    tag = text.split("\n", 1)[0].split()[2] if text else ""
    if text and text.rsplit("\n", 1)[-1] != f"{END} {tag}":
        broken += 1
    return broken
