"""Reducing a diverging case on the system, a round of candidates per run request (properties/systems/reduce.py)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from converge.engine.model.scenario import ChangeEvent, Scenario
from converge.engine.model.scenario_json import load_scenario
from converge.engine.model.system import Capabilities, CaseResult, System
from converge.properties.divergence import PropertyFailure
from converge.properties.systems import checks
from converge.properties.systems.answers import oracle_final
from converge.properties.systems.reduce import Reducer
from converge.systems.reference import ReferenceSystem
from tests.support.paths import SCENARIOS

BASE = load_scenario(SCENARIOS / "regular" / "acc_inner_no_match.json")


class LosesKeyThree(System):
    """Answers as the reference engine, except that it loses every output row whose a.k is 3 and has no match
    (a padded row of key 3). It checks that every case it is sent is a changelog the oracle takes, and counts
    its requests and cases."""

    name, version = "lossy", "1"

    def __init__(self) -> None:
        self.capabilities = replace(Capabilities.everything(max_batch=500), settings=())
        self.reference = ReferenceSystem("local")
        self.requests, self.cases = 0, 0

    def run_cases(self, cases: Sequence[Scenario]) -> list[CaseResult]:
        self.requests += 1
        self.cases += len(cases)
        for case in cases:
            oracle_final(case)  # raises on a retraction of a row the input does not hold: never sent
        out = []
        for result in self.reference.run_cases(list(cases)):
            final = Counter({row: n for row, n in result.folded().items() if not (row[0] == 3 and row[2] is None)})
            out.append(CaseResult.ok(final=final))
        return out


def _event(input_: str, kind: str, *row: int) -> ChangeEvent:
    return ChangeEvent(input=input_, kind=kind, row=tuple(row))


def _noisy() -> Scenario:
    """A LEFT join of 14 events, of which one (a's unmatched row of key 3) is the whole defect; the rest are
    matched rows, updates and deletes that the reduction must drop without ever leaving a bad changelog."""
    events = [_event("b", "+I", 1, 20), _event("a", "+I", 1, 10), _event("a", "-U", 1, 10), _event("a", "+U", 1, 11),
              _event("b", "+I", 2, 5), _event("a", "+I", 2, 7), _event("a", "+I", 3, 30), _event("b", "-D", 2, 5),
              _event("a", "+I", 4, 1), _event("b", "+I", 4, 2), _event("a", "-D", 4, 1), _event("b", "+I", 5, 5),
              _event("a", "-D", 2, 7), _event("b", "-D", 1, 20)]
    return BASE.with_events(events)


def _judge(on: System, cases: list[Scenario]) -> None:
    checks.final_equals_oracle(on, cases)


def _failure(system: System, scenario: Scenario) -> PropertyFailure:
    try:
        _judge(system, [scenario])
    except PropertyFailure as failure:
        return failure
    raise AssertionError("the noisy case does not diverge on the fake")


def test_a_diverging_case_is_reduced_to_its_one_event_with_one_request_a_round() -> None:
    system = LosesKeyThree()
    done = Reducer(system, _judge, budget=60).reduce(_failure(system, _noisy()))
    events = done.failure.divergence.scenario.events
    assert [(e.input, e.kind, e.row) for e in events] == [("a", "+I", (3, 30))]
    assert (done.events_before, done.events_after, done.stopped) == (14, 1, False)
    assert system.requests == 1 + done.requests and done.requests == done.rounds  # every candidate of a round at once
    assert done.candidates > done.rounds  # several candidates a request
    assert "reduced on the system from 14 to 1 events" in done.describe()


def test_the_budget_stops_the_reduction_with_the_case_it_had() -> None:
    system = LosesKeyThree()
    ticks = iter(range(0, 1000, 10))
    failure = _failure(system, _noisy())
    done = Reducer(system, _judge, budget=15, clock=lambda: next(ticks)).reduce(failure)
    assert done.stopped and done.rounds == 1 and 1 < done.events_after < 14
    assert "stopped by its time budget" in done.describe()
    still = done.failure.divergence.scenario
    assert any(e.row == (3, 30) for e in still.events)  # what it kept still holds the defect


def test_a_case_that_holds_everywhere_is_not_reduced_below_its_divergence() -> None:
    system = LosesKeyThree()
    matched = _noisy().with_events([_event("a", "+I", 3, 30), _event("b", "+I", 3, 1)])  # matched: nothing lost
    _judge(system, [matched])  # holds: no failure to reduce
    lone = matched.with_events([_event("a", "+I", 3, 30)])
    done = Reducer(system, _judge, budget=60).reduce(_failure(system, lone))
    assert done.events_after == 1 and done.failure.divergence.scenario.events == lone.events
