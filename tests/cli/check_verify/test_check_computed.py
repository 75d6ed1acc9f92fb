"""`converge check` on computed columns in the DDL: the reading, its plan, and the query as written (DuckDB
computing the columns itself) catching a reader that misreads one."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from converge.cli.main import main
from converge.engine.model.errors import MisreadQueryError
from converge.engine.model.flinksql import load_query, views
from converge.oracle.query_sql import QueryAsWritten
from converge.properties.query_check import query_strategy
from converge.properties.query_plan import CheckOptions
from converge.properties.query_reading import reading_equals_query
from tests.support.paths import EXAMPLES


def test_check_reads_and_checks_the_computed_columns_example(capsys, tmp_path: Path) -> None:
    code = main(["check", str(EXAMPLES / "computed_columns.sql"), "--examples", "8", "--seed", "3",
                 "--reports-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "  o = orders [retract from kafka]: id BIGINT, cust BIGINT, amount INT\n" \
           "    through computed columns: id BIGINT, cust BIGINT, amount INT, doubled INT, big BOOLEAN\n" in out
    assert "join chain: o INNER c ON (o.cust = c.next_id)" in out and "where (on the join's output): o.big" in out
    for prop in ("check/reading_equals_query", "check/system_final_answer", "regular/prefix_consistency",
                 "regular/final_convergence"):
        line = next(line for line in out.splitlines() if line.startswith(prop))
        assert line.split()[1] == "passed" and int(line.split()[3]) > 0, out


def test_a_reader_that_misreads_a_computed_column_is_caught_by_the_query_as_written(monkeypatch) -> None:
    real = views.computed_input

    def amount_not_doubled(*args, **kwargs):
        read = real(*args, **kwargs)
        return replace(read, project=tuple((n, "o.amount" if n == "doubled" else e) for n, e in read.project or ()))

    monkeypatch.setattr("converge.engine.model.flinksql.query.computed_input", amount_not_doubled)
    query = load_query(EXAMPLES / "computed_columns.sql")
    assert dict(query.inputs[0].project or ())["doubled"] == "o.amount"  # the planted misreading

    @settings(max_examples=100, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(query_strategy(query, CheckOptions().config(ttl=False)))
    def check(scenario) -> None:
        reading_equals_query(query, scenario)

    with pytest.raises(MisreadQueryError):
        check()


def test_the_query_as_written_computes_the_columns_itself() -> None:
    """Flink's INT / INT truncates: 3 / 2 is 1 (the computed column is transpiled with the file's types)."""
    written = QueryAsWritten("CREATE TABLE t (a INT, half AS a / 2, big AS a > 3) WITH ('connector' = 'kafka');\n"
                             "CREATE TABLE u (k INT) WITH ('connector' = 'kafka');\n"
                             "SELECT t.a, t.half, t.big, u.k FROM t JOIN u ON t.half = u.k;")
    try:
        got = written.answer({"t": [(3,), (4,), (None,)], "u": [(1,), (2,)]})
    finally:
        written.close()
    assert got == Counter({(3, 1, False, 1): 1, (4, 2, True, 2): 1})


def test_the_query_as_written_truncates_integer_division_on_bare_columns_of_a_view() -> None:
    """`amount / 2` in a view names its column bare; Flink's INT / INT truncates, so 3 / 2 is 1 (not 1.5)."""
    written = QueryAsWritten("CREATE TABLE o (id BIGINT, amount INT) WITH ('connector' = 'kafka');\n"
                             "CREATE TABLE c (id BIGINT) WITH ('connector' = 'kafka');\n"
                             "CREATE VIEW v AS SELECT id, amount / 2 AS h FROM o;\n"
                             "SELECT v.h, x.h2 FROM v JOIN (SELECT id, id / 2 AS h2 FROM c) AS x ON v.id = x.id;")
    try:
        got = written.answer({"o": [(5, 3)], "c": [(5,)]})
    finally:
        written.close()
    assert got == Counter({(1, 2): 1})
