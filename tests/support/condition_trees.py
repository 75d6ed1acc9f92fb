"""What the v2 expression trees are checked on: the residuals the generators draw, hand-picked hard ones, rows of
every column type, and DuckDB's answer (or error) for the SQL a tree came from.

tests/engine/test_condition_tree.py holds converge's trees to it; tests/systems/pathway/test_expression_duckdb.py
holds the Pathway adapter's translation of the same trees.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import duckdb
from hypothesis import strategies as st

from converge.engine.model.scenario import InputSpec
from converge.generators import anomalies, interval, multiway, scenarios
from tests.support.adapters.tree_eval import ByZero, SqlError
from tests.support.conditions import COLS

A = InputSpec("a", (("k", "BIGINT"), ("id", "BIGINT"), ("x", "BIGINT"), ("v", "BIGINT"), ("s", "VARCHAR"),
                    ("d", "DOUBLE"), ("i", "INTEGER"), ("f", "BOOLEAN")))
B = InputSpec("b", (("k", "BIGINT"), ("id", "BIGINT"), ("y", "BIGINT"), ("v", "BIGINT"), ("s", "VARCHAR"),
                    ("e", "DOUBLE"), ("j", "INTEGER"), ("g", "BOOLEAN")))


def duckdb_value(con: duckdb.DuckDBPyConnection, sql: str, row: dict, specs: tuple = (A, B)) -> Any:
    """sql over one row of a and one of b, as DuckDB computes it (SqlError where DuckDB raises)."""
    def rel(spec: InputSpec) -> str:
        return "(SELECT " + ", ".join(f"?::{t} AS {c}" for c, t in spec.columns) + f") {spec.name}"
    params = [row[s.name, c] for s in specs for c, _ in s.columns]
    try:
        return con.execute(f"SELECT ({sql}) FROM {', '.join(map(rel, specs))}", params).fetchone()[0]
    except duckdb.Error as exc:
        raise SqlError(str(exc)) from None


def answer(fn, *args) -> tuple[str, Any]:  # type: ignore[no-untyped-def]
    try:
        return "value", fn(*args)
    except ByZero:
        return "by zero", None
    except SqlError:
        return "error", None


def agree(want: tuple[str, Any], got: tuple[str, Any]) -> bool:
    (wk, w), (gk, g) = want, got
    if isinstance(w, Decimal):  # a decimal literal is DOUBLE in the tree (documented), DECIMAL in DuckDB
        w = float(w)
    if wk != gk:
        return False
    if isinstance(w, float) and isinstance(g, (int, float)) and not isinstance(g, bool):
        return (w != w and g != g) or w == g
    return type(w) is type(g) and w == g if w is not None else g is None


BIGINTS = st.one_of(st.none(), st.integers(-4, 4), st.sampled_from([2**31, -(2**63), 2**63 - 1, 2**40]))
INTEGERS = st.one_of(st.none(), st.integers(-4, 4), st.sampled_from([2**31 - 1, -(2**31)]))
DOUBLES = st.one_of(st.none(), st.sampled_from([0.0, -0.0, 1.5, -2.5, 0.1, 1e16, 1e-5, 3.0]),
                    st.floats(allow_nan=True, allow_infinity=True))
STRINGS = st.one_of(st.none(), st.sampled_from(["", "a", "B", "ß", "İ", "ᾀ", "Σa", "é"]), st.text(max_size=4))
VALUES = {"BIGINT": BIGINTS, "INTEGER": INTEGERS, "DOUBLE": DOUBLES, "VARCHAR": STRINGS,
          "BOOLEAN": st.one_of(st.none(), st.booleans())}


def rows(specs: tuple) -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries({(s.name, c): VALUES[t] for s in specs for c, t in s.columns})


ROWS = rows((A, B))


def _generator_residuals() -> list[str]:
    found = set(scenarios.RESIDUALS) | set(interval.RESIDUALS) | {"a.x > b.y", "a.x <> b.y"}
    found |= {r.format(x="a", t="b") for r in (*multiway.RESIDUALS, *multiway.OR_RESIDUALS)}
    found |= {c for c in interval.KEY_CONDITIONS} | {c for c, _ in scenarios.KEY_CONDITIONS}
    assert anomalies  # its residuals (a.x > b.y, a.x <> b.y) are its function's defaults, listed above
    return sorted(r for r in found if r)


GENERATOR_RESIDUALS = _generator_residuals()
HARD = [
    "a.x IS NULL OR b.y > 1", "NOT (a.x < b.y OR a.s > b.s)", "NOT (a.f AND b.g)", "a.f OR NULL",
    "a.x IN (1, NULL)", "a.x NOT IN (1, NULL)", "a.x IN (b.y, 2, b.k)", "a.x BETWEEN b.y AND NULL",
    "a.d NOT BETWEEN b.e AND 2", "a.x = a.d", "a.x < b.e", "a.d = b.e", "a.d > b.e", "a.d <= b.e",
    "a.x // 2 = b.y", "a.x // b.y > 0", "a.x % b.y = 1", "a.d // b.e > 0", "a.d % b.e < 1", "a.i % b.j = 0",
    "a.x / b.y > 0.5", "a.d / b.e >= a.x", "a.i + b.j > 0", "a.i * b.j < 100", "-a.i < b.j", "abs(a.x) >= b.y",
    "a.x * b.y > 3", "a.x - b.y < 0", "a.s || b.s = 'ab'", "lower(a.s) = lower(b.s)", "upper(a.s) < b.s",
    "length(a.s || b.s) > 1", "a.s < b.s", "a.s >= 'ß'", "coalesce(a.x, b.y, 0) > 1", "coalesce(a.d, b.j) <> 1.5",
    "CAST(a.d AS BIGINT) = b.y", "CAST(a.d AS INTEGER) > b.j", "CAST(a.x AS DOUBLE) < b.e",
    "CAST(a.x AS INTEGER) = b.j", "CAST(a.x AS VARCHAR) = b.s", "CAST(a.d AS VARCHAR) < b.s",
    "CAST(a.f AS VARCHAR) = b.s", "CAST(a.f AS BIGINT) = b.y", "CAST(a.d AS BOOLEAN) = b.g",
    "CAST(a.x AS BOOLEAN) = b.g", "CAST(2.5 AS INTEGER) = b.j", "CAST(-2.5 AS BIGINT) = b.y",
    "a.d > CAST('nan' AS DOUBLE)", "a.d = CAST('-inf' AS DOUBLE)", "a.d < CAST('inf' AS DOUBLE)",
    "a.x IS NOT DISTINCT FROM b.y", "a.x IS NOT NULL OR b.s IS NULL", "a.d IS DISTINCT FROM b.e", "a.x IS DISTINCT FROM NULL",
    "a.f IS NOT DISTINCT FROM b.g", "a.f < b.g", "NOT a.x IS NULL", "(a.x = b.y) IS NULL",
    "a.x + 2147483647 > b.y", "a.i + 2147483647 > b.j", "a.x = 3000000000", "-a.x <= b.y", "+a.x = b.y",
    "a.x = NULL", "NOT (NULL AND a.f)", "a.x > 1 AND a.x < 3 AND b.y = 1", "a.s = 'it''s' OR b.s = ''",
]
TC = (InputSpec("a", COLS), InputSpec("b", COLS))  # the inputs of tests/support/conditions.py's expressions


