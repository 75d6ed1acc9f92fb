"""The three counts every campaign table and summary shows, with one meaning each (docs/systems.md).

- examples: what was asked: `--examples N`, or the property's default, N
  cases. On the embedded runtime a case is one scenario: a batched property
  (one Hypothesis example holds a batch of scenarios of one shape, one oracle
  query for all) checks N scenarios, its last batch cut; on a system
  (`converge run --system`) the campaign sends exactly N cases unless a
  divergence or a failure of the system stops it.
- batches: on a system, the batches checked: each one shape, up to `--batch`
  cases, sent in one run request (a property that runs each case twice,
  multiway_equals_binary_chain and restart_changes_nothing, sends both runs:
  in two requests or in one of twice the cases; the requests of a divergence's reduction are not counted here, its
  report says how many). On the embedded runtime, a batched property's
  Hypothesis examples; the other properties have no batches: shown as "—"
  (null in summary.json).
- cases: the cases checked. On a system, the cases of those batches (the
  replay of a failing batch counted again; a property that runs each case
  twice counts both runs); on the embedded runtime, the scenarios checked,
  shrinking's tries included.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NO_BATCHES = "—"


@dataclass(frozen=True)
class Counts:
    """One property's examples asked, batches checked (None: not a system campaign) and cases checked."""

    examples: int
    batches: int | None
    cases: int

    @property
    def batches_cell(self) -> int | str:
        return NO_BATCHES if self.batches is None else self.batches

    def to_json(self) -> dict[str, Any]:
        return {"examples": self.examples, "batches": self.batches, "cases": self.cases}


def embedded_counts(result: Any, asked: int) -> Counts:
    """A property of the embedded runtime: `asked` scenarios; the scenarios checked, in the batches a batched
    property ran (None for the others)."""
    return Counts(asked, getattr(result, "batches", None), result.examples)


def system_counts(result: Any, asked: int) -> Counts:
    """A property of a system campaign: `asked` cases; its result's examples are the batches Hypothesis checked."""
    return Counts(asked, result.examples, result.exercised.cases)


def default_counts(result: Any) -> Counts:
    """A result given without what was asked (a caller of the summary that predates the three counts): the
    examples run stand for both examples and cases."""
    return Counts(result.examples, None, result.examples)
