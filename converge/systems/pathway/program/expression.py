"""Evaluate a protocol-v2 expression tree over a row pair, with SQL's three-valued semantics.

Pathway's own expressions are not used for the residual: its `None` handling, integer/float
comparison and division differ from SQL in places (e.g. a comparison with None is not NULL, `/` by
zero raises), so the residual runs as one Python function per step (pw.apply) written to the rules
of docs/adapter-protocol.md ("Expression trees"). `rows` maps an input name to its values (a padded
input: every value None); `columns` maps an input name to its column names.
"""

from __future__ import annotations

import math
from collections.abc import Callable

Rows = dict[str, list]
Fn = Callable[[Rows], object]


class PlanError(Exception):
    """The plan holds a node or operator outside the protocol's closed set: the request is malformed."""


def _double(x: object) -> bool:
    return isinstance(x, float)


def _cmp_key(x: object, y: object) -> tuple[object, object]:
    """Operands as SQL compares them: integer against DOUBLE as DOUBLE; NaN equal to NaN and above +inf."""
    if _double(x) or _double(y):
        x, y = float(x), float(y)
        nx, ny = x != x, y != y
        return (nx, 0.0 if nx else x), (ny, 0.0 if ny else y)
    return x, y


_COMPARE: dict[str, Callable[[object, object], bool]] = {
    "=": lambda a, b: a == b, "<>": lambda a, b: a != b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def _divide(x: object, y: object) -> float:
    x, y = float(x), float(y)
    if y == 0:
        return math.nan if x == 0 or x != x else math.copysign(math.inf, x) * math.copysign(1.0, y)
    return x / y


def _int_div(x: object, y: object, double: bool) -> object:
    if double:
        return float(x) / float(y)
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


def _mod(x: object, y: object, double: bool) -> object:
    if double:
        x, y = float(x), float(y)
        return math.fmod(x, y) if y != 0 and math.isfinite(x) else math.nan
    r = abs(x) % abs(y)
    return r if x >= 0 else -r


# Where DuckDB's simple (one-to-one) case mapping is one character but Python's full mapping is several (so the
# one-to-one rule below would keep the character): measured against DuckDB's table (engine/condition_compiler.py
# builds it from DuckDB) under Python 3.11's Unicode data, these 28 upper and 1 lower mappings are the whole
# difference.
_UPPER_SIMPLE = {0xDF: "\u1e9e", 0x1FB3: "\u1fbc", 0x1FC3: "\u1fcc", 0x1FF3: "\u1ffc",
                 **{c: chr(c + 8) for start in (0x1F80, 0x1F90, 0x1FA0) for c in range(start, start + 8)}}
_LOWER_SIMPLE = {0x130: "i"}


def _case(text: str, upper: bool) -> str:
    """Each character by its simple case mapping, as DuckDB maps case (length never changes)."""
    if text.isascii():
        return text.upper() if upper else text.lower()
    special = _UPPER_SIMPLE if upper else _LOWER_SIMPLE
    out = []
    for ch in text:
        mapped = special.get(ord(ch)) or (ch.upper() if upper else ch.lower())
        out.append(mapped if len(mapped) == 1 else ch)
    return "".join(out)


def _to_text(x: object) -> str:
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, float):
        return repr(x) if x == x else ("-nan" if math.copysign(1.0, x) < 0 else "nan")
    return str(x)


def _cast(x: object, source: str, target: str) -> object:
    if target == "VARCHAR":
        return _to_text(x)
    if target == "DOUBLE":
        return float(x)
    if target == "BOOLEAN":
        return x if isinstance(x, bool) else x != 0
    if isinstance(x, bool):
        return 1 if x else 0
    if isinstance(x, float):
        return round(x)  # half to even, as DuckDB's DOUBLE -> integer cast
    if isinstance(x, str):
        return int(x.strip())
    return x


def compile_tree(node: dict) -> Fn:
    """The tree as a function of the rows; its value is SQL's (None is NULL)."""
    kind = node["node"]
    if kind == "column":
        source, index = node["input"], node["index"]
        return lambda rows: rows[source][index]
    if kind == "literal":
        value = node["value"]
        if node["type"] == "DOUBLE" and value is not None:
            value = float(value)
        return lambda rows: value
    if kind != "call":
        raise PlanError(f"unknown expression node {kind!r}")
    op, rtype = node["op"], node["type"]
    args = [compile_tree(a) for a in node["args"]]
    if op in ("and", "or"):
        decisive = op == "or"  # the value that decides at once: FALSE for AND, TRUE for OR

        def junction(rows: Rows) -> object:
            seen_null = False
            for a in args:
                v = a(rows)
                if v is decisive:
                    return decisive
                seen_null |= v is None
            return None if seen_null else not decisive
        return junction
    if op == "not":
        (a,) = args
        return lambda rows: None if (v := a(rows)) is None else not v
    if op in ("is_null", "is_not_null"):
        (a,) = args
        want = op == "is_null"
        return lambda rows: (a(rows) is None) == want
    if op in ("is_not_distinct_from", "is_distinct_from"):
        x, y = args
        same = op == "is_not_distinct_from"

        def distinct(rows: Rows) -> bool:
            u, v = x(rows), y(rows)
            if u is None or v is None:
                return (u is None and v is None) == same
            p, q = _cmp_key(u, v)
            return (p == q) == same
        return distinct
    if op == "coalesce":
        def first(rows: Rows) -> object:
            for a in args:
                v = a(rows)
                if v is not None:
                    return float(v) if rtype == "DOUBLE" else v
            return None
        return first
    return _strict(op, rtype, args, [a.get("type") for a in node["args"]])


def _strict(op: str, rtype: str, args: list[Fn], types: list[str]) -> Fn:
    """Operators that are NULL when any argument is NULL."""
    double = rtype == "DOUBLE" or "DOUBLE" in types
    if op in _COMPARE:
        test = _COMPARE[op]

        def compare(u: object, v: object) -> bool:
            return test(*_cmp_key(u, v))
        body: Callable[..., object] = compare
    elif op == "+":
        body = (lambda u, v: float(u) + float(v)) if double else (lambda u, v: u + v)
    elif op == "-":
        body = (lambda u, v: float(u) - float(v)) if double else (lambda u, v: u - v)
    elif op == "*":
        body = (lambda u, v: float(u) * float(v)) if double else (lambda u, v: u * v)
    elif op == "/":
        body = _divide
    elif op == "//":
        body = lambda u, v: _int_div(u, v, double)  # noqa: E731
    elif op == "%":
        body = lambda u, v: _mod(u, v, double)  # noqa: E731
    elif op == "neg":
        body = lambda u: -u  # noqa: E731
    elif op == "abs":
        body = abs
    elif op == "||":
        body = lambda u, v: _to_text(u) + _to_text(v)  # noqa: E731
    elif op == "length":
        body = len
    elif op in ("lower", "upper"):
        upper = op == "upper"
        body = lambda u: _case(u, upper)  # noqa: E731
    elif op == "cast":
        source = types[0]
        body = lambda u: _cast(u, source, rtype)  # noqa: E731
    else:
        raise PlanError(f"unknown operator {op!r}")

    def strict(rows: Rows) -> object:
        values = [a(rows) for a in args]
        if any(v is None for v in values):
            return None
        return body(*values)
    return strict


def bind_columns(node: dict, columns: dict[str, list[str]]) -> dict:
    """The tree with each column reference given its index in its input's row."""
    if node["node"] == "column":
        return {**node, "index": columns[node["input"]].index(node["column"])}
    if node["node"] == "call":
        return {**node, "args": [bind_columns(a, columns) for a in node["args"]]}
    return node
