"""What run_property tells a watcher while a property runs: the phase, how far it got, and its best failing case.

A campaign against a live system spends seconds per example and minutes
shrinking; this is what lets the command line show it as it happens
(reports/progress.py draws it). The properties layer only states the facts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from converge.engine.model.scenario import Scenario

__all__ = ["ProgressCallback", "PropertyProgress", "RunPhase", "case_size"]

RunPhase = Literal["running", "shrinking", "done"]


@dataclass(frozen=True)
class PropertyProgress:
    """One moment of one property's run."""

    family: str
    name: str
    phase: RunPhase
    examples: int                 # examples checked so far (batches, against a system)
    planned: int                  # examples Hypothesis was asked for
    cases: int = 0                # cases sent (an example of a system property is a batch of cases)
    compared: int = 0
    shrink_steps: int = 0         # examples checked since the first failure
    best_events: int = 0          # the smallest failing example so far: its events ...
    best_cases: int = 0           # ... and its cases
    shrink_seconds: float = 0.0   # seconds since the first failure
    budget: float = 0.0           # the shrink budget, in seconds
    stopped: bool = False         # "done" only: shrinking stopped at the budget

    @property
    def key(self) -> str:
        return f"{self.family}/{self.name}"


ProgressCallback = Callable[[PropertyProgress], None]


def case_size(args: Iterable[object]) -> tuple[int, int]:
    """(events, cases) of a property's arguments: each scenario in them, or in a list among them, is a case."""
    events = cases = 0
    for a in args:
        for s in (a if isinstance(a, (list, tuple)) else (a,)):
            if isinstance(s, Scenario):
                events, cases = events + len(s.events), cases + 1
    return events, cases
