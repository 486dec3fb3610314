"""Cost of secret detection per remembered text: ``find_secrets`` on 1,000-character texts
(ordinary prose, and prose holding a password and an AWS key), CPU time per call, and the
library's one-off import on first use.

Run: PYTHONPATH=src python scripts/secrets_cost.py
"""

import random
import statistics
import time

from strata_recall.domain import secrets

WORDS = ("we moved the deploy to friday because the staging database was slow and Anna "
         "said the new laptop works well with two monitors while Berlin stays rainy and the "
         "team prefers short meetings after lunch on 2026-03-14 at 14:30 in room 4.12").split()


def prose(seed: int, size: int = 1000) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(size // 3))[:size]


def with_secrets(text: str) -> str:
    tail = " my password is Kitchen-42-Blue and the key AKIAIOSFODNN7EXAMPLE"
    return text[: len(text) - len(tail)] + tail


def cpu_us(texts: list[str], rounds: int = 20) -> list[float]:
    per_call = []
    for text in texts:
        started = time.process_time()
        for _ in range(rounds):
            secrets.find_secrets(text)
        per_call.append((time.process_time() - started) / rounds * 1e6)
    return per_call


def main() -> None:
    started = time.perf_counter()
    secrets.find_secrets("warm up: token=abcdefgh")
    print(f"first call (imports detect-secrets): {(time.perf_counter() - started) * 1e3:.0f} ms")
    for label, texts in (("1k chars of prose", [prose(i) for i in range(50)]),
                         ("1k chars with 2 secrets", [with_secrets(prose(i)) for i in range(50)])):
        costs = sorted(cpu_us(texts))
        print(f"{label}: CPU mean {statistics.mean(costs):.0f} us, median "
              f"{statistics.median(costs):.0f} us, p95 {costs[int(.95 * len(costs))]:.0f} us")


if __name__ == "__main__":
    main()
