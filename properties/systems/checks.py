"""The checks a system campaign runs: each takes a system and a batch of cases of one shape.

A batch is sent in one run request (one job on a real engine); the first
case whose answer is wrong raises the divergence, so Hypothesis shrinks the
batch and that case against the live system. Cases the system answers
"unsupported" are counted (properties/exercise.py), never passed.

Each case is judged inside `Judged`: a divergence that a known entry
explains (properties/systems/known.py; `known` is the property's Recogniser)
is counted as known and does not fail the example, so Hypothesis never
shrinks it and the batch's next cases are still judged.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from types import TracebackType

from converge.engine.model.scenario import Scenario
from converge.engine.model.system import CaseResult, System
from converge.properties import exercise
from converge.properties.divergence import Divergence, PropertyFailure, fail, require
from converge.properties.systems import changelogs
from converge.properties.systems.answers import (
    REFERENCE,
    agreement,
    answer_of,
    oracle_decides,
    oracle_final,
    reference_final,
    require_applicable,
    system_diverged,
)
from converge.properties.systems.case_id import adapter_case_ids
from converge.properties.systems.known import KnownDivergence

Known = Callable[[Divergence], KnownDivergence | None]   # a property's Recogniser (None: no known entries)


class Judged:
    """`with Judged(known, n) as case:` around one case's comparison; `case.compared()` once its answer is judged.

    On leaving: a divergence (PropertyFailure) that `known` matches is recorded as `n` known cases under the
    entry's id and swallowed; any other one propagates and its case counts as `n` compared (a wrong answer
    was compared); a case that compared was `n` compared; one that did not (unsupported) records nothing here."""

    def __init__(self, known: Known | None, n: int = 1) -> None:
        self.known, self.n, self.judged = known, n, False

    def compared(self) -> None:
        self.judged = True

    def __enter__(self) -> Judged:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool:
        if isinstance(exc, PropertyFailure):
            entry = self.known(exc.divergence) if self.known is not None else None
            if entry is not None:
                exercise.known(entry.id, self.n)
                return True
            exercise.compared(self.n)
        elif exc is None and self.judged:
            exercise.compared(self.n)
        return False


def _run(prop: str, system: System, cases: Sequence[Scenario]) -> list:
    for scenario in cases:
        require_applicable(prop, system, scenario)
    results = system.run_cases(list(cases))
    for r in results:
        if r.status == "unsupported":
            exercise.unsupported(r.message or f"{system.name} gave no reason")
    return results


def final_equals_oracle(system: System, cases: Sequence[Scenario], *, prop: str = "final_equals_oracle",
                        system_spec: str | None = None, known: Known | None = None) -> None:
    """Every case's folded final answer on the system equals the batch answer."""
    for scenario in cases:
        reason = oracle_decides(scenario)
        require(reason is None, prop, reason or "")
    for scenario, result in zip(cases, _run(prop, system, cases), strict=False):
        with Judged(known) as case:
            _final_equals_oracle(prop, system, scenario, result, system_spec, case)


def _final_equals_oracle(prop: str, system: System, scenario: Scenario, result: CaseResult,
                         system_spec: str | None, case: Judged) -> None:
    want = oracle_final(scenario)
    got = answer_of(prop, system, scenario, result, want, system_spec)
    if got is not None:
        case.compared()
    if got is not None and got != want:
        system_diverged(prop, system, scenario, f"{system.name}'s final answer differs from the batch answer",
                        got, want, oracle=want, system_spec=system_spec)


def multiway_equals_binary_chain(system: System, cases: Sequence[Scenario], *,
                                 prop: str = "multiway_equals_binary_chain", system_spec: str | None = None,
                                 known: Known | None = None) -> None:
    """Planned as one multi-way join (config.multi_join=on) or as the binary chain (off): the same final answer."""
    on = [replace(s, config=replace(s.config, multi_join="on")) for s in cases]
    off = [replace(s, config=replace(s.config, multi_join="off")) for s in cases]
    multi = _run(prop, system, on)
    binary = _run(prop, system, off)
    for scenario, off_case, m, b in zip(on, off, multi, binary, strict=False):
        with Judged(known, 2) as case:  # two plans' cases of one scenario
            _multiway_equals_binary_chain(prop, system, scenario, off_case, m, b, system_spec, case)


def _multiway_equals_binary_chain(prop: str, system: System, scenario: Scenario, off_case: Scenario, m: CaseResult,
                                  b: CaseResult, system_spec: str | None, case: Judged) -> None:
    decided = oracle_decides(scenario) is None
    want = oracle_final(scenario) if decided else None
    got = answer_of(prop, system, scenario, m, want, system_spec)
    chain = answer_of(prop, system, off_case, b, want, system_spec)
    if got is not None and chain is not None:
        case.compared()
    elif (got is None) != (chain is None):  # one plan's answer alone compares with nothing
        exercise.skipped("the other plan's case was unsupported")
    if got is not None and chain is not None and got != chain:
        system_diverged(prop, system, scenario, f"{system.name}'s multi-way plan and its binary chain give "
                        f"different final answers (+ multi-way only, - binary chain only)", got, chain,
                        oracle=want, extra_answers={f"{system.title}, binary chain": chain}, system_spec=system_spec)


def system_equals_reference(system: System, cases: Sequence[Scenario], *, prop: str = "system_equals_reference",
                            system_spec: str | None = None, known: Known | None = None) -> None:
    """The system's folded final answer equals converge's reference engine's on the same case."""
    for scenario, result in zip(cases, _run(prop, system, cases), strict=False):
        with Judged(known) as case:
            _system_equals_reference(prop, system, scenario, result, system_spec, case)


def _system_equals_reference(prop: str, system: System, scenario: Scenario, result: CaseResult,
                             system_spec: str | None, case: Judged) -> None:
    decided = oracle_decides(scenario) is None
    want = oracle_final(scenario) if decided else None
    got = answer_of(prop, system, scenario, result, want, system_spec)
    ref = reference_final(scenario)
    if got is not None:
        case.compared()
    if got is not None and got != ref:
        system_diverged(prop, system, scenario, f"{system.name}'s final answer differs from the reference "
                        f"engine's (+ {system.name} only, - reference engine only)", got,
                        ref if isinstance(ref, Counter) else Counter(), oracle=want,
                        extra_answers={REFERENCE: ref}, system_spec=system_spec)


def changelog_rowkinds(system: System, cases: Sequence[Scenario], *, prop: str = "changelog_rowkinds",
                       system_spec: str | None = None, known: Known | None = None) -> None:
    """The system's changelog itself (properties/systems/changelogs.py): no retraction of a row that is not there;
    no +U without a -U of its key where the key pairs every update; and each event's rows (with their row kinds)
    those of converge's semantics=flink model on the same events, where the model predicts them, visiting the
    stored rows in the order of the case's state backend (Flink's adapter: the case id hashed as it stores it).
    A case for which neither the update rule nor the model comparison is claimed is skipped with both reasons."""
    results = _run(prop, system, cases)
    ids: list[int | None] = [None] * len(results)
    if system.name in changelogs.CASE_IDS:
        ids = list(adapter_case_ids(cases, results, system.capabilities.max_batch))
    for scenario, result, case_id in zip(cases, results, ids, strict=False):
        with Judged(known) as case:
            _changelog_rowkinds(prop, system, scenario, result, system_spec, case, case_id)


def _changelog_rowkinds(prop: str, system: System, scenario: Scenario, result: CaseResult,
                        system_spec: str | None, case: Judged, case_id: int | None) -> None:
    if answer_of(prop, system, scenario, result, None, system_spec) is None:
        return  # unsupported, counted by _run
    if result.changelog is None:
        exercise.skipped(f"{system.name} answered a final multiset, not a changelog")
        return
    changelog = list(result.changelog)
    key, no_rule = changelogs.update_key(scenario)
    found = changelogs.violations(changelog, key)
    semantics = changelogs.MODELLED.get(system.name, "correct")
    label = f"converge's model (semantics={semantics})"
    release = changelogs.modelled_release(system) if semantics == "flink" else None
    model = changelogs.model_events(scenario, semantics, case_id, release)
    if found:
        v = found[0]
        mine = [c for c in changelog if key is None or changelogs.identity(c, key) == changelogs.identity(v.change, key)]
        model_rows = [c for e in model for c in e] if not isinstance(model, str) else []
        theirs = [c for c in model_rows if key is None or changelogs.identity(c, key) == changelogs.identity(v.change, key)]
        _changelog_diverged(prop, system, scenario, f"{system.name}'s changelog is not well formed: {v.message} "
                            f"(row kinds compared)", changelogs.kinded([v.change]), Counter(),
                            {system.title: changelogs.kinded(mine), label: changelogs.kinded(theirs)},
                            system_spec)
    if isinstance(model, str) and no_rule is not None:
        exercise.skipped(f"{no_rule}; {model}")
        return
    case.compared()
    if isinstance(model, str):
        return
    diff = changelogs.first_event_difference(changelog, model)
    if diff is not None:
        _changelog_diverged(prop, system, scenario, f"{system.name}'s output of event {diff.event} differs from "
                            f"{label}'s (row kinds compared; + {system.name} only, - model only)",
                            diff.system, diff.model, {system.title: diff.system, label: diff.model},
                            system_spec, event_index=diff.event)
    if case_id is None:
        return
    order = changelogs.order_difference(scenario, changelog, model)
    if order is not None:
        backend = scenario.config.state_backend or "hashmap"
        what = (f"comes in another sequence than the mini-batch bundle walk's and the {backend} state backend's "
                f"order" if order.sequence else
                f"visits the other side's stored rows out of the {backend} state backend's MapState order")
        _changelog_diverged(prop, system, scenario, f"{system.name}'s output of event {order.event} {what} (the "
                            f"rows agree; their order compared)", Counter(), Counter(),
                            {system.title: order.system, label: order.model}, system_spec, event_index=order.event)


def _changelog_diverged(prop: str, system: System, scenario: Scenario, message: str, got: Counter,
                        compared_with: Counter, answers: dict[str, Counter | str], system_spec: str | None,
                        event_index: int | None = None) -> None:
    """A changelog divergence: the answers shown are kinded rows ((kind, value, ...)), the system's and the
    model's, never a folded answer beside them (they would not be comparable)."""
    groups = agreement(dict(answers))
    extra = {"answers": answers, "agreement": groups, "system": system.title, "system_name": system.name}
    if system_spec:
        extra["system_spec"] = system_spec
    fail(prop, scenario, f"{message} ({groups})", engine=got, expected=compared_with, extra=extra,
         event_index=event_index)
