"""Many native-join cases in one Spark query: the cases of a batch, merged into one case with the case id as a key.

Spark's watermark is one per query, so cases cannot share a query without
sharing it; a batch makes that part of each case (docs/spark.md, "A batch: one
query, many cases"). The merged case is itself an ordinary native-join case:
each input gets a leading column holding the case's number, the join gets the
key pair (case, case) before the case's own keys, and micro-batch j holds
every case's rows of micro-batch j, case by case. So the query Spark runs for
a batch is the query of its merged case, and converge's model of the merged
case (oracle/native_join_model.py) gives the query's watermarks and which
rows are late; a case's rows never meet another case's (different key), and
the case column is never NULL, so Spark's inferred `IS NOT NULL` filters act
on each row as in the case alone. A merged case is also what a report writes
when a divergence needs more than one case: `converge replay --system spark`
runs it as it ran.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from converge.engine.model.errors import ApiMisuseError
from converge.engine.model.native_join_case import (
    SIDES,
    Epoch,
    NativeInput,
    NativeJoinCase,
    NativeRun,
    Side,
)

CASE_COLUMN = "case_no"   # the merged inputs' leading column (another name if a case already has this one)


def shape_of(case: NativeJoinCase) -> tuple:
    """What a query fixes for all its cases: inputs, join type, keys, bounds, residual, policy, micro-batches."""
    return (case.left, case.right, case.join, case.keys, case.lower_ms, case.upper_ms, case.residual, case.policy,
            len(case.batches))


def _case_column(case: NativeJoinCase) -> str:
    name = CASE_COLUMN
    while name in case.left.columns or name in case.right.columns:
        name += "_"
    return name


@dataclass(frozen=True)
class NativeBatch:
    """The cases of one query and their merged case; `origin[side][merged id]` is (case index, the case's id)."""

    cases: tuple[NativeJoinCase, ...]
    merged: NativeJoinCase
    origin: dict[str, tuple[tuple[int, int], ...]]

    def __len__(self) -> int:
        return len(self.cases)


def merge_cases(cases: Sequence[NativeJoinCase], name: str = "batch") -> NativeBatch:
    """The batch of `cases` (all of one shape: shape_of), merged into one case; ApiMisuseError if shapes differ."""
    if not cases:
        raise ApiMisuseError("merge_cases: a batch needs at least one case")
    first = cases[0]
    for i, case in enumerate(cases):
        if shape_of(case) != shape_of(first):
            raise ApiMisuseError(f"merge_cases: case {i} ({case.name!r}) has another query shape than case 0 "
                                 f"({first.name!r}): join, inputs, keys, bounds, residual, policy and number of "
                                 f"micro-batches must be the same")
    col = _case_column(first)
    inputs = {s: NativeInput((col, *first.input(s).columns), first.input(s).time, first.input(s).delay_ms)
              for s in SIDES}
    batches: list[dict[str, list[tuple]]] = []
    origin: dict[str, list[tuple[int, int]]] = {s: [] for s in SIDES}
    seen = {s: [0] * len(cases) for s in SIDES}
    for j in range(len(first.batches)):
        batch: dict[str, list[tuple]] = {s: [] for s in SIDES}
        for c, case in enumerate(cases):
            for side in SIDES:
                for row in case.batches[j][side]:
                    batch[side].append((c, *row))
                    origin[side].append((c, seen[side][c]))
                    seen[side][c] += 1
        batches.append(batch)
    meta: dict[str, Any] = {"batch_of": [case.name for case in cases], "case_column": col}
    merged = NativeJoinCase(name, inputs["left"], inputs["right"], first.join, ((col, col), *first.keys),
                            first.lower_ms, first.upper_ms, first.residual, first.policy, _frozen(batches), meta)
    return NativeBatch(tuple(cases), merged, {s: tuple(origin[s]) for s in SIDES})


def _frozen(batches: list[dict[str, list[tuple]]]) -> tuple[dict[str, tuple[tuple[int | None, ...], ...]], ...]:
    return tuple({s: tuple(b[s]) for s in SIDES} for b in batches)


def _local(batch: NativeBatch, side: Side, merged_id: int | None) -> tuple[int, int] | None:
    return None if merged_id is None else batch.origin[side][merged_id]


def split_run(batch: NativeBatch, run: NativeRun) -> list[NativeRun]:
    """Each case's share of the merged case's run: its own output pairs (in its own ids); the watermark, state rows
    and input rows of every epoch are the query's (the properties read them against the query's model)."""
    if run.status != "ok":
        return [run for _ in batch.cases]
    per_case: list[list[list]] = [[[] for _ in run.epochs] for _ in batch.cases]
    for e, epoch in enumerate(run.epochs):
        for lid, rid in epoch.output:
            left, right = _local(batch, "left", lid), _local(batch, "right", rid)
            if left is not None and right is not None and left[0] != right[0]:
                # a pair across two cases (their keys differ: Spark must never make one): the left case's, with
                # the right row named by its case, so no property takes it for one of the left case's rows
                per_case[left[0]][e].append((left[1], f"case {right[0]} right {right[1]}"))
                continue
            owner = left[0] if left is not None else right[0] if right is not None else 0
            per_case[owner][e].append((None if left is None else left[1], None if right is None else right[1]))
    return [NativeRun(run.status, tuple(Epoch(ep.batch_id, tuple(out[e]), ep.watermark_ms, ep.state_rows,
                                              ep.input_rows) for e, ep in enumerate(run.epochs)),
                      run.message, run.seconds) for out in per_case]
