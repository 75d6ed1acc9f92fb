"""Deny by default: every node of a query maps onto converge's model or is refused with file:line:column,
and every refusal of one file is reported in one run (engine/model/flinksql/allowed.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from converge.cli.main import main
from converge.engine.model.errors import BadInputError, UnsupportedError
from converge.engine.model.flinksql import load_query, parse_query
from converge.engine.model.flinksql.allowed import ALLOWED, ALLOWED_VALUES
from converge.engine.model.flinksql.dialect import Flink
from tests.support.paths import EXAMPLES
from tests.support.queries import PLAIN_LEFT_JOIN, QUERIES

ACCEPTED = [p.read_text() for p in sorted(EXAMPLES.glob("*.sql"))] + list(QUERIES.values()) + [PLAIN_LEFT_JOIN]


def _select(text: str) -> exp.Select:
    [select] = [s.expression if isinstance(s, exp.Insert) else s for s in sqlglot.parse(text, read=Flink)
                if isinstance(s, (exp.Select, exp.Insert))]  # INSERT INTO sink SELECT: the SELECT is the query
    return select


def test_every_allowed_node_type_and_value_is_exercised_by_a_test_or_doc_query() -> None:
    """No dead entries: each node type (and each listed argument value) the allow-list lets through is in a
    query that the reader accepts and whose reading tests compare with the query as written (QUERIES)."""
    types: set[type] = set()
    values: set[tuple[type, str, str]] = set()
    for text in ACCEPTED:
        parse_query(text)  # accepted
        for node in _select(text).walk():
            types.add(type(node))
            for kind, arg in ALLOWED_VALUES:
                if isinstance(node, kind) and node.args.get(arg):
                    value = node.args[arg]
                    values.add((kind, arg, value.value if isinstance(value, exp.DataType.Type) else str(value).upper()))
    assert set(ALLOWED) - types == set()
    assert types <= set(ALLOWED)  # what the accepted queries hold, the allow-list names
    wanted = {(k, a, v) for (k, a), vs in ALLOWED_VALUES.items() for v in vs}
    assert wanted - values == {(exp.DataType, "this", "TIMESTAMPLTZ")}  # TIMESTAMP_LTZ '...' is not Flink syntax


DDL = """CREATE TABLE orders (id BIGINT, k INT, t TIMESTAMP(3)) WITH ('connector' = 'kafka', 'format' = 'json');
CREATE TABLE rates (k INT, r DOUBLE) WITH ('connector' = 'kafka', 'format' = 'json');
"""


@pytest.mark.parametrize("column", ["o.t", "o.no_such_column"])
def test_a_temporal_join_is_refused_with_its_position_never_checked(column: str, tmp_path: Path, capsys) -> None:
    path = tmp_path / "temporal.sql"
    path.write_text(DDL + f"SELECT o.id, r.r\nFROM orders o\nJOIN rates FOR SYSTEM_TIME AS OF {column} AS r ON o.k = r.k;")
    with pytest.raises(UnsupportedError) as info:
        load_query(path)
    assert str(info.value).startswith(f"{path}:5:6: ") and "FOR SYSTEM_TIME AS OF" in str(info.value)
    assert "temporal join" in str(info.value)
    assert main(["check", str(path), "--examples", "2", "--no-reports"]) == 2
    out = capsys.readouterr()
    assert f"{path}:5:6:" in out.err and "properties:" not in out.out


def test_a_node_type_the_translation_does_not_list_is_refused() -> None:
    # the position is the first token sqlglot kept a position of: the CASE's first column, o.k
    with pytest.raises(UnsupportedError, match=r"^q.sql:4:34: `CASE WHEN .*CASE is outside the SQL subset"):
        parse_query(DDL + "SELECT * FROM orders o JOIN rates r\nON o.k = r.k AND r.r > CASE WHEN o.k > 1 THEN 1 ELSE 2 END", "q.sql")


def test_natural_using_and_in_lists_are_refused_not_dropped() -> None:
    with pytest.raises(UnsupportedError, match=r"^q.sql:5:7: .*IN with a list of values"):
        parse_query(DDL + "SELECT * FROM orders o JOIN rates r ON o.k = r.k\nWHERE o.k = 1\n  AND r.k IN (1, 2)", "q.sql")
    with pytest.raises(UnsupportedError, match="USING"):
        parse_query(DDL + "SELECT * FROM orders o JOIN rates r USING (k)", "q.sql")


def test_every_refusal_of_one_query_comes_back_in_one_run() -> None:
    sql = (DDL + "CREATE TABLE f (x FLOAT) WITH ('connector' = 'kafka', 'format' = 'json');\n"  # line 3, col 17
           "SELECT UPPER(o.id), r.r\n"                      # line 4, column 8
           "FROM orders o JOIN rates r ON o.k = r.k\n"
           "WHERE o.k IN (1, 2) AND r.nope = 1\n"           # line 6, columns 7 and 25
           "GROUP BY o.k")                                  # line 7
    with pytest.raises(BadInputError) as info:  # one of them is a mistake (no column nope): bad input
        parse_query(sql, "q.sql")
    lines = str(info.value).splitlines()
    assert lines[0] == "q.sql: 5 problems in the query (each with its file:line:column):"
    assert [line.split("`")[0].strip() for line in lines[1:]] == [
        "[unsupported] q.sql:3:17:", "[unsupported] q.sql:4:8:", "[unsupported] q.sql:6:7:",
        "[bad input] q.sql:6:25:", "[unsupported] q.sql:7:10:"]  # GROUP BY's first positioned token: o.k
    only_unsupported = sql.replace("r.nope", "r.k")
    with pytest.raises(UnsupportedError) as info:
        parse_query(only_unsupported, "q.sql")
    assert str(info.value).startswith("q.sql: 4 problems")
