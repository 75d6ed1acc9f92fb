"""Replaying scenario files: their own expectations, or the properties that apply when they have none."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Literal

from engine.errors import BadInputError, ConvergeError
from engine.scenario import Scenario, load_scenario
from properties.divergence import PropertyFailure
from properties.expectations import check_expectations

RuntimeName = Literal["local", "spark"]


@dataclass
class ReplayOutcome:
    path: Path
    scenario: Scenario | None
    problems: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def run_on(scenario: Scenario, runtime: RuntimeName):
    """Run a scenario on the named runtime; the Spark one is imported only when asked for."""
    if runtime == "local":
        from engine.runtime.local import run_scenario
        return run_scenario(scenario)
    if runtime == "spark":
        from engine.runtime.spark import run_scenario_on_spark  # lazy: the embedded default never starts a JVM
        return run_scenario_on_spark(scenario)
    raise BadInputError(f"unknown runtime {runtime!r} (expected local or spark)")


def applicable_properties(scenario: Scenario) -> list[tuple[str, Callable[[Scenario], None]]]:
    """The oracle-backed properties that decide a scenario with no written expectations."""
    from properties import regular

    ttl = scenario.config.state_ttl_ms
    if scenario.join.interval is not None:
        from properties import interval  # type: ignore[attr-defined]
        return interval.applicable(scenario)
    if ttl is None and scenario.config.semantics == "correct":
        return [("prefix_consistency", regular.prefix_consistency), ("final_convergence", regular.final_convergence)]
    if ttl is not None and len(scenario.join.inputs) == 2 and all(
            i.changelog_mode != "upsert" for i in scenario.inputs):
        return [("ttl_matches_model", regular.ttl_matches_model)]
    return []


def _final_on_runtime(scenario: Scenario, runtime: RuntimeName) -> None:
    """On another runtime: the folded output must equal the local runtime's and, without TTL, DuckDB's."""
    from collections import Counter

    from engine.materialize import clean, fold
    from engine.runtime.local import run_scenario
    from properties.divergence import Divergence
    from properties.regular import shared_oracle

    got = clean(fold(run_on(scenario, runtime).changes))
    local = clean(fold(run_scenario(scenario).changes))
    want: Counter = local
    if scenario.config.state_ttl_ms is None and scenario.join.interval is None:
        want = shared_oracle().final(scenario)
    for expected, what in ((local, "the local runtime"), (want, "the oracle")):
        if got != expected:
            raise PropertyFailure(Divergence(f"final_on_{runtime}", scenario, f"{runtime} output differs from {what}",
                                             engine=got, expected=expected))


def replay_scenario(scenario: Scenario, path: Path, runtime: RuntimeName = "local") -> ReplayOutcome:
    outcome = ReplayOutcome(path, scenario)
    try:
        if scenario.has_expectations():
            result = run_on(scenario, runtime)
            outcome.checked.append("expectations")
            outcome.problems.extend(check_expectations(scenario, result))
            return outcome
        props = applicable_properties(scenario)
        if not props:
            outcome.problems.append("the scenario has no expectations and no property applies to it")
        for name, check in props:
            outcome.checked.append(name)
            try:
                if runtime == "local":
                    check(scenario)
                else:
                    _final_on_runtime(scenario, runtime)
            except PropertyFailure as exc:
                outcome.problems.append(str(exc))
    except ConvergeError as exc:
        outcome.problems.append(f"{type(exc).__name__}: {exc}")
    return outcome


def scenario_files(target: str | Path) -> list[Path]:
    target = Path(target)
    if target.is_dir():
        return sorted(target.rglob("*.json"))
    if not target.exists():
        raise BadInputError(f"{target}: no such file or directory")
    return [target]


def replay_path(target: str | Path, runtime: RuntimeName = "local") -> list[ReplayOutcome]:
    outcomes = []
    for path in scenario_files(target):
        try:
            scenario = load_scenario(path)
        except BadInputError as exc:
            outcomes.append(ReplayOutcome(path, None, [str(exc)]))
            continue
        outcomes.append(replay_scenario(scenario, path, runtime))
    return outcomes
