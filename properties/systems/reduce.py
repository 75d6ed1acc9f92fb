"""Reducing a diverging case against a live system, every candidate of a round in one run request.

Hypothesis shrinks one example per call, and against a real engine a call is
a job: 2-20 s on Flink, so a 120 s shrink budget bought about a dozen steps
and left cases of 40 events in 11 cases (measured on Flink 2.1.0). A system
that batches cases answers a whole round of candidates in one job, so a
diverging case is reduced here instead: delta debugging over its events
(drop a chunk; halve the chunk when no candidate still diverges), all of a
round's candidates sent together, the smallest that still diverges kept.

Written here rather than taken from Hypothesis because Hypothesis's shrinker
calls the test once per candidate and cannot batch them; it still draws and
generates every case. A candidate is judged by the property's own check, so
it "still diverges" exactly when the property fails on it and no known entry
explains it. A candidate whose changelog the oracle rejects (a retraction of
a row it no longer holds), or that the property or system does not take, is
never sent.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hypothesis.errors import UnsatisfiedAssumption

from converge.engine.model.errors import BadInputError, UnsupportedError
from converge.engine.model.scenario import Event, Scenario
from converge.engine.model.system import CaseResult, System
from converge.engine.model.system_cases import scenario_for_case
from converge.properties import exercise
from converge.properties.divergence import PropertyFailure
from converge.properties.systems.answers import oracle_decides, oracle_final

Check = Callable[[System, list[Scenario]], None]   # the bound property's check of one batch on a system


@dataclass
class Reduction:
    """What reducing one case did."""

    failure: PropertyFailure   # the property's failure on the smallest case that still diverges
    events_before: int
    events_after: int
    rounds: int = 0
    requests: int = 0
    candidates: int = 0
    stopped: bool = False      # the budget ran out while smaller candidates were still to be tried

    def describe(self) -> str:
        stop = ", stopped by its time budget" if self.stopped else ""
        return (f"reduced on the system from {self.events_before} to {self.events_after} events in {self.rounds} "
                f"rounds ({self.candidates} candidates, {self.requests} run requests{stop})")


def case_key(scenario: Scenario) -> str:
    """A case by its content: what the system is sent."""
    return json.dumps(scenario_for_case(scenario), sort_keys=True, default=str)


class _Round(System):
    """The system as one reduction round sees it: a case it holds an answer for gets that answer; any other is
    remembered (the round then sends it, in one request) and answered "unsupported" meanwhile."""

    def __init__(self, system: System) -> None:
        self.name, self.version, self.capabilities = system.name, system.version, system.capabilities
        self.wanted: dict[str, Scenario] = {}
        self.answers: dict[str, CaseResult] = {}

    def run_cases(self, cases: Sequence[Scenario]) -> list[CaseResult]:
        out = []
        for case in cases:
            key = case_key(case)
            if key in self.answers:
                out.append(self.answers[key])
            else:
                self.wanted.setdefault(key, case)
                out.append(CaseResult("unsupported", message="collecting the cases of a reduction round"))
        return out


def _valid(candidate: Scenario) -> bool:
    """Its changelog is one the oracle takes (dropping an insert can leave a retraction of nothing)."""
    if oracle_decides(candidate) is not None:
        return True  # the property decides without the oracle; the check itself refuses what it cannot take
    try:
        oracle_final(candidate)
    except (BadInputError, UnsupportedError):
        return False
    return True


def _verdict(check: Check, system: System, candidate: Scenario) -> PropertyFailure | None | bool:
    """The failure, None (it holds), or False when the candidate is not a case the property takes."""
    with exercise.Recording():  # a reduction's counts are not the campaign's
        try:
            check(system, [candidate])
        except PropertyFailure as failure:
            return failure
        except (BadInputError, UnsupportedError, UnsatisfiedAssumption):
            return False
    return None


class Reducer:
    """Reduces the diverging cases of one property on one system within `budget` seconds per case."""

    def __init__(self, system: System, check: Check, *, budget: float, clock: Callable[[], float] = time.monotonic,
                 on_round: Callable[[Reduction], None] | None = None) -> None:
        self.system, self.check, self.budget, self.clock, self.on_round = system, check, budget, clock, on_round

    def reduce(self, failure: PropertyFailure) -> Reduction:
        scenario = failure.divergence.scenario
        events = list(scenario.events)
        done = Reduction(failure, len(events), len(events))
        deadline = self.clock() + self.budget
        chunk = max(1, len(events) // 2)
        while events:
            if self.clock() >= deadline:
                done.stopped = True
                break
            candidates = [events[:i] + events[i + chunk:] for i in range(0, len(events), chunk)]
            found = self._round(scenario, candidates, done)
            if found is not None:
                events, done.failure = found
                done.events_after = len(events)
                chunk = min(chunk, max(1, len(events) // 2))
            self._told(done)
            if found is None:
                if chunk == 1:
                    break
                chunk //= 2
        return done

    def _told(self, done: Reduction) -> None:
        if self.on_round is not None:
            self.on_round(done)

    def _round(self, scenario: Scenario, candidates: list[list[Event]],
               done: Reduction) -> tuple[list[Event], PropertyFailure] | None:
        """Judge every candidate with one run request (or as few as max_batch allows); the smallest that diverges."""
        cases = [scenario.with_events(c) for c in candidates]
        round_ = _Round(self.system)
        takes = [c for c in cases if _valid(c) and _verdict(self.check, round_, c) is not False]
        wanted = list(round_.wanted.values())
        done.rounds += 1
        done.candidates += len(takes)
        size = max(1, self.system.capabilities.max_batch)
        for start in range(0, len(wanted), size):
            part = wanted[start:start + size]
            done.requests += 1
            for case, result in zip(part, self.system.run_cases(part), strict=False):
                round_.answers[case_key(case)] = result
        best: tuple[list[Event], PropertyFailure] | None = None
        for case in takes:
            verdict = _verdict(self.check, round_, case)
            if isinstance(verdict, PropertyFailure) and (best is None or len(case.events) < len(best[0])):
                best = (list(case.events), verdict)
        return best
