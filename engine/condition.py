"""Join conditions: split into equi keys + residual, and compile the residual to Python.

Flink hash-partitions a join on its equi keys and evaluates the rest of the condition
(generated Java, `JoinCondition`) for every candidate pair. We do the same: DuckDB's own
parser gives the AST (`json_serialize_sql`), a small static type inference rejects what
DuckDB would reject (or what we cannot match exactly), and each expression becomes one
Python function whose source is generated text, so the hot loop pays for no interpretation.

Semantics follow DuckDB (1.5, the version the project pins, and 2.0; both AST formats are
read, see engine/model/duckdb_ast.py; checked against the installed DuckDB in tests/engine/test_condition.py):
three-valued logic; NaN equals NaN and sorts above +inf; BIGINT vs DOUBLE compares as
DOUBLE; `/` is always DOUBLE division (x/0 -> +-inf or NaN); `//` truncates for integers
and is plain division for DOUBLE; integer `%` truncates; `//` by zero, integer `%` by zero
and integer overflow are errors (raised here as BadInputError); DOUBLE `%` by zero is NaN.
Known gap: decimal literals (1.5) are DOUBLE values here, DECIMAL in DuckDB; where the type
shows (DECIMAL arithmetic with an untyped NULL is an untyped NULL) DuckDB's rule is followed.
"""


from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from converge.engine.condition_compiler import ColumnRef, Compiler, Scope, parse, render
from converge.engine.model.scenario import InputSpec

__all__ = ["ColumnRef", "EquiKey", "SplitCondition", "compile_expression3", "compile_predicate", "compile_view_expression",
           "compile_view_predicate", "right_columns", "split_condition"]


@dataclass(frozen=True)
class EquiKey:
    left: ColumnRef
    right: ColumnRef
    null_safe: bool


@dataclass(frozen=True)
class SplitCondition:
    equi_keys: tuple[EquiKey, ...]
    residual_sql: str | None



# ---------------------------------------------------------------- public API

_CACHE: dict[tuple, Callable[..., Any]] = {}


def _layout_key(layout: Sequence[Sequence[InputSpec]]) -> tuple:
    return tuple(tuple((s.name, s.columns) for s in group) for group in layout)


def _build(sql: str, layout: Sequence[Sequence[InputSpec]], predicate: bool, views: bool = False) -> Callable[..., Any]:
    key = (sql, _layout_key(layout), predicate, views)
    if (fn := _CACHE.get(key)) is not None:
        return fn
    doc, root = parse(sql)
    comp = Compiler(sql, doc, layout, views=views)
    sql_type = "BOOLEAN"
    if predicate:
        comp.need_boolean(comp.value(root), root)  # type-check the whole thing first
        comp.n = 0
        body = comp.truth(root, True)
    else:
        value = comp.value(root)
        body, sql_type = value.src, value.type
    params = ", ".join(f"a{i}" for i in range(len(layout)))
    source = f"def _condition({params}):\n    return {body}\n"
    exec(compile(source, f"<condition {sql!r}>", "exec"), comp.ns)  # noqa: S102 - generated code
    fn = comp.ns["_condition"]
    fn.source = source  # for debugging and tests
    fn.sql_type = sql_type  # the static SQL type (NULL: an untyped NULL)
    _CACHE[key] = fn
    return fn


def compile_predicate(sql: str | None, layout: Sequence[Sequence[InputSpec]]) -> Callable[..., bool]:
    """f(*args) is True iff the condition is TRUE for the rows in args (FALSE/NULL -> falsy).

    args[i] is the concatenation of the rows of layout[i]; a NULL-padded input is all None.
    """
    if sql is None:
        return lambda *args: True
    return _build(sql, layout, predicate=True)


def compile_expression3(sql: str, layout: Sequence[Sequence[InputSpec]]) -> Callable[..., object]:
    """Like compile_predicate but returns the SQL value (None for NULL) — for tests and TLP checks."""
    return _build(sql, layout, predicate=False)


def compile_view_expression(sql: str, layout: Sequence[Sequence[InputSpec]]) -> tuple[Callable[..., object], str]:
    """A view's column expression (CASE and IF allowed): f(*args) -> the SQL value, and its static type."""
    fn = _build(sql, layout, predicate=False, views=True)
    return fn, fn.sql_type  # type: ignore[attr-defined]


def compile_view_predicate(sql: str, layout: Sequence[Sequence[InputSpec]]) -> Callable[..., bool]:
    """A view's filter (a WHERE): as compile_predicate, with CASE and IF allowed."""
    return _build(sql, layout, predicate=True, views=True)


def split_condition(sql: str, left_inputs: Sequence[InputSpec], right_input: InputSpec) -> SplitCondition:
    """Equi keys (left input column = right input column, top-level AND only) + the residual.

    The whole condition is type-checked first, so every column reference is validated.
    Results are cached: planning runs once per generated example.
    """
    # The split depends only on names and columns, not on unique keys or changelog modes.
    return _split_cached(sql, tuple(InputSpec(s.name, s.columns) for s in left_inputs),
                         InputSpec(right_input.name, right_input.columns))


@functools.lru_cache(maxsize=4096)
def _split_cached(sql: str, left_inputs: tuple[InputSpec, ...], right_input: InputSpec) -> SplitCondition:
    compile_predicate(sql, [tuple(left_inputs), (right_input,)])
    doc, root = parse(sql)
    scope = Scope([tuple(left_inputs), (right_input,)], sql)

    def conjuncts(node: dict) -> list[dict]:
        if node.get("class") == "CONJUNCTION" and node.get("type") == "CONJUNCTION_AND":
            return [c for child in node["children"] for c in conjuncts(child)]
        return [node]

    keys: list[EquiKey] = []
    rest: list[dict] = []
    for c in conjuncts(root):
        if (c.get("class") == "COMPARISON" and c.get("type") in ("COMPARE_EQUAL", "COMPARE_NOT_DISTINCT_FROM")
                and c["left"].get("class") == "COLUMN_REF" and c["right"].get("class") == "COLUMN_REF"):
            (la, _, _, lref), (ra, _, _, rref) = (scope.resolve(c["left"]["column_names"]),
                                                  scope.resolve(c["right"]["column_names"]))
            if {la, ra} == {0, 1}:
                left, right = (lref, rref) if la == 0 else (rref, lref)
                keys.append(EquiKey(left, right, c["type"] == "COMPARE_NOT_DISTINCT_FROM"))
                continue
        rest.append(c)
    if not keys:
        return SplitCondition((), sql.strip())
    if not rest:
        return SplitCondition(tuple(keys), None)
    node = rest[0] if len(rest) == 1 else {**root, "children": rest}
    return SplitCondition(tuple(keys), render(doc, node))



def right_columns(sql: str, left_inputs: Sequence[InputSpec], right_input: InputSpec) -> frozenset[str]:
    """The right input's columns the condition reads (what a planner keeps of an input the join only tests)."""
    return _right_columns_cached(sql, tuple(InputSpec(s.name, s.columns) for s in left_inputs),
                                 InputSpec(right_input.name, right_input.columns))


@functools.lru_cache(maxsize=4096)
def _right_columns_cached(sql: str, left_inputs: tuple[InputSpec, ...], right_input: InputSpec) -> frozenset[str]:
    _, root = parse(sql)
    scope = Scope([tuple(left_inputs), (right_input,)], sql)
    found: set[str] = set()

    def visit(node: object) -> None:
        if isinstance(node, dict):
            if node.get("class") == "COLUMN_REF":
                arg, _, _, ref = scope.resolve(node["column_names"])
                if arg == 1:
                    found.add(ref.column)
                return
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(root)
    return frozenset(found)
