"""Row validation at the edge of the engine: arity, types and allowed row kinds per input."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeGuard

from converge.engine.model.changelog import ROW_KINDS
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import InputSpec, short_repr, unencodable_at

_BIGINT_RANGE = (-(2**63), 2**63 - 1)
_INTEGER_RANGE = (-(2**31), 2**31 - 1)


def allowed_kinds(spec: InputSpec) -> frozenset[str]:
    if spec.changelog_mode == "insert_only":
        return frozenset({"+I"})
    if spec.changelog_mode == "upsert":
        return frozenset({"+I", "+U", "-D"})
    return frozenset(ROW_KINDS)  # retract and all (a raw changelog)


def _int_check(lo: int, hi: int, ctype: str) -> Callable[[object], object]:
    def check(v: object) -> object:
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"expected {ctype}, got {short_repr(v)}")
        if not lo <= v <= hi:
            raise TypeError(f"{short_repr(v)} is out of {ctype} range")
        return v
    return check


_DOUBLE_MAX = 1.7976931348623157e308


def _double(v: object) -> object:
    """A finite double. NaN is rejected: SQL engines disagree on NaN = NaN, so it cannot be judged."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"expected DOUBLE, got {short_repr(v)}")
    if isinstance(v, int) and not -_DOUBLE_MAX <= v <= _DOUBLE_MAX:
        raise TypeError(f"{short_repr(v)} is out of DOUBLE range")
    value = float(v)
    if not -_DOUBLE_MAX <= value <= _DOUBLE_MAX:
        raise TypeError(f"{value} is not a finite DOUBLE (NaN and infinities are not accepted)")
    return value


def _varchar(v: object) -> object:
    if not isinstance(v, str):
        raise TypeError(f"expected VARCHAR, got {short_repr(v)}")
    at = unencodable_at(v)
    if at is not None:
        raise TypeError(f"VARCHAR value holds a lone surrogate \\u{ord(v[at]):04x} at offset {at}; "
                        f"it is not valid Unicode text")
    return v


def _boolean(v: object) -> object:
    if not isinstance(v, bool):
        raise TypeError(f"expected BOOLEAN, got {short_repr(v)}")
    return v


_CHECKS: dict[str, Callable[[object], object]] = {
    "BIGINT": _int_check(*_BIGINT_RANGE, "BIGINT"),
    "INTEGER": _int_check(*_INTEGER_RANGE, "INTEGER"),
    "DOUBLE": _double,
    "VARCHAR": _varchar,
    "BOOLEAN": _boolean,
}


_FAST_TEST = {
    "BIGINT": "(type({v}) is int and -9223372036854775808 <= {v} <= 9223372036854775807 or {v} is None)",
    "INTEGER": "(type({v}) is int and -2147483648 <= {v} <= 2147483647 or {v} is None)",
    "DOUBLE": "(type({v}) is float and -1.7976931348623157e308 <= {v} <= 1.7976931348623157e308 or {v} is None)",
    "VARCHAR": "(type({v}) is str and {v}.isascii() or {v} is None)",
    "BOOLEAN": "(type({v}) is bool or {v} is None)",
}


@functools.lru_cache(maxsize=256)
def _fast_check(types: tuple[str, ...]) -> Callable[[object], TypeGuard[tuple]]:
    """Generated code for the common case (a well-typed tuple); anything else takes the slow path."""
    names = [f"v{i}" for i in range(len(types))]
    tests = " and ".join(_FAST_TEST[t].format(v=n) for n, t in zip(names, types, strict=False))
    src = (f"def fast(row):\n    if type(row) is not tuple or len(row) != {len(types)}:\n        return False\n"
           f"    {', '.join(names)}, = row\n    return {tests}\n")
    scope: dict = {}
    exec(compile(src, f"<row check {types}>", "exec"), scope)
    return scope["fast"]


class RowValidator:
    """Checks a row against an input's schema and returns it as the engine stores it."""

    def __init__(self, spec: InputSpec) -> None:
        self.spec = spec
        self._checks = tuple(_CHECKS[t] for t in spec.column_types)
        self._names = spec.column_names
        self._needs_conversion = "DOUBLE" in spec.column_types
        self._fast = _fast_check(spec.column_types)

    def validate(self, row: tuple | list) -> tuple:
        if self._fast(row):
            return row
        return self._validate_slow(row)

    def _validate_slow(self, row: tuple | list) -> tuple:
        if not isinstance(row, (tuple, list)):
            raise BadInputError(f"a row must be a list of values, got {short_repr(row)}")
        if len(row) != len(self._checks):
            raise BadInputError(
                f"row {short_repr(list(row))} on input {self.spec.name!r} has {len(row)} values; "
                f"the input has {len(self._checks)} columns {list(self._names)}")
        try:
            if self._needs_conversion:
                return tuple(None if v is None else check(v) for v, check in zip(row, self._checks, strict=False))
            for v, check in zip(row, self._checks, strict=False):
                if v is not None:
                    check(v)
        except TypeError as exc:
            col = next(n for n, v, c in zip(self._names, row, self._checks, strict=False) if v is not None and _fails(c, v))
            raise BadInputError(f"column {col!r} of input {self.spec.name!r}: {exc}") from None
        return tuple(row)


def _fails(check: Callable[[object], object], v: object) -> bool:
    try:
        check(v)
    except TypeError:
        return True
    return False


def validate_output_row(row: list | tuple, width: int, path: str) -> tuple:
    """An expected output row: `width` plain values (the oracle compares them with the engine's rows)."""
    if len(row) != width:
        raise BadInputError(f"expected {width} values (the join's output width), got {len(row)}", path=path)
    for j, v in enumerate(row):
        if isinstance(v, (dict, list, tuple)):
            raise BadInputError(f"expected a value, got {short_repr(v)}", path=f"{path}[{j}]")
        if isinstance(v, float) and not -_DOUBLE_MAX <= v <= _DOUBLE_MAX:
            raise BadInputError(f"{v} is not a finite number", path=f"{path}[{j}]")
        if isinstance(v, str) and unencodable_at(v) is not None:
            raise BadInputError("holds a lone surrogate; it is not valid Unicode text", path=f"{path}[{j}]")
    return tuple(row)
