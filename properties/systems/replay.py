"""`converge replay --system SPEC FILE`: a scenario file's case, rerun on a system under test.

A failure report of a system campaign names the property that failed; any
other scenario file is checked by every system property that applies to it:
the batch answer (where an oracle decides), the reference engine's answer,
the binary chain (multi-way joins), the changelog's row kinds (a system that
answers its changelog in a repeatable order), and the file's own `expect_final`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

from converge.engine.model.errors import DivergenceError, NotCheckedError, label
from converge.engine.model.scenario import Scenario
from converge.engine.model.system import System
from converge.properties import exercise
from converge.properties.divergence import PropertyFailure
from converge.properties.replay import ReplayOutcome, load_scenario_file
from converge.properties.systems import checks
from converge.properties.systems.answers import answer_of, engine_model_reason, oracle_decides


def _checks(scenario: Scenario, system: System) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    if oracle_decides(scenario) is None:
        out.append(("final_equals_oracle", checks.final_equals_oracle))
    if len(scenario.join.inputs) > 2 and scenario.join.interval is None and system.capabilities.honours("multi_join"):
        out.append(("multiway_equals_binary_chain", checks.multiway_equals_binary_chain))
    if engine_model_reason(scenario) is None:
        out.append(("system_equals_reference", checks.system_equals_reference))
        caps = system.capabilities
        if caps.output == "changelog" and caps.deterministic_order:  # its row kinds, in a repeatable order
            out.append(("changelog_rowkinds", checks.changelog_rowkinds))
    return out


def _expect_final(outcome: ReplayOutcome, system: System, scenario: Scenario, base: Scenario, spec: str | None) -> None:
    outcome.checked.append("expect_final")
    want = Counter(tuple(r) for r in scenario.expect_final or ())
    got = answer_of("expect_final", system, base, system.run_cases([base])[0], want, spec)
    if got is None:
        outcome.checked[-1] = "expect_final (unsupported by the system: not checked)"
        return
    exercise.compared()
    if got != want:
        extra, missing = got - want, want - got
        problem = (f"{system.name}'s final table differs from the file's expect_final: missing "
                   f"{[list(r) for r in missing.elements()]}, unexpected {[list(r) for r in extra.elements()]}")
        outcome.add(DivergenceError(problem), problem)


def replay_on_system(path: Path, system: System, spec: str | None = None) -> ReplayOutcome:
    """Load one file and rerun its case on `system`; each problem is recorded with the error it stands for."""
    try:
        scenario = load_scenario_file(path)
    except Exception as exc:  # noqa: BLE001 - this file's problem; the next file still runs
        outcome = ReplayOutcome(path, None)
        outcome.add(exc, f"{label(exc)}: {exc}")
        return outcome
    outcome = ReplayOutcome(path, scenario)
    base = replace(scenario, expect_final=None, expect_changelog=None, meta={})
    reason = system.why_not(base)
    if reason is not None:
        outcome.add(NotCheckedError(f"not applicable to {system.title}: {reason}"))
        return outcome
    with exercise.Recording() as recording:
        _replay_checks(outcome, system, scenario, base, spec)
    seen = recording.exercised
    if seen.compared == 0 and outcome.ok:  # no check applied, or every answer was "unsupported": nothing passed
        why = seen.why_nothing_compared() if not seen.empty else "no check applies to this file on a system"
        outcome.add(NotCheckedError(f"{system.title} compared nothing: {why}"))
    return outcome


def _replay_checks(outcome: ReplayOutcome, system: System, scenario: Scenario, base: Scenario,
                   spec: str | None) -> None:
    model = engine_model_reason(base)
    if model is not None:
        outcome.checked.append(f"system_equals_reference (not checked: {model})")
    for name, check in _checks(base, system):
        outcome.checked.append(name)
        try:
            check(system, [base], prop=name, system_spec=spec)  # type: ignore[operator]
        except PropertyFailure as exc:
            outcome.divergences.append(exc.divergence)
            outcome.add(exc, str(exc))
        except Exception as exc:  # noqa: BLE001 - a system error or a crash is this check's outcome
            outcome.add(exc, f"{name}: {label(exc)}: {type(exc).__name__}: {exc}")
    if scenario.expect_final is not None:
        try:
            _expect_final(outcome, system, scenario, base, spec)
        except Exception as exc:  # noqa: BLE001
            outcome.add(exc, f"expect_final: {label(exc)}: {type(exc).__name__}: {exc}")
