"""Embedded properties over a batch of scenarios: what a batch check owes the runner and the reports.

A batch (generators.scenarios.regular_join_batches) lets the oracle answer
many scenarios in one query (oracle/batch.py). The verdict stays per
scenario: each scenario of the batch counts as one case compared, and a
failure names the one scenario that failed, with `([scenario],)` as the
call to replay, so a report, `converge replay` and a rerun see a single
scenario, as they do for a one-scenario property. Hypothesis shrinks the
batch itself by deleting scenarios, down to the failing one alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import Scenario, require_scenario
from converge.properties import exercise
from converge.properties.divergence import FailedCall, PropertyFailure

__all__ = ["require_batch", "scenario_of_batch"]


def require_batch(scenarios: Sequence[Scenario], prop: str) -> list[Scenario]:
    """A batch check's argument: a non-empty list of scenarios (bad input otherwise, naming the position)."""
    if not isinstance(scenarios, (list, tuple)) or not scenarios:
        raise BadInputError(f"property {prop}: expected a non-empty list of scenarios, got {type(scenarios).__name__}")
    for i, scenario in enumerate(scenarios):
        require_scenario(scenario, f"{prop}(scenarios[{i}])")
    return list(scenarios)


@contextmanager
def scenario_of_batch(scenario: Scenario, *, last: bool = True) -> Iterator[None]:
    """Around one scenario's check inside a batch: its failure replays alone, and it counts as compared once it
    failed or passed its `last` step (a check in two passes over the batch wraps each)."""
    try:
        yield
    except PropertyFailure as failure:
        if failure.call is None:
            failure.call = FailedCall(([scenario],))
        exercise.compared()
        raise
    if last:
        exercise.compared()
