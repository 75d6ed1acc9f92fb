"""The Pathway adapter's residual evaluator against DuckDB: the trees converge sends (engine/condition_tree.py) for
the generators' residuals, hand-picked hard ones and random expressions, each evaluated by the adapter's own code
(the very file the Pathway environment runs) on random rows and compared with DuckDB's answer to the SQL text.
A row converge's engine refuses or DuckDB fails on (an ERROR of docs/adapter-protocol.md: overflow, division by
zero) is never sent to an adapter, so it is not compared. Needs no Pathway.
"""

from __future__ import annotations

import json

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from converge.engine.condition import compile_expression3
from converge.engine.condition_tree import expression_tree
from converge.engine.model.errors import BadInputError
from converge.systems.pathway.environment import program_module
from tests.support.condition_trees import GENERATOR_RESIDUALS, HARD, ROWS, TC, A, B, agree, answer, duckdb_value, rows
from tests.support.conditions import expr

expression = program_module("expression")
SUPPRESS = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    return duckdb.connect()


def adapter_value(tree: dict, row: dict, specs: tuple) -> object:
    columns = {s.name: [c for c, _ in s.columns] for s in specs}
    values = {s.name: [row[s.name, c] for c, _ in s.columns] for s in specs}
    return expression.compile_tree(expression.bind_columns(tree, columns))(values)


def compare(con: duckdb.DuckDBPyConnection, sql: str, row: dict, specs: tuple = (A, B)) -> None:
    args = [tuple(row[s.name, c] for c, _ in s.columns) for s in specs]
    try:
        compile_expression3(sql, [[s] for s in specs])(*args)
    except BadInputError:
        return  # converge refuses this row: no adapter is ever sent it
    tree = expression_tree(sql, [specs[0]], specs[1])
    want = answer(duckdb_value, con, sql, row, specs)
    if want[0] == "error":
        return  # nor one where DuckDB fails (an overflow it evaluates beside a NULL): the oracle refuses the case
    got = ("value", adapter_value(tree, row, specs))
    assert agree(want, got), f"{sql} on {row}: DuckDB {want}, the adapter {got}\n{json.dumps(tree)}"


@pytest.mark.parametrize("sql", GENERATOR_RESIDUALS + HARD)
@settings(max_examples=8, deadline=None, suppress_health_check=SUPPRESS)
@given(row=ROWS)
def test_the_adapter_evaluates_residuals_as_duckdb(con, sql: str, row: dict) -> None:  # type: ignore[no-untyped-def]
    compare(con, sql, row)


def _random_expression(con, data, row) -> None:  # type: ignore[no-untyped-def]
    sql = data.draw(expr(data.draw(st.sampled_from(["bool"] * 4 + ["num", "int", "str"]))))
    compare(con, sql, row, TC)


@settings(max_examples=30, deadline=None, suppress_health_check=SUPPRESS)
@given(data=st.data(), row=rows(TC))
def test_the_adapter_evaluates_random_expressions_as_duckdb(con, data, row) -> None:  # type: ignore[no-untyped-def]
    _random_expression(con, data, row)


@pytest.mark.slow
@settings(max_examples=600, deadline=None, suppress_health_check=SUPPRESS)
@given(data=st.data(), row=rows(TC))
def test_the_adapter_evaluates_random_expressions_as_duckdb_long_run(con, data, row) -> None:  # type: ignore[no-untyped-def]
    _random_expression(con, data, row)


def test_the_comparison_can_fail(con) -> None:  # type: ignore[no-untyped-def]
    """A NULL that the adapter took for FALSE would be caught."""
    row = {(s.name, c): None for s in (A, B) for c, _ in s.columns}
    assert duckdb_value(con, "NOT (a.x > 1)", row) is None
    assert not agree(("value", None), ("value", False))


@pytest.mark.xfail(strict=True, reason="known engine gap: converge types a decimal literal (2.5) as DOUBLE, Flink and "
                                       "DuckDB as DECIMAL(2,1); past 2**53 a BIGINT % 2.5 differs (-0.5 vs -2.0)")
def test_a_bigint_modulo_a_decimal_literal_near_the_bigint_minimum(con) -> None:  # type: ignore[no-untyped-def]
    """Found by the random-expression test above (2026-11-26): (1 + -2**63) % 2.5 is exactly -2.0 in DECIMAL(20,1)
    arithmetic (9223372036854775807 = 3689348814741910322 * 2.5 + 2.0); converge's tree says DOUBLE, and the
    adapter (like converge's own engine) computes -0.5 from the rounded double. Strict: passes once it is fixed."""
    row = {(s.name, c): None for s in TC for c, _ in s.columns}
    row["a", "x"] = 1
    row["b", "k"] = -2**63
    compare(con, "((a.x + b.k) % 2.5)", row, TC)
