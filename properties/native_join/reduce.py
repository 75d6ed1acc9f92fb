"""Reducing a diverging case of a batch on Spark: fewer cases, then fewer rows, one query a round.

A case of a batch diverged under its query's watermark, which every case's
rows set. First the case runs alone (a one-case query, its own watermark); if
it still diverges, its rows are reduced by delta debugging (drop a chunk;
halve the chunks when no candidate diverges), and every round is ONE query:
the round's candidates are the cases of one batch, together with the current
case itself. The candidates are all subsets of the current case and together
hold every one of its rows, so the round's watermark is exactly the current
case's own: the round re-checks the current case as a one-case query would,
and a candidate that diverges becomes the next current case (re-checked the
same way by the next round). The result is a one-case query that still
diverges, run once more alone for its report. If the case does not diverge
alone, the divergence needs the other cases' rows (through the watermark):
the other cases are dropped a chunk at a time instead (one query per
candidate, the watermark changing with them), and the report is the merged
case of the smallest batch that still diverges.

Written here rather than left to Hypothesis: its shrinker runs one candidate
per call (one Spark query, seconds each) and cannot send a round in one query
(as properties/systems/reduce.py for adapters).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from converge.engine.model.native_join_batch import NativeBatch, merge_cases
from converge.engine.model.native_join_case import SIDES, NativeJoinCase, NativeRun
from converge.oracle.native_join_model import model_case
from converge.properties.divergence import PropertyFailure
from converge.properties.native_join.batches import check_batch, first_failure
from converge.properties.native_join.checks import NativeProperty, check_run

Runner = Callable[[NativeJoinCase], NativeRun]   # runs one case (a merged batch included) as one Spark query
Row = tuple[int, str, int]                       # (micro-batch, side, index within that micro-batch's rows)


@dataclass
class NativeReduction:
    """What reducing one diverging case on Spark did, and what it ended with."""

    failure: PropertyFailure       # the property's failure on the result (alone, or in the reduced batch)
    case: NativeJoinCase           # the reduced case, or the reduced batch's merged case when not alone
    alone: bool                    # the result is a one-case query that still diverges
    cases_before: int
    cases_after: int
    rows_before: int
    rows_after: int
    watermarks: list[int] = field(default_factory=list)
    rounds: int = 0
    queries: int = 0
    stopped: bool = False

    def describe(self) -> str:
        stop = ", stopped by its time budget" if self.stopped else ""
        where = ("alone, in a one-case query" if self.alone else
                 f"only with {self.cases_after - 1} other case(s) in its query (not alone)")
        return (f"reduced on Spark from {self.cases_before} cases to {self.cases_after} and from {self.rows_before} "
                f"to {self.rows_after} rows of the diverging case in {self.rounds} rounds ({self.queries} queries"
                f"{stop}); it diverges {where}, under the query's watermark by epoch {self.watermarks}")


def _rows(case: NativeJoinCase) -> list[Row]:
    return [(j, s, i) for j, b in enumerate(case.batches) for s in SIDES for i in range(len(b[s]))]


def _without(case: NativeJoinCase, drop: set[Row]) -> NativeJoinCase:
    return case.with_batches([{s: [r for i, r in enumerate(b[s]) if (j, s, i) not in drop] for s in SIDES}
                              for j, b in enumerate(case.batches)])


def _count(case: NativeJoinCase) -> int:
    return sum(len(b[s]) for b in case.batches for s in SIDES)


class _Reducer:
    def __init__(self, prop: NativeProperty, runner: Runner, budget_s: float, clock: Callable[[], float]) -> None:
        self.prop, self.runner, self.clock = prop, runner, clock
        self.deadline = clock() + budget_s
        self.rounds = self.queries = 0
        self.stopped = False

    def out_of_time(self) -> bool:
        self.stopped = self.stopped or self.clock() >= self.deadline
        return self.stopped

    def failing(self, batch: NativeBatch) -> list[bool]:
        """Which cases of the batch diverge, in one query."""
        self.queries += 1
        run = self.runner(batch.merged)
        return [v.failure is not None for v in check_batch(self.prop, batch, run)]

    def rows(self, case: NativeJoinCase) -> NativeJoinCase:
        """Delta debugging over the rows of a case that diverges alone; a round = one query (see the module)."""
        chunk = max(1, _count(case) // 2)
        while not self.out_of_time():
            rows = _rows(case)
            chunks = [set(rows[k:k + chunk]) for k in range(0, len(rows), chunk)]
            if not rows:
                return case
            candidates = [_without(case, c) for c in chunks]
            self.rounds += 1
            verdicts = self.failing(merge_cases([case, *candidates], "reduction round"))
            if not verdicts[0]:   # not even the current case diverges under its own watermark: keep what we had
                return case
            hit = next((c for c, bad in zip(candidates, verdicts[1:], strict=True) if bad), None)
            if hit is not None:
                case = hit
                chunk = max(1, min(chunk, _count(case) // 2))
            elif chunk == 1:
                return case
            else:
                chunk = max(1, chunk // 2)
        return case

    def cases(self, batch: NativeBatch, index: int) -> tuple[NativeBatch, int]:
        """Drop the other cases a chunk at a time (one query per candidate) while the case still diverges."""
        others = [i for i in range(len(batch)) if i != index]
        chunk = max(1, len(others) // 2)
        while others and not self.out_of_time():
            dropped = False
            for k in range(0, len(others), chunk):
                keep = [i for i in others if i not in others[k:k + chunk]]
                order = sorted([index, *keep])
                candidate = merge_cases([batch.cases[i] for i in order], batch.merged.name)
                self.rounds += 1
                if self.failing(candidate)[order.index(index)]:
                    batch, index = candidate, order.index(index)
                    others = [i for i in range(len(batch)) if i != index]
                    dropped = True
                    break
                if self.out_of_time():
                    break
            if not dropped:
                if chunk == 1:
                    break
                chunk = max(1, chunk // 2)
        return batch, index


def reduce_on_spark(prop: NativeProperty, batch: NativeBatch, index: int, failure: PropertyFailure,
                    runner: Runner, budget_s: float, clock: Callable[[], float] = time.monotonic
                    ) -> NativeReduction:
    """Reduce case `index` of `batch` (which failed `prop` with `failure`) on Spark within `budget_s` seconds."""
    red = _Reducer(prop, runner, budget_s, clock)
    case = batch.cases[index]
    single = merge_cases([case], batch.merged.name)
    red.rounds += 1
    if red.failing(single)[0]:
        reduced = red.rows(case)
        red.queries += 1
        run = runner(reduced)   # the one-query-per-case path, as `converge replay --system spark` runs the file
        try:
            check_run(prop, reduced, run)
        except PropertyFailure as exc:
            return NativeReduction(exc, reduced, True, len(batch), 1, _count(case), _count(reduced),
                                   list(model_case(reduced).watermarks), red.rounds, red.queries, red.stopped)
    smaller, at = red.cases(batch, index)
    red.queries += 1
    verdict = first_failure(prop, smaller, runner(smaller.merged))
    if verdict is None or verdict.failure is None:   # Spark answered differently this time: keep the original
        smaller, at, verdict_failure, watermarks = batch, index, failure, failure.divergence.extra.get("watermarks")
    else:
        verdict_failure, watermarks = verdict.failure, list(verdict.model.watermarks)
    return NativeReduction(verdict_failure, smaller.merged, False, len(batch), len(smaller), _count(case),
                           _count(smaller.cases[at]), list(watermarks or []), red.rounds, red.queries, red.stopped)
