"""Flink SQL files onto the model: DDL, join chains, interval bounds, types, and refusals with positions."""

from __future__ import annotations

import pytest

from converge.engine.model.errors import BadInputError, UnsupportedError
from converge.engine.model.flinksql import parse_query
from converge.engine.model.flinksql.types import timestamp_millis

ORDERS = """CREATE TABLE orders (
  id BIGINT, k INT, amount DECIMAL(10, 2), ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND,
  PRIMARY KEY (id) NOT ENFORCED
) WITH ('connector' = 'upsert-kafka', 'key.format' = 'json', 'value.format' = 'json');
"""
PAY = """CREATE TABLE pay (pid BIGINT, k INT, paid DECIMAL(10, 2), ts TIMESTAMP(3), d DATE,
  WATERMARK FOR ts AS ts) WITH ('connector' = 'kafka', 'format' = 'json');
CREATE TABLE cdc (sid BIGINT, k INT) WITH ('connector' = 'kafka', 'format' = 'debezium-json');
"""


def test_ddl_gives_types_keys_modes_and_watermarks() -> None:
    q = parse_query(ORDERS + PAY + "SELECT * FROM orders o JOIN pay p ON o.k = p.k")
    o, p = q.inputs
    assert o.columns == (("id", "BIGINT"), ("k", "INTEGER"), ("amount", "BIGINT"), ("ts", "BIGINT"))
    assert (o.unique_key, o.changelog_mode, o.time_column) == (("id",), "upsert", "ts")
    assert q.tables["orders"].watermark_delay_ms == 5000
    assert (p.changelog_mode, p.unique_key) == ("insert_only", None)
    assert q.tables["pay"].watermark_delay_ms == 0
    assert not q.tables["orders"].type_of("id").nullable  # primary key columns are NOT NULL in Flink
    assert [c.name for c in q.output] == ["id", "k", "amount", "ts", "pid", "k0", "paid", "ts0", "d"]


def test_chain_semi_anti_residuals_and_filters() -> None:
    q = parse_query(ORDERS + PAY + """
        CREATE TABLE cdc2 (k INT) WITH ('connector' = 'mysql-cdc');
        CREATE TABLE up (k INT, v INT, PRIMARY KEY (k) NOT ENFORCED)
          WITH ('connector' = 'values', 'changelog-mode' = 'I,UA,D');
        SELECT o.id, c.sid AS shipment FROM orders o
        LEFT JOIN pay p ON o.k = p.k AND p.paid >= o.amount + 1.5
        FULL JOIN cdc c ON c.k IS NOT DISTINCT FROM o.k
        WHERE o.amount > 10 AND NOT EXISTS (SELECT 1 FROM cdc2 x WHERE x.k = o.k)
          AND o.k IN (SELECT k FROM up)""")
    assert q.join.inputs == ("o", "p", "c", "x", "up")
    assert q.join.types == ("left", "full", "anti", "semi")
    # DECIMAL(10, 2) values are unscaled integers: 1.5 becomes 150 on that scale, 10 becomes 1000
    assert q.join.conditions[0] == "(o.k = p.k) AND (p.paid >= (o.amount + 150))"
    assert q.join.conditions[1] == "(c.k IS NOT DISTINCT FROM o.k)"
    assert q.join.conditions[2:] == ("(x.k = o.k)", "(o.k = up.k)")
    assert q.where_sql == "(o.amount > 1000)"
    assert [(c.name, c.alias, c.column) for c in q.output] == [("id", "o", "id"), ("shipment", "c", "sid")]
    assert q.table_of("x").changelog_mode == "retract" and q.table_of("up").changelog_mode == "upsert"


@pytest.mark.parametrize("bounds, lower, upper", [
    ("p.ts BETWEEN o.ts - INTERVAL '1' MINUTE AND o.ts + INTERVAL '10' SECOND", -10_000, 60_000),
    ("o.ts BETWEEN p.ts AND p.ts + INTERVAL '2' HOUR", 0, 7_200_000),
    ("o.ts >= p.ts - INTERVAL '3' SECOND AND o.ts < p.ts + INTERVAL '1' SECOND", -3000, 999),
])
def test_interval_bounds(bounds: str, lower: int, upper: int) -> None:
    q = parse_query(ORDERS.replace("'upsert-kafka'", "'kafka'") + PAY
                    + f"SELECT * FROM orders o LEFT JOIN pay p ON o.k = p.k AND {bounds}")
    iv = q.join.interval
    assert iv is not None and (iv.lower_ms, iv.upper_ms) == (lower, upper)
    assert (iv.left_time, iv.right_time, q.join.conditions) == ("o.ts", "p.ts", ("(o.k = p.k)",))


def test_typed_literals_and_integer_division() -> None:
    q = parse_query(ORDERS + PAY + """SELECT * FROM orders o JOIN pay p ON o.k = p.k
        AND p.ts > TIMESTAMP '1970-01-01 00:00:01.500' AND p.d >= DATE '1970-01-03' AND o.k / 2 = p.k""")
    assert q.join.conditions[0] == "(o.k = p.k) AND (p.ts > 1500) AND (p.d >= 2) AND ((o.k // 2) = p.k)"
    assert timestamp_millis("2024-01-01T00:00:00Z") == 1_704_067_200_000


@pytest.mark.parametrize("sql, where, what, error", [
    ("SELECT * FROM orders o JOIN pay p ON o.k = UPPER(p.k)", "q.sql:9:44", "UPPER is outside", UnsupportedError),
    ("SELECT * FROM orders o JOIN pay p ON o.k = p.k\nGROUP BY o.k", "q.sql:10:", "GROUP is not supported",
     UnsupportedError),
    ("SELECT * FROM orders o JOIN nope n ON o.k = n.k", "q.sql:9:29", "'nope' is not declared", BadInputError),
    ("SELECT * FROM orders o JOIN pay p ON o.k = p.k WHERE o.k > 0 OR o.k NOT IN (SELECT k FROM cdc)", "q.sql:9:65",
     "a subquery under OR or NOT", UnsupportedError),
    ("SELECT o.k + 1 FROM orders o JOIN pay p ON o.k = p.k", "q.sql:9:8", "SELECT list", UnsupportedError),
    ("SELECT * FROM orders o JOIN pay p ON o.k = p.k AND o.amount * p.paid > 1", "q.sql:9:52", "DECIMAL",
     UnsupportedError),
])
def test_unsupported_clauses_name_their_position(sql: str, where: str, what: str, error: type) -> None:
    """Flink SQL that converge does not map yet is "unsupported", a query that is wrong is bad input."""
    with pytest.raises(error) as info:
        parse_query(ORDERS + PAY + sql, "q.sql")
    assert str(info.value).startswith(where) and what in str(info.value)


@pytest.mark.parametrize("ddl, what, error", [
    ("CREATE TABLE t (k INT, x FLOAT) WITH ('connector' = 'kafka');", "FLOAT", UnsupportedError),
    ("CREATE TABLE t (k INT, t TIMESTAMP(6)) WITH ('connector' = 'kafka');", "TIMESTAMP(6)", UnsupportedError),
    ("CREATE TABLE t (k INT) WITH ('connector' = 'jdbc');", "'jdbc'", UnsupportedError),
    ("CREATE TABLE t (k INT);", "connector", BadInputError),
    ("CREATE TABLE t (k INT) WITH ('connector' = 'upsert-kafka');", "PRIMARY KEY", BadInputError),
    ("CREATE TABLE t (k INT, s STRING, n AS TO_TIMESTAMP(s)) WITH ('connector' = 'kafka');", "computed column 'n'",
     UnsupportedError),
])
def test_unsupported_ddl(ddl: str, what: str, error: type) -> None:
    with pytest.raises(error, match="^q.sql:1:") as info:
        parse_query(ddl + "\nSELECT * FROM t a JOIN t b ON a.k = b.k", "q.sql")
    assert what in str(info.value)


def test_parse_errors_name_line_and_column() -> None:
    with pytest.raises(BadInputError, match=r"^q.sql:2:\d+: cannot parse"):
        parse_query("CREATE TABLE t (k INT) WITH ('connector' = 'kafka');\nSELECT * FROM t JOIN (", "q.sql")
