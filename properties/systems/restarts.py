"""The restart property: a job stopped with a savepoint part-way through its input and restored from it gives the
answer and the changelog it gives without the restart.

Each case is sent twice in one request: as drawn (config.restart_after, a state backend) and with
restart_after removed (the same backend). What is compared, per case:

* the folded answer of the restarted run equals the batch answer (the oracle), where the oracle decides;
* the restarted run's changelog equals the plain run's, row by row in emission order, kinds included, when
  the system answers changelogs in a repeatable order (capabilities.deterministic_order); a system that
  answers final multisets only (or in no repeatable order) is held to the same final answer as the plain
  run instead, which is all its answers can show.

Why the whole changelog and not only per key: the "key" that matters is the join key, since Flink's
state and the order it promises are per join key (the outputs one input record produces all carry its
join key, and a restore could reorder only those, the order of a MapState read). The paced arrival fixes
the order between keys (one event of a case per round), so for a system with a deterministic order the
case's whole changelog equals the plain run's exactly when every join key's changelog does, and comparing
the whole sequence needs no key extraction.

A restore that fails is the system's divergence, with its message (answer_of).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from converge.engine.model.scenario import Scenario
from converge.engine.model.system import CaseResult, System
from converge.properties import exercise
from converge.properties.systems.answers import (
    answer_of,
    oracle_decides,
    oracle_final,
    require_applicable,
    system_diverged,
)
from converge.properties.systems.checks import Judged, Known


def without_restart(scenario: Scenario) -> Scenario:
    """The same case run straight through (its state backend kept)."""
    return replace(scenario, config=replace(scenario.config, restart_after=None))


def restart_changes_nothing(system: System, cases: Sequence[Scenario], *, prop: str = "restart_changes_nothing",
                            system_spec: str | None = None, known: Known | None = None) -> None:
    """Restarted (config.restart_after) and straight through: the same changelog; the fold equals the oracle."""
    restarted = list(cases)
    plain = [without_restart(s) for s in restarted]
    for scenario in restarted + plain:
        require_applicable(prop, system, scenario)
    results = system.run_cases(restarted + plain)
    for scenario, plain_case, r, p in zip(restarted, plain, results[:len(restarted)], results[len(restarted):], strict=False):
        with Judged(known, 2) as case:  # the restarted and the plain run of one scenario
            _compare(prop, system, scenario, plain_case, r, p, system_spec, case)


def _compare(prop: str, system: System, scenario: Scenario, plain_case: Scenario, restarted: CaseResult,
             plain: CaseResult, system_spec: str | None, case: Judged) -> None:
    decided = oracle_decides(scenario) is None
    want = oracle_final(scenario) if decided else None
    got = answer_of(prop, system, scenario, restarted, want, system_spec)
    straight = answer_of(prop, system, plain_case, plain, want, system_spec)
    if got is None or straight is None:
        why = "the restarted case" if got is None else "the case without restart"
        exercise.unsupported(f"{system.name} did not run {why}: {(restarted if got is None else plain).message}", 2)
        return
    case.compared()
    if want is not None and got != want:
        # the same wrong answer without the restart is the join's divergence, not the restore's: said so, in the
        # words of a final answer's divergence, so the known entries of the join's classes recognise it
        message = (f"{system.name}'s final answer differs from the batch answer, with a restart after "
                   f"{scenario.config.restart_after} changes and without one alike" if straight == got else
                   f"{system.name}'s final answer after a restart (restart_after={scenario.config.restart_after}) "
                   f"differs from the batch answer")
        system_diverged(prop, system, scenario, message, got, want, oracle=want,
                        extra_answers={f"{system.title}, no restart": straight}, system_spec=system_spec)
    ordered = system.capabilities.deterministic_order and restarted.changelog is not None \
        and plain.changelog is not None
    if not ordered and got != straight:
        system_diverged(prop, system, scenario, f"{system.name}'s final answer with a restart after "
                        f"{scenario.config.restart_after} changes differs from the same case's without one (+ with, "
                        f"- without)", got, straight, oracle=want,
                        extra_answers={f"{system.title}, no restart": straight}, system_spec=system_spec)
    first = first_difference(restarted.changelog or (), plain.changelog or ()) if ordered else None
    if first is not None:
        position, mine, theirs = first
        system_diverged(prop, system, scenario, f"{system.name}'s changelog with a restart after "
                        f"{scenario.config.restart_after} changes differs from the same case's without one at output "
                        f"{position}: {mine} where the run without restart has {theirs}", got, straight,
                        oracle=want, extra_answers={f"{system.title}, no restart": straight},
                        system_spec=system_spec)


def first_difference(mine: Sequence, theirs: Sequence) -> tuple[int, str, str] | None:
    """The first position where two changelogs differ, with what each has there ("nothing" past its end)."""
    for i in range(max(len(mine), len(theirs))):
        a = _show(mine[i]) if i < len(mine) else "nothing"
        b = _show(theirs[i]) if i < len(theirs) else "nothing"
        if a != b:
            return i, a, b
    return None


def _show(change: tuple[str, tuple]) -> str:
    kind, row = change
    return f"{kind}{list(row)}"
