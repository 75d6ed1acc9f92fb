"""Views and derived tables in a query file, read as the input's projection and filter in front of the join.

Each expected reading is written by hand: the input keeps its table's columns (its events are the table's
rows), `project` and `where` are the model SQL over them, the join and the SELECT list see the view's columns.
"""

from __future__ import annotations

import pytest

from converge.engine.model.errors import BadInputError, UnsupportedError
from converge.engine.model.flinksql import parse_query
from converge.engine.model.scenario import InputSpec

TABLES = """
CREATE TABLE orders (id BIGINT, cust BIGINT, amount INT) WITH ('connector' = 'kafka', 'format' = 'debezium-json');
CREATE TABLE customers (id BIGINT, name STRING) WITH ('connector' = 'kafka');
"""
ORDERS = (("id", "BIGINT"), ("cust", "BIGINT"), ("amount", "INTEGER"))
CUSTOMERS = InputSpec("c", (("id", "BIGINT"), ("name", "VARCHAR")), None, "insert_only")


def read(query: str):
    return parse_query(TABLES + query, "q.sql")


def test_a_temporary_view_with_a_computed_column_and_a_filter() -> None:
    q = read("CREATE TEMPORARY VIEW big AS SELECT id, cust, amount * 2 AS doubled FROM orders WHERE amount > 10;\n"
             "SELECT o.id, c.name, o.doubled FROM big AS o JOIN customers AS c ON o.cust = c.id;")
    assert q.inputs == (
        InputSpec("o", ORDERS, None, "retract",
                  project=(("id", "o.id"), ("cust", "o.cust"), ("doubled", "(o.amount * 2)")),
                  where="(o.amount > 10)"),
        CUSTOMERS)
    assert q.join.conditions == ("(o.cust = c.id)",)
    assert [(o.name, o.alias, o.column, o.type.name) for o in q.output] == [
        ("id", "o", "id", "BIGINT"), ("name", "c", "name", "STRING"), ("doubled", "o", "doubled", "INT")]


def test_a_derived_table_column_named_with_any_text_keeps_its_name() -> None:
    """Flink's testJoinWithAlias: a quoted column name `1-_./Ü` is the input's column, the output's name."""
    q = read("SELECT c.name, T.`1-_./Ü`, T.`x\"y` FROM (SELECT id, amount AS `1-_./Ü`, cust AS `x\"y` FROM orders) "
             "AS T, customers AS c WHERE T.id = c.id AND T.`1-_./Ü` > 2")
    assert q.inputs == (
        InputSpec("T", ORDERS, None, "retract",
                  project=(("id", "T.id"), ("1-_./Ü", "T.amount"), ('x"y', "T.cust"))),
        CUSTOMERS)
    assert q.join.conditions == ('(T.id = c.id) AND (T."1-_./Ü" > 2)',)
    assert [(o.name, o.alias, o.column) for o in q.output] == [
        ("name", "c", "name"), ("1-_./Ü", "T", "1-_./Ü"), ('x"y', "T", 'x"y')]


def test_a_view_of_every_column_is_a_filter_only() -> None:
    q = read("CREATE VIEW paid AS SELECT * FROM orders WHERE amount IS NOT NULL;\n"
             "SELECT * FROM customers c JOIN paid ON paid.cust = c.id;")
    assert q.inputs[1] == InputSpec("paid", ORDERS, None, "retract", where="(NOT (paid.amount IS NULL))")
    assert [o.name for o in q.output] == ["id", "name", "id0", "cust", "amount"]


def test_a_derived_table_with_an_inner_alias_a_renamed_and_a_computed_column() -> None:
    q = read("SELECT o.id, c.name FROM customers AS c LEFT JOIN (SELECT t.id, t.cust AS customer, amount + 1 AS amt "
             "FROM orders AS t WHERE t.amount IS NOT NULL) AS o ON o.customer = c.id WHERE o.amt > 3;")
    assert q.inputs[1] == InputSpec(
        "o", ORDERS, None, "retract",
        project=(("id", "o.id"), ("customer", "o.cust"), ("amt", "(o.amount + 1)")),
        where="(NOT (o.amount IS NULL))")
    assert q.join.types == ("left",) and q.join.conditions == ("(o.customer = c.id)",)
    assert q.where_sql == "(o.amt > 3)"


@pytest.mark.parametrize("query, error, message", [
    ("SELECT * FROM (SELECT o.id FROM orders o JOIN customers c ON o.cust = c.id) AS x JOIN customers d "
     "ON x.id = d.id;", UnsupportedError, "SELECT ... FROM one declared table"),
    ("CREATE VIEW v AS SELECT id, amount + 1 FROM orders;\nSELECT * FROM v JOIN customers c ON v.id = c.id;",
     BadInputError, "needs a name"),
    ("CREATE VIEW v AS SELECT id FROM nowhere;\nSELECT * FROM v JOIN customers c ON v.id = c.id;",
     BadInputError, "not declared"),
    ("CREATE VIEW v1 AS SELECT id, cust FROM orders WHERE amount > 0;\nCREATE VIEW v2 AS SELECT * FROM v1;\n"
     "SELECT * FROM v2 JOIN customers c ON v2.cust = c.id;", UnsupportedError, "nested subquery"),
    ("CREATE VIEW v AS SELECT id, name || '!' AS shout FROM customers;\nSELECT * FROM orders o JOIN v ON "
     "o.cust = v.id;", UnsupportedError, "outside the SQL subset"),
    ("SELECT * FROM (SELECT id, cust FROM orders) AS x JOIN customers c ON x.amount = c.id;", BadInputError,
     "no column 'amount'"),
])
def test_forms_that_are_not_read(query: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        read(query)
