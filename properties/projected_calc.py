"""A projection in front of an interval join (a time attribute computed from a column): its Calc, then the join.

`calc_equals_lowered` judges the Calc alone: the engine run on the scenario as
written (its Calc computes each row, engine/calc.py) emits, at every event,
what the engine emits on the scenario whose rows DuckDB projected
(oracle/projected.py). A Calc handles each row alone, so the two runs differ
only where the two projections differ, late rows or not. The interval
properties then judge the join on the lowered scenario (`lowered`), so their
expectations never come from the Calc under test.
"""

from __future__ import annotations

from collections.abc import Callable

from converge.engine.model.scenario import Scenario
from converge.engine.runtime.local import run_scenario
from converge.oracle.projected import projected_scenario, projected_with_positions
from converge.properties import interval
from converge.properties.divergence import fail

__all__ = ["applicable", "calc_equals_lowered", "lowered"]

Check = Callable[[Scenario], None]


def calc_equals_lowered(scenario: Scenario) -> None:
    """The engine's output with its Calc equals its output on DuckDB's projected rows, at every event."""
    prop = "calc_equals_lowered"
    got = run_scenario(scenario).per_event
    lowered_scenario, positions = projected_with_positions(scenario)
    want: list = [[] for _ in got]  # an event whose row a filter drops reaches no join: it emits nothing
    for pos, out in zip(positions, run_scenario(lowered_scenario).per_event, strict=True):
        want[pos] = out
    for i, (a, b) in enumerate(zip(got, want, strict=True)):
        if a != b:
            fail(prop, scenario, f"at event {i} the engine's Calc in front of the join gives another output than "
                                 f"the rows DuckDB projects", event_index=i, engine=a, expected=b)


def lowered(check: Check) -> Check:
    """`check` on the scenario as its join sees it, the projections computed by DuckDB."""
    def on_lowered(scenario: Scenario) -> None:
        check(projected_scenario(scenario))

    on_lowered.__name__ = getattr(check, "__name__", "check")
    return on_lowered


def applicable(scenario: Scenario) -> list[tuple[str, Check]]:
    """The properties that decide an interval-join scenario with a projection in front of the join."""
    return [("calc_equals_lowered", calc_equals_lowered),
            *((name, lowered(check)) for name, check in interval.applicable(projected_scenario(scenario)))]
