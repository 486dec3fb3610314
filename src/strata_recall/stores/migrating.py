"""What every adapter's migration runner shares: named, ordered, checksummed SQL files.

A migration is a file ``migrations/NNNN_name.sql`` in an adapter's package; each adapter has
the same names and versions in its own dialect, and records what it applied in a
``schema_migrations`` table (version, name, checksum, applied_at). Migrations are append-only:
one whose file changed after it was applied is refused.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from strata_recall.errors import StoreError

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()

    @property
    def label(self) -> str:
        return f"{self.version:04d}_{self.name}"


def available_in(package: str) -> list[Migration]:
    """The migrations shipped in ``package``'s ``migrations`` folder, oldest first."""
    folder = resources.files(package).joinpath("migrations")
    found = []
    for entry in folder.iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    return sorted(found, key=lambda m: m.version)


def not_applied(shipped: list[Migration], done: Mapping[int, str]) -> list[Migration]:
    """The shipped migrations not in ``done`` (version -> checksum); refuses edited ones."""
    for migration in shipped:
        if migration.version in done and done[migration.version] != migration.checksum:
            raise StoreError(
                f"migration {migration.label} changed after it was applied; migrations are "
                "append-only",
            )
    return [m for m in shipped if m.version not in done]


@dataclass(frozen=True, slots=True)
class Migrations:
    """One adapter's migrations: the files of ``package`` and what a database applied
    (``applied(conn)``: version -> checksum)."""

    package: str
    applied: Callable[[Any], dict[int, str]]

    def available(self) -> list[Migration]:
        return available_in(self.package)

    def pending(self, conn: Any) -> list[Migration]:
        return not_applied(self.available(), self.applied(conn))

    def current_version(self, conn: Any) -> int:
        return max(self.applied(conn), default=0)
