"""Every refusal of the query reader has the class its meaning gives it (issue 40): "bad input" only for a mistake in
the query (Flink would refuse it too), "unsupported" for valid Flink SQL that converge does not map. The table is
written by hand, one row per refusal site of engine/model/flinksql (query.py, ddl.py, job.py, expressions.py,
where_joins.py)."""

from __future__ import annotations

import pytest

from converge.engine.model.errors import BadInputError, UnsupportedError
from converge.engine.model.flinksql import parse_query

K = "WITH ('connector' = 'kafka', 'format' = 'json')"
T = f"""CREATE TABLE a (k INT, x INT, s STRING, rt TIMESTAMP(3), WATERMARK FOR rt AS rt) {K};
CREATE TABLE b (k INT, y INT, rt TIMESTAMP(3), WATERMARK FOR rt AS rt) {K};
CREATE TABLE c (k INT, z STRING) {K};
"""
J = "SELECT a.k FROM a JOIN b ON a.k = b.k"

BAD = BadInputError
UNSUPPORTED = UnsupportedError

# (the file, its class): a mistake is BAD, a valid query converge does not map is UNSUPPORTED
CASES = [
    # mistakes Flink refuses as well
    (T + "SELECT a.k FROM a JOIN nope n ON a.k = n.k", BAD),                       # table not declared
    (T + "SELECT a.k FROM a JOIN b a ON a.k = a.k", BAD),                          # one alias twice in a FROM
    (T + "SELECT a.k FROM a JOIN b ON a.k = b.nope", BAD),                         # no such column
    (T + "SELECT a.k FROM a JOIN b ON k = b.k", BAD),                              # ambiguous column
    (T + "SELECT a.k FROM a JOIN b ON a.k = q.k", BAD),                            # unknown alias
    (T + "SELECT a.k FROM a JOIN b ON a.k + b.k", BAD),                            # ON is not a boolean
    (T + "SELECT a.k FROM a JOIN b ON a.s = b.k", BAD),                            # STRING = INT
    (T + "SELECT a.k FROM a JOIN b ON a.k = b.k AND a.x IS TRUE", BAD),            # IS TRUE of an INT
    (T + "SELECT a.k FROM a, b JOIN c ON a.k = c.k", BAD),                         # a is out of the ON's scope
    (T + "SELECT y FROM (SELECT k AS x, y FROM b) v, a WHERE x = k", BAD),           # x: in v and in a (ambiguous)
    (T + "SELECT q.* FROM a JOIN b ON a.k = b.k", BAD),                            # unknown alias in q.*
    (T + "SELECT a.k FROM a JOIN b ON a.k = b.k WHERE a.k IN (SELECT k, z FROM c)", BAD),  # IN of two columns
    (T + "SELECT a.k FROM a JOIN b ON a.k = b.k AND a.x > 1e999", BAD),            # beyond DOUBLE
    (T + "SELECT a.k FROM a JOIN b ON a.k = b.k AND a.rt > b.rt + INTERVAL 'x' SECOND", BAD),  # not a number
    ("CREATE TABLE a (k INT) WITH ('connector' = 'upsert-kafka');\n" + T.split("\n", 1)[1] + J, BAD),  # no key
    (f"CREATE TABLE a (k INT, k INT) {K};\n" + T.split("\n", 1)[1] + J, BAD),     # a column twice
    ("CREATE TABLE a (k INT);\n" + T.split("\n", 1)[1] + J, BAD),                  # no connector
    (T + f"CREATE TABLE a (k INT) {K};\n" + J, BAD),                               # a table twice
    (f"CREATE TABLE a (k INT, t INT, WATERMARK FOR t AS t) {K};\n" + T.split("\n", 1)[1] + J, BAD),  # rowtime INT
    (T + "SET 'parallelism.default' = 'zero';\n" + J, BAD),                        # not a number
    (T + "SET 'state.backend.type' = 'memory';\n" + J, BAD),                      # not a state backend
    (T, BAD),                                                                     # no SELECT at all
    (T + "SELECT a.k FROM a JOIN b ON a.k = b.k AND", BAD),                        # does not parse
    # valid Flink SQL that converge does not map
    (T + "SELECT a.k FROM a JOIN b ON a.k = UPPER(b.k)", UNSUPPORTED),             # a function call
    (T + "SELECT a.k, COUNT(*) FROM a JOIN b ON a.k = b.k GROUP BY a.k", UNSUPPORTED),
    (T + "SELECT a.k FROM a JOIN b ON a.k = b.k; SELECT b.k FROM a JOIN b ON a.k = b.k", UNSUPPORTED),  # two
    (T + "SELECT a.k FROM a", UNSUPPORTED),                                       # joins nothing
    (T + "SELECT 1", UNSUPPORTED),                                                # no FROM
    (T + "CREATE FUNCTION f AS 'x.F';\n" + J, UNSUPPORTED),                        # another statement
    (T + "CREATE TEMPORARY SYSTEM FUNCTION f AS 'x.F';\n" + J, UNSUPPORTED),       # one sqlglot does not parse
    (T + "CREATE FOO BAR;\n" + J, BAD),                                             # no statement at all
    (T + "SELECT a.k FROM a JOIN b ON a.k = b.k WHERE EXISTS (SELECT 1 FROM c JOIN b ON c.k = b.k)",
     UNSUPPORTED),                                                                # a subquery with a join
    (T + "SELECT a.k FROM a JOIN b ON a.k = b.k WHERE a.k > 0 OR a.k NOT IN (SELECT k FROM c)", UNSUPPORTED),
    (T + "SELECT a.k FROM a JOIN b ON a.k = b.k AND a.rt > b.rt", UNSUPPORTED),    # one time bound
    (T + "SELECT a.k FROM a JOIN b FOR SYSTEM_TIME AS OF a.rt ON a.k = b.k", UNSUPPORTED),  # temporal join
    (T + "SELECT a.k FROM a NATURAL JOIN b", UNSUPPORTED),
    # a view converge does not read (a join inside it): its use is not "not declared" (bad input) on top of that
    (T + "CREATE TEMPORARY VIEW v AS SELECT c.k FROM c JOIN b ON c.k = b.k;\nSELECT a.k FROM a JOIN v ON a.k = v.k",
     UNSUPPORTED),
    (f"CREATE TABLE a (k INT, rt TIMESTAMP(3), WATERMARK FOR rt AS rt + INTERVAL '1' SECOND) {K};\n"
     + T.split("\n", 1)[1] + J, UNSUPPORTED),                                     # another watermark form
    (f"CREATE TABLE a (k INT, n AS TO_TIMESTAMP(k)) {K};\n" + T.split("\n", 1)[1] + J, UNSUPPORTED),  # computed
    # a view over a table whose CREATE TABLE is refused: that refusal covers the view's use, never "not declared"
    (T.replace("CREATE TABLE a (", "CREATE TABLE a (n AS TO_TIMESTAMP(s), ", 1)
     + "CREATE TEMPORARY VIEW v AS SELECT k FROM a;\nSELECT v.k FROM v JOIN b ON v.k = b.k", UNSUPPORTED),
    ("CREATE TABLE a (k INT) WITH ('connector' = 'jdbc');\n" + T.split("\n", 1)[1] + J, UNSUPPORTED),
    (T + "SET 'parallelism.default' = '128';\n" + J, UNSUPPORTED),                 # valid, beyond converge's 64
    (T + "SET 'table.exec.source.idle-timeout' = '1 s';\n" + J, UNSUPPORTED),      # an option converge cannot send
    (T + "SET 'execution.runtime-mode' = 'batch';\n" + J, UNSUPPORTED),
    # a derived table's alias that is no identifier (its columns may be any text: Flink's `1-_./Ü` reads)
    (T + "SELECT k FROM (SELECT k, x FROM a) AS `my v` JOIN c ON k = c.k", UNSUPPORTED),
    # a quoted alias that is no identifier (converge names inputs with identifiers)
    (T + "SELECT `my a`.k FROM a AS `my a` JOIN b ON `my a`.k = b.k", UNSUPPORTED),
    # metadata columns (sqlglot parses no METADATA by itself: it was "cannot parse")
    (f"CREATE TABLE a (k INT, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp') {K};\n" + T.split("\n", 1)[1] + J,
     UNSUPPORTED),
    (f"CREATE TABLE a (k INT, ts TIMESTAMP(3) METADATA VIRTUAL) {K};\n" + T.split("\n", 1)[1] + J, UNSUPPORTED),
    (f"CREATE TABLE a (k INT, p INT METADATA FROM 'partition' VIRTUAL) {K};\n" + T.split("\n", 1)[1] + J,
     UNSUPPORTED),
    # structured column types: valid Flink SQL (sqlglot parses neither ROW<...> nor MULTISET<...> by itself)
    (f"CREATE TABLE a (k ROW<id INT, region STRING>, x INT, PRIMARY KEY (k) NOT ENFORCED) {K};\n"
     + T.split("\n", 1)[1] + J, UNSUPPORTED),
    (f"CREATE TABLE a (k ROW(id INT, region STRING), x INT) {K};\n" + T.split("\n", 1)[1] + J, UNSUPPORTED),
    (f"CREATE TABLE a (k INT, x ARRAY<INT>) {K};\n" + T.split("\n", 1)[1] + J, UNSUPPORTED),
    (f"CREATE TABLE a (k INT, x INT ARRAY) {K};\n" + T.split("\n", 1)[1] + J, UNSUPPORTED),
    (f"CREATE TABLE a (k INT, x MAP<STRING, INT>) {K};\n" + T.split("\n", 1)[1] + J, UNSUPPORTED),
    (f"CREATE TABLE a (k INT, x MULTISET<INT>) {K};\n" + T.split("\n", 1)[1] + J, UNSUPPORTED),
]


@pytest.mark.parametrize("text, expected", CASES, ids=[f"{i}-{e.__name__}" for i, (_, e) in enumerate(CASES)])
def test_each_refusal_has_the_class_of_its_meaning(text: str, expected: type) -> None:
    with pytest.raises((BadInputError, UnsupportedError)) as info:
        parse_query(text, "q.sql")
    assert type(info.value) is expected, str(info.value)
    assert str(info.value).startswith("q.sql:"), str(info.value)  # every refusal names its place in the file


# Flink's own shapes (its join tests' ROW-typed keys): a ROW key in the PRIMARY KEY, joined as a whole
ROW_KEYS = """CREATE TABLE orders (order_key ROW<id INT, region STRING>, excluded_status STRING,
  PRIMARY KEY (order_key) NOT ENFORCED) WITH ('connector' = 'values', 'changelog-mode' = 'I,UA,D');
CREATE TABLE lines (order_key ROW<id INT, region STRING>, line_id STRING, status STRING,
    PRIMARY KEY (order_key, line_id) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'key.format' = 'json', 'value.format' = 'json');
"""


@pytest.mark.parametrize("select", [
    "SELECT o.order_key, l.* FROM orders o LEFT JOIN lines l ON o.order_key = l.order_key",
    "SELECT o.order_key, l.* FROM orders o LEFT JOIN lines l ON o.order_key = l.order_key "
    "AND l.status <> o.excluded_status",
])
def test_a_row_typed_key_is_unsupported_at_each_column_with_its_type_as_written(select: str) -> None:
    with pytest.raises(UnsupportedError) as info:
        parse_query(ROW_KEYS + select, "q.sql")
    message = str(info.value)
    assert "2 problems" in message, message  # one per table, never "cannot parse"
    assert "q.sql:1:22: `order_key` column type ROW<id INT, region STRING> is a structured type" in message, message
    assert "q.sql:3:21: `order_key` column type ROW<id INT, region STRING> is a structured type" in message, message
    assert "STRUCT" not in message and "bad input" not in message, message


def test_ddl_forms_that_mean_nothing_to_the_join_are_read() -> None:
    """CREATE TEMPORARY TABLE (a session's table), a column COMMENT and a named PRIMARY KEY constraint: valid Flink
    that was refused (TEMPORARY even as bad input); each reads as the plain form."""
    plain = parse_query(f"CREATE TABLE a (k INT, x INT, PRIMARY KEY (k) NOT ENFORCED) {K};\n"
                        + T.split("\n", 1)[1] + J)
    forms = parse_query(f"CREATE TEMPORARY TABLE a (k INT COMMENT 'the key', x INT COMMENT 'x',\n"
                        f"  CONSTRAINT pk PRIMARY KEY (k) NOT ENFORCED) {K};\n" + T.split("\n", 1)[1] + J)
    assert forms.inputs == plain.inputs
    assert forms.inputs[0].unique_key == ("k",)
