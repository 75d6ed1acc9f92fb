"""The restart property (properties/systems/restarts.py) and its generator (generators/restarts.py), on fake
systems built over converge's reference engine: no Flink, no Java.

Each fake answers the case without restart as the reference engine does and tampers with the restarted one
in one written-out way; the property must fail on exactly that tampering and pass on the honest fake."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from converge.engine.model.errors import ApiMisuseError
from converge.engine.model.scenario import ChangeEvent, Scenario
from converge.engine.model.scenario_json import load_scenario
from converge.engine.model.system import Capabilities, CaseResult, System
from converge.generators.restarts import changes, restarted
from converge.generators.scenarios import regular_join_scenarios
from converge.properties import exercise
from converge.properties.divergence import PropertyFailure
from converge.properties.systems.restarts import first_difference, restart_changes_nothing, without_restart
from converge.properties.systems.specs import SYSTEM_PROPERTIES, not_applicable
from converge.systems.reference import ReferenceSystem
from tests.support.paths import SCENARIOS

BASE = load_scenario(SCENARIOS / "regular" / "acc_inner_no_match.json")
RESTART = next(p for p in SYSTEM_PROPERTIES if p.key == "restart/restart_changes_nothing")


def _event(input_: str, kind: str, *row: int) -> ChangeEvent:
    return ChangeEvent(input=input_, kind=kind, row=tuple(row))


def _case(after: int = 2) -> Scenario:
    """Two b rows of key 1 stored, then an a row of key 1 that matches both: a burst of two outputs."""
    events = [_event("b", "+I", 1, 20), _event("b", "+I", 1, 30), _event("a", "+I", 1, 10), _event("a", "-D", 1, 10)]
    scenario = BASE.with_events(events)
    return replace(scenario, config=replace(scenario.config, restart_after=after))


class Restarting(System):
    """The reference engine's changelog for every case; `tamper` rewrites a restarted case's result."""

    name, version = "fake", "1"

    def __init__(self, tamper: Callable[[CaseResult], CaseResult] = lambda r: r, *, ordered: bool = True,
                 honours: tuple = ("restart", "state_backend")) -> None:
        self.capabilities = replace(Capabilities.everything(max_batch=50), settings=honours,
                                    deterministic_order=ordered)
        self.reference = ReferenceSystem("local")
        self.tamper = tamper
        self.sent: list[Scenario] = []

    def run_cases(self, cases: Sequence[Scenario]) -> list[CaseResult]:
        self.sent.extend(cases)
        answers = self.reference.run_cases([without_restart(c) for c in cases])
        return [self.tamper(a) if c.config.restart_after is not None else a for c, a in zip(cases, answers, strict=False)]


def _check(system: System, case: Scenario) -> exercise.Exercised:
    with exercise.Recording() as recording:
        restart_changes_nothing(system, [case])
    return recording.exercised


def _failure(system: System, case: Scenario) -> str:
    with exercise.Recording(), pytest.raises(PropertyFailure) as caught:
        restart_changes_nothing(system, [case])
    return str(caught.value)


def test_an_honest_restart_passes_and_both_runs_are_sent_in_one_request() -> None:
    system = Restarting()
    done = _check(system, _case())
    assert done.compared == 2
    assert [c.config.restart_after for c in system.sent] == [2, None]
    assert system.sent[1].events == system.sent[0].events


def test_a_burst_reordered_by_the_restore_is_a_divergence_at_its_position() -> None:
    def swap_burst(result: CaseResult) -> CaseResult:
        log = list(result.changelog)
        assert [kind for kind, _ in log] == ["+I", "+I", "-D", "-D"]  # the burst of a's insert, then of its delete
        return CaseResult.ok(changelog=[log[1], log[0], *log[2:]])

    message = _failure(Restarting(swap_burst), _case())
    assert "changelog with a restart after 2 changes differs from the same case's without one at output 0" in message


def test_a_swap_goes_unseen_without_a_repeatable_order_but_a_lost_row_does_not() -> None:
    def swap_burst(result: CaseResult) -> CaseResult:
        log = list(result.changelog)
        return CaseResult.ok(changelog=[log[1], log[0], *log[2:]])

    assert _check(Restarting(swap_burst, ordered=False), _case()).compared == 2

    def lose_the_delete(result: CaseResult) -> CaseResult:
        return CaseResult.ok(final=result.folded() + CaseResult.ok(changelog=list(result.changelog)[:2]).folded())

    message = _failure(Restarting(lose_the_delete, ordered=False), _case())
    assert "final answer after a restart (restart_after=2) differs from the batch answer" in message


class WrongBothWays(Restarting):
    """A join that loses the last delete with and without the restart: the join's divergence, not the restore's."""

    def run_cases(self, cases: Sequence[Scenario]) -> list[CaseResult]:
        return [CaseResult.ok(changelog=list(r.changelog)[:2]) for r in super().run_cases(cases)]


def test_a_wrong_answer_without_the_restart_too_is_the_joins_not_the_restores() -> None:
    message = _failure(WrongBothWays(ordered=False), _case())
    assert "final answer differs from the batch answer, with a restart after 2 changes and without one alike" \
        in message and "after a restart (restart_after" not in message


def test_a_minibatch_padding_case_found_by_the_restart_property_is_the_known_entry() -> None:
    """Flink 2.3.0's answer (the campaign's, seed 11, replayed with and without the restart): a's (2, 1) keeps
    its padding beside its match, under mini-batch, with and without the restart (docs/flink-findings.md #2)."""
    from converge.properties.systems.known import Recogniser, builtin_known

    case = load_scenario(SCENARIOS / "systems" / "flink_restart_minibatch_padding_kept.json")
    flink = [[0, 0, 2, "a", None, None, None, None], [1, 2, 2, "ab", None, None, None, None],
             [2, 1, 2, "a", 2, 2, "a", 2], [2, 1, 2, "a", None, None, None, None]]

    class Canned(Restarting):
        def run_cases(self, cases: Sequence[Scenario]) -> list[CaseResult]:
            return [CaseResult.ok(final=[tuple(r) for r in flink]) for _ in cases]

    honours = ("restart", "state_backend", "mini_batch")

    with exercise.Recording(), pytest.raises(PropertyFailure) as caught:
        restart_changes_nothing(Canned(ordered=False, honours=honours), [case])
    recognise = Recogniser(tuple(builtin_known()), "flink", "2.3.0", "restart", "restart_changes_nothing")
    found = recognise(caught.value.divergence)
    assert found is not None and found.id == "flink-minibatch-suppressed-padding"


def test_a_failed_restore_is_the_systems_divergence_with_its_message() -> None:
    message = _failure(Restarting(lambda r: CaseResult.error("Cannot map checkpoint/savepoint state")), _case())
    assert "failed on this case: Cannot map checkpoint/savepoint state" in message


def test_first_difference_names_the_position_and_both_rows() -> None:
    a = [("+I", (1, 2)), ("-D", (1, 2))]
    assert first_difference(a, a) is None
    assert first_difference(a, a[:1]) == (1, "-D[1, 2]", "nothing")
    assert first_difference([("+U", (1, 2))], a) == (0, "+U[1, 2]", "+I[1, 2]")


def test_the_property_is_not_applicable_where_restarts_are_not_honoured() -> None:
    system = Restarting(honours=("state_backend",))
    assert not_applicable(RESTART, system) == (
        "fake does not honour config.restart_after (a stop with a savepoint and a restore), so the property would "
        "not exercise it")
    assert not_applicable(RESTART, Restarting()) is None


@settings(max_examples=40, deadline=None, database=None)
@given(restarted(regular_join_scenarios(), backends=("hashmap", "rocksdb")))
def test_the_generator_restarts_within_the_changes_on_the_backends_given(case: Scenario) -> None:
    assert 0 <= case.config.restart_after <= changes(case)
    assert case.config.state_backend in ("hashmap", "rocksdb")


@settings(max_examples=10, deadline=None, database=None)
@given(st.data())
def test_the_generator_keeps_the_events_it_is_given(data: st.DataObject) -> None:
    case = data.draw(restarted(st.just(_case(after=0)), backends=(None,)))
    assert case.events == _case().events and case.config.state_backend is None


def test_the_generator_refuses_an_unknown_backend() -> None:
    with pytest.raises(ApiMisuseError, match="'heap' is not one of"):
        restarted(st.just(_case()), backends=("heap",))
