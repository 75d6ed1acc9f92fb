"""An evaluator of the protocol's expression trees, written from docs/adapter-protocol.md ("Expression trees").

Standard library only: the v2 stub adapter (tests/support/adapters/v2.py) runs it in its own process, and
tests/engine/test_condition_tree.py compares it with DuckDB. It shares nothing with converge's condition compiler.
"""

from __future__ import annotations

import math
from typing import Any


class SqlError(Exception):
    """An ERROR of the docs (a case converge never sends): DuckDB raises on the same row."""


class ByZero(SqlError):
    """`//` or integer `%` by zero: DuckDB answers NULL, converge's engine refuses the case as bad input."""


RANGE = {"INTEGER": (-(2**31), 2**31 - 1), "BIGINT": (-(2**63), 2**63 - 1)}


def _int(value: int, type_: str) -> int:
    lo, hi = RANGE[type_]
    if not lo <= value <= hi:
        raise SqlError(f"{value} is outside {type_}")
    return value


def _compare(op: str, x: Any, y: Any, types: list[str]) -> bool:
    if "DOUBLE" in types:  # integers compare with DOUBLE as DOUBLE; NaN equals NaN and sorts above +inf
        x, y = ((1, 0.0) if v != v else (0, v) for v in (float(x), float(y)))
    return {"=": x == y, "<>": x != y, "<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op]


def _upper(c: str) -> str:
    """The simple (one-to-one) uppercase; ß becomes ẞ."""
    if c == "ß":
        return "ẞ"
    for mapped in (c.upper(), c.title()):
        if len(mapped) == 1:
            return mapped
    return c


def _lower(c: str) -> str:
    mapped = c.lower()
    return mapped if len(mapped) == 1 else mapped[0]


def _cast(v: Any, source: str, target: str) -> Any:
    if target == "VARCHAR":
        if source == "BOOLEAN":
            return "true" if v else "false"
        if source == "DOUBLE":
            return repr(v) if v == v else "-nan" if math.copysign(1.0, v) < 0 else "nan"
        return str(v)
    if source == "VARCHAR":  # only the non-finite DOUBLE constants arrive so
        assert target == "DOUBLE" and v in ("nan", "inf", "-inf"), (v, target)
        return float(v)
    if target == "DOUBLE":
        return float(v)
    if target == "BOOLEAN":
        return v != 0
    if source == "DOUBLE":
        if not math.isfinite(v):
            raise SqlError("a non-finite DOUBLE to an integer")
        return _int(round(v), target)  # half to even
    return _int(int(v), target)


def evaluate(node: dict, row: dict[tuple[str, str], Any]) -> Any:
    """The node's SQL value (None for NULL) on `row` ({(input, column): value})."""
    kind = node["node"]
    if kind == "column":
        return row[node["input"], node["column"]]
    if kind == "literal":
        v = node["value"]
        return float(v) if v is not None and node["type"] == "DOUBLE" else v
    assert kind == "call", node
    op, t = node["op"], node["type"]
    if op in ("and", "or"):  # left to right, stopping at the deciding value: later arguments are not evaluated
        decisive, seen_null = op == "or", False
        for arg in node["args"]:
            value = evaluate(arg, row)
            if value is decisive:
                return decisive
            seen_null = seen_null or value is None
        return None if seen_null else not decisive
    if op == "coalesce":  # left to right, stopping at the first non-NULL: later arguments are not evaluated
        first = next((v for v in (evaluate(a, row) for a in node["args"]) if v is not None), None)
        return float(first) if first is not None and t == "DOUBLE" else first
    args = [evaluate(a, row) for a in node["args"]]
    types = [a["type"] for a in node["args"]]
    if op == "not":
        return None if args[0] is None else not args[0]
    if op in ("is_not_distinct_from", "is_distinct_from"):
        x, y = args
        same = x is None and y is None or (x is not None and y is not None and _compare("=", x, y, types))
        return same if op == "is_not_distinct_from" else not same
    if op in ("is_null", "is_not_null"):
        return (args[0] is None) == (op == "is_null")
    if None in args:
        return None
    if op in ("=", "<>", "<", "<=", ">", ">="):
        return _compare(op, *args, types)
    if op == "cast":
        return _cast(args[0], types[0], t)
    if op == "||":
        return args[0] + args[1]
    if op == "length":
        return len(args[0])
    if op in ("lower", "upper"):
        return "".join(map(_lower if op == "lower" else _upper, args[0]))
    if t == "DOUBLE":
        x, *rest = (float(a) for a in args)
        y = rest[0] if rest else 0.0
        if op == "/" and y == 0:
            return math.nan if x == 0 or x != x else math.copysign(math.inf, x) * math.copysign(1.0, y)
        if op == "//" and y == 0:
            raise ByZero("// by zero")
        if op == "%":
            return math.nan if y == 0 or math.isinf(x) else math.fmod(x, y)
        return {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y, "/": lambda: x / y,
                "//": lambda: x / y, "neg": lambda: -x, "abs": lambda: abs(x)}[op]()
    x, *rest = args
    y = rest[0] if rest else 0
    if op in ("//", "%"):
        if y == 0:
            raise ByZero(f"{op} by zero")
        if op == "%":  # MIN % -1 is 0, as in Java: the remainder fits even where the quotient would not
            return abs(x) % abs(y) * (1 if x >= 0 else -1)
        return _int(abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1), t)
    return _int({"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y, "neg": lambda: -x,
                 "abs": lambda: abs(x)}[op](), t)
