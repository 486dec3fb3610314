"""The two clients are derived from one table (the functions of ``client/_core.py``): they
offer the same operations, each with the core function's signature."""

from __future__ import annotations

import inspect

from strata_recall.client import AsyncStrataClient, StrataClient, _core

CLOSING = {"close", "aclose"}


def operations(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")} - CLOSING


def test_the_sync_and_async_clients_offer_the_same_operations() -> None:
    assert operations(StrataClient) == operations(AsyncStrataClient)
    assert len(operations(StrataClient)) >= 30


def test_a_derived_operation_takes_its_core_functions_arguments() -> None:
    client = StrataClient("http://strata.invalid")
    try:
        for name in operations(StrataClient) - {"get", "export", "state_at"}:
            build = getattr(_core, name)
            assert vars(StrataClient)[name].build is build, name
            assert vars(AsyncStrataClient)[name].build is build, name
            assert inspect.signature(getattr(client, name)) == inspect.signature(build), name
    finally:
        client.close()
