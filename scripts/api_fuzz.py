"""Fuzz the HTTP API with schemathesis, every phase, in process; print the numbers as JSON.

    PYTHONPATH=src python scripts/api_fuzz.py --max-examples 50 --seed 1

Exit status 1 if any request got a 5xx or any response broke the schema. The harness is
``tests/api/fuzzing.py`` (the test suite runs a small version of the same thing).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.api.fuzzing import PHASES, run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-examples", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--phases", default=",".join(PHASES),
                        help=f"comma-separated, from {', '.join(PHASES)}")
    args = parser.parse_args()
    report = run(args.max_examples, seed=args.seed, phases=tuple(args.phases.split(",")))
    print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    return 1 if report.server_errors or report.schema_violations else 0


if __name__ == "__main__":
    sys.exit(main())
