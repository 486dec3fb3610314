"""Cost per sentence of the rule extractor over the sentences of the English tests.

Run: PYTHONPATH=src python scripts/extraction_cost.py
"""

import statistics
import sys
import time
import timeit

sys.path.insert(0, "tests/unit")
import test_english_extraction as t

from strata_recall.providers.rules import extract_facts

texts = [x for x, _ in t.PRESENT + t.ATTRIBUTES + t.PEOPLE + t.PAST + t.NEGATION + t.CHANGE
         + t.CORRECTIONS + t.SEVERAL + t.LOOK_ALIKES] + t.CHATTER
for x in texts:
    extract_facts(x)
cpu = [timeit.Timer(lambda x=x: extract_facts(x), timer=time.process_time).timeit(50) / 50 * 1e6
       for x in texts]
wall = [timeit.timeit(lambda x=x: extract_facts(x), number=50) / 50 * 1e6 for x in texts]
print(f"{len(texts)} sentences: CPU mean {statistics.mean(cpu):.0f} us, p95 "
      f"{sorted(cpu)[int(.95 * len(cpu))]:.0f} us, max {max(cpu):.0f} us; wall mean "
      f"{statistics.mean(wall):.0f} us")
