"""Replaying scenario files: their own expectations, or the properties that apply when they have none."""

from __future__ import annotations

import inspect
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Literal

from converge.engine.errors import BadInputError, ConvergeError
from converge.engine.materialize import clean, fold
from converge.engine.runtime.local import run_scenario
from converge.engine.runtime.spark import run_scenario_on_spark
from converge.engine.scenario import Scenario
from converge.engine.scenario_json import load_scenario, scenario_from_dict
from converge.properties import interval, regular
from converge.properties.divergence import Divergence, PropertyFailure
from converge.properties.expectations import check_expectations
from converge.properties.registry import select
from converge.properties.regular import shared_oracle

RuntimeName = Literal["local", "spark"]


@dataclass
class ReplayOutcome:
    path: Path
    scenario: Scenario | None
    problems: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    divergences: list[Divergence] = field(default_factory=list)  # property failures seen on this replay

    @property
    def ok(self) -> bool:
        return not self.problems


def run_on(scenario: Scenario, runtime: RuntimeName):
    """Run a scenario on the named runtime; the Spark one is imported only when asked for."""
    if runtime == "local":
        return run_scenario(scenario)
    if runtime == "spark":
        return run_scenario_on_spark(scenario)
    raise BadInputError(f"unknown runtime {runtime!r} (expected local or spark)")


def applicable_properties(scenario: Scenario) -> list[tuple[str, Callable[[Scenario], None]]]:
    """The oracle-backed properties that decide a scenario with no written expectations."""
    ttl = scenario.config.state_ttl_ms
    if scenario.join.interval is not None:
        return interval.applicable(scenario)
    if ttl is None and scenario.config.semantics == "correct":
        return [("prefix_consistency", regular.prefix_consistency), ("final_convergence", regular.final_convergence)]
    if ttl is not None and len(scenario.join.inputs) == 2 and all(
            i.changelog_mode != "upsert" for i in scenario.inputs):
        return [("ttl_matches_model", regular.ttl_matches_model)]
    return []


def _final_on_runtime(scenario: Scenario, runtime: RuntimeName) -> None:
    """On another runtime: the folded output must equal the local runtime's and, without TTL, DuckDB's."""


    got = clean(fold(run_on(scenario, runtime).changes))
    local = clean(fold(run_scenario(scenario).changes))
    want: Counter = local
    if scenario.config.state_ttl_ms is None and scenario.join.interval is None:
        want = shared_oracle().final(scenario)
    for expected, what in ((local, "the local runtime"), (want, "the oracle")):
        if got != expected:
            raise PropertyFailure(Divergence(f"final_on_{runtime}", scenario, f"{runtime} output differs from {what}",
                                             engine=got, expected=expected))


def failure_info(scenario: Scenario) -> dict | None:
    """The `converge_failure` meta a failure report writes (None for other scenario files)."""
    info = scenario.meta.get("converge_failure")
    return info if isinstance(info, dict) and isinstance(info.get("property"), str) else None


def _find_spec(family: str | None, name: str):

    found = select(family, name) if family else []
    return (found or select(None, name) or [None])[0]


def _decode_args(encoded: list | None, base: Scenario, check: Callable) -> tuple | None:
    """The recorded call arguments; without a record, a one-argument property takes the scenario itself."""
    if encoded is None:
        params = [p for p in inspect.signature(check).parameters.values()
                  if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        return (base,) if len(params) == 1 else None
    out: list[Any] = []
    for a in encoded:
        if isinstance(a, dict) and "$scenario" in a:
            out.append(base if a["$scenario"] == "self" else scenario_from_dict(a["$scenario"]))
        else:
            out.append(a)
    return tuple(out)


def rerun_recorded_property(scenario: Scenario, outcome: ReplayOutcome) -> bool:
    """Rerun the property a failure report names, with its recorded arguments; False if it cannot be rerun."""
    info = failure_info(scenario)
    if info is None:
        return False
    name = info.get("spec") or info["property"]  # the registered property that ran (it names its check)
    spec = _find_spec(info.get("family"), name)
    if spec is None:
        outcome.checked.append(f"{name} (unknown property: not rerun)")
        return False
    base = replace(scenario, expect_final=None, expect_changelog=None,
                   meta={k: v for k, v in scenario.meta.items() if k != "converge_failure"})
    args = _decode_args(info.get("args"), base, spec.check)
    if args is None:
        outcome.checked.append(f"{name} (arguments not recorded: not rerun)")
        return False
    outcome.checked.append(name)
    try:
        spec.check(*args)
    except PropertyFailure as exc:
        d = exc.divergence
        outcome.divergences.append(d)
        same = d.property == info["property"] and d.event_index == info.get("event_index")
        outcome.problems.append(("reproduces the recorded failure: " if same else
                                 "fails, differently from the record: ") + str(exc))
    except Exception as exc:  # noqa: BLE001 - a crash of the engine or the check is a failure to show
        outcome.problems.append(f"{name} crashed: {type(exc).__name__}: {exc}")
    return True


def replay_scenario(scenario: Scenario, path: Path, runtime: RuntimeName = "local") -> ReplayOutcome:
    outcome = ReplayOutcome(path, scenario)
    try:
        if runtime == "local" and failure_info(scenario) is not None and rerun_recorded_property(scenario, outcome):
            if scenario.has_expectations():
                outcome.checked.append("expectations")
                outcome.problems.extend(check_expectations(scenario, run_on(scenario, runtime)))
            return outcome
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
