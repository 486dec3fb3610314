"""The machinery under ``Settings``: typed fields declared on a class, read from keyword
arguments, ``<PREFIX>*`` environment variables and a TOML file, validated with pydantic's lax
rules and error entries (decision 0040).

``Settings`` used pydantic-settings, whose import (pydantic, asyncio, every settings source)
was 40% of a ``strata list``. The field kinds here are the few ``Settings`` declares: ``int``,
``float``, ``bool``, ``str``, ``Path``, ``Secret``, ``list[str]``, a ``Literal`` of strings,
a ``StrEnum``, each optionally ``| None``. A value is accepted as pydantic (lax mode) accepts
it, and a refusal is the same error entry (``type``, ``loc``, ``msg``, ``input``, ``ctx``), so
the message of the ``InvalidInput`` that carries them is unchanged.
"""

from __future__ import annotations

import enum
import json
import math
import operator
import os
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

from strata_recall.errors import InvalidInput

_T = TypeVar("_T", bound="SettingsBase")
_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})
#: An integer as pydantic reads it from a string: signs, ``_`` separators, a ``.0`` tail.
_INT_TEXT = re.compile(r"\s*[+-]?[0-9]+(?:_[0-9]+)*(?:\.0*)?\s*")


class Secret:
    """A string that never shows itself: ``repr`` and ``str`` mask it; the value is
    ``get_secret_value()``."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get_secret_value(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"Secret({str(self)!r})"

    def __str__(self) -> str:
        return "**********" if self._value else ""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


class _Refused(Exception):
    """A value refused: the entries pydantic would report, each with its ``loc`` below the
    field (``()``, or a list item's index); never leaves this module."""

    def __init__(self, entries: Sequence[tuple[tuple[int, ...], dict[str, Any]]]) -> None:
        super().__init__(f"{len(entries)} refused")
        self.entries = entries


def _refusal(kind: str, msg: str, value: Any, ctx: dict[str, Any] | None = None) -> _Refused:
    entry: dict[str, Any] = {"type": kind, "msg": msg, "input": value}
    if ctx is not None:
        entry["ctx"] = ctx
    return _Refused([((), entry)])


@dataclass(slots=True)
class Setting:
    """One field: its default (or ``default_factory``), bounds, help text and, once bound to
    its class, its name and the function that turns an input into its value."""

    default: Any = None
    default_factory: Callable[[], Any] | None = None
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    description: str = ""
    name: str = ""
    nullable: bool = False
    #: ``Literal`` / ``StrEnum`` choices, in declaration order.
    choices: tuple[str, ...] = ()
    from_env_json: bool = False
    convert: Callable[[Any], Any] = field(default=lambda value: value, repr=False)

    def initial(self) -> Any:
        """The default, validated as pydantic-settings does (``7 * 86_400`` on a float field
        is ``604800.0``)."""
        return self.validate(
            self.default_factory() if self.default_factory is not None else self.default)

    def validate(self, value: Any) -> Any:
        """The value, converted and within bounds; ``_Refused`` otherwise."""
        if value is None and self.nullable:
            return None
        converted = self.convert(value)
        if isinstance(converted, int | float) and not isinstance(converted, bool):
            self._check_bounds(converted, value)
        return converted

    def _check_bounds(self, number: float, value: Any) -> None:
        """pydantic's order: ``le`` first, then ``ge``, then ``gt`` (NaN fails the first)."""
        checks = ((self.le, "less_than_equal", "less than or equal to", "le", operator.le),
                  (self.ge, "greater_than_equal", "greater than or equal to", "ge", operator.ge),
                  (self.gt, "greater_than", "greater than", "gt", operator.gt))
        for bound, kind, words, key, holds in checks:
            if bound is not None and not holds(number, bound):
                shown = type(number)(bound)
                raise _refusal(kind, f"Input should be {words} {_number_text(shown)}", value,
                               {key: shown})


def setting(default: Any = None, *, default_factory: Callable[[], Any] | None = None,
            ge: float | None = None, gt: float | None = None, le: float | None = None,
            description: str = "") -> Any:
    """Declare a field of a ``SettingsBase`` subclass; its annotation gives its kind."""
    return Setting(default=default, default_factory=default_factory, ge=ge, gt=gt, le=le,
                   description=description)


class SettingsBase:
    """Fields declared with ``setting()`` under a type annotation. Precedence, highest
    first: keyword arguments, ``<env_prefix><NAME>`` variables (any case), the TOML file
    ``config_file()`` names (keys in any case), the defaults. A keyword or file key that names
    no field is refused; unknown variables are ignored."""

    fields: ClassVar[Mapping[str, Setting]] = {}
    env_prefix: ClassVar[str] = ""

    def __init_subclass__(cls, *, env_prefix: str = "", **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.env_prefix = env_prefix
        hints = typing.get_type_hints(cls)
        declared = {name: spec for name, spec in vars(cls).items() if isinstance(spec, Setting)}
        for name, spec in declared.items():
            _bind(spec, name, hints[name])
            delattr(cls, name)  # instances hold the values; the specs live in ``fields``
        cls.fields = {**cls.fields, **declared}

    def __init__(self, **overrides: Any) -> None:
        given = {**self._from_file(), **self._from_environment(), **overrides}
        values = _validated(self.fields, given)
        for name, spec in self.fields.items():
            self.__dict__[name] = values[name] if name in values else spec.initial()
        self.__dict__["_explicit"] = frozenset(values)

    @classmethod
    def config_file(cls) -> Path | None:
        """The TOML file to read, if any (read only when it exists)."""
        return None

    @property
    def explicit(self) -> frozenset[str]:
        """The fields a keyword, a variable or the file set (the rest are defaults)."""
        return frozenset(self.__dict__["_explicit"])

    def replace(self: _T, **changes: Any) -> _T:
        """A copy with ``changes`` validated and applied (and counted as explicit)."""
        values = _validated(self.fields, changes)
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__, **values)
        copy.__dict__["_explicit"] = self.explicit | frozenset(values)
        return copy

    def __eq__(self, other: object) -> bool:  # (and so unhashable, as pydantic's models)
        return type(other) is type(self) and all(
            getattr(self, name) == getattr(other, name) for name in self.fields)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.fields)
        return f"{type(self).__name__}({shown})"

    @classmethod
    def _from_environment(cls) -> dict[str, Any]:
        """The fields' variables; a list field's value is JSON (``null``: as if unset)."""
        environ = {key.lower(): value for key, value in os.environ.items()}
        found: dict[str, Any] = {}
        for name, spec in cls.fields.items():
            raw = environ.get(f"{cls.env_prefix}{name}".lower())
            if raw is None:
                continue
            value = _json_or_refusal(name, raw) if spec.from_env_json else raw
            if value is not None:
                found[name] = value
        return found

    @classmethod
    def _from_file(cls) -> dict[str, Any]:
        path = cls.config_file()
        if path is None or not path.expanduser().is_file():
            return {}
        import tomllib  # only when there is a file: most runs have none

        try:
            with path.expanduser().open("rb") as file:
                return {key.lower(): value for key, value in tomllib.load(file).items()}
        except tomllib.TOMLDecodeError as exc:
            raise InvalidInput(f"invalid settings: {path} is not valid TOML ({exc})") from exc


def _validated(fields: Mapping[str, Setting], given: Mapping[str, Any]) -> dict[str, Any]:
    """Each given field's value; every refusal (unknown names too) in one ``InvalidInput``."""
    values: dict[str, Any] = {}
    errors: list[dict[str, Any]] = []
    for name, spec in fields.items():
        if name not in given:
            continue
        try:
            values[name] = spec.validate(given[name])
        except _Refused as refused:
            errors += [{"type": entry["type"], "loc": (name, *at),
                        **{k: v for k, v in entry.items() if k != "type"}}
                       for at, entry in refused.entries]
    errors += [{"type": "extra_forbidden", "loc": (name,), "msg": "Extra inputs are not "
                "permitted", "input": value} for name, value in given.items() if name not in fields]
    if errors:
        raise InvalidInput(f"invalid settings: {errors}")
    return values


def _json_or_refusal(name: str, raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError as exc:
        entry = {"type": "json_invalid", "loc": (name,), "msg": f"Invalid JSON: {exc}",
                 "input": raw}
        raise InvalidInput(f"invalid settings: {[entry]}") from exc


def _number_text(number: float) -> str:
    """A bound as pydantic writes it in a message: ``0``, not ``0.0``."""
    if isinstance(number, float) and number.is_integer():
        return str(int(number))
    return str(number)


# -- kinds --------------------------------------------------------------------------------


def _bind(spec: Setting, name: str, hint: Any) -> None:
    """Give ``spec`` its name and the conversion its annotation ``hint`` asks for."""
    spec.name = name
    members = typing.get_args(hint) if _is_union(hint) else (hint,)
    spec.nullable = type(None) in members
    kinds = [member for member in members if member is not type(None)]
    if len(kinds) != 1:
        raise TypeError(f"setting {name}: unsupported annotation {hint!r}")
    kind = kinds[0]
    if typing.get_origin(kind) is Literal:
        spec.choices = tuple(typing.get_args(kind))
        spec.convert = _choice(spec.choices, "literal_error")
    elif isinstance(kind, type) and issubclass(kind, enum.Enum):
        spec.choices = tuple(member.value for member in kind)
        spec.convert = _enum_member(kind)
    elif typing.get_origin(kind) is list and typing.get_args(kind) == (str,):
        spec.from_env_json = True
        spec.convert = _string_list
    elif kind in _SIMPLE:
        spec.convert = _SIMPLE[kind]
    else:
        raise TypeError(f"setting {name}: unsupported annotation {hint!r}")


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


def _to_int(value: Any) -> int:
    if isinstance(value, int):  # bool too, as pydantic's lax mode
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _refusal("finite_number", "Input should be a finite number", value)
        if not value.is_integer():
            raise _refusal("int_from_float", "Input should be a valid integer, got a number "
                           "with a fractional part", value)
        return int(value)
    if isinstance(value, str):
        if not _INT_TEXT.fullmatch(value):
            raise _refusal("int_parsing", "Input should be a valid integer, unable to parse "
                           "string as an integer", value)
        return int(value.strip().split(".")[0])
    raise _refusal("int_type", "Input should be a valid integer", value)


def _to_float(value: Any) -> float:
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            if not value.isascii():
                raise ValueError(value)
            return float(value)
        except ValueError:
            raise _refusal("float_parsing", "Input should be a valid number, unable to parse "
                           "string as a number", value) from None
    raise _refusal("float_type", "Input should be a valid number", value)


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.lower() in _TRUE | _FALSE:
        return value.lower() in _TRUE
    if isinstance(value, int | float | str):
        raise _refusal("bool_parsing", "Input should be a valid boolean, unable to interpret "
                       "input", value)
    raise _refusal("bool_type", "Input should be a valid boolean", value)


def _to_str(value: Any) -> str:
    if not isinstance(value, str):
        raise _refusal("string_type", "Input should be a valid string", value)
    return value


def _to_path(value: Any) -> Path:
    if not isinstance(value, str | os.PathLike):
        raise _refusal("path_type", "Input is not a valid path for <class 'pathlib.Path'>",
                       value)
    return Path(value)


def _to_secret(value: Any) -> Secret:
    if isinstance(value, Secret):
        return value
    if hasattr(value, "get_secret_value"):  # another library's secret string
        value = value.get_secret_value()
    return Secret(_to_str(value))


def _string_list(value: Any) -> list[str]:
    if not isinstance(value, list | tuple | set | frozenset):
        raise _refusal("list_type", "Input should be a valid list", value)
    refused = [((index,), {"type": "string_type", "msg": "Input should be a valid string",
                           "input": item})
               for index, item in enumerate(value) if not isinstance(item, str)]
    if refused:
        raise _Refused(refused)
    return list(value)


def _expected(choices: Iterable[str]) -> str:
    shown = [repr(choice) for choice in choices]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


def _choice(choices: tuple[str, ...], kind: str) -> Callable[[Any], Any]:
    expected = _expected(choices)

    def convert(value: Any) -> Any:
        if isinstance(value, str) and value in choices:
            return str(value)
        raise _refusal(kind, f"Input should be {expected}", value, {"expected": expected})

    return convert


def _enum_member(kind: type[enum.Enum]) -> Callable[[Any], Any]:
    check = _choice(tuple(member.value for member in kind), "enum")

    def convert(value: Any) -> Any:
        return value if isinstance(value, kind) else kind(check(value))

    return convert


_SIMPLE: dict[Any, Callable[[Any], Any]] = {
    int: _to_int, float: _to_float, bool: _to_bool, str: _to_str, Path: _to_path,
    Secret: _to_secret,
}
