"""Replaying scenario files: their own expectations, or the properties that apply when they have none."""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from converge.engine.materialize import clean, fold
from converge.engine.model.errors import (
    ApiMisuseError,
    BadInputError,
    DivergenceError,
    NotCheckedError,
    exit_code,
    label,
)
from converge.engine.model.scenario import RuntimeName, Scenario, short_repr
from converge.engine.model.scenario_json import load_scenario, scenario_from_dict
from converge.engine.runtime.local import run_scenario
from converge.engine.runtime.spark import run_scenario_on_spark
from converge.oracle import OracleName, final_oracle
from converge.oracle.shared import shared_oracle
from converge.properties import interval, minibatch, projected_calc, regular
from converge.properties.divergence import Divergence, PropertyFailure
from converge.properties.expectations import check_expectations
from converge.properties.registry import select
from converge.properties.replay_files import Skipped, find_scenario_files
from converge.properties.spec import PropertySpec


@dataclass
class ReplayOutcome:
    """One file's replay: what was checked and every problem found, each with the error it stands for."""

    path: Path
    scenario: Scenario | None
    problems: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    divergences: list[Divergence] = field(default_factory=list)  # property failures seen on this replay
    errors: list[BaseException] = field(default_factory=list)    # one per problem: what kind of problem it is

    def add(self, error: BaseException, text: str | None = None) -> None:
        """Record a problem; its error's class decides the label and exit code (engine/model/errors.py)."""
        self.errors.append(error)
        self.problems.append(text if text is not None else f"{type(error).__name__}: {error}")

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def error(self) -> BaseException | None:
        """The most severe problem (exit code 3 > 2 > 1), None when the file passed."""
        return max(self.errors, key=exit_code, default=None)

    @property
    def label(self) -> str:
        return label(self.error)

    @property
    def exit_code(self) -> int:
        return exit_code(self.error)


def run_on(scenario: Scenario, runtime: RuntimeName):
    """Run a scenario on the named runtime; the Spark one is imported only when asked for."""
    if runtime == "local":
        return run_scenario(scenario)
    if runtime == "spark":
        return run_scenario_on_spark(scenario)
    raise ApiMisuseError(f"run_on(runtime={runtime!r}): expected local or spark")


def applicable_properties(scenario: Scenario) -> list[tuple[str, Callable[[Scenario], None]]]:
    """The oracle-backed properties that decide a scenario with no written expectations."""
    ttl = scenario.config.state_ttl_ms
    if scenario.join.interval is not None and any(spec.has_calc for spec in scenario.chain):
        return projected_calc.applicable(scenario)  # a time attribute computed in front of the join
    if scenario.join.interval is not None:
        return interval.applicable(scenario)
    if scenario.config.mini_batch_size is not None:
        return minibatch.applicable(scenario)
    if ttl is None and scenario.config.semantics == "correct":
        return [("prefix_consistency", regular.prefix_consistency), ("final_convergence", regular.final_convergence)]
    if ttl is not None and len(scenario.join.inputs) == 2 and all(
            i.changelog_mode in ("insert_only", "retract") for i in scenario.inputs):
        return [("ttl_matches_model", regular.ttl_matches_model)]
    return []


def _check_other_runtime(outcome: ReplayOutcome, scenario: Scenario, runtime: RuntimeName,
                         oracle: OracleName = "duckdb") -> None:
    """On another runtime: the folded output must equal the local runtime's and, without TTL, the oracle's
    (DuckDB's, or Spark SQL's with `oracle="spark"`).

    Each comparison is recorded under its own name, so the printed list says what was compared."""
    got = clean(fold(run_on(scenario, runtime).changes))
    checks: list[tuple[str, Callable[[], Counter], str]] = [
        (f"{runtime}_final_equals_local", lambda: clean(fold(run_scenario(scenario).changes)), "the local runtime")]
    if scenario.config.state_ttl_ms is None and scenario.join.interval is None:
        if oracle == "duckdb":
            checks.append((f"{runtime}_final_equals_oracle", lambda: shared_oracle().final(scenario), "DuckDB"))
        else:
            checks.append((f"{runtime}_final_equals_oracle", lambda: final_oracle(oracle).final(scenario),
                           "the Spark SQL oracle"))
    for name, expected_of, what in checks:
        outcome.checked.append(name)
        expected = expected_of()
        if got != expected:
            failure = PropertyFailure(Divergence(name, scenario, f"{runtime} output differs from {what}",
                                                 engine=got, expected=expected))
            outcome.divergences.append(failure.divergence)
            outcome.add(failure, str(failure))


def failure_info(scenario: Scenario) -> dict | None:
    """The `converge_failure` meta a failure report writes (None for other scenario files)."""
    info = scenario.meta.get("converge_failure")
    return info if isinstance(info, dict) and isinstance(info.get("property"), str) else None


def _find_spec(family: str | None, name: str) -> PropertySpec | None:
    found = (select(family, name) if family else []) or select(None, name)
    return found[0] if found else None


def _decode_args(encoded: Any, base: Scenario, check: Callable) -> tuple | None:
    """The recorded call arguments; without a record, a one-argument property takes the scenario itself.

    The record is the file's (a user may have edited or damaged it): anything but a list of JSON values and
    `{"$scenario": "self" | scenario}` objects that fit the property's parameters is bad input naming its key."""
    where = "meta.converge_failure.args"
    if encoded is None:
        params = [p for p in inspect.signature(check).parameters.values()
                  if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        return (base,) if len(params) == 1 else None
    if not isinstance(encoded, list):
        raise BadInputError(f"expected a list of the recorded arguments, got {short_repr(encoded)}", path=where)
    out: list[Any] = []
    for i, a in enumerate(encoded):
        if isinstance(a, dict) and "$scenario" in a:
            out.append(_decode_scenario(a["$scenario"], base, f"{where}[{i}]"))
        elif isinstance(a, list) and a and all(isinstance(x, dict) and "$scenario" in x for x in a):  # a batch
            out.append([_decode_scenario(x["$scenario"], base, f"{where}[{i}][{j}]") for j, x in enumerate(a)])
        else:
            out.append(a)
    try:
        inspect.signature(check).bind(*out)
    except TypeError as exc:
        raise BadInputError(f"{len(out)} recorded arguments do not fit the property ({exc})", path=where) from None
    return tuple(out)


def _decode_scenario(inner: Any, base: Scenario, where: str) -> Scenario:
    """One recorded `{"$scenario": ...}` argument: the file's own scenario ("self") or the one written there."""
    if inner == "self":
        return base
    if not isinstance(inner, dict):
        raise BadInputError(f"expected \"self\" or a scenario object, got {short_repr(inner)}", path=f"{where}.$scenario")
    try:
        return scenario_from_dict(inner)
    except BadInputError as exc:
        raise BadInputError(exc.detail, path=f"{where}.$scenario" + (f".{exc.path}" if exc.path else "")) from None


def rerun_recorded_property(scenario: Scenario, outcome: ReplayOutcome) -> bool:
    """Rerun the property a failure report names, with its recorded arguments; False if it cannot be rerun."""
    info = failure_info(scenario)
    if info is None:
        return False
    for key in ("spec", "family"):
        if info.get(key) is not None and not isinstance(info[key], str):
            raise BadInputError(f"expected a string, got {short_repr(info[key])}", path=f"meta.converge_failure.{key}")
    name = info.get("spec") or info["property"]  # the registered property that ran (it names its check)
    spec = _find_spec(info.get("family"), name)
    if spec is None:
        if info.get("test") is None:  # e.g. a system's property: the properties that apply are checked instead
            outcome.checked.append(f"{name} (not an embedded property: not rerun)")
            return False
        # a pytest test's own check (a custom property): replay cannot rerun it, so the file never reads "passed"
        outcome.checked.append(f"{name} (a pytest test's own check: not rerun)")
        how = info.get("reproduce")
        outcome.add(NotCheckedError(
            f"{name} is not one of converge's properties (a custom property or test): not rerun"
            + (f"; rerun it with: {how}" if isinstance(how, str) else "")
            + ("; the file's own expectations are checked" if scenario.has_expectations() else "")))
        return False
    base = replace(scenario, expect_final=None, expect_changelog=None,
                   meta={k: v for k, v in scenario.meta.items() if k != "converge_failure"})
    args = _decode_args(info.get("args"), base, spec.check)
    if spec.batch > 1 and args is not None and len(args) == 1 and isinstance(args[0], Scenario):
        args = ([args[0]],)  # recorded before the property took batches: a batch of that one scenario
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
        outcome.add(exc, ("reproduces the recorded failure: " if same else
                          "fails, differently from the record: ") + str(exc))
    except Exception as exc:  # noqa: BLE001 - a typed error or a crash of the engine or the check: shown, labelled
        outcome.add(exc, f"{name}: {label(exc)}: {type(exc).__name__}: {exc}")
    return True


def _check_expectations(outcome: ReplayOutcome, scenario: Scenario, runtime: RuntimeName) -> None:
    outcome.checked.append("expectations")
    for problem in check_expectations(scenario, run_on(scenario, runtime)):
        outcome.add(DivergenceError(problem), problem)


def _check_properties(outcome: ReplayOutcome, scenario: Scenario) -> None:
    """Each oracle property that applies, on its own: one failing or crashing does not hide the others."""
    for name, check in applicable_properties(scenario):
        outcome.checked.append(name)
        try:
            check(scenario)
        except PropertyFailure as exc:
            outcome.divergences.append(exc.divergence)
            outcome.add(exc, str(exc))
        except Exception as exc:  # noqa: BLE001 - typed or not, the problem is this check's outcome
            outcome.add(exc, f"{name}: {label(exc)}: {type(exc).__name__}: {exc}")


def replay_scenario(scenario: Scenario, path: Path, runtime: RuntimeName = "local",
                    oracle: OracleName = "duckdb") -> ReplayOutcome:
    """Replay one scenario: a failure report's property, its written expectations, or the properties that apply."""
    outcome = ReplayOutcome(path, scenario)
    try:
        if runtime == "local" and failure_info(scenario) is not None and rerun_recorded_property(scenario, outcome):
            if scenario.has_expectations():
                _check_expectations(outcome, scenario, runtime)
        elif scenario.has_expectations():
            _check_expectations(outcome, scenario, runtime)
        elif not applicable_properties(scenario):
            outcome.add(NotCheckedError("the scenario has no expectations and no property applies to it; "
                                        "nothing to check"))
        elif runtime == "local":
            _check_properties(outcome, scenario)
        else:
            _check_other_runtime(outcome, scenario, runtime, oracle)
    except Exception as exc:  # noqa: BLE001 - whatever happens, it is this file's outcome and the others still run
        outcome.add(exc, f"{label(exc)}: {type(exc).__name__}: {exc}")
    return outcome


def replay_file(path: Path, runtime: RuntimeName = "local", *, oracle: OracleName = "duckdb") -> ReplayOutcome:
    """Load and replay one file; a file that does not load is that file's bad input."""
    try:
        scenario = load_scenario_file(path)
    except BadInputError as exc:
        outcome = ReplayOutcome(path, None)
        outcome.add(exc, str(exc))
        return outcome
    except Exception as exc:  # noqa: BLE001 - the loader crashed on this file: show it, go on with the next one
        outcome = ReplayOutcome(path, None)
        outcome.add(exc, f"{label(exc)} while loading: {type(exc).__name__}: {exc}")
        return outcome
    return replay_scenario(scenario, path, runtime, oracle)


def load_scenario_file(path: Path) -> Scenario:
    """The scenario at `path`; every way the file can be wrong is a BadInputError naming the file."""
    return load_scenario(path)


def scenario_files(target: str | Path) -> list[Path]:
    """The scenario files at `target`; the files that are not scenarios are left out (see replay_files)."""
    return find_scenario_files(target)[0]


def replay_path(target: str | Path, runtime: RuntimeName = "local") -> list[ReplayOutcome]:
    """Replay every scenario file at `target`, each on its own (one bad file does not stop the others)."""
    return [replay_file(path, runtime) for path in scenario_files(target)]


__all__ = ["ReplayOutcome", "Skipped", "applicable_properties", "find_scenario_files", "replay_file", "replay_path",
           "replay_scenario", "scenario_files"]
