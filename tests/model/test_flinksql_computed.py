"""Computed columns in a CREATE TABLE (`c AS a + 1`), read as the input's projection in front of the join.

Each expected reading is written by hand: the input's columns are the table's physical ones (its events), its
`project` lists every column in declared order, the computed ones as model SQL over the physical ones.
"""

from __future__ import annotations

import pytest

from converge.engine.model.errors import BadInputError, UnsupportedError
from converge.engine.model.flinksql import parse_query
from converge.engine.model.scenario import InputSpec

CUSTOMERS = "CREATE TABLE c (id BIGINT, name STRING) WITH ('connector' = 'kafka');\n"


def read(ddl: str, select: str = "SELECT * FROM t JOIN c ON t.id = c.id"):
    return parse_query(ddl + "\n" + CUSTOMERS + select, "q.sql")


def test_computed_columns_are_the_inputs_projection_in_declared_order() -> None:
    q = read("CREATE TABLE t (id BIGINT, twice AS amount * 2, amount INT, big AS amount > 10, "
             "ratio AS amount / 2.0e0) WITH ('connector' = 'kafka', 'format' = 'debezium-json');",
             "SELECT t.id, t.twice, c.name FROM t JOIN c ON t.twice = c.id WHERE t.big")
    assert q.inputs[0] == InputSpec(
        "t", (("id", "BIGINT"), ("amount", "INTEGER")), None, "retract",
        project=(("id", "t.id"), ("twice", "(t.amount * 2)"), ("amount", "t.amount"),
                 ("big", "(t.amount > 10)"), ("ratio", "(t.amount / 2.0e0)")))
    assert q.inputs[1] == InputSpec("c", (("id", "BIGINT"), ("name", "VARCHAR")), None, "insert_only")
    assert q.join.conditions == ("(t.twice = c.id)",)
    assert q.where_sql == "t.big"
    assert [(o.name, o.alias, o.column, o.type.name) for o in q.output] == [
        ("id", "t", "id", "BIGINT"), ("twice", "t", "twice", "INT"), ("name", "c", "name", "STRING")]
    assert [(c, t.name) for c, t in q.table_of("t").columns] == [
        ("id", "BIGINT"), ("twice", "INT"), ("amount", "INT"), ("big", "BOOLEAN"), ("ratio", "DOUBLE")]


def test_a_key_and_a_rowtime_on_physical_columns_stay_with_the_table() -> None:
    q = read("CREATE TABLE t (id BIGINT, ts TIMESTAMP(3), nxt AS id + 1, WATERMARK FOR ts AS ts, "
             "PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upsert-kafka');",
             "SELECT * FROM c LEFT JOIN t ON c.id = t.id")
    table = q.table_of("t")
    assert (table.primary_key, table.time_column) == (("id",), "ts")
    assert q.inputs[1].project == (("id", "t.id"), ("ts", "t.ts"), ("nxt", "(t.id + 1)"))


@pytest.mark.parametrize("ddl, where, error, message", [
    ("CREATE TABLE t (id BIGINT, s STRING, ts AS TO_TIMESTAMP(s)) WITH ('connector' = 'kafka');", "q.sql:1:38",
     UnsupportedError, "computed column 'ts' = `TO_TIMESTAMP(s)`: TO_TIMESTAMP is outside the SQL subset"),
    # a rowtime parsed from text reads (test_flinksql_text_rowtime.py); one computed otherwise does not
    ("CREATE TABLE t (id BIGINT, s STRING, ts AS TO_TIMESTAMP_LTZ(id, 6), WATERMARK FOR ts AS ts) "
     "WITH ('connector' = 'kafka');", "q.sql:1:83", UnsupportedError,
     "the rowtime attribute 'ts' is computed as `TO_TIMESTAMP_LTZ(id, 6)`"),
    # beside a column that computes something (a Calc); alone, `u AS s` only names s (test_flinksql_renames.py)
    ("CREATE TABLE t (id BIGINT, s STRING, n AS id + 1, u AS s) WITH ('connector' = 'kafka');", "q.sql:1:51",
     UnsupportedError, "computed column 'u' is a STRING value"),
    ("CREATE TABLE t (id BIGINT, u AS nope + 1) WITH ('connector' = 'kafka');", "q.sql:1:28", BadInputError,
     "computed column 'u' = `nope + 1`: column 'nope' is unknown"),
    ("CREATE TABLE t (id BIGINT, id AS 1) WITH ('connector' = 'kafka');", "q.sql:1:28", BadInputError,
     "column 'id' is declared twice"),
    ("CREATE TABLE t (id BIGINT, u AS id + 1, PRIMARY KEY (u) NOT ENFORCED) WITH ('connector' = 'upsert-kafka');",
     "q.sql:1:14", BadInputError, "primary key column 'u' is a computed column"),
])
def test_computed_columns_converge_cannot_compute_are_refused_naming_the_column(
        ddl: str, where: str, error: type, message: str) -> None:
    with pytest.raises(error) as info:
        read(ddl)
    assert str(info.value).startswith(where) and message in str(info.value), str(info.value)


def test_a_view_over_a_table_with_computed_columns_is_refused() -> None:
    with pytest.raises(UnsupportedError, match="which has computed columns, is not supported yet"):
        read("CREATE TABLE t (id BIGINT, u AS id + 1) WITH ('connector' = 'kafka');\n"
             "CREATE VIEW v AS SELECT * FROM t;", "SELECT * FROM v JOIN c ON v.id = c.id")
