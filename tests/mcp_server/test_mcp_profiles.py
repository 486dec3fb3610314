"""Tool profiles: a lean default a model pays for on every turn, opt-in profiles for the
rest, user-facing types only, and unknown arguments refused (official client, in process)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from strata_recall.domain.models import Scope
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.errors import InvalidInput
from strata_recall.facade import Strata
from strata_recall.mcp.profiles import DEFAULT, HOOKS, MODERATION
from strata_recall.mcp.server import TOOLS, Caller, build_server, fixed_caller

ALICE = Scope(user="alice")


@pytest.fixture
def strata(tmp_path: Path) -> Any:
    with Strata.open(tmp_path, embedder=HashingEmbedder()) as opened:
        yield opened


def listed(strata: Strata, profiles: Any = None) -> list[Any]:
    server = build_server(strata, fixed_caller(Caller(scope=ALICE)), profiles=profiles)

    async def main() -> list[Any]:
        async with Client(server) as client:
            return list((await client.list_tools()).tools)

    return anyio.run(main)


def definition_tokens(tools: list[Any]) -> int:
    """What the definitions cost a model per turn, at ~4 characters a token."""
    text = json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True)
                       for t in tools])
    return len(text) // 4


def test_the_default_profile_is_six_tools_under_two_thousand_tokens(strata: Strata) -> None:
    tools = listed(strata)
    assert [t.name for t in tools] == list(DEFAULT)
    assert len(tools) <= 6
    assert definition_tokens(tools) < 2_000
    assert definition_tokens(listed(strata, "all")) > 3 * definition_tokens(tools)


def test_profiles_add_to_the_default_and_all_serves_every_tool(strata: Strata) -> None:
    hooks = {t.name for t in listed(strata, ["hooks"])}
    assert hooks == set(DEFAULT) | set(HOOKS)
    both = {t.name for t in listed(strata, "hooks,moderation")}
    assert both == set(DEFAULT) | set(HOOKS) | set(MODERATION)
    assert [t.name for t in listed(strata, "all")] == [name for name, _ in TOOLS]
    with pytest.raises(InvalidInput, match="unknown MCP profile"):
        listed(strata, "everything")


def test_the_setting_chooses_the_profiles(tmp_path: Path) -> None:
    with Strata.open(tmp_path, embedder=HashingEmbedder(), mcp_profile="moderation") as opened:
        assert "memory_review_list" in {t.name for t in listed(opened)}


def test_the_type_enum_shows_only_user_facing_types(strata: Strata) -> None:
    store = next(t for t in listed(strata) if t.name == "memory_store")
    schema = store.input_schema["properties"]["type"]
    enum = next(option["enum"] for option in schema["anyOf"] if "enum" in option)
    assert enum == ["semantic", "episodic", "procedural", "user_profile", "identity"]
    assert store.input_schema["additionalProperties"] is False


def test_unknown_arguments_are_refused_and_nothing_is_written(strata: Strata) -> None:
    server = build_server(strata, fixed_caller(Caller(scope=ALICE)))

    async def main() -> Any:
        async with Client(server) as client:
            return await client.call_tool("memory_store", {"content": "Bob likes tea.",
                                                           "scope": {"user": "bob"}})

    result = anyio.run(main)
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "unknown argument 'scope'" in text and "this tool takes content, type" in text
    assert strata.list(scope=ALICE).items == ()
    assert strata.list(scope={"user": "bob"}).items == ()
