"""converge.engine.condition: equi-key splitting, and compiled conditions checked against DuckDB itself."""

from __future__ import annotations

import math
from decimal import Decimal

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from converge.engine.condition import (
    ColumnRef,
    EquiKey,
    SplitCondition,
    compile_expression3,
    compile_predicate,
    split_condition,
)
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import InputSpec
from tests.support.conditions import ROW, A, B, duckdb_values, expr

C = InputSpec("c", (("k", "BIGINT"), ("y", "INTEGER"), ("name", "VARCHAR")))
LAYOUT = [[A], [B]]


def key(li: str, lc: str, ri: str, rc: str, null_safe: bool = False) -> EquiKey:
    return EquiKey(ColumnRef(li, lc), ColumnRef(ri, rc), null_safe)


# ---------------------------------------------------------------- split_condition


def test_split_keys_in_both_operand_orders_and_residual() -> None:
    got = split_condition("a.k = b.k AND b.x = a.x AND a.f > b.f + 1", [A], B)
    assert got.equi_keys == (key("a", "k", "b", "k"), key("a", "x", "b", "x"))
    assert got.residual_sql == "(a.f > (b.f + 1))"


def test_split_null_safe_keys() -> None:
    got = split_condition("b.s IS NOT DISTINCT FROM a.s AND a.k = b.k", [A], B)
    assert got == SplitCondition((key("a", "s", "b", "s", True), key("a", "k", "b", "k")), None)


def test_split_constants_or_and_same_side_stay_residual() -> None:
    sql = "a.k = 1 AND (a.k = b.k OR a.x = b.x) AND a.k = a.x AND a.k IS DISTINCT FROM b.k AND a.k + 0 = b.k"
    got = split_condition(sql, [A], B)
    assert got.equi_keys == ()
    assert got.residual_sql == sql
    got = split_condition("a.k = b.k AND (a.x = 1 OR b.x = 2)", [A], B)
    assert got.residual_sql == "((a.x = 1) OR (b.x = 2))"


def test_split_multi_input_chain_and_unqualified_columns() -> None:
    got = split_condition("c.k = b.k AND name = b.s AND a.k = b.x AND a.x = c.y", [A, C], B)
    assert got.equi_keys == (key("c", "k", "b", "k"), key("c", "name", "b", "s"), key("a", "k", "b", "x"))
    assert got.residual_sql == "(a.x = c.y)"  # between two left inputs: not a key of this join


def test_split_residual_still_compiles_and_means_the_same() -> None:
    got = split_condition("a.k = b.k AND NOT a.f BETWEEN 1 AND 2.5 AND a.s IN ('x', NULL)", [A], B)
    assert got.residual_sql is not None
    pred = compile_predicate(got.residual_sql, LAYOUT)
    assert pred((1, 1, "x", 3.0, True), (1, 1, "y", 0.0, False)) is True
    assert not pred((1, 1, "z", 3.0, True), (1, 1, "y", 0.0, False))  # 'z' IN ('x', NULL) is NULL


@pytest.mark.parametrize(("sql", "needle"), [
    ("a.k = c.k", "unknown input 'c'"),
    ("a.k = b.nope", "no column 'nope'"),
    ("k = 1", "ambiguous column 'k'"),
    ("zz = 1", "unknown column 'zz'"),
    ("a.k = b.s", "cannot compare"),
    ("a.x + a.s > 1", "type error"),
    ("a.x AND b.flag", "expected a BOOLEAN"),
    ("a.s LIKE 'x%'", "unsupported function '~~'"),
    ("regexp_matches(a.s, 'x')", "unsupported function 'regexp_matches'"),
    ("a.k IN (SELECT 1)", "unsupported"),
    ("TRUE; SELECT 1", "not a single boolean expression"),
    ("TRUE ORDER BY 1", "not a single boolean expression"),
])
def test_bad_conditions_name_the_problem(sql: str, needle: str) -> None:
    with pytest.raises(BadInputError, match=needle.replace("(", r"\(")):
        split_condition(sql, [A], B)


def test_parse_error_names_condition_and_duckdb_message() -> None:
    with pytest.raises(BadInputError) as info:
        split_condition("a.k = = b.k", [A], B)
    assert "a.k = = b.k" in str(info.value) and 'syntax error at or near "="' in str(info.value)


# ---------------------------------------------------------------- compiled code


def test_simple_comparison_compiles_to_inline_code() -> None:
    pred = compile_predicate("a.x > b.x", LAYOUT)
    assert pred.source.split("return ", 1)[1].strip() == (  # type: ignore[attr-defined]
        "((_1 := a0[1]) is not None and (_2 := a1[1]) is not None and _1 > _2)")
    assert compile_predicate("a.x > b.x", LAYOUT) is pred  # compiled once, cached
    assert compile_predicate(None, LAYOUT)((None,) * 5, (None,) * 5) is True


def test_null_padded_rows_and_three_valued_logic() -> None:
    nulls = (None,) * 5
    row = (1, 2, "s", 1.5, True)
    assert not compile_predicate("a.x > 1", LAYOUT)(nulls, row)
    assert compile_predicate("NOT (a.x > 1)", LAYOUT)(nulls, row) is False
    assert compile_expression3("a.x > 1 OR b.flag", LAYOUT)(nulls, row) is True
    assert compile_expression3("a.x > 1 AND b.flag", LAYOUT)(nulls, row) is None
    assert compile_expression3("a.x > 1 AND NOT b.flag", LAYOUT)(nulls, row) is False
    assert compile_predicate("a.k IS NOT DISTINCT FROM b.k", LAYOUT)(nulls, nulls) is True


def test_runtime_errors_like_duckdb() -> None:
    row = (1, 0, "s", 0.0, True)
    for sql in ("a.k // a.x = 1", "a.k % a.x = 1", "a.f // a.f = 1", "a.k * 9223372036854775807 * 2 > 0"):
        with pytest.raises(BadInputError):
            compile_predicate(sql, LAYOUT)(row, row)
    assert math.isinf(compile_expression3("a.k / a.x", LAYOUT)(row, row))  # DOUBLE division: inf
    assert math.isnan(compile_expression3("a.f % a.f", LAYOUT)(row, row))  # DOUBLE %: NaN


@pytest.mark.parametrize(("sql", "row"), [
    ("c.y + c.y", (1, 2**31 - 1, "")), ("c.y * 65536", (1, 65536, "")), ("-c.y", (1, -(2**31), "")),
    ("c.y // -1", (1, -(2**31), "")), ("CAST(c.k AS INTEGER)", (2**31, 1, "")), ("abs(c.k)", (-(2**63), 1, "")),
    ("c.y + c.k", (2**31, 2**31 - 1, "")),  # BIGINT result: no overflow
])
def test_integer_overflow_matches_duckdb(con, sql: str, row: tuple) -> None:  # type: ignore[no-untyped-def]
    try:
        want = con.execute(f"SELECT {sql} FROM (SELECT ?::BIGINT AS k, ?::INTEGER AS y, ?::VARCHAR AS \"name\") c", list(row))
        want = want.fetchone()[0]
    except duckdb.Error:
        with pytest.raises(BadInputError, match="overflow"):
            compile_expression3(sql, [[C]])(row)
    else:
        assert compile_expression3(sql, [[C]])(row) == want


# ---------------------------------------------------------------- differential test against DuckDB
# (the random expressions and DuckDB's values: tests/support/conditions.py)

@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    return duckdb.connect()


def same(expected: object, got: object) -> bool:
    if isinstance(expected, Decimal):  # DuckDB keeps decimal literals DECIMAL; we use DOUBLE
        expected = float(expected)
    if expected is None or got is None or isinstance(expected, (bool, str)) or isinstance(got, (bool, str)):
        return expected is got or (type(expected) is type(got) and expected == got)
    if type(expected) is not type(got):  # e.g. coalesce(BIGINT, DOUBLE) must be a float
        return False
    return expected == got or (isinstance(got, float) and math.isnan(expected) and math.isnan(got))


def check(con: duckdb.DuckDBPyConnection, sql: str, rows_a: list, rows_b: list, evaluate=None) -> None:
    expected = duckdb_values(con, sql, rows_a, rows_b)
    value = evaluate or compile_expression3(sql, LAYOUT)
    pairs = [(ra, rb) for ra in rows_a for rb in rows_b]
    for (ra, rb), want in zip(pairs, expected, strict=True):
        got = value(ra, rb)
        assert same(want, got), f"{sql} on a={ra} b={rb}: DuckDB {want!r}, compiled {got!r}"
        if evaluate is None and (want is None or isinstance(want, bool)):
            try:
                pred = compile_predicate(sql, LAYOUT)
            except BadInputError:  # NULL-typed or non-boolean: not a predicate
                continue
            assert bool(pred(ra, rb)) is (want is True), f"predicate {sql} on a={ra} b={rb}"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), rows_a=st.lists(ROW, min_size=1, max_size=3), rows_b=st.lists(ROW, min_size=1, max_size=3))
def test_differential_against_duckdb(con, data, rows_a, rows_b) -> None:  # type: ignore[no-untyped-def]
    kind = data.draw(st.sampled_from(["bool"] * 6 + ["num", "int", "str"]))
    check(con, data.draw(expr(kind)), rows_a, rows_b)


@pytest.mark.parametrize("sql", [
    "a.k / a.x", "a.f / a.x", "a.k // 2", "a.k % (-3)", "a.f // 2", "a.f % 2", "a.f % a.f", "a.k / 2",
    "a.f > b.f", "a.f = b.f", "a.f <> b.f", "a.f < b.f", "a.f IN (1.0, 2.5)", "a.f NOT IN (b.f, 1)",
    "a.k BETWEEN NULL AND 0", "a.k IN (1, NULL)", "a.k NOT IN (1, NULL)", "upper(a.s) || lower(b.s)",
    "length(a.s) >= 1", "CAST(a.f AS VARCHAR)", "CAST(a.k AS BOOLEAN)", "CAST(a.f AS BOOLEAN)",
    "a.k = 1.0", "a.f = a.k", "coalesce(a.k, a.f)", "CAST('2.5' AS DOUBLE) < a.f", "2.5::INTEGER = a.k",
    "(-2.5)::BIGINT = a.k", "NOT a.flag IS NOT DISTINCT FROM NULL", "- - a.k", "+a.k",
    # a comparison of constants inside IS [NOT] NULL / IN: the generated `x == y` must not chain
    "('A' = 'B') IS NOT NULL", "(a.k = a.k) IS NOT NULL", "('A' = 'B') IS NOT DISTINCT FROM a.flag",
    "('A' < 'B') IN (a.flag)",
    # DuckDB types a decimal literal DECIMAL: with an untyped NULL, + - * % give an untyped NULL
    "coalesce(0, (NULL % 2.5))", "coalesce(0, NULL * (2.5 + 1))", "coalesce(0, NULL + 1e3)",
    "coalesce(0, NULL / 2.5)", "CAST(coalesce(0, NULL - 2.5) AS VARCHAR)",
    "coalesce(0, coalesce(a.k, 2.5) * NULL)", "coalesce(0, coalesce(a.f, 2.5) * NULL)",
    # a decimal literal wider than 18 digits is serialized as a 128-bit integer in DuckDB 1.x
    "a.f > 1.00000000000000000000001", "a.k < 123456789012345678901.5",
])
def test_fixed_cases_against_duckdb(con, sql: str) -> None:  # type: ignore[no-untyped-def]
    nan, inf = float("nan"), float("inf")
    rows = [(1, 0, "aß", nan, True), (-7, 2, "İ", -0.0, None), (0, 0, None, inf, False),
            (None, -3, "", 2.5, True), (3, 3, "Σa", -2.5, False), (2, 1, "x", 1e-7, None)]
    check(con, sql, rows, rows)


def test_differential_check_can_fail(con) -> None:  # type: ignore[no-untyped-def]
    """A wrong evaluator (NULL > 1 taken as TRUE) must be caught by the same harness."""
    broken = lambda ra, rb: ra[1] is None or ra[1] > 1  # noqa: E731
    with pytest.raises(AssertionError, match="DuckDB None"):
        check(con, "a.x > 1", [(1, None, "s", 0.0, True)], [(1, 1, "s", 0.0, True)], evaluate=broken)
