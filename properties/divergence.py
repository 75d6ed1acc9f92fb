"""What a failed property carries: enough to write a replayable, readable report.

A failure's evidence is its `Divergence`; how to make the failing call again
is its `FailedCall`, in the one declared field `PropertyFailure.call`. The
runner (properties/campaign.py) fills it with the arguments it called the
check with; a check that reduced its own failure (a live system's, in
properties/systems/specs.py) fills it first, with the reduced case and what
the reduction did, and the runner keeps it. Why a field of the failure and
not a second value handed back: Hypothesis, not the runner, chooses which of
the examples' exceptions a run ends with (the shrunk one, its final replay,
one of several distinct failures), so what belongs to a failure has to travel
with that exception; and the pytest plugin, which gets only the exception a
test raised, reads the same field. Typed and declared, where attributes set
on an exception were neither: a reader cannot misspell it, and a user's
`fail`/`require`/`PropertyFailure(divergence)` need not know it exists.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, NoReturn, Protocol

from converge.engine.model.errors import BadInputError, DivergenceError
from converge.engine.model.scenario import Scenario


def bag_diff(engine: Counter, expected: Counter) -> list[tuple[str, tuple, int]]:
    """Rows whose counts differ: ('+', row, n) engine has n more, ('-', row, n) engine has n fewer."""
    out: list[tuple[str, tuple, int]] = []
    for row in sorted(set(engine) | set(expected), key=repr):
        d = engine.get(row, 0) - expected.get(row, 0)
        if d > 0:
            out.append(("+", row, d))
        elif d < 0:
            out.append(("-", row, -d))
    return out


def format_bag_diff(engine: Counter, expected: Counter, *, limit: int = 20) -> str:
    lines = []
    for sign, row, n in bag_diff(engine, expected)[:limit]:
        lines.append(f"  {sign} {list(row)}" + (f" x{n}" if n > 1 else ""))
    return "\n".join(lines) or "  (no difference)"


@dataclass
class Divergence:
    """The first place where the engine and the expectation part ways."""

    property: str
    scenario: Scenario
    message: str
    event_index: int | None = None
    engine: Counter | None = None
    expected: Counter | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # What the property already had when it diverged, so a report shows it instead of recomputing it:
    oracle_sql: str | None = None           # the query the oracle ran for this scenario
    emitted: list | None = None             # the engine's output items per event, in the run that diverged
    expected_final: Counter | None = None   # the answer the scenario must end with (an oracle's or a model's)

    def extra_json(self) -> dict[str, Any]:
        """The JSON-safe part of `extra` (what a replay needs to rerun the property)."""
        return {k: v for k, v in self.extra.items() if isinstance(v, (int, str, float, bool, list, type(None)))}

    def describe(self) -> str:
        where = f" after event {self.event_index}" if self.event_index is not None else ""
        text = f"{self.property}: {self.message}{where}"
        if self.engine is not None and self.expected is not None:
            text += f"\n  (+ {self.side()} only, - expected only)\n" + format_bag_diff(self.engine, self.expected)
        return text

    def side(self) -> str:
        """Whose output `engine` holds, for a diff's legend: the system under test's title (a system's divergence,
        properties/systems/answers.py) or converge's engine (issue 41 row 7: the legend said "engine" for both)."""
        system = self.extra.get("system")
        return system if isinstance(system, str) and system else "engine"


class ReductionRecord(Protocol):
    """What a check's own reduction of its failure did (properties/systems/reduce.Reduction), for the report."""

    def describe(self) -> str: ...


@dataclass(frozen=True)
class FailedCall:
    """The check's call that failed: what replay must make again, and what the check's own reduction did."""

    args: tuple                                 # the check's arguments: a report's `args`, what replay reruns
    reduction: ReductionRecord | None = None    # set by a check that reduced its failure itself
    shrink_stopped: float | None = None         # that reduction stopped at this budget (s), with its best case


class PropertyFailure(DivergenceError):
    """A property does not hold; `.divergence` has the evidence, `.call` (once it went through the runner, or
    from a check that reduced it) the call that failed."""

    def __init__(self, divergence: Divergence, *, call: FailedCall | None = None) -> None:
        self.divergence = divergence
        self.call = call
        super().__init__(divergence.describe())


def fail(prop: str, scenario: Scenario, message: str, **kw: Any) -> NoReturn:
    """A property does not hold on `scenario`: raise its evidence."""
    raise PropertyFailure(Divergence(prop, scenario, message, **kw))


def require(cond: bool, prop: str, what: str) -> None:
    """A property's precondition: a scenario that does not meet it is bad input, never a silent pass."""
    if not cond:
        raise BadInputError(f"property {prop} does not apply: {what}")
