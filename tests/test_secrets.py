"""Secrets canary (issue 14, decision 0020), through the public facade on every store adapter:
a secret of each kind, planted by remember (a text and a conversation) and by the compaction
shield, appears in no derived fact, episode, shield fact or summary, representation level,
graph entity, search text, default export or default recall; the raw event still holds it and
is marked, and so is the verbatim memory; ``include_secrets`` / ``reveal_secrets`` show it."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from strata_recall.domain.secrets import SECRETS_KEY
from strata_recall.facade import Strata
from strata_recall.settings import load_settings
from strata_recall.stores.memory import InMemoryStore
from tests.conftest import EMBEDDER
from tests.unit.test_redaction import SAMPLES

SCOPE = {"team": "canary", "user": "ann"}
#: (kind as the detector names it, text, the secret that must not leak)
PLANTED = [(name.lower(), text, secret) for name, text, secret in SAMPLES]


def plant(strata: Strata) -> dict[str, list[str]]:
    """Every sample remembered alone, as one conversation, and through the shield; the
    memory ids by how they were planted."""
    alone = [strata.remember(f"Please remember this. {text}", scope=SCOPE, mode="sync",
                             conversation_id=f"alone-{i}").memory_ids[0]
             for i, (_, text, _) in enumerate(PLANTED)]
    talk = strata.remember(messages=[
        {"role": "user", "author": "Ann", "content": f"Ann's note: {text}"}
        for _, text, _ in PLANTED], scope=SCOPE, mode="sync", conversation_id="talk")
    shielded = strata.shield([{"role": "user", "content": f"For the record, {text}"}
                              for _, text, _ in PLANTED], scope=SCOPE, conversation_id="shield")
    for memory_id in alone:
        strata.compress(memory_id, reason="canary", scope=SCOPE)
    return {"alone": alone, "talk": list(talk.memory_ids),
            "shield": [f.memory_id for f in shielded.facts] + [shielded.summary_id or ""]}


def leaked(texts: Iterable[str]) -> list[str]:
    """The planted secrets found in ``texts`` (case-insensitively: search texts are folded)."""
    blob = "\n".join(texts).lower()
    return [secret for _, _, secret in PLANTED if secret.lower() in blob]


def dumped(records: Iterable[Mapping[str, Any]]) -> list[str]:
    return [json.dumps(r, ensure_ascii=False) for r in records]


def verbatim(record: Mapping[str, Any]) -> bool:
    """A memory that is a raw turn as remembered (it may hold a secret, marked)."""
    return bool(record["provenance"]["extractor"] == "verbatim")


def test_secrets_stored_verbatim_are_masked_in_everything_derived(strata: Strata) -> None:
    plant(strata)
    everything = list(strata.export(include_secrets=True))
    memories = [r for r in everything if r["record"] == "memory"]
    derived = [r for r in memories if not verbatim(r)]
    assert {r["provenance"]["extractor"] for r in derived} >= {"episode", "summary"}
    assert leaked(r["content"] for r in derived) == []
    assert leaked(r["search_text"] for r in memories) == []
    versions = [r for r in everything if r["record"] == "version"]
    assert versions and leaked(r["content"] for r in versions) == []
    graph = [r for r in everything if r["record"] == "graph"]
    assert leaked(dumped(graph)) == []
    entities = strata.graph_entities(scope=SCOPE, limit=200)
    assert leaked(e.name for e in entities) == []


def test_the_raw_event_and_the_verbatim_memory_keep_the_secret_and_are_marked(
    strata: Strata,
) -> None:
    planted = plant(strata)
    for (kind, _, secret), memory_id in zip(PLANTED, planted["alone"], strict=True):
        memory = strata.get(memory_id, scope=SCOPE)
        assert secret in memory.content and kind in memory.meta[SECRETS_KEY]
        # the conversation that says it again ("Ann's note: my key is …") folds into it as
        # more evidence: every event behind it keeps the secret, marked
        events = strata.evidence(memory_id, scope=SCOPE)
        assert events and all(secret in e.text and kind in e.meta[SECRETS_KEY] for e in events)


def test_the_default_export_masks_secrets_and_include_secrets_exports_them(
    strata: Strata,
) -> None:
    plant(strata)
    masked = dumped(strata.export())
    assert leaked(masked) == []
    assert "[secret:aws_access_key]" in "\n".join(masked)
    assert sorted(leaked(dumped(strata.export(include_secrets=True)))) == sorted(
        secret for _, _, secret in PLANTED)


def test_recall_masks_secrets_by_default_and_reveals_them_when_asked(strata: Strata) -> None:
    plant(strata)
    for kind, text, secret in PLANTED:
        found = strata.recall(text, scope=SCOPE, k=20)
        assert found.hits and leaked([found.context]) == []
        assert leaked(h.memory.content for h in found.hits) == []
        assert f"[secret:{kind}]" in found.context
        shown = strata.recall(text, scope=SCOPE, k=20, reveal_secrets=True)
        assert secret in shown.context


def test_recall_masks_the_raw_events_served_by_escalation(strata: Strata) -> None:
    plant(strata)
    for _, text, _ in PLANTED:
        found = strata.recall(text, scope=SCOPE, k=5, reroll=2)  # R5: the raw events
        assert found.used_level == "R5" and leaked([found.context]) == []


def test_a_modified_memory_is_marked_by_its_new_content(strata: Strata) -> None:
    memory_id = strata.remember("The staging box is db-7", scope=SCOPE).memory_ids[0]
    changed = strata.modify(memory_id, content="The staging password is Tr0ub4dor&3x",
                            reason="canary", scope=SCOPE)
    assert changed.meta[SECRETS_KEY] == ["password"]
    assert leaked([strata.recall("staging password", scope=SCOPE).context]) == []
    cleared = strata.modify(memory_id, content="The staging box is db-8", reason="canary",
                            scope=SCOPE)
    assert SECRETS_KEY not in cleared.meta


@pytest.mark.parametrize("entity", ["AKIAIOSFODNN7EXAMPLE", "ghp_" + "aB3" * 12])
def test_a_secret_given_as_an_entity_never_becomes_a_graph_entity(
    strata: Strata, entity: str
) -> None:
    memory_id = strata.remember("Deploy notes for Kestrel", scope=SCOPE, mode="raw").memory_ids[0]
    facts = strata.index_graph(memory_id, [entity, "Kestrel"], [("Kestrel", "uses", entity)],
                               scope=SCOPE)
    assert [e.name for e in facts.entities] == ["Kestrel"] and facts.relations == ()


def test_a_default_export_imports_without_secrets_and_an_opted_in_one_with_them(
    strata: Strata,
) -> None:
    plant(strata)
    for include, expected in ((False, []), (True, sorted(s for _, _, s in PLANTED))):
        copy = Strata(InMemoryStore(dim=EMBEDDER.dim, embedder_name=EMBEDDER.name), EMBEDDER,
                      settings=load_settings(home=Path("/nonexistent")))
        copy.import_records(list(strata.export(include_secrets=include)))
        assert sorted(leaked(dumped(copy.export(include_secrets=True)))) == expected


def test_the_session_start_context_of_agent_hooks_masks_secrets(strata: Strata) -> None:
    from strata_recall.domain.models import Scope
    from strata_recall.hooks import SessionHooks

    plant(strata)
    hooks = SessionHooks(strata)
    for start in (hooks.session_start("s1", scope=Scope.parse(SCOPE), budget_tokens=8000),
                  hooks.compaction_complete("shield", scope=Scope.parse(SCOPE))):
        assert start.context_memory_ids and leaked([start.context]) == []
