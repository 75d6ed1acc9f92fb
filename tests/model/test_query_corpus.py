"""A corpus of join queries written for converge (issue 40), in every form the reader reads: INNER / LEFT / RIGHT /
FULL chains, comma joins, SEMI / ANTI subqueries, interval joins (BETWEEN, a comparison pair, an equality of time
attributes, an empty window), residuals, IS [NOT] TRUE / FALSE / UNKNOWN / NULL / DISTINCT FROM, WHERE filters and
SELECT lists. Each query's reading is compared with the one written by hand here, and the independent second path
(the query as written, run in DuckDB) agrees with converge's reading on generated data."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from converge.engine.model.flinksql import parse_query
from converge.properties.query_check import CheckOptions, query_strategy
from converge.properties.query_reading import reading_equals_query

TABLES = """CREATE TABLE orders (id BIGINT, cust INT, amount DECIMAL(10, 2), status STRING, ot TIMESTAMP(3),
  WATERMARK FOR ot AS ot - INTERVAL '5' SECOND) WITH ('connector' = 'kafka', 'format' = 'json');
CREATE TABLE customers (cust INT, name STRING, tier INT, PRIMARY KEY (cust) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'key.format' = 'json', 'value.format' = 'json');
CREATE TABLE payments (pid BIGINT, order_id BIGINT, paid DECIMAL(10, 2), pt TIMESTAMP(3),
  WATERMARK FOR pt AS pt) WITH ('connector' = 'kafka', 'format' = 'json');
CREATE TABLE returns (order_id BIGINT, reason STRING) WITH ('connector' = 'kafka', 'format' = 'debezium-json');
"""

EQ = "(o.cust = c.cust)"
OP = "(o.id = p.order_id)"
OR_ = "(o.id = r.order_id)"

# query -> (join inputs, join types, conditions, interval (lower, upper) or None, where, output names)
CORPUS: dict[str, tuple] = {
    # explicit chains
    "SELECT o.id, c.name FROM orders o JOIN customers c ON o.cust = c.cust":
        (("o", "c"), ("inner",), (EQ,), None, None, ("id", "name")),
    "SELECT o.id, c.name FROM orders o INNER JOIN customers c ON c.cust = o.cust":
        (("o", "c"), ("inner",), ("(c.cust = o.cust)",), None, None, ("id", "name")),
    "SELECT o.id, c.name FROM orders o LEFT JOIN customers c ON o.cust = c.cust AND c.tier > 1":
        (("o", "c"), ("left",), (f"{EQ} AND (c.tier > 1)",), None, None, ("id", "name")),
    "SELECT o.id, c.name FROM orders o LEFT OUTER JOIN customers c ON o.cust = c.cust":
        (("o", "c"), ("left",), (EQ,), None, None, ("id", "name")),
    "SELECT o.id, c.name FROM orders o RIGHT JOIN customers c ON o.cust = c.cust":
        (("o", "c"), ("right",), (EQ,), None, None, ("id", "name")),
    "SELECT o.id, c.name FROM orders o FULL OUTER JOIN customers c ON o.cust = c.cust AND o.status <> c.name":
        (("o", "c"), ("full",), (f"{EQ} AND (o.status <> c.name)",), None, None, ("id", "name")),
    "SELECT * FROM orders o JOIN customers c ON o.cust IS NOT DISTINCT FROM c.cust":
        (("o", "c"), ("inner",), ("(o.cust IS NOT DISTINCT FROM c.cust)",), None, None,
         ("id", "cust", "amount", "status", "ot", "cust0", "name", "tier")),
    "SELECT o.id, c.tier FROM orders o JOIN customers c ON o.cust = c.cust AND o.amount > 10.5":
        (("o", "c"), ("inner",), (f"{EQ} AND (o.amount > 1050)",), None, None, ("id", "tier")),
    "SELECT o.id, p.pid FROM orders o JOIN payments p ON o.id = p.order_id AND p.paid >= o.amount":
        (("o", "p"), ("inner",), (f"{OP} AND (p.paid >= o.amount)",), None, None, ("id", "pid")),
    "SELECT o.id AS order_id, p.paid AS paid FROM orders o LEFT JOIN payments p ON o.id = p.order_id "
    "AND (p.paid < o.amount OR p.paid IS NULL)":
        (("o", "p"), ("left",), (f"{OP} AND ((p.paid < o.amount) OR (p.paid IS NULL))",), None, None,
         ("order_id", "paid")),
    "SELECT o.id, c.name, p.pid FROM orders o JOIN customers c ON o.cust = c.cust "
    "JOIN payments p ON p.order_id = o.id":
        (("o", "c", "p"), ("inner", "inner"), (EQ, "(p.order_id = o.id)"), None, None, ("id", "name", "pid")),
    "SELECT o.id, c.name, r.reason FROM orders o LEFT JOIN customers c ON o.cust = c.cust "
    "LEFT JOIN returns r ON r.order_id = o.id":
        (("o", "c", "r"), ("left", "left"), (EQ, "(r.order_id = o.id)"), None, None, ("id", "name", "reason")),
    "SELECT o.id, c.name, r.reason FROM orders o JOIN customers c ON o.cust = c.cust "
    "FULL JOIN returns r ON r.order_id = o.id AND r.reason <> 'late'":
        (("o", "c", "r"), ("inner", "full"), (EQ, "(r.order_id = o.id) AND (r.reason <> 'late')"), None, None,
         ("id", "name", "reason")),
    "SELECT o.id, p.pid, r.reason FROM orders o RIGHT JOIN payments p ON o.id = p.order_id "
    "LEFT JOIN returns r ON r.order_id = p.order_id":
        (("o", "p", "r"), ("right", "left"), (OP, "(r.order_id = p.order_id)"), None, None, ("id", "pid", "reason")),
    "SELECT o.id, c.name, p.pid, r.reason FROM orders o JOIN customers c ON o.cust = c.cust "
    "JOIN payments p ON p.order_id = o.id LEFT JOIN returns r ON r.order_id = o.id":
        (("o", "c", "p", "r"), ("inner", "inner", "left"), (EQ, "(p.order_id = o.id)", "(r.order_id = o.id)"),
         None, None, ("id", "name", "pid", "reason")),
    # WHERE filters and SELECT lists
    "SELECT o.id, c.name FROM orders o JOIN customers c ON o.cust = c.cust WHERE c.tier BETWEEN 1 AND 3":
        (("o", "c"), ("inner",), (EQ,), None, "(c.tier >= 1 AND c.tier <= 3)", ("id", "name")),
    "SELECT c.*, o.id FROM orders o LEFT JOIN customers c ON o.cust = c.cust WHERE c.name IS NULL":
        (("o", "c"), ("left",), (EQ,), None, "(c.name IS NULL)", ("cust", "name", "tier", "id")),
    "SELECT o.id, o.id AS again FROM orders o JOIN customers c ON o.cust = c.cust WHERE o.status = 'paid' "
    "AND (c.tier = 1 OR c.tier = 2)":
        (("o", "c"), ("inner",), (EQ,), None, "(o.status = 'paid') AND ((c.tier = 1) OR (c.tier = 2))",
         ("id", "again")),
    "SELECT o.id FROM orders o JOIN customers c ON o.cust = c.cust WHERE o.id % 2 = 0 AND c.tier * 2 > o.cust":
        (("o", "c"), ("inner",), (EQ,), None, "((o.id % 2) = 0) AND ((c.tier * 2) > o.cust)", ("id",)),
    # comma joins
    "SELECT o.id, c.name FROM orders o, customers c WHERE o.cust = c.cust":
        (("o", "c"), ("inner",), (EQ,), None, None, ("id", "name")),
    "SELECT o.id, c.name FROM orders o, customers c WHERE o.cust = c.cust AND c.tier > 2 AND o.status = 'new'":
        (("o", "c"), ("inner",), (f"{EQ} AND (c.tier > 2) AND (o.status = 'new')",), None, None, ("id", "name")),
    "SELECT o.id, c.name, p.pid FROM orders o, customers c, payments p WHERE o.cust = c.cust "
    "AND p.order_id = o.id AND p.paid > o.amount":
        (("o", "c", "p"), ("inner", "inner"), (EQ, "(p.order_id = o.id) AND (p.paid > o.amount)"), None, None,
         ("id", "name", "pid")),
    "SELECT o.id, r.reason FROM orders o, returns r WHERE o.id = r.order_id OR r.reason = 'lost'":
        (("o", "r"), ("inner",), ("((o.id = r.order_id) OR (r.reason = 'lost'))",), None, None, ("id", "reason")),
    "SELECT o.id, c.name, r.reason FROM orders o, customers c LEFT JOIN returns r ON r.reason = c.name "
    "WHERE o.cust = c.cust":
        (("o", "c", "r"), ("inner", "left"), (EQ, "(r.reason = c.name)"), None, None, ("id", "name", "reason")),
    "SELECT o.id, c.name, r.reason FROM orders o JOIN customers c ON o.cust = c.cust, returns r "
    "WHERE r.order_id = o.id":
        (("o", "c", "r"), ("inner", "inner"), (EQ, "(r.order_id = o.id)"), None, None, ("id", "name", "reason")),
    "SELECT o.id, c.name, r.reason FROM orders o, customers c LEFT JOIN returns r ON r.reason = c.name "
    "WHERE o.cust = c.cust AND r.order_id IS NULL":
        (("o", "c", "r"), ("inner", "left"), (EQ, "(r.reason = c.name)"), None, "(r.order_id IS NULL)",
         ("id", "name", "reason")),
    "SELECT o.id, c.name, r.reason FROM orders o, customers c FULL JOIN returns r ON r.reason = c.name "
    "WHERE o.cust = c.cust":
        (("o", "c", "r"), ("inner", "full"), ("TRUE", "(r.reason = c.name)"), None, EQ, ("id", "name", "reason")),
    # SEMI / ANTI
    "SELECT o.id FROM orders o JOIN customers c ON o.cust = c.cust WHERE EXISTS "
    "(SELECT 1 FROM returns r WHERE r.order_id = o.id)":
        (("o", "c", "r"), ("inner", "semi"), (EQ, OR_.replace("(o.id = r.order_id)", "(r.order_id = o.id)")), None,
         None, ("id",)),
    "SELECT o.id FROM orders o JOIN customers c ON o.cust = c.cust WHERE NOT EXISTS "
    "(SELECT 1 FROM returns r WHERE r.order_id = o.id AND r.reason = c.name)":
        (("o", "c", "r"), ("inner", "anti"), (EQ, "(r.order_id = o.id) AND (r.reason = c.name)"), None, None,
         ("id",)),
    "SELECT o.id, c.tier FROM orders o LEFT JOIN customers c ON o.cust = c.cust "
    "WHERE o.id IN (SELECT order_id FROM returns)":
        (("o", "c", "returns"), ("left", "semi"), (EQ, "(o.id = returns.order_id)"), None, None, ("id", "tier")),
    "SELECT o.id FROM orders o, customers c WHERE o.cust = c.cust AND EXISTS "
    "(SELECT 1 FROM payments p WHERE p.order_id = o.id AND p.paid >= o.amount)":
        (("o", "c", "p"), ("inner", "semi"), (EQ, "(p.order_id = o.id) AND (p.paid >= o.amount)"), None, None,
         ("id",)),
    # a derived table's column named with any text (Flink's testJoinWithAlias): the output keeps the name
    "SELECT T.`1-_./Ü`, c.name FROM (SELECT cust, status AS `1-_./Ü` FROM orders) AS T, customers c "
    "WHERE T.cust = c.cust AND T.`1-_./Ü` <> c.name":
        (("T", "c"), ("inner",), ('(T.cust = c.cust) AND (T."1-_./Ü" <> c.name)',), None, None, ("1-_./Ü", "name")),
    # a timestamp's calendar field in a residual (Flink's IntervalJoinITCase: QUARTER(t1.rowtime) = t2.a)
    "SELECT o.id, p.pid FROM orders o JOIN payments p ON o.id = p.order_id AND QUARTER(o.ot) = 1 "
    "AND EXTRACT(HOUR FROM p.pt) < 12":
        (("o", "p"), ("inner",), (f"{OP} AND (quarter(epoch_ms(((o.ot) // 86400000) * 86400000)) = 1) "
                                  f"AND ((((p.pt) % 86400000) // 3600000) < 12)",), None, None, ("id", "pid")),
    # NOT IN: FlinkSubQueryRemoveRule's null-aware anti join (a NULL on either side is a match)
    "SELECT o.id FROM orders o WHERE o.id NOT IN (SELECT order_id FROM returns)":
        (("o", "returns"), ("anti",), ("(((o.id = returns.order_id)) OR (((o.id = returns.order_id)) IS NULL))",),
         None, None, ("id",)),
    "SELECT o.id, c.name FROM orders o JOIN customers c ON o.cust = c.cust WHERE NOT o.id IN "
    "(SELECT r.order_id FROM returns r WHERE r.reason <> c.name)":
        (("o", "c", "r"), ("inner", "anti"),
         (EQ, "(((o.id = r.order_id)) OR (((o.id = r.order_id)) IS NULL)) AND (r.reason <> c.name)"), None, None,
         ("id", "name")),
    # three-valued predicates
    "SELECT o.id FROM orders o JOIN customers c ON o.cust = c.cust AND (o.status = c.name) IS NOT TRUE":
        (("o", "c"), ("inner",), (f"{EQ} AND (NOT (((o.status = c.name)) IS TRUE))",), None, None, ("id",)),
    "SELECT o.id FROM orders o LEFT JOIN customers c ON o.cust = c.cust AND (c.tier > 1) IS TRUE":
        (("o", "c"), ("left",), (f"{EQ} AND (((c.tier > 1)) IS TRUE)",), None, None, ("id",)),
    "SELECT o.id FROM orders o JOIN customers c ON o.cust = c.cust WHERE (c.tier < 2) IS FALSE":
        (("o", "c"), ("inner",), (EQ,), None, "(((c.tier < 2)) IS FALSE)", ("id",)),
    "SELECT o.id FROM orders o LEFT JOIN customers c ON o.cust = c.cust WHERE (c.tier > 0) IS NOT FALSE":
        (("o", "c"), ("left",), (EQ,), None, "(NOT (((c.tier > 0)) IS FALSE))", ("id",)),
    "SELECT o.id FROM orders o LEFT JOIN customers c ON o.cust = c.cust WHERE (c.tier > 0) IS UNKNOWN":
        (("o", "c"), ("left",), (EQ,), None, "(((c.tier > 0)) IS NULL)", ("id",)),
    "SELECT o.id FROM orders o, customers c WHERE o.cust = c.cust AND (o.status = c.name) IS NOT UNKNOWN":
        (("o", "c"), ("inner",), (f"{EQ} AND (NOT (((o.status = c.name)) IS NULL))",), None, None, ("id",)),
    # interval joins
    "SELECT o.id, p.pid FROM orders o JOIN payments p ON o.id = p.order_id "
    "AND p.pt BETWEEN o.ot AND o.ot + INTERVAL '10' SECOND":
        (("o", "p"), ("inner",), (OP,), (-10_000, 0), None, ("id", "pid")),
    "SELECT o.id, p.pid FROM orders o LEFT JOIN payments p ON o.id = p.order_id "
    "AND o.ot >= p.pt - INTERVAL '1' MINUTE AND o.ot < p.pt":
        (("o", "p"), ("left",), (OP,), (-60_000, -1), None, ("id", "pid")),
    "SELECT o.id, p.pid FROM orders o RIGHT JOIN payments p ON o.id = p.order_id "
    "AND o.ot BETWEEN p.pt - INTERVAL '2' SECOND AND p.pt AND p.paid < o.amount":
        (("o", "p"), ("right",), (f"{OP} AND (p.paid < o.amount)",), (-2000, 0), None, ("id", "pid")),
    "SELECT o.id, p.pid FROM orders o FULL JOIN payments p ON o.id = p.order_id AND o.ot > p.pt "
    "AND o.ot <= p.pt + INTERVAL '3' SECOND":
        (("o", "p"), ("full",), (OP,), (1, 3000), None, ("id", "pid")),
    "SELECT o.id, p.pid FROM orders o, payments p WHERE o.id = p.order_id "
    "AND p.pt BETWEEN o.ot - INTERVAL '5' SECOND AND o.ot + INTERVAL '5' SECOND":
        (("o", "p"), ("inner",), (OP,), (-5000, 5000), None, ("id", "pid")),
    "SELECT o.id, p.pid FROM orders o JOIN payments p ON o.id = p.order_id AND o.ot = p.pt":
        (("o", "p"), ("inner",), (OP,), (0, 0), None, ("id", "pid")),
    "SELECT o.id, p.pid FROM orders o LEFT JOIN payments p ON o.id = p.order_id "
    "AND p.pt = o.ot + INTERVAL '1' SECOND":
        (("o", "p"), ("left",), (OP,), (-1000, -1000), None, ("id", "pid")),
    "SELECT o.id, p.pid FROM orders o LEFT JOIN payments p ON o.id = p.order_id "
    "AND o.ot BETWEEN p.pt + INTERVAL '4' SECOND AND p.pt + INTERVAL '2' SECOND":
        (("o", "p"), ("left",), (OP,), (4000, 2000), None, ("id", "pid")),
    "SELECT o.id, p.pid FROM orders o FULL JOIN payments p ON o.id = p.order_id "
    "AND p.pt BETWEEN o.ot + INTERVAL '1' SECOND AND o.ot":
        (("o", "p"), ("full",), (OP,), (0, -1000), None, ("id", "pid")),
    "SELECT o.id, p.pid FROM orders o JOIN payments p ON o.id = p.order_id "
    "AND p.pt BETWEEN o.ot AND o.ot + INTERVAL '1' HOUR WHERE p.paid > 100":
        (("o", "p"), ("inner",), (OP,), (-3_600_000, 0), "(p.paid > 10000)", ("id", "pid")),
}


def test_the_corpus_holds_forty_queries_or_more() -> None:
    assert len(CORPUS) >= 40


@pytest.mark.parametrize("sql", CORPUS)
def test_the_reading_is_the_hand_written_one(sql: str) -> None:
    q = parse_query(TABLES + sql, "corpus.sql")
    inputs, types, conditions, bounds, where, names = CORPUS[sql]
    iv = q.join.interval
    assert (q.join.inputs, q.join.types, q.join.conditions) == (inputs, types, conditions)
    assert (None if iv is None else (iv.lower_ms, iv.upper_ms), q.where_sql) == (bounds, where)
    assert tuple(o.name for o in q.output) == names


@pytest.mark.parametrize("sql", CORPUS)
def test_the_second_path_agrees_on_generated_data(sql: str) -> None:
    query = parse_query(TABLES + sql, "corpus.sql")

    @settings(max_examples=8, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(query_strategy(query, CheckOptions().config(ttl=False), late=False))
    def agree(scenario) -> None:
        reading_equals_query(query, scenario)

    agree()
