"""The size of the MCP tool definitions a model receives every turn, per profile:
``PYTHONPATH=src python scripts/mcp_tool_tokens.py [PROFILE ...]`` (default: default, all).
Characters of the ``tools/list`` JSON and ≈ tokens at 4 characters a token."""

from __future__ import annotations

import json
import sys
import tempfile

import anyio
from mcp import Client

from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata
from strata_recall.mcp.server import Caller, build_server, fixed_caller


def measure(strata: Strata, profile: str) -> tuple[int, int]:
    server = build_server(strata, fixed_caller(Caller()), profiles=profile)

    async def main() -> tuple[int, int]:
        async with Client(server) as client:
            tools = (await client.list_tools()).tools
            text = json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True)
                               for t in tools])
            return len(tools), len(text)

    return anyio.run(main)


def main(profiles: list[str]) -> None:
    with tempfile.TemporaryDirectory() as home, Strata.open(
            home, embedder=HashingEmbedder(), embedded_worker=False) as strata:
        for profile in profiles:
            tools, chars = measure(strata, profile)
            print(f"{profile}: {tools} tools, {chars} characters, ≈ {chars // 4} tokens")


if __name__ == "__main__":
    main(sys.argv[1:] or ["default", "all"])
