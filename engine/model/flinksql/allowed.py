"""Deny by default: the sqlglot nodes (and the arguments set on them) that the query reader maps, and nothing else.

sqlglot parses far more SQL than converge models. A clause the reader does
not look at must never be dropped silently (a temporal join's `FOR
SYSTEM_TIME AS OF` read as an ordinary join, a `NATURAL` join's implied
condition ignored): every node of the SELECT is checked against `ALLOWED`,
its type and each argument it has set, before the translation
(engine/model/flinksql/query.py) runs. Anything else is refused with its
file:line:column; all refusals of one query come back together.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from sqlglot import exp

from converge.engine.model.errors import BadInputError, UnsupportedError
from converge.engine.model.flinksql.positions import SourceText, sql_name

_BINARY = frozenset({"this", "expression"})

# node type -> the arguments it may have set (an argument that is absent, None, False or empty is not set)
ALLOWED: dict[type[exp.Expr], frozenset[str]] = {
    exp.Select: frozenset({"expressions", "from_", "joins", "where"}),
    exp.From: frozenset({"this"}),
    exp.Join: frozenset({"this", "on", "side", "kind"}),
    exp.Table: frozenset({"this", "alias"}),
    exp.TableAlias: frozenset({"this"}),
    exp.Identifier: frozenset({"this", "quoted"}),
    exp.Column: frozenset({"this", "table"}),
    exp.Star: frozenset(),
    exp.Alias: frozenset({"this", "alias"}),
    exp.Where: frozenset({"this"}),
    exp.Subquery: frozenset({"this", "alias"}),  # alias: a derived table in FROM (flinksql/views.py)
    exp.Exists: frozenset({"this"}),
    exp.In: frozenset({"this", "query"}),
    exp.And: _BINARY, exp.Or: _BINARY, exp.Not: frozenset({"this"}), exp.Paren: frozenset({"this"}),
    exp.EQ: _BINARY, exp.NEQ: _BINARY, exp.GT: _BINARY, exp.GTE: _BINARY, exp.LT: _BINARY, exp.LTE: _BINARY,
    exp.NullSafeEQ: _BINARY, exp.NullSafeNEQ: _BINARY, exp.Is: _BINARY,
    exp.Between: frozenset({"this", "low", "high"}),
    exp.Add: _BINARY, exp.Sub: _BINARY, exp.Mul: _BINARY, exp.Div: _BINARY | {"typed", "safe"}, exp.Mod: _BINARY,
    exp.Neg: frozenset({"this"}),
    exp.Literal: frozenset({"this", "is_string"}),
    exp.Null: frozenset(),
    exp.Boolean: frozenset({"this"}),
    exp.Interval: frozenset({"this", "unit"}),
    exp.Var: frozenset({"this"}),
    exp.Cast: frozenset({"this", "to"}),         # TIMESTAMP '...' and DATE '...' literals; widening in a view
    # CASE and IF: read in a view's (a Calc's) expressions, refused elsewhere by the reader (calc_expressions.py)
    exp.Case: frozenset({"this", "ifs", "default"}),
    exp.If: frozenset({"this", "true", "false"}),
    exp.DataType: frozenset({"this"}),
    exp.Tuple: frozenset({"expressions"}),       # `(a, b) [NOT] IN (SELECT x, y ...)` only (_in_row)
    # a TIMESTAMP's or DATE's fields (flinksql/time_parts.py)
    exp.Year: frozenset({"this"}), exp.Quarter: frozenset({"this"}), exp.Month: frozenset({"this"}),
    exp.DayOfMonth: frozenset({"this"}), exp.Hour: frozenset({"this"}), exp.Minute: frozenset({"this"}),
    exp.Second: frozenset({"this"}), exp.Extract: frozenset({"this", "expression"}),
}

# argument values the reader maps, where an argument is set
ALLOWED_VALUES: dict[tuple[type[exp.Expr], str], frozenset[str]] = {
    (exp.Join, "side"): frozenset({"LEFT", "RIGHT", "FULL"}),
    (exp.Join, "kind"): frozenset({"INNER", "OUTER"}),
    (exp.DataType, "this"): frozenset({exp.DataType.Type.TIMESTAMP.value, exp.DataType.Type.TIMESTAMPLTZ.value,
                                       exp.DataType.Type.DATE.value, exp.DataType.Type.INT.value,
                                       exp.DataType.Type.BIGINT.value, exp.DataType.Type.DOUBLE.value}),
}

# why an argument that is not mapped is refused, where a general sentence would not say enough
_WHY: dict[tuple[type[exp.Expr], str], str] = {
    (exp.Table, "version"): "a temporal join (FOR SYSTEM_TIME AS OF) is not supported: converge models regular "
                            "and interval joins, and never checks a temporal join as an ordinary one",
    (exp.Join, "method"): "NATURAL / ASOF joins are not supported: write [INNER] / LEFT / RIGHT / FULL JOIN ... ON",
    (exp.Join, "using"): "JOIN ... USING is not supported: write the condition with ON",
    (exp.Join, "kind"): "only [INNER] / LEFT / RIGHT / FULL [OUTER] JOIN ... ON ... are supported",
    (exp.Table, "db"): "only a declared table (optionally with an alias) can be joined: catalog and database "
                       "names are not supported",
    (exp.TableAlias, "columns"): "column aliases on a table are not supported",
    (exp.In, "expressions"): "IN with a list of values is not supported: write the comparisons with OR",
    (exp.Select, "group"): "GROUP is not supported: converge checks joins",
    (exp.Select, "having"): "HAVING is not supported: converge checks joins",
    (exp.Select, "order"): "ORDER is not supported: converge checks joins",
    (exp.Select, "limit"): "LIMIT is not supported: converge checks joins",
    (exp.Select, "distinct"): "DISTINCT is not supported: converge checks joins",
    (exp.Select, "with_"): "WITH is not supported: converge checks joins",
    (exp.DataType, "this"): "only TIMESTAMP '...' and DATE '...' literals, and CAST to INT, BIGINT or DOUBLE in a "
                            "view, are supported",
}


def _is_set(value: object) -> bool:
    return value is not None and value is not False and value != [] and value != ""


def _value(value: object) -> str:
    if isinstance(value, exp.DataType.Type):
        return value.value
    return (value.name if isinstance(value, exp.Expr) else str(value)).upper()


def problems(node: exp.Expr, text: SourceText | None = None) -> Iterator[tuple[exp.Expr, str]]:
    """(node, why) for every node of the tree under `node` that is not on the allow-list, in tree order; `text`
    names a function as the file writes it.

    The subtree of a refused node or argument is not looked at (the refusal covers it); the node's other
    arguments are."""
    kind = type(node)
    if isinstance(node, exp.Tuple) and not _in_row(node):
        yield node, "a row value `(a, b)` is read only as the left side of [NOT] IN (SELECT ...)"
        return
    if kind not in ALLOWED:
        name = text.name(node) if text is not None else sql_name(node)
        yield node, (f"{name} is outside the SQL subset converge maps (columns, literals, comparisons, "
                     f"AND/OR/NOT, IS [NOT] NULL, IS [NOT] DISTINCT FROM, BETWEEN, + - * / %, INTERVAL, typed "
                     f"literals, [NOT] EXISTS / IN (SELECT ...))")
        return
    for arg, value in node.args.items():
        if not _is_set(value):
            continue
        if arg not in ALLOWED[kind]:
            where = value if isinstance(value, exp.Expr) and arg != "version" else node
            yield where, _WHY.get((kind, arg), f"{kind.__name__}'s {arg.rstrip('_').upper()} is not supported")
            continue
        allowed = ALLOWED_VALUES.get((kind, arg))
        if allowed is not None and _value(value) not in allowed:
            yield node, _WHY.get((kind, arg), f"{kind.__name__} {_value(value)} is not supported")
            continue
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, exp.Expr):
                yield from problems(child, text)


def _in_row(node: exp.Tuple) -> bool:
    """The row value compared by `[NOT] IN (SELECT ...)`, the one place a row value is mapped."""
    parent = node.parent
    return isinstance(parent, exp.In) and parent.args.get("query") is not None and node.arg_key == "this"


def refusals(node: exp.Expr, text: SourceText) -> list[UnsupportedError]:
    """One UnsupportedError (file:line:col, the clause, why) for each problem under `node`."""
    out = []
    for where, why in problems(node, text):
        while text.where(where) == text.path and where.parent is not None:  # a node sqlglot kept no position of
            where = where.parent
        out.append(text.unsupported(where, why))
    return out


Refusal = BadInputError | UnsupportedError
_AT = re.compile(r"^(.*?):(\d+):(\d+):")


def at(refusal: Refusal) -> str:
    """The `file:line:col` a refusal names (its message when it names none)."""
    found = _AT.match(str(refusal))
    return found.group(0) if found else str(refusal)


def position(refusal: Refusal) -> tuple[int, int]:
    """(line, column) of a refusal, for listing them in the order of the file (unplaced ones first)."""
    found = _AT.match(str(refusal))
    return (int(found.group(2)), int(found.group(3))) if found else (0, 0)


def one_error(refused: list[Refusal], path: str) -> Refusal:
    """Every refusal of one query as one error: one alone as it is; several listed, each with its position and
    what it is. Bad input if any of them is (the query must be fixed), else unsupported (valid Flink SQL that
    converge does not map yet)."""
    if len(refused) == 1:
        return refused[0]
    bad = any(isinstance(r, BadInputError) for r in refused)
    lines = [f"{path}: {len(refused)} problems in the query (each with its file:line:column):"]
    lines += [f"  [{'bad input' if isinstance(r, BadInputError) else 'unsupported'}] {r}" for r in refused]
    combined = (BadInputError if bad else UnsupportedError)("\n".join(lines))
    combined.refusals = tuple(refused)  # type: ignore[attr-defined]  # each one, for `check --format json`
    return combined


__all__ = ["ALLOWED", "ALLOWED_VALUES", "Refusal", "at", "one_error", "position", "problems", "refusals"]
