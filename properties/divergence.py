"""What a failed property carries: enough to write a replayable, readable report."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, NoReturn

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
            text += "\n  (+ engine only, - expected only)\n" + format_bag_diff(self.engine, self.expected)
        return text


class PropertyFailure(DivergenceError):
    """A property does not hold; `.divergence` has the evidence."""

    def __init__(self, divergence: Divergence) -> None:
        self.divergence = divergence
        super().__init__(divergence.describe())


def fail(prop: str, scenario: Scenario, message: str, **kw: Any) -> NoReturn:
    """A property does not hold on `scenario`: raise its evidence."""
    raise PropertyFailure(Divergence(prop, scenario, message, **kw))


def require(cond: bool, prop: str, what: str) -> None:
    """A property's precondition: a scenario that does not meet it is bad input, never a silent pass."""
    if not cond:
        raise BadInputError(f"property {prop} does not apply: {what}")
