"""converge's own reference engine as a system under test: it can run everything, and says so.

Its answer is the one at the end of the input, as a real engine's bounded
sources give it: an interval join's inputs end with a watermark of +inf.
As a System it is the yardstick the other systems are held against (the
campaign's `system_equals_reference`), and the system `converge run
--system reference` checks, so the system properties themselves are tested
on an engine whose answers the rest of the suite already holds to DuckDB.
"""

from __future__ import annotations

from collections.abc import Sequence

from converge import __version__
from converge.engine.model.errors import ApiMisuseError, ConvergeError
from converge.engine.model.scenario import Event, ProcessingTimeEvent, RuntimeName, Scenario, WatermarkEvent, sources_of
from converge.engine.model.system import Capabilities, CaseResult, System
from converge.engine.operators.interval_join import MAX_TIME
from converge.engine.runtime.local import RunResult, run_scenario


def ended(scenario: Scenario) -> Scenario:
    """The scenario with its inputs ended: an interval join's inputs end with a watermark (or a processing time)
    of +inf, as a bounded source ends, so the answer is the one at the end of the input (padding flushed); a stream
    both inputs read (a self-join) ends once."""
    iv = scenario.join.interval
    if iv is None:
        return scenario
    end: tuple[Event, ...] = ((ProcessingTimeEvent(MAX_TIME),) if iv.time == "processing" else
                              tuple(WatermarkEvent(name, MAX_TIME) for name in sources_of(scenario)))
    return scenario.with_events(tuple(scenario.events) + end)


def _result(run: RunResult | ConvergeError) -> CaseResult:
    if isinstance(run, ConvergeError):
        return CaseResult.error(f"{type(run).__name__}: {run}")
    return CaseResult.ok(changelog=run.changes)


class ReferenceSystem(System):
    """The reference engine on its local runtime, or on Spark (`runtime="spark"`, started on first use)."""

    def __init__(self, runtime: RuntimeName = "local") -> None:
        if runtime not in ("local", "spark"):
            raise ApiMisuseError(f"ReferenceSystem(runtime={runtime!r}): expected local or spark")
        self.runtime = runtime
        self.name = "reference" if runtime == "local" else "reference-spark"
        self.version = __version__
        self.capabilities = Capabilities.everything()

    def run_cases(self, cases: Sequence[Scenario]) -> list[CaseResult]:
        if self.runtime == "spark":
            from converge.engine.runtime.spark.job import run_scenarios_on_spark  # lazy: starts a JVM

            return [_result(r) for r in run_scenarios_on_spark([ended(s) for s in cases])]
        out: list[CaseResult] = []
        for scenario in cases:
            try:
                out.append(_result(run_scenario(ended(scenario))))
            except ConvergeError as exc:  # a case the engine rejects is that case's error, not the batch's
                out.append(_result(exc))
        return out
