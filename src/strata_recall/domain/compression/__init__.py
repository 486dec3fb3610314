"""Compression and representation levels ([001] A and B), the pure half.

- ``representations``: the levels R1..R5, a memory's versions and their rule-based derivation.
- ``hammer_rules``: which memories to compress and which version recall should inject.
- ``escalation_rules``: the retrieval ladder, which level to serve and what "more" means.

The service half (store reads and writes, jobs) is ``strata_recall.compression``.
"""
