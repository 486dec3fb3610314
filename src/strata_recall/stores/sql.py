"""SQL fragments shared by the SQL adapters: the visibility rule and the recall filters.

Each adapter supplies a ``Dialect`` (its placeholder, how it stores tags, times and flags);
the shape of every condition lives here once, so SQLite and Postgres cannot drift apart.
Fragments are built only from constants; every value is a bound parameter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from strata_recall.domain.models import NOT_LIVE, Filters, MemoryType, Scope

#: The lifecycles that are history, not live memories, as a SQL list: the predicate of the
#: partial unique index ``memories_live_content`` (migration 0008) and every "live" query.
NOT_LIVE_SQL = "(" + ", ".join(f"'{lc.value}'" for lc in sorted(NOT_LIVE)) + ")"

#: ``strata_recall.domain.visibility.can_see`` as SQL on alias m; ``{p}`` is the placeholder.
VISIBLE = """
m.team = {p} AND (
    m.type = 'shared' OR (
        (m.user_id IS NULL OR m.user_id = {p}) AND (
            m.type = 'user_profile' OR (
                (m.run_id IS NULL OR m.run_id = {p}) AND (m.agent_id IS NULL OR m.agent_id = {p})
            )
        )
    )
)
"""


@dataclass(frozen=True, slots=True)
class Dialect:
    """What differs between the SQL adapters in the statements and rows they share."""

    mark: str  # the parameter placeholder: "?" or "%s"
    tags_any: Callable[[Sequence[str]], tuple[str, list[Any]]]  # "m has any of these tags"
    time: Callable[[datetime | None], Any]  # a datetime as the adapter stores it
    flag: Callable[[bool], Any]  # a boolean as the adapter stores it
    read_time: Callable[[Any], datetime]  # a stored datetime back
    json: Callable[[Any], Any]  # a JSON value as the adapter stores it
    read_json: Callable[[Any], Any]  # a stored JSON value back
    in_ids: Callable[[str], str]  # "column is one of the bound list"
    ids: Callable[[Sequence[str]], Any]  # a list of ids as the adapter binds it
    new_token: str  # SQL for a fresh random lease token (32 hex digits)
    for_update: str = ""  # locks the rows a read-then-write selected (Postgres)
    skip_locked: str = ""  # ... skipping rows another transaction holds (job claims)

    def marks(self, count: int) -> str:
        return ", ".join([self.mark] * count)


def visible(dialect: Dialect, viewer: Scope) -> tuple[str, list[Any]]:
    """The visibility rule of ``strata_recall.domain.visibility`` as a WHERE fragment on alias m."""
    return VISIBLE.format(p=dialect.mark), [viewer.team, viewer.user, viewer.run, viewer.agent]


def owned_query(dialect: Dialect, scope: Scope) -> tuple[str, list[Any]]:
    """One row if a memory is owned in ``scope``'s team by each dimension it names."""
    named = [(column, value) for column, value in (
        ("team", scope.team), ("user_id", scope.user), ("agent_id", scope.agent),
        ("run_id", scope.run)) if value is not None]
    where = " AND ".join(f"{column} = {dialect.mark}" for column, _ in named)
    return f"SELECT 1 FROM memories WHERE {where} LIMIT 1", [value for _, value in named]


def filtered(dialect: Dialect, filters: Filters) -> tuple[str, list[Any]]:
    """The WHERE fragment (on alias m) for ``filters``; starts with AND."""
    p = dialect.mark
    lifecycles = sorted(lc.value for lc in filters.effective_lifecycles())
    parts = [f"m.lifecycle IN ({dialect.marks(len(lifecycles))})"]
    params: list[Any] = list(lifecycles)
    if filters.types:
        parts.append(f"m.type IN ({dialect.marks(len(filters.types))})")
        params.extend(MemoryType(t).value for t in filters.types)
    if filters.tags_any:
        fragment, values = dialect.tags_any(filters.tags_any)
        parts.append(fragment)
        params.extend(values)
    _operator_filters(dialect, filters, parts, params)
    conditions = (
        (f"m.importance >= {p}", filters.min_importance),
        (f"m.importance <= {p}", filters.max_importance),
        (f"m.pinned = {p}", None if filters.pinned is None else dialect.flag(filters.pinned)),
        (f"m.conversation_id = {p}", filters.conversation_id),
        (f"m.created_at >= {p}", dialect.time(filters.created_after)),
        (f"m.created_at < {p}", dialect.time(filters.created_before)),
    )
    for fragment, value in conditions:
        if value is not None:
            parts.append(fragment)
            params.append(value)
    return " AND " + " AND ".join(parts), params


def _operator_filters(
    dialect: Dialect, filters: Filters, parts: list[str], params: list[Any]
) -> None:
    """The exclusion and all-of operators: types_not, tags_all, tags_none."""
    if filters.types_not:
        parts.append(f"m.type NOT IN ({dialect.marks(len(filters.types_not))})")
        params.extend(MemoryType(t).value for t in filters.types_not)
    for tag in dict.fromkeys(filters.tags_all):
        fragment, values = dialect.tags_any([tag])
        parts.append(fragment)
        params.extend(values)
    if filters.tags_none:
        fragment, values = dialect.tags_any(filters.tags_none)
        parts.append(f"NOT ({fragment})")
        params.extend(values)


#: ``Store.history_at``: the next memories of a team (by id) with the rowid of their latest
#: snapshot row at a time (latest ``ts``, then latest written), joined to that row. Uses the
#: ``history_memory_ts`` and ``memories_team_id`` indexes (migration 0010). ``{columns}`` is
#: the adapter's history column list on alias h.
HISTORY_AT = """
WITH page AS (
    SELECT m.id AS memory_id, (
        SELECT h.rowid FROM history h
        WHERE h.memory_id = m.id AND h.ts <= {p} AND h.after IS NOT NULL
        ORDER BY h.ts DESC, h.rowid DESC LIMIT 1
    ) AS latest
    FROM memories m WHERE m.team = {p} AND m.id > {p} ORDER BY m.id LIMIT {p}
)
SELECT page.memory_id, {columns} FROM page LEFT JOIN history h ON h.rowid = page.latest
ORDER BY page.memory_id
"""


def history_at(mark: str, history_columns: str) -> str:
    """``HISTORY_AT`` for an adapter: its placeholder and its history columns."""
    columns = ", ".join("h." + column.strip() for column in history_columns.split(","))
    return HISTORY_AT.format(p=mark, columns=columns)
