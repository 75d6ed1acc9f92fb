"""`converge check` on the view and derived-table examples: the reading, its plan, and the query as written."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from converge.cli.main import main
from converge.engine.model.errors import MisreadQueryError
from converge.engine.model.flinksql import load_query, views
from converge.properties.query_check import query_strategy
from converge.properties.query_plan import CheckOptions
from converge.properties.query_reading import reading_equals_query
from tests.support.paths import EXAMPLES


@pytest.mark.parametrize("name, calc", [
    ("view_over_a_source", "Calc in front of o: project o.id AS id, o.cust AS cust, (o.amount * 2) AS doubled; "
                           "where (o.amount > 10)"),
    ("derived_table_filter", "Calc in front of o: project o.id AS id, o.cust AS customer, (o.amount + 1) AS amt; "
                             "where (NOT (o.amount IS NULL))"),
])
def test_check_reads_and_checks_the_view_examples(name: str, calc: str, capsys, tmp_path: Path) -> None:
    code = main(["check", str(EXAMPLES / f"{name}.sql"), "--examples", "8", "--seed", "3",
                 "--reports-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"  {calc}" in out and "    through a view: " in out
    for prop in ("check/reading_equals_query", "check/system_final_answer", "regular/prefix_consistency",
                 "regular/final_convergence"):
        line = next(line for line in out.splitlines() if line.startswith(prop))
        assert line.split()[1] == "passed" and int(line.split()[3]) > 0, out


def test_a_reader_that_drops_a_views_filter_is_caught_by_the_query_as_written(monkeypatch) -> None:
    real = views.derived_input

    def without_filter(*args, **kwargs):
        from dataclasses import replace
        return replace(real(*args, **kwargs), where=None)

    monkeypatch.setattr("converge.engine.model.flinksql.query.derived_input", without_filter)
    query = load_query(EXAMPLES / "view_over_a_source.sql")
    assert query.inputs[0].where is None  # the planted misreading

    @settings(max_examples=100, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(query_strategy(query, CheckOptions().config(ttl=False)))
    def check(scenario) -> None:
        reading_equals_query(query, scenario)

    with pytest.raises(MisreadQueryError):
        check()
