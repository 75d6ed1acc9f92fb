"""Comma joins, IS [NOT] TRUE / FALSE / UNKNOWN and Flink's interval-join rules as the reader reads them (issue 40).

Each expected reading is written by hand from the SQL (Calcite: a comma binds looser than JOIN; Flink pushes a
WHERE conjunct into the inner join where its tables meet; IntervalJoinUtil takes one equality of the time
attributes or one lower and one upper bound), and each query's reading agrees with the query as written, run in
DuckDB, on generated data."""

from __future__ import annotations

import itertools

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings

from converge.engine.condition import compile_expression3
from converge.engine.model.errors import BadInputError, UnsupportedError
from converge.engine.model.flinksql import parse_query
from converge.engine.model.scenario import InputSpec
from converge.properties.query_check import CheckOptions, query_strategy
from converge.properties.query_reading import reading_equals_query

T = """CREATE TABLE a (k INT, x INT, rt TIMESTAMP(3), WATERMARK FOR rt AS rt - INTERVAL '1' SECOND)
  WITH ('connector' = 'kafka', 'format' = 'json');
CREATE TABLE b (k INT, y INT, rt TIMESTAMP(3), WATERMARK FOR rt AS rt) WITH ('connector' = 'kafka', 'format' = 'json');
CREATE TABLE c (k INT, z STRING) WITH ('connector' = 'kafka', 'format' = 'json');
"""

# query -> (join types, conditions, where, interval bounds or None), written by hand
READINGS = {
    "SELECT a.k, b.y FROM a, b WHERE a.k = b.k AND a.x > 1":
        (("inner",), ("(a.k = b.k) AND (a.x > 1)",), None, None),
    "SELECT * FROM a, b, c WHERE a.k = b.k AND b.k = c.k AND c.z <> 'x'":
        (("inner", "inner"), ("(a.k = b.k)", "(b.k = c.k) AND (c.z <> 'x')"), None, None),
    # the LEFT JOIN's ON keeps its own condition; a WHERE conjunct on c stays a filter on the output
    "SELECT a.k, c.z FROM a, b LEFT JOIN c ON b.k = c.k WHERE a.k = b.k AND c.z IS NULL":
        (("inner", "left"), ("(a.k = b.k)", "(b.k = c.k)"), "(c.z IS NULL)", None),
    # a RIGHT JOIN after the comma: moving a.k = b.k below it would keep c's padded rows it filters away
    "SELECT a.k, c.z FROM a, b RIGHT JOIN c ON b.k = c.k WHERE a.k = b.k":
        (("inner", "right"), ("TRUE", "(b.k = c.k)"), "(a.k = b.k)", None),
    # an explicit join first, then the comma: the conjunct naming c moves into the comma join
    "SELECT a.k FROM a JOIN b ON a.k = b.k, c WHERE c.k = b.y":
        (("inner", "inner"), ("(a.k = b.k)", "(c.k = b.y)"), None, None),
    "SELECT a.k FROM a, b": (("inner",), ("TRUE",), None, None),
    # a derived table in a comma join, its columns named unqualified (Flink's JoinITCase.testJoinWithAlias shape):
    # each name belongs to exactly one FROM item, so `ka = k` names both sides and is the join's condition
    "SELECT y, w FROM (SELECT k AS ka, x AS w FROM a) AS v, b WHERE ka = k AND w < 4":
        (("inner",), ("(v.ka = b.k) AND (v.w < 4)",), None, None),
    # without an alias (Calcite's EXPR$0): the input is named after the table it reads
    "SELECT y, w FROM (SELECT k AS ka, x AS w FROM a), b WHERE ka = k AND w < 4":
        (("inner",), ("(a.ka = b.k) AND (a.w < 4)",), None, None),
    "SELECT z, w FROM (SELECT k AS ka, x AS w FROM a) v, b, c WHERE ka = b.k AND y = c.k AND z <> 'q'":
        (("inner", "inner"), ("(v.ka = b.k)", "(b.y = c.k) AND (c.z <> 'q')"), None, None),
    # time predicates in WHERE make the comma join an interval join, as in an ON
    "SELECT a.k FROM a, b WHERE a.k = b.k AND a.rt BETWEEN b.rt - INTERVAL '1' SECOND AND b.rt":
        (("inner",), ("(a.k = b.k)",), None, (-1000, 0)),
    # Flink pushes WHERE time bounds into an INNER JOIN before it looks for the window: an interval join
    "SELECT a.k FROM a JOIN b ON a.k = b.k WHERE a.rt BETWEEN b.rt - INTERVAL '1' SECOND AND b.rt AND a.x > 1":
        (("inner",), ("(a.k = b.k)",), "(a.x > 1)", (-1000, 0)),
    "SELECT a.k FROM a JOIN b ON a.k = b.k WHERE b.rt = a.rt": (("inner",), ("(a.k = b.k)",), None, (0, 0)),
    # an equality of the two time attributes is an interval join with bounds [d, d]
    "SELECT a.k FROM a, b WHERE a.k = b.k AND a.rt = b.rt": (("inner",), ("(a.k = b.k)",), None, (0, 0)),
    "SELECT a.k FROM a LEFT JOIN b ON a.k = b.k AND b.rt = a.rt - INTERVAL '2' SECOND":
        (("left",), ("(a.k = b.k)",), None, (2000, 2000)),
    # lower bound above the upper: valid SQL, an empty window
    "SELECT a.k FROM a FULL JOIN b ON a.k = b.k AND a.rt BETWEEN b.rt + INTERVAL '3' SECOND AND b.rt + INTERVAL '1' SECOND":
        (("full",), ("(a.k = b.k)",), None, (3000, 1000)),
    "SELECT a.k FROM a JOIN b ON a.k = b.k AND (a.x > b.y) IS NOT TRUE":
        (("inner",), ("(a.k = b.k) AND (NOT (((a.x > b.y)) IS TRUE))",), None, None),
    "SELECT a.k FROM a LEFT JOIN b ON a.k = b.k AND (a.x = b.y) IS FALSE WHERE (b.y > 0) IS UNKNOWN":
        (("left",), ("(a.k = b.k) AND (((a.x = b.y)) IS FALSE)",), "(((b.y > 0)) IS NULL)", None),
    "SELECT a.k FROM a JOIN b ON a.k = b.k AND NOT ((a.x < b.y) IS NOT FALSE)":
        (("inner",), ("(a.k = b.k) AND (NOT ((NOT (((a.x < b.y)) IS FALSE))))",), None, None),
}


@pytest.mark.parametrize("sql", READINGS)
def test_the_reading_is_the_one_written_by_hand(sql: str) -> None:
    q = parse_query(T + sql)
    types, conditions, where, bounds = READINGS[sql]
    assert (q.join.types, q.join.conditions, q.where_sql) == (types, conditions, where)
    iv = q.join.interval
    assert (None if iv is None else (iv.lower_ms, iv.upper_ms)) == bounds


@pytest.mark.parametrize("sql", READINGS)
def test_the_reading_agrees_with_the_query_as_written_on_generated_data(sql: str) -> None:
    query = parse_query(T + sql, "q.sql")

    @settings(max_examples=15, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(query_strategy(query, CheckOptions().config(ttl=False), late=False))
    def agree(scenario) -> None:
        reading_equals_query(query, scenario)

    agree()


def test_the_plan_only_output_says_where_the_where_conjuncts_went() -> None:
    q = parse_query(T + "SELECT a.k FROM a, b, c\nWHERE a.k = b.k AND b.k = c.k", "q.sql")
    assert q.notes == (
        "comma join of b: an INNER JOIN whose ON is the WHERE conjunct at 6:7 (Flink pushes it into the join)",
        "comma join of c: an INNER JOIN whose ON is the WHERE conjunct at 6:21 (Flink pushes it into the join)")


@pytest.mark.parametrize("sql, error, where, what", [
    # Calcite: `a, b JOIN c ON ...` is `a, (b JOIN c ON ...)`: the ON cannot see a
    ("SELECT a.k FROM a, b JOIN c ON a.k = c.k", BadInputError, "q.sql:5:32", "'a' is not visible in this ON"),
    ("SELECT a.k FROM a JOIN b ON a.k = b.k AND a.x IS TRUE", BadInputError, "q.sql:5:43",
     "IS TRUE needs a boolean operand, got a int value"),
    # IntervalJoinUtil: one bound alone, or an equality beside a range, is a regular join over time attributes
    ("SELECT a.k FROM a JOIN b ON a.k = b.k AND a.rt > b.rt", UnsupportedError, "q.sql:5:29",
     "not one equality of the two time attributes nor one lower and one upper bound"),
    ("SELECT a.k FROM a JOIN b ON a.k = b.k AND a.rt = b.rt AND a.rt >= b.rt", UnsupportedError, "q.sql:5:29",
     "not one equality"),
])
def test_refusals(sql: str, error: type, where: str, what: str) -> None:
    with pytest.raises(error) as info:
        parse_query(T + sql, "q.sql")
    assert type(info.value) is error and str(info.value).startswith(where) and what in str(info.value)


@pytest.mark.parametrize("condition", [
    "(a.x > b.y) IS TRUE", "(a.x > b.y) IS NOT TRUE", "(a.x > b.y) IS FALSE", "(a.x > b.y) IS NOT FALSE",
    "(a.x > b.y) IS NULL", "NOT ((a.x > b.y) IS NOT TRUE)"])
def test_the_engines_condition_keeps_three_valued_logic_as_duckdb(condition: str) -> None:
    """Rendered as the reader renders them, the engine's compiled condition and DuckDB agree on every NULL mix;
    the truth table is the SQL standard's (IS TRUE / IS FALSE are never UNKNOWN)."""
    a = InputSpec("a", (("k", "BIGINT"), ("x", "BIGINT")), None, "insert_only", None)
    b = InputSpec("b", (("k", "BIGINT"), ("y", "BIGINT")), None, "insert_only", None)
    compiled = compile_expression3(condition, [[a], [b]])
    con = duckdb.connect()
    truth = {"(a.x > b.y) IS TRUE": {None: False, True: True, False: False},
             "(a.x > b.y) IS NOT TRUE": {None: True, True: False, False: True},
             "(a.x > b.y) IS FALSE": {None: False, True: False, False: True},
             "(a.x > b.y) IS NOT FALSE": {None: True, True: True, False: False},
             "(a.x > b.y) IS NULL": {None: True, True: False, False: False},
             "NOT ((a.x > b.y) IS NOT TRUE)": {None: False, True: True, False: False}}[condition]
    for x, y in itertools.product([None, 1, 2], repeat=2):
        inner = None if x is None or y is None else x > y
        got = compiled((1, x), (1, y))
        duck = con.execute(f"SELECT {condition} FROM (SELECT ?::BIGINT AS x) a, (SELECT ?::BIGINT AS y) b",
                           [x, y]).fetchone()[0]
        assert got == duck == truth[inner], (x, y)
