"""`converge check` proves its reading of the query: the query as written, run in DuckDB, gives the same answer.

The reader mutants (converge/cli/mutant_catalog.py READER_MUTANTS) plant a misreading in the Flink SQL
reader; the engine and the oracle both consume the reading, so only the second path can see it.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from converge.cli.commands.check import run_check
from converge.cli.mutant_catalog import READER_MUTANTS, applied
from converge.engine.model.errors import MisreadQueryError
from converge.engine.model.flinksql import load_query, parse_query
from converge.engine.model.scenario import ChangeEvent
from converge.oracle.query_sql import QueryAsWritten
from converge.properties.query_check import CheckOptions, query_strategy
from converge.properties.query_reading import reading_answer, reading_equals_query
from tests.support.paths import EXAMPLES
from tests.support.queries import QUERIES, TYPES

ALL = ("left_join_residual", "interval_join_watermark", "three_way_common_key")
MUTANTS = {m.name: m for m in READER_MUTANTS}
# Which documented example shows each misreading: the interval bounds exist only in the interval example
SHOWN_ON = {"left_read_as_inner": ALL, "decimal_scale_zero": ALL,
            "between_upper_exclusive": ("interval_join_watermark",),
            "interval_residual_dropped": ("interval_join_watermark",)}


def test_every_reader_mutant_has_its_examples() -> None:
    assert set(SHOWN_ON) == set(MUTANTS)


@pytest.mark.parametrize("mutant, example", [(m, e) for m, es in SHOWN_ON.items() for e in es])
def test_check_catches_a_planted_reader_bug_on_the_documented_example(mutant: str, example: str) -> None:
    with applied(MUTANTS[mutant]):
        query = load_query(EXAMPLES / f"{example}.sql")
        lines: list[str] = []
        code = run_check(query, CheckOptions(examples=10, seed=1), echo=lines.append)
    out = "\n".join(lines)
    assert code == 3, out
    row = next(line for line in "\n".join(lines).splitlines() if line.startswith("check/reading_equals_query"))
    assert row.split()[1:3] == ["misread", "query"], out
    assert "converge misread your query" in out and "tables (final rows):" in out and "only in " in out
    assert "* none searched: converge misread the query" in out  # no finding is searched on a misread query


def _left_join_example():
    """One order (5.00) without a payment, one order (1.00) with a payment (3.00) that meets its residual."""
    return [ChangeEvent("o", "+I", (1, 10, 500)), ChangeEvent("o", "+I", (2, 11, 100)),
            ChangeEvent("p", "+I", (7, 2, 300, "card"))]


def test_a_misread_shows_the_example_and_both_answers() -> None:
    query = load_query(EXAMPLES / "left_join_residual.sql")
    scenario = query.scenario(_left_join_example())
    assert reading_answer(query, scenario) == Counter({(1, Decimal("5.00"), None, None, None): 1,
                                                      (2, Decimal("1.00"), 7, Decimal("3.00"), "card"): 1})
    reading_equals_query(query, scenario)
    with applied(MUTANTS["left_read_as_inner"]):
        misread = load_query(EXAMPLES / "left_join_residual.sql")
    with pytest.raises(MisreadQueryError) as info:
        reading_equals_query(misread, misread.scenario(_left_join_example()))
    text = str(info.value)
    assert "only in the query as written:\n    (1, 5.00, NULL, NULL, NULL)" in text
    assert "orders (order_id, customer_id, amount): 2 rows" in text and "(7, 2, 3.00, 'card')" in text


def test_the_second_path_takes_real_values_of_the_declared_types() -> None:
    written = QueryAsWritten(TYPES + "SELECT * FROM a JOIN b ON a.k = b.k;")
    assert written.real("a", (1, 2, 150, 1.5, 86_400_001, 2, "z")) == (
        1, 2, Decimal("1.50"), 1.5, dt.datetime(1970, 1, 2, 0, 0, 0, 1000), dt.date(1970, 1, 3), "z")
    assert [c.duckdb_type for c in written.tables["b"]] == ["INTEGER", "INTEGER", "DECIMAL(5, 1)"]


def test_the_second_path_divides_integers_as_flink_and_keeps_duplicates() -> None:
    written = QueryAsWritten(TYPES + "SELECT a.k, b.m FROM a JOIN b ON a.k / 2 = b.m;")
    a = [(7, None, None, None, None, None, None), (-7, None, None, None, None, None, None),
         (7, None, None, None, None, None, None)]
    b = [(1, 3, None), (2, -3, None), (3, -4, None)]
    # Flink: INT / INT is an INT truncated towards zero (7 / 2 = 3, -7 / 2 = -3), never a DOUBLE 3.5
    assert written.answer({"a": a, "b": b}) == Counter({(Decimal(7), Decimal(3)): 2, (Decimal(-7), Decimal(-3)): 1})


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_the_two_paths_agree_on_queries_of_every_supported_clause(name: str) -> None:
    """Both paths on generated examples: a difference is a bug in one of them (the reader or the second path)."""
    query = parse_query(QUERIES[name], f"{name}.sql")

    @settings(max_examples=40, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(query_strategy(query, CheckOptions().config(ttl=False)))
    def agree(scenario) -> None:
        reading_equals_query(query, scenario)

    agree()


FILTERED = (EXAMPLES / "left_join_residual.sql").read_text().replace(
    "SELECT o.order_id, o.amount, p.payment_id, p.paid, p.method",
    "SELECT p.method AS how, o.order_id").replace("AND p.paid >= o.amount;", "AND p.paid >= o.amount\nWHERE p.method <> 'a';")


def test_findings_and_the_description_are_of_the_query_with_its_where_and_select_list(tmp_path: Path) -> None:
    """The checked answer is the query's: a finding's example shows rows the WHERE keeps, by the SELECT list's
    names, and the description no longer calls the filter outside the check."""
    path = tmp_path / "filtered.sql"
    path.write_text(FILTERED)
    lines: list[str] = []
    record: dict = {}  # the same run, as --format json lists it
    assert run_check(load_query(path), CheckOptions(ttl_ms=4, examples=5, seed=1), echo=lines.append,
                     record=record) == 0
    out = "\n".join(lines)
    ttl_json = next(f for f in record["findings"] if f["topic"] == "state TTL")
    assert ttl_json["text"] in out and ttl_json["example"]["outputs"]
    for block in ttl_json["example"]["outputs"]:
        assert block["columns"] == ["how", "order_id"]  # the SELECT list's names, in its order
        assert all(list(r["row"]) == ["how", "order_id"] and r["row"]["how"] != "a" for r in block["rows"])
    table = [line.split() for line in out.splitlines() if line.startswith(("check/", "regular/", "multiway/"))]
    assert [(v["property"], v["verdict"], str(v["examples"])) for v in record["verdicts"]] == \
        [(row[0], row[1], row[2]) if row[1] != "not" else (row[0], "not run", row[3]) for row in table]
    assert "not part of the checked join" not in out and "where (on the join's output): (p.method <> 'a')" in out
    ttl = out[out.index("* state TTL"):out.index("* late rows")]
    assert "changes the answer" in ttl, ttl
    rows = [line.strip() for line in ttl.splitlines() if line.strip().startswith("(") and line.strip() != "(empty)"]
    assert rows and all(row.startswith("(how='") and not row.startswith("(how='a'") for row in rows), ttl  # no NULL


def test_a_plain_between_read_with_an_exclusive_upper_bound_is_a_misread_query() -> None:
    """The BETWEEN mutant's second patch (a BETWEEN that is no time bound): no documented example has one."""
    text = TYPES + "SELECT a.k, b.m FROM a JOIN b ON a.k = b.k AND b.m BETWEEN 1 AND 2"
    events = [ChangeEvent("a", "+I", (1, None, None, None, None, None, None)), ChangeEvent("b", "+I", (1, 2, None))]
    query = parse_query(text, "between.sql")
    assert reading_answer(query, query.scenario(events)) == Counter({(Decimal(1), Decimal(2)): 1})
    reading_equals_query(query, query.scenario(events))
    with applied(MUTANTS["between_upper_exclusive"]):
        misread = parse_query(text, "between.sql")
    with pytest.raises(MisreadQueryError, match=r"only in the query as written:\n    \(1, 2\)"):
        reading_equals_query(misread, misread.scenario(events))
