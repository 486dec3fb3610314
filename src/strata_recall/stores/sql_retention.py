"""SQL of the maintenance sweep and the retention purge, shared by SQLite and Postgres.

Each adapter runs these inside its own transaction and adds what only it has (SQLite: the
``embeddings`` table and the in-process vector index; Postgres: ``memory_terms`` and
``text_stats``). Graph links are removed with ``GraphSQL.relink`` before the row they point at.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from strata_recall.stores import sql
from strata_recall.stores.sql_graph import Connection

HORIZON_KEY = "history_horizon"
POLICY_KEY = "retention_policy"


@dataclass(frozen=True)
class RetentionSQL:
    dialect: sql.Dialect
    memory_columns: str

    @cached_property
    def statements(self) -> dict[str, str]:
        p = self.dialect.mark
        return {
            "scan": f"""SELECT {self.memory_columns} FROM memories
                        WHERE lifecycle <> 'deleted' AND id > {p} ORDER BY id LIMIT {p}""",
            "due_tombstones": f"""SELECT id, team FROM memories
                WHERE lifecycle = 'deleted' AND pinned = {p} AND deleted_at < {p}
                ORDER BY deleted_at, id LIMIT {p}""",
            "due_team_tombstones": f"""SELECT id, team FROM memories
                WHERE team = {p} AND lifecycle = 'deleted' AND pinned = {p} AND deleted_at < {p}
                ORDER BY deleted_at, id LIMIT {p}""",
            # A purged memory's representation versions go with it (they describe it only).
            "delete_versions": f"DELETE FROM memory_versions WHERE memory_id = {p}",
            "delete_memory": f"DELETE FROM memories WHERE id = {p}",
            # Every row of a pinned memory stays. So does, per memory that still exists, its
            # newest row before the cutoff: it is the memory's state at every time from the
            # cutoff to its next row, what point-in-time reconstruction after the horizon
            # starts from. (A purged tombstone is gone from reconstruction altogether.)
            "due_history": f"""SELECT h.id FROM history h WHERE h.ts < {p}
                AND NOT EXISTS (
                    SELECT 1 FROM memories m WHERE m.id = h.memory_id AND m.pinned = {p})
                AND NOT (
                    h.rowid = (
                        SELECT h2.rowid FROM history h2
                        WHERE h2.memory_id = h.memory_id AND h2.ts < {p}
                        ORDER BY h2.ts DESC, h2.rowid DESC LIMIT 1)
                    AND EXISTS (SELECT 1 FROM memories m WHERE m.id = h.memory_id))
                ORDER BY h.ts, h.id LIMIT {p}""",
            "delete_history": f"DELETE FROM history WHERE id = {p}",
            "get_horizon": f"SELECT value FROM store_meta WHERE key = '{HORIZON_KEY}'",
            "put_horizon": f"""INSERT INTO store_meta (key, value) VALUES ('{HORIZON_KEY}', {p})
                ON CONFLICT (key) DO UPDATE SET value = excluded.value""",
            "get_policy": f"SELECT value FROM store_meta WHERE key = '{POLICY_KEY}'",
            "put_policy": f"""INSERT INTO store_meta (key, value) VALUES ('{POLICY_KEY}', {p})
                ON CONFLICT (key) DO UPDATE SET value = excluded.value""",
        }

    def scan(self, conn: Connection, after_id: str | None, limit: int) -> list[Any]:
        return list(conn.execute(self.statements["scan"], (after_id or "", limit)).fetchall())

    def due_tombstones(self, conn: Connection, before: datetime, limit: int,
                       team: str | None = None) -> list[tuple[str, str]]:
        d = self.dialect
        params = (d.flag(False), d.time(before), limit)
        rows = conn.execute(self.statements["due_tombstones"], params).fetchall() if (
            team is None) else conn.execute(self.statements["due_team_tombstones"],
                                            (team, *params)).fetchall()
        return [(row[0], row[1]) for row in rows]

    def due_history(self, conn: Connection, before: datetime, limit: int) -> list[str]:
        d = self.dialect
        cutoff = d.time(before)
        rows = conn.execute(self.statements["due_history"],
                            (cutoff, d.flag(True), cutoff, limit)).fetchall()
        return [row[0] for row in rows]

    def delete_history(self, conn: Connection, ids: list[str], before: datetime) -> None:
        for row_id in ids:
            conn.execute(self.statements["delete_history"], (row_id,))
        if ids:
            known = self.horizon(conn)
            conn.execute(self.statements["put_horizon"],
                         ((max(known, before) if known else before).isoformat(),))

    def policy(self, conn: Connection) -> dict[str, Any] | None:
        row = conn.execute(self.statements["get_policy"]).fetchone()
        return dict(json.loads(row[0])) if row else None

    def put_policy(self, conn: Connection, policy: dict[str, Any]) -> None:
        conn.execute(self.statements["put_policy"], (json.dumps(policy, sort_keys=True),))

    def horizon(self, conn: Connection) -> datetime | None:
        row = conn.execute(self.statements["get_horizon"]).fetchone()
        return datetime.fromisoformat(row[0]) if row else None
