"""What a property is to the runner: what feeds it, what decides it, and how it is shown."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hypothesis import strategies as st


@dataclass(frozen=True)
class PropertySpec:
    family: str
    name: str
    strategy: Callable[[], st.SearchStrategy[tuple]]
    check: Callable[..., None]
    examples: int = 100          # default examples per run in `converge run`
    description: str = ""
    suite_examples: int = 40     # examples per run in the default pytest suite
    verdict: str | None = None   # shown by `converge run` when the property holds: "reproduced" / "fixed"
    # An existential property's seeded search: run once per campaign (not per example) with the run's seed
    # and `search_budget`; each outcome's `warning()` (not found within budget) is a warning, not a failure.
    search: Callable[[int, int], list] | None = None
    search_budget: int = 1000
    # Scenarios one Hypothesis example holds at most: a check of a batch (a list of scenarios of one shape, the
    # oracle asked once for all; properties/batch.py). `examples` and `--examples` count scenarios either way.
    batch: int = 1
