"""Integer-coded scope, type and lifecycle columns of an in-process index's rows, and the
visibility rule of ``strata_recall.domain.visibility`` evaluated over them as a mask.

Shared by the vector index and the lexical index: both hold one row per memory and must
never return a row its viewer may not see ("in the query, never after it").
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
import numpy.typing as npt

from strata_recall.domain.models import Lifecycle, MemoryType, Scope

TYPE_CODES = {t: i for i, t in enumerate(MemoryType)}
LIFECYCLE_CODES = {lc: i for i, lc in enumerate(Lifecycle)}
#: The same codes by the stored strings (a bulk load reads strings; no enum per row).
TYPE_CODES_BY_VALUE = {t.value: i for t, i in TYPE_CODES.items()}
LIFECYCLE_CODES_BY_VALUE = {lc.value: i for lc, i in LIFECYCLE_CODES.items()}
#: The lifecycle code of a row no search may match again (a purged memory).
DROPPED = -1
#: The coded columns, in the order of a row tuple after its id.
SCOPE_NAMES = ("team", "user", "agent", "run")
COLUMN_NAMES = (*SCOPE_NAMES, "type", "lifecycle")
#: Entries of ``among``'s lookup table: every code, and a last one for ``DROPPED``.
_CODE_TABLE = max(len(TYPE_CODES), len(LIFECYCLE_CODES)) + 1
_SHARED = TYPE_CODES[MemoryType.SHARED]
_USER_PROFILE = TYPE_CODES[MemoryType.USER_PROFILE]

#: (team, user, agent, run, type, lifecycle) of one row, as stored.
ColumnValues = tuple[str, str | None, str | None, str | None, str, str]
Columns = dict[str, npt.NDArray[np.int32]]


class Codes:
    """Interns strings to small ints; 0 means "not set"."""

    def __init__(self, values: Sequence[str] = ()) -> None:
        self._codes: dict[str, int] = {value: i + 1 for i, value in enumerate(values)}

    def values(self) -> list[str]:
        """The interned strings in code order (code i + 1 is ``values()[i]``)."""
        return sorted(self._codes, key=self._codes.__getitem__)

    def code(self, value: str | None) -> int:
        if value is None:
            return 0
        found = self._codes.get(value)
        if found is None:
            found = len(self._codes) + 1
            self._codes[value] = found
        return found

    def lookup(self, value: str | None) -> int:
        """The code of a viewer's value; -1 (matches nothing) when never seen."""
        if value is None:
            return 0
        return self._codes.get(value, -1)


def empty_columns(capacity: int) -> Columns:
    return {name: np.zeros(capacity, dtype=np.int32) for name in COLUMN_NAMES}


def new_codes() -> dict[str, Codes]:
    return {name: Codes() for name in SCOPE_NAMES}


def set_columns(columns: Columns, interned: dict[str, Codes],
                positions: npt.NDArray[np.int64], values: Sequence[ColumnValues]) -> None:
    """Write the coded ``values`` of rows at ``positions`` (one tuple per position)."""
    teams, users, agents, runs, types, lifecycles = zip(*values, strict=True)
    for name, column in (("team", teams), ("user", users), ("agent", agents), ("run", runs)):
        code = interned[name].code
        codes = {value: code(value) for value in set(column)}  # few distinct values
        columns[name][positions] = list(map(codes.__getitem__, column))
    columns["type"][positions] = [TYPE_CODES_BY_VALUE[t] for t in types]
    columns["lifecycle"][positions] = [LIFECYCLE_CODES_BY_VALUE[lc] for lc in lifecycles]


def grown(columns: Columns, size: int, capacity: int) -> Columns:
    """``columns`` copied into arrays of ``capacity`` rows (the first ``size`` kept)."""
    bigger = empty_columns(capacity)
    for name, column in columns.items():
        bigger[name][:size] = column[:size]
    return bigger


def visibility_mask(
    columns: Columns, interned: dict[str, Codes], n: int, viewer: Scope,
    lifecycles: Collection[Lifecycle], types: Collection[MemoryType] = (),
) -> npt.NDArray[np.bool_]:
    """Which of the first ``n`` rows ``viewer`` sees among ``lifecycles`` (and ``types``)."""
    c = {name: col[:n] for name, col in columns.items()}
    v = {name: interned[name].lookup(getattr(viewer, name)) for name in SCOPE_NAMES}
    personal = (c["run"] == 0) | (c["run"] == v["run"])
    personal &= (c["agent"] == 0) | (c["agent"] == v["agent"])
    own_user = (c["user"] == 0) | (c["user"] == v["user"])
    mask = (c["team"] == v["team"]) & (
        (c["type"] == _SHARED) | (own_user & ((c["type"] == _USER_PROFILE) | personal))
    )
    mask &= among(c["lifecycle"], [LIFECYCLE_CODES[lc] for lc in lifecycles])
    if types:
        mask &= among(c["type"], [TYPE_CODES[t] for t in types])
    return np.asarray(mask, dtype=np.bool_)


def among(column: npt.NDArray[np.int32], codes: Collection[int]) -> npt.NDArray[np.bool_]:
    """Which rows of a type or lifecycle ``column`` hold one of ``codes`` (a lookup table:
    ``np.isin`` sorts, several times slower). ``DROPPED`` (-1) reads the table's last entry,
    which no code sets."""
    table = np.zeros(_CODE_TABLE, dtype=np.bool_)
    table[list(codes)] = True
    return table[column]
