"""The time-travel MCP tools: ``memory_history`` and ``memory_rollback`` (operators)."""

from __future__ import annotations

from typing import Any

import pytest

from strata_recall.domain.models import Scope
from strata_recall.facade import Strata
from strata_recall.mcp.server import Caller
from strata_recall.policy import Principal, Role
from tests.mcp_server.test_mcp_stdio import payload
from tests.mcp_server.test_mcp_tools import call, drive, error_code

ALICE = Scope(user="alice")


@pytest.fixture
def strata(tmp_path: Any) -> Any:
    from strata_recall.embedders.hashing import HashingEmbedder

    with Strata.open(tmp_path, embedder=HashingEmbedder(), mcp_profile="all") as opened:
        yield opened


def test_history_then_rollback(strata: Strata) -> None:
    memory_id = strata.remember("Tea: oolong", scope=ALICE, raw=True).memory_ids[0]
    strata.modify(memory_id, reason="changed", content="Tea: sencha", scope=ALICE)
    rows = payload(drive(strata, call("memory_history", memory_id=memory_id)))["items"]
    assert [(r["kind"], r["version"], r["content"]) for r in rows] == [
        ("ADD", 1, "Tea: oolong"), ("UPDATE", 2, "Tea: sencha")]
    rolled = payload(drive(strata, call("memory_rollback", memory_id=memory_id, to_version=1,
                                        reason="she still likes oolong")))
    assert rolled["content"] == "Tea: oolong" and rolled["version"] == 3
    missing = drive(strata, call("memory_rollback", memory_id=memory_id, to_version=9,
                                 reason="x"))
    assert error_code(missing) == "not_found"


def test_rollback_is_refused_to_a_writer(strata: Strata) -> None:
    memory_id = strata.remember("Tea: oolong", scope=ALICE, raw=True).memory_ids[0]
    strata.modify(memory_id, reason="changed", importance=0.9, scope=ALICE)
    writer = Caller(scope=ALICE, principal=Principal("w", Role.WRITER, Scope(user="alice"),
                                                     kind="token"))
    refused = drive(strata, call("memory_rollback", memory_id=memory_id, to_version=1,
                                 reason="x"), writer)
    assert error_code(refused) == "permission_denied"
    assert strata.get(memory_id, scope=ALICE).version == 2
