"""State TTL on a system: each event's rows, and the folded answer, those of converge's TTL model.

A TTL case's answer depends on time, so no batch oracle decides it. It is compared with two of converge's models
instead, on the case's logical clock (`processing_time` events): converge's engine (`semantics: flink`, the
rows each change emits, compared event by event as multisets of (row kind, row)) and the plain TTL model of
properties/ttl_model.py (which shares no code with the engine: the folded answer, negative counts included,
since a retraction of an expired record still retracts what it built with partners still visible). Both model
Flink's `StateTtlConfig` as the table runtime builds it (StateConfigUtil.createTtlConfig: OnCreateAndWrite,
NeverReturnExpired, per map entry; docs/semantics.md "State TTL").

A system whose TTL reads the wall clock (Flink) is driven on a paced one (docs/flink.md, "State TTL on a paced
wall clock"); where the clock it measured in the job slipped too near an expiry boundary for one of a case's
decisions, it answers the case unsupported, with a message that starts NOT_DECIDED: the case is counted as
not decided (skipped, with that reason), never as passed and never as a divergence. Not compared: the order of
one event's rows (the MapState order property, regular/changelog_rowkinds, covers it without TTL).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from converge.engine.model.changelog import Change, sign
from converge.engine.model.errors import ConvergeError
from converge.engine.model.scenario import ChangeEvent, Scenario
from converge.engine.model.system import CaseResult, System
from converge.engine.runtime.local import run_scenario
from converge.properties import exercise
from converge.properties.divergence import require
from converge.properties.systems.answers import require_applicable, system_diverged
from converge.properties.systems.changelogs import first_event_difference
from converge.properties.systems.checks import Judged, Known
from converge.properties.ttl_model import TtlJoinModel

# The start of the message of a case the system could not decide (the Flink adapter's ttl_clock.UNDECIDED)
NOT_DECIDED = "state TTL not decided"
NOT_DECIDED_REASON = ("state TTL not decided: the wall clock the job measured slipped too near an expiry "
                      "boundary of the case (docs/flink.md)")
ENGINE_MODEL = "converge's engine (semantics=flink)"
TTL_MODEL = "converge's TTL model"


def ttl_model_events(scenario: Scenario) -> list[list[Change]]:
    """Each change event's output on converge's engine with `semantics: flink` (processing-time events emit
    nothing and are left out, so the list has one entry per change, in order)."""
    run = run_scenario(replace(scenario, config=replace(scenario.config, semantics="flink")))
    return [[item for item in items if isinstance(item, Change)]
            for event, items in zip(scenario.events, run.per_event, strict=False) if isinstance(event, ChangeEvent)]


def signed_fold(changelog: Sequence[Change]) -> Counter:
    """The changelog folded with signs kept: a retraction of a row never emitted leaves a negative count."""
    bag: Counter = Counter()
    for change in changelog:
        bag[tuple(change.row)] += sign(change.kind)
    return Counter({row: n for row, n in bag.items() if n})


def ttl_matches_model(system: System, cases: Sequence[Scenario], *, prop: str = "ttl_matches_model",
                      system_spec: str | None = None, known: Known | None = None) -> None:
    """Every decided case's changelog: each event's rows those of converge's engine, its fold the TTL model's."""
    for scenario in cases:
        require_applicable(prop, system, scenario)
        ttl = scenario.config.state_ttl_ms
        require(isinstance(ttl, int) and ttl >= 1, prop, "needs one state TTL of 1 ms or more")
    results = system.run_cases(list(cases))
    for scenario, result in zip(cases, results, strict=False):
        with Judged(known) as case:
            _judge(prop, system, scenario, result, system_spec, case)


def _judge(prop: str, system: System, scenario: Scenario, result: CaseResult, system_spec: str | None,
           case: Judged) -> None:
    if result.status == "unsupported":
        message = result.message or f"{system.name} gave no reason"
        if message.startswith(NOT_DECIDED):
            exercise.skipped(NOT_DECIDED_REASON)
        else:
            exercise.unsupported(message)
        return
    if result.status == "error":
        system_diverged(prop, system, scenario, f"{system.name} failed on this case: {result.message}",
                        f"error: {result.message}", None, system_spec=system_spec)
    if result.changelog is None:
        exercise.skipped(f"{system.name} answered a final multiset, not a changelog")
        return
    if not any(isinstance(event, ChangeEvent) for event in scenario.events):
        exercise.skipped("a case without changes compares nothing")
        return
    changelog = list(result.changelog)
    try:
        per_event = ttl_model_events(scenario)
    except ConvergeError as exc:
        exercise.skipped(f"converge's engine rejects the case: {type(exc).__name__}")
        return
    case.compared()
    diff = first_event_difference(changelog, per_event)
    if diff is not None:
        system_diverged(prop, system, scenario, f"{system.name}'s output of change {diff.event} differs from "
                        f"{ENGINE_MODEL}'s with state TTL (row kinds compared; + {system.name} only, - model only)",
                        diff.system, diff.model, extra_answers={ENGINE_MODEL: diff.model}, system_spec=system_spec)
    history = TtlJoinModel(scenario).run(scenario)
    want = history[-1] if history else Counter()
    got = signed_fold(changelog)
    if got != want:
        system_diverged(prop, system, scenario, f"{system.name}'s changelog folds to another answer than "
                        f"{TTL_MODEL}'s (+ {system.name} only, - model only)", got, want,
                        extra_answers={TTL_MODEL: want, ENGINE_MODEL: _fold(per_event)}, system_spec=system_spec)


def _fold(per_event: list[list[Change]]) -> Counter:
    return signed_fold([c for changes in per_event for c in changes])
