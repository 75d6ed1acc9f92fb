"""The last run requests of an adapter system, with the stderr the adapter wrote during each.

A divergence's report shows the stderr lines of the request that answered
its case (`stderr_during`). The case is found by what was sent: the
divergence holds the scenario a check judged, which may be an equal copy of
the one sent (a reduction round, a check that rewrites a setting).
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from converge.engine.model.scenario import Scenario
from converge.engine.model.system_cases import scenario_for_case

KEPT_REQUESTS = 64   # run requests remembered: a reduction's rounds and Hypothesis's replay come after the failure


@dataclass(frozen=True)
class RequestRecord:
    """One run request: its number, the cases it carried, the seconds its answer took, the adapter's stderr
    lines while it was under way (the last log.REQUEST_STDERR_LINES; `dropped` more before them)."""

    number: int
    cases: tuple[Scenario, ...]
    seconds: float
    stderr: tuple[str, ...]
    dropped: int = 0

    def stderr_block(self) -> list[str]:
        """The lines as a report shows them (a note first when some were dropped)."""
        head = [f"({self.dropped} earlier lines not kept)"] if self.dropped else []
        return head + list(self.stderr)


class RequestHistory:
    """The last KEPT_REQUESTS run requests of one system, newest last."""

    def __init__(self, kept: int = KEPT_REQUESTS) -> None:
        self.records: collections.deque[RequestRecord] = collections.deque(maxlen=kept)

    def add(self, record: RequestRecord) -> None:
        self.records.append(record)

    def last(self) -> RequestRecord | None:
        return self.records[-1] if self.records else None

    def find(self, scenario: Scenario) -> RequestRecord | None:
        """The newest request that carried `scenario` (the same object, or one sent the same way)."""
        for record in reversed(self.records):
            if any(case is scenario for case in record.cases):
                return record
        carried = self.carrying(scenario)
        return carried[-1] if carried else None

    def carrying(self, scenario: Scenario) -> list[RequestRecord]:
        """Every request kept that carried a case sent as `scenario` is, oldest first."""
        wanted = _sent_form(scenario)
        return [r for r in self.records if any(case is scenario or _sent_form(case) == wanted for case in r.cases)]


def _sent_form(scenario: Scenario) -> object:
    return scenario_for_case(scenario)


def stderr_during(system: object, scenario: Scenario) -> RequestRecord | None:
    """The request of `system` (an adapter system; any other has none) that answered `scenario`."""
    history = getattr(system, "history", None)
    return history.find(scenario) if isinstance(history, RequestHistory) else None


def requests_carrying(system: object, scenario: Scenario) -> list[RequestRecord]:
    """The requests of `system` that carried `scenario` (none for a system that is no adapter system)."""
    history = getattr(system, "history", None)
    return history.carrying(scenario) if isinstance(history, RequestHistory) else []


def note_stderr(system: object, failure: BaseException | None) -> None:
    """Put the adapter's stderr during the request that answered the diverging case into its divergence, for
    the report's "stderr of the adapter during this request" block (reports/failure.py); nothing for a system
    without requests or a failure without a divergence."""
    divergence = getattr(failure, "divergence", None)
    if divergence is None:
        return
    record = stderr_during(system, divergence.scenario)
    if record is not None:
        divergence.extra["adapter_stderr"] = {"request": record.number, "lines": record.stderr_block()}


def with_stderr(system: object, reporter: Callable[[Any], None] | None) -> Callable[[Any], None] | None:
    """A run_property failure callback that notes the adapter's stderr (note_stderr) before `reporter` writes."""
    if reporter is None:
        return None

    def report(result: Any) -> None:
        note_stderr(system, result.failure)
        reporter(result)

    return report
