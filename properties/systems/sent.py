"""What a system property sent: its shapes, the changelog modes its inputs declared, its join types, and how
many of its cases held a retraction.

A green campaign says what it exercised (issue 41 row 6: at 30 examples a
buggy adapter received only insert-only inputs and passed its retraction
bug). Each batch the property sends (properties/systems/specs.py `bind`; a
failing batch Hypothesis replays counted again, a reduction's candidates not)
is counted here, so the counts are of cases sent, which can exceed the
table's cases checked when a batch stops at its first divergence: a shape is a batch's inputs, join and config (all its cases
share them); a case counts once per mode, join type and retraction it holds,
so the counts read "cases that sent ...". The campaign prints them per
property under its table, and a property that sent cases but no retraction
says so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from converge.engine.model.changelog import RETRACT_KINDS
from converge.engine.model.scenario import ChangeEvent, Scenario

__all__ = ["APPEND_ONLY_FAMILIES", "Sent", "shape_of"]

# Families whose inputs are append-only by design: an interval join's inputs take no retraction
# (docs/interval-joins.md; generators/interval.py declares them insert_only), so sending none is no gap
APPEND_ONLY_FAMILIES = frozenset({"interval"})


def shape_of(scenario: Scenario) -> str:
    """A case's shape: its inputs (columns, keys, modes), join and config; its events are not part of it."""
    return repr((scenario.chain, scenario.join, scenario.config))


def retracts(scenario: Scenario) -> bool:
    """Whether the case sends a retraction (-U or -D) on some input."""
    return any(isinstance(e, ChangeEvent) and e.kind in RETRACT_KINDS for e in scenario.events)


@dataclass
class Sent:
    """The cases a property sent, counted by what they hold."""

    cases: int = 0
    retracting: int = 0                                   # cases with a -U or -D change
    modes: Counter = field(default_factory=Counter)       # changelog mode -> cases with an input declaring it
    joins: Counter = field(default_factory=Counter)       # join type -> cases whose join has it
    shapes: set[str] = field(default_factory=set)         # distinct shapes (shape_of)

    def add(self, cases: Sequence[Scenario]) -> None:
        """Count one batch's cases as sent."""
        for case in cases:
            self.cases += 1
            self.retracting += retracts(case)
            self.modes.update({spec.changelog_mode for spec in case.chain})
            self.joins.update(set(case.join.types))
            self.shapes.add(shape_of(case))

    @property
    def no_retraction(self) -> bool:
        """It sent cases and none of them retracted anything."""
        return self.cases > 0 and self.retracting == 0

    def cells(self) -> tuple[int, str, str, str]:
        """Shapes, changelog modes, join types and retractions, as the campaign's "sent" table shows them."""
        return (len(self.shapes), _counted(self.modes), _counted(self.joins),
                f"{self.retracting} of {self.cases} sent" + (" (none)" if self.no_retraction else ""))

    def to_json(self) -> dict[str, Any]:
        return {"cases": self.cases, "shapes": len(self.shapes), "cases_with_retraction": self.retracting,
                "changelog_modes": dict(sorted(self.modes.items())), "join_types": dict(sorted(self.joins.items()))}


def _counted(counts: Counter) -> str:
    """ "insert_only 12, retract 8": each name with its cases, most first; "-" when none."""
    return ", ".join(f"{name} {n}" for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))) or "-"
