"""On generated data the engine (views run change by change, engine/calc.py) and the DuckDB oracle (views as
SQL, oracle/views.py) agree after every event; CASE and IF compile to DuckDB's own answers."""

from __future__ import annotations

import itertools
from typing import Any

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings

from converge.engine.condition import compile_view_expression
from converge.engine.model.scenario import InputSpec, JoinSpec, Scenario
from converge.generators.views import INPUT_CALCS, OUTPUT_CALCS, view_join_scenarios, with_views
from converge.properties import regular
from converge.properties.divergence import PropertyFailure


@settings(max_examples=80, suppress_health_check=[HealthCheck.too_slow])
@given(view_join_scenarios())
def test_engine_and_oracle_agree_after_every_event(scenario: Scenario) -> None:
    regular.prefix_consistency(scenario)
    regular.final_convergence(scenario)


def test_every_view_form_is_drawn() -> None:
    # with_views is what the strategy maps its draws through: each input and output form is reachable
    spec = InputSpec("a", (("k", "BIGINT"), ("id", "BIGINT"), ("x", "BIGINT"), ("s", "VARCHAR")))
    other = InputSpec("b", (("k", "BIGINT"), ("id", "BIGINT"), ("y", "BIGINT"), ("s", "VARCHAR")))
    base = Scenario("s", (spec, other), JoinSpec(("a", "b"), ("inner",), ("a.k = b.k",)))
    forms = {(s.inputs[0].project, s.inputs[0].where, s.join.select, s.join.where)
             for s in (with_views(base, (i, 0), o) for i in range(len(INPUT_CALCS)) for o in range(len(OUTPUT_CALCS)))}
    assert len(forms) == len(INPUT_CALCS) * len(OUTPUT_CALCS)


def test_a_planted_bug_in_the_views_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agreement check can fail: an engine that drops an input's filter (keeping its projection) is caught."""
    from converge.engine import calc
    real = calc._compile_row

    def without_input_filters(path: str, layout: Any, project: Any, where: Any, key: str = "project") -> Any:
        return real(path, layout, project, None if path.startswith("inputs") else where, key)

    monkeypatch.setattr(calc, "_compile_row", without_input_filters)

    @settings(max_examples=300, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(view_join_scenarios(join_types=("left",), modes=("retract",)))
    def check(scenario: Scenario) -> None:
        regular.prefix_consistency(scenario)

    with pytest.raises(PropertyFailure):
        check()


VALUES = (None, -2, 0, 1, 3)
EXPRESSIONS = (
    "IF(x > 0, x * 10, NULL)",
    "CASE WHEN x IS NULL THEN 'none' WHEN x > 1 THEN 'big' ELSE 'small' END",
    "CASE WHEN x > 0 THEN CAST(x AS DOUBLE) / 2 WHEN y IS NULL THEN y ELSE -1 END",
    "CASE WHEN x = y THEN 'same' END",
    "IF(y IS NULL, x, IF(x > y, x, y))",
    "coalesce(IF(x < 0, NULL, x), y, 7) + 1",
)


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_case_and_if_give_duckdbs_values(expr: str) -> None:
    spec = InputSpec("t", (("x", "INTEGER"), ("y", "BIGINT")))
    fn, _ = compile_view_expression(expr, [(spec,)])
    con = duckdb.connect()
    for row in itertools.product(VALUES, VALUES):
        want = con.execute(f"SELECT {expr} FROM (SELECT ?::INTEGER AS x, ?::BIGINT AS y) AS t", list(row)).fetchall()
        assert fn(row) == want[0][0], (expr, row)
