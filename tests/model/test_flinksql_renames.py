"""Computed columns that only name a physical column's held value, as Flink's own interval-join tests declare them
(`key AS _1, rowtime AS TO_TIMESTAMP_LTZ(_2, 3), val AS _3, WATERMARK FOR rowtime AS ...`; issue 40): read with no
Calc, a renamed rowtime as the input's time column, so an interval join over it is the one converge models. Each
expected reading is written by hand; the query as written (DuckDB computing the columns from the DDL itself) agrees
with converge's reading on generated data and catches a rename read wrong."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings

from converge.engine.model.errors import BadInputError, MisreadQueryError, UnsupportedError
from converge.engine.model.flinksql import parse_query
from converge.engine.model.scenario import InputSpec, IntervalSpec
from converge.properties.query_check import CheckOptions, query_strategy
from converge.properties.query_reading import reading_equals_query

K = "WITH ('connector' = 'kafka', 'format' = 'json')"
COLS = ("_1 STRING, _2 BIGINT, _3 STRING, `key` AS _1, rowtime AS TO_TIMESTAMP_LTZ(_2, 3), val AS _3, "
        "WATERMARK FOR rowtime AS rowtime - INTERVAL '1' SECOND")
T = f"CREATE TABLE T1 ({COLS}) {K};\nCREATE TABLE T2 ({COLS}) {K};\n"
PHYSICAL = (("_1", "VARCHAR"), ("_2", "BIGINT"), ("_3", "VARCHAR"))

# query -> (join type, condition, interval (lower, upper) or None, where, output (name, alias, column, type))
READINGS = {
    # Flink's IntervalJoinITCase.testRowTimeInnerJoinWithEquiTimeAttrs
    "SELECT t1.`key`, t1._2, t1.val, t2.val FROM T1 AS t1 JOIN T2 AS t2 ON t1.`key` = t2.`key` "
    "AND t2.rowtime = t1.rowtime":
        ("inner", "(t1._1 = t2._1)", (0, 0), None,
         [("key", "t1", "_1", "STRING"), ("_2", "t1", "_2", "BIGINT"), ("val", "t1", "_3", "STRING"),
          ("val0", "t2", "_3", "STRING")]),
    "SELECT t1.val, t2.rowtime FROM T1 AS t1 LEFT JOIN T2 AS t2 ON t1.`key` = t2.`key` AND t1.rowtime BETWEEN "
    "t2.rowtime - INTERVAL '2' SECOND AND t2.rowtime + INTERVAL '1' SECOND AND t1.val <> t2.val":
        ("left", "(t1._1 = t2._1) AND (t1._3 <> t2._3)", (-2000, 1000), None,
         [("val", "t1", "_3", "STRING"), ("rowtime", "t2", "_2", "TIMESTAMP_LTZ(3)")]),
    # time bounds in WHERE, on the renamed rowtime: pushed into the INNER JOIN, as Flink does
    "SELECT t2.val FROM T1 AS t1 JOIN T2 AS t2 ON t1.`key` = t2.`key` WHERE t1.rowtime BETWEEN t2.rowtime "
    "AND t2.rowtime + INTERVAL '1' SECOND AND t1._2 > 3":
        ("inner", "(t1._1 = t2._1)", (0, 1000), "(t1._2 > 3)", [("val", "t2", "_3", "STRING")]),
    # a regular join over the renamed key
    "SELECT t1.val FROM T1 AS t1 FULL JOIN T2 AS t2 ON t1.`key` = t2.`key`":
        ("full", "(t1._1 = t2._1)", None, None, [("val", "t1", "_3", "STRING")]),
    # `*`: every column as declared, a rename as the column it names
    "SELECT * FROM T1 AS t1 JOIN T2 AS t2 ON t1.`key` = t2.`key` AND t1.rowtime = t2.rowtime":
        ("inner", "(t1._1 = t2._1)", (0, 0), None,
         [("_1", "t1", "_1", "STRING"), ("_2", "t1", "_2", "BIGINT"), ("_3", "t1", "_3", "STRING"),
          ("key", "t1", "_1", "STRING"), ("rowtime", "t1", "_2", "TIMESTAMP_LTZ(3)"), ("val", "t1", "_3", "STRING"),
          ("_10", "t2", "_1", "STRING"), ("_20", "t2", "_2", "BIGINT"), ("_30", "t2", "_3", "STRING"),
          ("key0", "t2", "_1", "STRING"), ("rowtime0", "t2", "_2", "TIMESTAMP_LTZ(3)"),
          ("val0", "t2", "_3", "STRING")]),
}


@pytest.mark.parametrize("sql", READINGS)
def test_the_reading_names_the_physical_columns_as_written_by_hand(sql: str) -> None:
    q = parse_query(T + sql)
    jtype, condition, bounds, where, output = READINGS[sql]
    assert (q.join.types, q.join.conditions, q.where_sql) == ((jtype,), (condition,), where)
    assert q.join.interval == (None if bounds is None else IntervalSpec("t1._2", "t2._2", *bounds, "event", 0))
    assert [(o.name, o.alias, o.column, o.type.name) for o in q.output] == output
    assert q.inputs == (InputSpec("t1", PHYSICAL, None, "insert_only", "_2"),
                        InputSpec("t2", PHYSICAL, None, "insert_only", "_2"))  # no Calc: no project
    assert (q.table_of("t1").time_column, q.table_of("t1").watermark_delay_ms) == ("_2", 1000)


@pytest.mark.parametrize("sql", READINGS)
def test_the_reading_agrees_with_the_query_as_written_on_generated_data(sql: str) -> None:
    query = parse_query(T + sql, "q.sql")

    @settings(max_examples=15, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(query_strategy(query, CheckOptions().config(ttl=False), late=query.join.interval is None))
    def agree(scenario) -> None:
        reading_equals_query(query, scenario)

    agree()


def test_a_cast_to_timestamp_3_of_a_timestamp_is_a_renamed_rowtime() -> None:
    ddl = (f"CREATE TABLE a (k INT, t TIMESTAMP(3), ts AS CAST(t AS TIMESTAMP(3)), WATERMARK FOR ts AS ts) {K};\n"
           f"CREATE TABLE b (k INT, t TIMESTAMP(3), WATERMARK FOR t AS t) {K};\n")
    q = parse_query(ddl + "SELECT a.k FROM a JOIN b ON a.k = b.k AND a.ts BETWEEN b.t AND b.t + INTERVAL '1' SECOND")
    assert q.join.interval == IntervalSpec("a.t", "b.t", 0, 1000, "event", 0)


def test_the_query_as_written_catches_a_rename_read_wrong() -> None:
    query = parse_query(T + list(READINGS)[1], "q.sql")
    misread = replace(query, join=replace(query.join, conditions=("(t1._3 = t2._3) AND (t1._3 <> t2._3)",)))

    @settings(max_examples=200, database=None, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(query_strategy(misread, CheckOptions().config(ttl=False), late=False))
    def agree(scenario) -> None:
        reading_equals_query(misread, scenario)

    with pytest.raises(MisreadQueryError, match="misread your query"):
        agree()


REFUSED = [
    # a computed rowtime that computes something: the interval join would need a Calc in front of it
    # (`rt AS TO_TIMESTAMP_LTZ(n, 0)` reads since issue 40: test_flinksql_text_rowtime.py; arithmetic inside does not)
    (f"CREATE TABLE a (k INT, n BIGINT, rt AS TO_TIMESTAMP_LTZ(n * 2, 3), WATERMARK FOR rt AS rt) {K};",
     UnsupportedError),
    # (`rt AS TO_TIMESTAMP(s)` reads since issue 40: test_flinksql_text_rowtime.py; another format does not)
    (f"CREATE TABLE a (k INT, s STRING, rt AS TO_TIMESTAMP(s, 'dd/MM/yyyy'), WATERMARK FOR rt AS rt) {K};",
     UnsupportedError),
    (f"CREATE TABLE a (k INT, n BIGINT, m AS k + 1, rt AS TO_TIMESTAMP_LTZ(n, 3), WATERMARK FOR rt AS rt) {K};",
     UnsupportedError),
    # a view over a table with renamed columns
    (f"CREATE TABLE a (k INT, n BIGINT, kk AS k) {K};\nCREATE VIEW a2 AS SELECT kk AS k FROM a;", UnsupportedError),
    # Flink's own mistakes: a watermark on a renamed column that is no timestamp
    (f"CREATE TABLE a (k INT, n BIGINT, kk AS k, WATERMARK FOR kk AS kk) {K};", BadInputError),
]


@pytest.mark.parametrize("ddl, expected", REFUSED, ids=[f"{i}-{e.__name__}" for i, (_, e) in enumerate(REFUSED)])
def test_computed_time_attributes_that_compute_are_refused_by_meaning(ddl: str, expected: type) -> None:
    table = "a2" if "VIEW" in ddl else "a"
    sql = ddl + f"\nCREATE TABLE b (k INT) {K};\nSELECT x.k FROM {table} AS x JOIN b ON x.k = b.k"
    with pytest.raises((BadInputError, UnsupportedError)) as info:
        parse_query(sql, "q.sql")
    assert type(info.value) is expected, str(info.value)
    assert str(info.value).startswith("q.sql:"), str(info.value)
