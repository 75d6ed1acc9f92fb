"""The state-TTL system property (properties/systems/ttl.py) on fake systems built over converge's reference
engine: no Flink, no Java.

The hand case, a LEFT join a.k = b.k with a TTL of 2 ms (visible up to written + 1, gone at written + 2):
a(1,10) at 0 emits its padding +I(1,10,∅,∅); b(1,20) at 2 meets nothing (a's entry, written at 0, is gone at 2)
and emits nothing; a's -D at 3 meets b (written at 2, visible) and retracts the joined row (1,10,1,20), which
was never emitted (a's own entry expired: Flink's StreamingJoinOperator retracts what the record joins with
before it looks at its own side's state). The fold keeps that negative count, as converge's TTL model does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace

import pytest

from converge.engine.model.changelog import Change
from converge.engine.model.scenario import ChangeEvent, Config, InputSpec, JoinSpec, ProcessingTimeEvent, Scenario
from converge.engine.model.system import Capabilities, CaseResult, System
from converge.properties import exercise
from converge.properties.divergence import PropertyFailure
from converge.properties.systems.specs import SYSTEM_PROPERTIES, not_applicable
from converge.properties.systems.ttl import (
    NOT_DECIDED,
    NOT_DECIDED_REASON,
    signed_fold,
    ttl_matches_model,
    ttl_model_events,
)
from converge.systems.reference import ReferenceSystem

TTL = next(p for p in SYSTEM_PROPERTIES if p.key == "ttl/ttl_matches_model")
COLUMNS = (("k", "BIGINT"), ("x", "BIGINT"))


def _case(ttl: int = 2) -> Scenario:
    inputs = (InputSpec("a", COLUMNS, None, "retract"), InputSpec("b", COLUMNS, None, "insert_only"))
    events = (ChangeEvent("a", "+I", (1, 10)), ProcessingTimeEvent(2), ChangeEvent("b", "+I", (1, 20)),
              ProcessingTimeEvent(3), ChangeEvent("a", "-D", (1, 10)))
    return Scenario(name="ttl hand case", inputs=inputs, join=JoinSpec(("a", "b"), ("left",), ("a.k = b.k",)),
                    config=Config(state_ttl_ms=ttl), events=events)


class Ttl(System):
    """The reference engine's changelog for every case; `tamper` rewrites it."""

    name, version = "fake", "1"

    def __init__(self, tamper: Callable[[Scenario, CaseResult], CaseResult] = lambda s, r: r) -> None:
        self.capabilities = replace(Capabilities.everything(max_batch=50), settings=("state_backend",))
        self.reference = ReferenceSystem("local")
        self.tamper = tamper

    def run_cases(self, cases: Sequence[Scenario]) -> list[CaseResult]:
        return [self.tamper(c, a) for c, a in zip(cases, self.reference.run_cases(list(cases)), strict=False)]


def _check(system: System, case: Scenario) -> exercise.Exercised:
    with exercise.Recording() as recording:
        ttl_matches_model(system, [case])
    return recording.exercised


def test_the_hand_case_passes_on_the_engine_and_its_fold_keeps_a_negative_count():
    assert _check(Ttl(), _case()).compared == 1
    changelog = ReferenceSystem("local").run_cases([_case()])[0].changelog
    assert [(c.kind, c.row) for c in changelog] == [
        ("+I", (1, 10, None, None)),   # a at 0: no partner
        ("-D", (1, 10, 1, 20))]        # a's -D at 3 meets b (written at 2); a itself expired at 2
    assert signed_fold(changelog) == Counter({(1, 10, None, None): 1, (1, 10, 1, 20): -1})


def test_a_system_that_ignores_the_ttl_diverges_at_the_change_that_read_an_expired_entry():
    def no_ttl(scenario: Scenario, _: CaseResult) -> CaseResult:
        return ReferenceSystem("local").run_cases([replace(scenario, config=replace(scenario.config,
                                                                                    state_ttl_ms=None))])[0]

    with exercise.Recording(), pytest.raises(PropertyFailure) as caught:
        ttl_matches_model(Ttl(no_ttl), [_case()])
    # without the TTL b meets a at change 1 (-D padding, +I joined); the changelog is cut by the model's rows per
    # change (none at change 1), so the first change whose rows differ is change 2
    assert "output of change 2 differs from converge's engine (semantics=flink)'s with state TTL" in str(caught.value)


def test_a_changelog_whose_fold_differs_from_the_ttl_model_diverges_even_where_events_cannot_tell():
    def drop_last(scenario: Scenario, result: CaseResult) -> CaseResult:
        return CaseResult.ok(changelog=list(result.changelog)[:-1])

    with exercise.Recording(), pytest.raises(PropertyFailure) as caught:
        ttl_matches_model(Ttl(drop_last), [_case()])
    assert "differs from converge's engine" in str(caught.value)  # the last change's rows are missing


def test_a_case_the_system_could_not_decide_is_skipped_never_passed():
    undecided = Ttl(lambda s, r: CaseResult.unsupported(f"{NOT_DECIDED}: the wall clock slipped 700 ms"))
    done = _check(undecided, _case())
    assert (done.compared, done.not_compared) == (0, 1)
    assert (done.skipped, done.unsupported, done.reasons) == (1, 0, Counter({f"skipped: {NOT_DECIDED_REASON}": 1}))
    other = _check(Ttl(lambda s, r: CaseResult.unsupported("state TTL: SEMI joins")), _case())
    assert (other.compared, other.unsupported, other.reasons) == (0, 1, Counter({"unsupported: state TTL: SEMI joins": 1}))


def test_a_case_without_changes_compares_nothing():
    empty = _case().with_events([ProcessingTimeEvent(1)])
    assert _check(Ttl(), empty).compared == 0


def test_the_property_needs_a_system_that_drives_ttl_and_answers_ordered_changelogs():
    caps = Capabilities.everything(max_batch=50)
    system = Ttl()
    assert not_applicable(TTL, system) is None
    system.capabilities = replace(caps, state_ttl=False)
    assert "does not drive state TTL" in not_applicable(TTL, system)
    system.capabilities = replace(caps, deterministic_order=False)
    assert "repeatable order" in not_applicable(TTL, system)


def test_the_changes_of_each_event_are_split_as_the_engine_emits_them():
    # b's insert at 2 meets nothing (a expired), so change 1 has no rows and change 2 has one
    assert [[(c.kind, c.row) for c in changes] for changes in ttl_model_events(_case())] == [
        [("+I", (1, 10, None, None))], [], [("-D", (1, 10, 1, 20))]]
    assert all(isinstance(c, Change) for changes in ttl_model_events(_case()) for c in changes)
