"""Schemathesis against the app's own OpenAPI schema, at a size CI can afford (~30 s).

Two runs: examples, fuzzing and stateful over every operation; the coverage phase (which
alone sends ~1,800 requests over the whole API) over the bulk routes. The big run, every
phase over everything: ``scripts/api_fuzz.py`` (numbers in docs/api.md).
"""

from __future__ import annotations

import pytest

from tests.api.fuzzing import FuzzReport, run

pytestmark = pytest.mark.filterwarnings("ignore")


def assert_clean(report: FuzzReport) -> None:
    summary = report.to_dict()
    assert report.requests > 0 and report.errors == [], summary
    assert report.server_errors == 0, summary
    assert report.schema_violations == 0, summary
    assert not report.failures, summary  # every other check passes too


def test_every_operation_fuzzed_and_walked_statefully() -> None:
    report = run(6, seed=7, phases=("examples", "fuzzing", "stateful"))
    assert {"fuzzing", "stateful"} <= set(report.by_phase)
    assert_clean(report)


def test_bulk_routes_under_the_coverage_phase() -> None:
    report = run(6, seed=7, phases=("coverage",), path_regex=r"^/v1/(forget|modify|import)$")
    assert_clean(report)
