"""CASE, IF and CAST in a view's SELECT list and WHERE (and in a computed column), read as the input's Calc.

Each expected reading is written by hand (model SQL over the source's columns, and the Flink type of each
column); a generated-data test checks the reading against the query as written, run in DuckDB.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from converge.engine.model.errors import BadInputError, UnsupportedError
from converge.engine.model.flinksql import parse_query
from converge.properties.query_check import query_strategy
from converge.properties.query_plan import CheckOptions
from converge.properties.query_reading import reading_equals_query

TABLES = """
CREATE TABLE orders (id BIGINT, cust BIGINT, amount INT) WITH ('connector' = 'kafka', 'format' = 'debezium-json');
CREATE TABLE customers (id BIGINT, name STRING) WITH ('connector' = 'kafka');
"""
VIEW = """CREATE VIEW sized AS
  SELECT id, cust,
         CASE WHEN amount >= 2 THEN 2 WHEN amount = 1 THEN 1.5e0 ELSE 0 END AS size,
         IF(amount > 1, amount, NULL) AS big_amount,
         CAST(amount AS DOUBLE) / 2 AS half,
         CASE amount WHEN 3 THEN cust END AS c3,
         CAST(amount AS BIGINT) AS wide
  FROM orders WHERE CASE WHEN amount IS NULL THEN FALSE ELSE amount <> 2 END;
SELECT o.id, o.size, o.big_amount, o.half, o.c3, o.wide, c.name
FROM sized AS o JOIN customers AS c ON o.cust = c.id;
"""


def read(query: str):
    return parse_query(TABLES + query, "q.sql")


def test_case_if_and_cast_in_a_view_are_its_projection_and_filter() -> None:
    q = read(VIEW)
    assert q.inputs[0].project == (
        ("id", "o.id"), ("cust", "o.cust"),
        ("size", "(CASE WHEN (o.amount >= 2) THEN 2 WHEN (o.amount = 1) THEN 1.5e0 ELSE 0 END)"),
        ("big_amount", "(CASE WHEN (o.amount > 1) THEN o.amount ELSE NULL END)"),
        ("half", "(CAST(o.amount AS DOUBLE) / 2)"),
        ("c3", "(CASE WHEN (o.amount = 3) THEN o.cust ELSE NULL END)"),
        ("wide", "CAST(o.amount AS BIGINT)"))
    assert q.inputs[0].where == "(CASE WHEN (o.amount IS NULL) THEN FALSE ELSE (o.amount <> 2) END)"
    assert [(c, t.name) for c, t in q.table_of("o").columns] == [
        ("id", "BIGINT"), ("cust", "BIGINT"), ("size", "DOUBLE"), ("big_amount", "INT"), ("half", "DOUBLE"),
        ("c3", "BIGINT"), ("wide", "BIGINT")]


def test_a_computed_column_may_hold_a_case() -> None:
    q = read("CREATE TABLE t (k BIGINT, flag AS CASE WHEN k > 0 THEN TRUE ELSE FALSE END) "
             "WITH ('connector' = 'kafka');\nSELECT * FROM t JOIN customers c ON t.k = c.id WHERE t.flag;")
    assert q.inputs[0].project == (("k", "t.k"), ("flag", "(CASE WHEN (t.k > 0) THEN TRUE ELSE FALSE END)"))


@pytest.mark.parametrize("query, error, message", [
    ("CREATE VIEW v AS SELECT id, CAST(amount * 1.5e0 AS INT) AS n FROM orders;\n"
     "SELECT * FROM v JOIN customers c ON v.id = c.id;", UnsupportedError, "CAST of a DOUBLE value to INT"),
    ("CREATE VIEW v AS SELECT id, CAST(id AS STRING) AS n FROM orders;\n"
     "SELECT * FROM v JOIN customers c ON v.id = c.id;", UnsupportedError, "CAST to"),
    ("CREATE VIEW v AS SELECT id, CASE WHEN amount > 1 THEN 'big' ELSE 'small' END AS n FROM orders;\n"
     "SELECT * FROM v JOIN customers c ON v.id = c.id;", UnsupportedError, "padded to the longest"),
    ("CREATE VIEW v AS SELECT id, CASE WHEN amount > 1 THEN TRUE ELSE 1 END AS n FROM orders;\n"
     "SELECT * FROM v JOIN customers c ON v.id = c.id;", BadInputError, "does not bring to one type"),
    ("SELECT * FROM orders o JOIN customers c ON CASE WHEN o.cust > 0 THEN o.cust END = c.id;", UnsupportedError,
     "CASE is outside the SQL subset"),
    ("SELECT * FROM orders o JOIN customers c ON CAST(o.cust AS DOUBLE) = c.id;", UnsupportedError,
     "CAST is outside the SQL subset"),
])
def test_what_a_view_cannot_compute_and_case_outside_a_view_are_refused(query: str, error: type,
                                                                         message: str) -> None:
    with pytest.raises(error) as info:
        read(query)
    assert message in str(info.value), str(info.value)


@settings(max_examples=60, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(query_strategy(read(VIEW), CheckOptions().config(ttl=False)))
def test_the_reading_of_case_if_and_cast_equals_the_query_as_written(scenario) -> None:
    reading_equals_query(read(VIEW), scenario)
