"""Hypothesis strategies for restarted cases: a drawn case with `config.restart_after` (and a state backend).

Nothing about the case's events changes (they are built by construction by the generator that drew the
case); only where the job is stopped with a savepoint and restored: after 0 (before the first change)
to all of the case's changes (after the last one: the restored job only sees the end of the input).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from hypothesis import strategies as st

from converge.engine.model.scenario import ChangeEvent, Scenario, StateBackend
from converge.generators.arguments import check_choices


def changes(scenario: Scenario) -> int:
    """How many change events the scenario has (what restart_after counts)."""
    return sum(isinstance(e, ChangeEvent) for e in scenario.events)


def restarted(base: st.SearchStrategy[Scenario], *,
              backends: Sequence[StateBackend | None] = (None,)) -> st.SearchStrategy[Scenario]:
    """Cases of `base` with restart_after drawn from 0..len(changes) and a backend from `backends` (None: the
    system's default). Shrinks towards a restart before the first change, on the first backend."""
    backends = check_choices("restarted", "backends", backends, (None, "hashmap", "rocksdb"))

    @st.composite
    def draw(draw_: st.DrawFn) -> Scenario:
        scenario = draw_(base)
        at = draw_(st.integers(0, changes(scenario)))
        backend = draw_(st.sampled_from(backends))
        return replace(scenario, name=f"{scenario.name} (restart after {at})",
                       config=replace(scenario.config, restart_after=at, state_backend=backend))

    return draw()
