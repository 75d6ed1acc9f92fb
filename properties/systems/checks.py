"""The checks a system campaign runs: each takes a system and a batch of cases of one shape.

A batch is sent in one run request (one job on a real engine); the first
case whose answer is wrong raises the divergence, so Hypothesis shrinks the
batch and that case against the live system. Cases the system answers
"unsupported" are counted (properties/exercise.py), never passed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from converge.engine.model.scenario import Scenario
from converge.engine.model.system import System
from converge.properties import exercise
from converge.properties.divergence import require
from converge.properties.systems.answers import (
    REFERENCE,
    answer_of,
    oracle_decides,
    oracle_final,
    reference_final,
    require_applicable,
    system_diverged,
)


def _run(prop: str, system: System, cases: Sequence[Scenario]) -> list:
    for scenario in cases:
        require_applicable(prop, system, scenario)
    results = system.run_cases(list(cases))
    for r in results:
        if r.status == "unsupported":
            exercise.unsupported(r.message or f"{system.name} gave no reason")
    return results


def final_equals_oracle(system: System, cases: Sequence[Scenario], *, prop: str = "final_equals_oracle",
                        system_spec: str | None = None) -> None:
    """Every case's folded final answer on the system equals the batch answer."""
    for scenario in cases:
        reason = oracle_decides(scenario)
        require(reason is None, prop, reason or "")
    for scenario, result in zip(cases, _run(prop, system, cases)):
        want = oracle_final(scenario)
        got = answer_of(prop, system, scenario, result, want, system_spec)
        if got is not None:
            exercise.compared()
        if got is not None and got != want:
            system_diverged(prop, system, scenario, f"{system.name}'s final answer differs from the batch answer",
                            got, want, oracle=want, system_spec=system_spec)


def multiway_equals_binary_chain(system: System, cases: Sequence[Scenario], *,
                                 prop: str = "multiway_equals_binary_chain",                                  system_spec: str | None = None) -> None:
    """Planned as one multi-way join (config.multi_join=on) or as the binary chain (off): the same final answer."""
    on = [replace(s, config=replace(s.config, multi_join="on")) for s in cases]
    off = [replace(s, config=replace(s.config, multi_join="off")) for s in cases]
    multi = _run(prop, system, on)
    binary = _run(prop, system, off)
    for scenario, off_case, m, b in zip(on, off, multi, binary):
        decided = oracle_decides(scenario) is None
        want = oracle_final(scenario) if decided else None
        got = answer_of(prop, system, scenario, m, want, system_spec)
        chain = answer_of(prop, system, off_case, b, want, system_spec)
        if got is not None and chain is not None:
            exercise.compared(2)
        elif (got is None) != (chain is None):  # one plan's answer alone compares with nothing
            exercise.skipped("the other plan's case was unsupported")
        if got is not None and chain is not None and got != chain:
            system_diverged(prop, system, scenario, f"{system.name}'s multi-way plan and its binary chain give "
                            f"different final answers (+ multi-way only, - binary chain only)", got, chain,
                            oracle=want, extra_answers={f"{system.title}, binary chain": chain}, system_spec=system_spec)


def system_equals_reference(system: System, cases: Sequence[Scenario], *, prop: str = "system_equals_reference",
                            system_spec: str | None = None) -> None:
    """The system's folded final answer equals converge's reference engine's on the same case."""
    for scenario, result in zip(cases, _run(prop, system, cases)):
        decided = oracle_decides(scenario) is None
        want = oracle_final(scenario) if decided else None
        got = answer_of(prop, system, scenario, result, want, system_spec)
        ref = reference_final(scenario)
        if got is not None:
            exercise.compared()
        if got is not None and got != ref:
            system_diverged(prop, system, scenario, f"{system.name}'s final answer differs from the reference "
                            f"engine's (+ {system.name} only, - reference engine only)", got,
                            ref if isinstance(ref, Counter) else Counter(), oracle=want,
                            extra_answers={REFERENCE: ref}, system_spec=system_spec)
