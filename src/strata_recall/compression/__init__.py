"""Compression and representation levels ([001] A and B), the service half.

- ``levels``: ``Levels``, compress one memory now, runs over many (inline or as jobs), promote
  and pin; the one write path for new versions of a memory.
- ``hammer``: ``CompressionHammer``, candidates, scoring and committing batches; the
  ``compress`` job's handler.
- ``escalation``: serving a memory at a level and escalating to its raw evidence (read only).

The pure rules are in ``strata_recall.domain.compression``.
"""
