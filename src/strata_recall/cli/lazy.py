"""Commands registered on first use, so that one command imports one command's modules.

``strata list`` should not pay for ``strata bench`` (the benchmarks, the settings, numpy)
or ``strata mcp``: each lazy entry names the commands a registration function adds, and the
function runs (importing its module) only when one of those names is asked for, or when the
whole list is (``strata --help``). The order of ``--help`` is the one an eager registration
gives: the root's own commands, then the lazy commands, then the lazy groups.

The root's own commands are defined eagerly (``@app.command()``) but converted to click
commands lazily too (``deferred``): typer converts every command of a group before it parses
anything, ~3 ms per command, which a command that answers in 0.4 s notices.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import typer
from typer.core import TyperGroup
from typer.models import CommandInfo

Register = Callable[[typer.Typer], None]


@dataclass(frozen=True, slots=True)
class Lazy:
    """``register`` adds the commands (or groups) called ``names`` to the Typer it is given."""

    names: tuple[str, ...]
    register: Register


def deferred(app: typer.Typer) -> tuple[Lazy, ...]:
    """One entry per command registered on ``app`` so far, taken off ``app``: each command is
    converted when it is named (its module is already imported; only the conversion waits)."""
    infos, app.registered_commands = list(app.registered_commands), []
    return tuple(Lazy((_command_name(info),), _adding(info)) for info in infos)


def _command_name(info: CommandInfo) -> str:
    """The name typer gives the command (its own rule)."""
    assert info.callback is not None  # a registered command always has its function
    return info.name or typer.main.get_command_name(info.callback.__name__)


def _adding(info: CommandInfo) -> Register:
    def register(staging: typer.Typer) -> None:
        staging.registered_commands.append(info)

    return register


class LazyGroup(TyperGroup):
    """A ``TyperGroup`` that also knows the ``entries`` registered on first use."""

    entries: ClassVar[Sequence[Lazy]] = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._loaded: set[str] = set()

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands:
            self._load([e for e in self.entries if cmd_name in e.names])
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: Any) -> list[str]:
        lazy = self._convert(self.entries)
        self._loaded.update(e.names[0] for e in self.entries)
        for name, command in lazy.items():
            self.commands.setdefault(name, command)
        own = [name for name in self.commands if name not in lazy]
        return own + list(lazy)

    def _load(self, entries: Sequence[Lazy]) -> None:
        """Add the commands of the ``entries`` not loaded yet."""
        pending = [e for e in entries if e.names[0] not in self._loaded]
        self._loaded.update(e.names[0] for e in pending)
        for name, command in self._convert(pending).items():
            self.commands.setdefault(name, command)

    @staticmethod
    def _convert(entries: Sequence[Lazy]) -> dict[str, Any]:
        """The click commands the ``entries`` register, converted and ordered as one eager
        registration would (commands, then groups)."""
        if not entries:
            return {}
        staging = typer.Typer()
        for entry in entries:
            entry.register(staging)
        return dict(typer.main.get_group(staging).commands)
