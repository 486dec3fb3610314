"""A schemathesis run against the app's own OpenAPI schema, in process (ASGI), every phase.

Used by ``tests/api/test_api_schemathesis.py`` (small, for CI) and ``scripts/api_fuzz.py``
(the big run). The app runs in token mode with an admin token, so authentication is checked
too (``ignored_auth``: a wrong token must be refused).

``positive_data_acceptance`` ("a schema-valid request is accepted") also allows 404, 409, 422
and 428: some refusals are business rules no JSON Schema can state (an id that does not exist,
a stale ``if_version``, a patch that changes nothing, a cursor or preview token that was not
issued by the server, an identity memory without an agent). Everything the schema *can* say
it does (patterns for blank names and texts, enums, bounds, one-of bodies), so schema-valid
input that is refused for shape reasons still fails the run.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import schemathesis
from schemathesis.config import SchemathesisConfig
from schemathesis.engine import events, from_schema

from strata_recall.api.app import create_app
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata

#: Checks that are about the server honouring its own schema.
SCHEMA_CHECKS = frozenset({
    "status_code_conformance", "content_type_conformance", "response_schema_conformance",
    "response_headers_conformance",
})


@schemathesis.serializer("application/x-ndjson")
def _ndjson(ctx: Any, value: Any) -> bytes:
    """Import bodies: a generated string is sent as it is; anything else as one JSON line."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    return (json.dumps(value) + "\n").encode()


@dataclass
class FuzzReport:
    requests: int = 0
    seconds: float = 0.0
    by_phase: Counter[str] = field(default_factory=Counter)
    by_status: Counter[int] = field(default_factory=Counter)
    failures: Counter[tuple[str, str]] = field(default_factory=Counter)  # (check, operation)
    errors: list[str] = field(default_factory=list)
    examples: dict[str, str] = field(default_factory=dict)  # one failing exchange per check

    @property
    def server_errors(self) -> int:
        return sum(n for status, n in self.by_status.items() if status >= 500)

    @property
    def schema_violations(self) -> int:
        return sum(n for (check, _), n in self.failures.items() if check in SCHEMA_CHECKS)

    def to_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests, "seconds": round(self.seconds, 1),
            "server_errors": self.server_errors, "schema_violations": self.schema_violations,
            "by_phase": dict(self.by_phase), "by_status": dict(sorted(self.by_status.items())),
            "failed_checks": [{"check": c, "operation": o, "count": n}
                              for (c, o), n in self.failures.most_common()],
            "errors": self.errors,
            "examples": self.examples,
        }


PHASES = ("examples", "coverage", "fuzzing", "stateful")


def config(max_examples: int, seed: int, phases: tuple[str, ...] = PHASES) -> SchemathesisConfig:
    return SchemathesisConfig.from_dict({
        "seed": seed,
        "phases": {name: {"enabled": name in phases} for name in PHASES},
        "generation": {"max-examples": max_examples},
        "checks": {
            "enabled": True,
            # A soft-deleted memory keeps its history readable (the audit trail, and what
            # recover restores from): GET .../history after DELETE answering 200 is the design.
            "use_after_free": {"enabled": False},
            "positive_data_acceptance": {
                "expected-statuses": ["2xx", "401", "403", "404", "409", "422", "428"],
            },
            # A generated body over the size limit is refused with 413 before validation:
            # a rejection of negative data like any 4xx.
            "negative_data_rejection": {
                "expected-statuses": ["400", "401", "403", "404", "406", "409", "413", "422",
                                      "428"],
            },
        },
    })


def run(max_examples: int, *, seed: int = 1, phases: tuple[str, ...] = PHASES,
        path_regex: str | None = None, home: Path | None = None) -> FuzzReport:
    """Fuzz a fresh store (hashing embedder) through the whole API (or the paths matching
    ``path_regex``)."""
    with tempfile.TemporaryDirectory() as tmp:
        strata = Strata.open(home or Path(tmp), embedder=HashingEmbedder(),
                             auth_mode="token", mutation_burst=1_000_000,
                             write_budget_requests=1_000_000,
                             write_budget_chars=1_000_000_000)
        try:
            _, secret = strata.create_token("admin", team="default")
            app = create_app(strata)
            schema = schemathesis.openapi.from_asgi(
                "/openapi.json", app, config=config(max_examples, seed, phases),
                headers={"Authorization": f"Bearer {secret}"},
            )
            schema.config.update(headers={"Authorization": f"Bearer {secret}"})
            if path_regex is not None:
                schema = schema.include(path_regex=path_regex)
            return _collect(from_schema(schema).execute())
        finally:
            strata.close()


def _collect(stream: Any) -> FuzzReport:
    report = FuzzReport()
    started = time.perf_counter()
    for event in stream:
        if isinstance(event, events.ScenarioFinished):
            _count(report, event)
        elif isinstance(event, events.NonFatalError | events.FatalError):
            message = str(getattr(event, "info", event)).splitlines()[0][:300]
            if message not in report.errors:
                report.errors.append(message)
    report.seconds = time.perf_counter() - started
    return report


def _count(report: FuzzReport, event: events.ScenarioFinished) -> None:
    for interaction in event.recorder.interactions.values():
        report.requests += 1
        report.by_phase[str(event.phase)] += 1
        if interaction.response is not None:
            report.by_status[interaction.response.status_code] += 1
    for case_id, checks in event.recorder.checks.items():
        for check in checks:
            if check.status.name != "SUCCESS":
                key = (check.name, event.label or "")
                report.failures[key] += 1
                if f"{key}" not in report.examples:
                    failure = check.failure_info.failure if check.failure_info else None
                    why = f"{failure.title}: {failure.message}" if failure else ""
                    report.examples[f"{key}"] = f"{why}\n{_exchange(event, case_id)}"


def _exchange(event: events.ScenarioFinished, case_id: str) -> str:
    interaction = event.recorder.interactions.get(case_id)
    if interaction is None:
        return "(no interaction recorded)"
    request, response = interaction.request, interaction.response
    sent = f"{request.method} {request.uri} {request.headers} {(request.body or b'')[:300]!r}"
    if response is None:
        return sent
    return (f"{sent} -> {response.status_code} {response.headers.get('content-type')} "
            f"{(response.content or b'')[:300]!r}")
