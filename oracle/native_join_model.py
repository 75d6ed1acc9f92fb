"""Spark's documented watermark and lateness rules for a native-join case, as a small model (no Spark here).

The properties decide the per-epoch watermark, which rows are late and which
rows a join still has to keep from these rules, never from what Spark
reports. The rules, as measured with PySpark 4.3 and written in
docs/spark.md ("Spark's native joins as a system"):

* Epochs: micro-batch j of the case (and the sentinel batch n) is epoch j;
  the no-data epochs after it run with the watermark the sentinel set.
* Watermark of epoch e, W(e): each input's own watermark is its largest
  event time seen in epochs < e minus its delay (0 while it has seen no row,
  and never lower than before); the global one is their minimum (policy
  `min`) or maximum (`max`), and never goes back. W(0) = 0.
* Rows the join can never keep do not count: Spark infers `IS NOT NULL` for
  each key column (and residual column) of a side whose unmatched rows the
  join drops (both sides of INNER and LEFT SEMI, the right of LEFT OUTER,
  the left of RIGHT OUTER, neither of FULL OUTER) and pushes that filter
  below `withWatermark`, so such a row with a NULL there never reaches the
  input's watermark (measured; docs/spark.md lists it as a difference).
* Late: a row of epoch j with event time t <= W(j - 1) (the previous epoch's
  watermark, inclusive) is dropped before the join. In epoch 0 nothing is late.
* A left row (time lt) can still meet a future non-late right row while
  lt + upper >= W; a right row (rt) while rt - lower >= W. An unmatched outer
  row may be emitted once its range end (lt + upper, or rt - lower) <= W(e).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import cast

from converge.engine.model.native_join_batch import NativeBatch
from converge.engine.model.native_join_case import SIDES, NativeJoinCase, Side, sentinel_row


@dataclass(frozen=True)
class ModelRow:
    side: Side
    id: int
    epoch: int
    time: int
    late: bool
    sentinel: bool = False
    filtered: bool = False      # removed by the inferred IS NOT NULL filter before withWatermark


@dataclass(frozen=True)
class CaseModel:
    """The rule's view of a case: W per epoch (index n + 1 is every later epoch's) and every row, sentinel last.

    For a case of a batch (batch_models), W is the query's, and `query_rows` are the rows of every case of the
    query (what Spark reads and keeps for all of them); for a case alone they are its own rows."""

    watermarks: tuple[int, ...]
    rows: tuple[ModelRow, ...]
    lower_ms: int
    upper_ms: int
    query_rows: tuple[ModelRow, ...] = ()
    cases: int = 1                      # cases in the query
    # the case's batch answers (of its kept rows, of all its rows) when computed for the whole batch at once
    answers: tuple[Counter, Counter] | None = field(default=None, compare=False)

    @property
    def all_rows(self) -> tuple[ModelRow, ...]:
        """Every row the query reads: the case's own when it runs alone."""
        return self.query_rows or self.rows

    def watermark(self, epoch: int) -> int:
        return self.watermarks[min(epoch, len(self.watermarks) - 1)]

    def late_ids(self, side: Side) -> set[int]:
        return {r.id for r in self.rows if r.side == side and r.late}

    def range_end(self, row: ModelRow) -> int:
        """The last watermark at which `row` could still meet a future row of the other side."""
        return row.time + self.upper_ms if row.side == "left" else row.time - self.lower_ms

    def live_rows(self, epoch: int) -> int:
        """Rows received by epoch `epoch`, not late, whose range end is not below W(epoch): the most a join
        needs to keep after that epoch (over every case of the query)."""
        w = self.watermark(epoch)
        return sum(1 for r in self.all_rows if r.epoch <= epoch and not r.late and not r.filtered
                   and self.range_end(r) >= w)


DROPPED_SIDES = {"inner": ("left", "right"), "left_semi": ("left", "right"), "left_anti": ("right",),
                 "left": ("right",), "right": ("left",), "full": ()}


def null_filtered(case: NativeJoinCase, side: Side, row: tuple) -> bool:
    """Whether Spark's inferred IS NOT NULL filter removes `row` of `side` before its watermark sees it."""
    if side not in DROPPED_SIDES[case.join]:
        return False
    spec = case.input(side)
    cols = [k[0] if side == "left" else k[1] for k in case.keys]
    if case.residual is not None:
        cols.append(case.residual.left if side == "left" else case.residual.right)
    return any(row[spec.columns.index(c)] is None for c in cols)


def model_case(case: NativeJoinCase, *, with_sentinel: bool = True) -> CaseModel:
    """The watermarks and rows of `case` under the rule, the sentinel batch appended as the query runs it."""
    batches = [{s: list(b[s]) for s in SIDES} for b in case.batches]
    if with_sentinel:
        batches.append({s: [sentinel_row(case, s)] for s in SIDES})
    delays = {s: case.input(s).delay_ms for s in SIDES}
    maxima: dict[str, int | None] = {s: None for s in SIDES}
    input_wm = {s: 0 for s in SIDES}
    watermarks = [0]
    rows: list[ModelRow] = []
    ids = {s: 0 for s in SIDES}
    for j, batch in enumerate(batches):
        threshold = watermarks[j - 1] if j > 0 else None
        for side in SIDES:
            ti = case.input(side).time_index
            for row in batch[side]:
                t = cast(int, row[ti])  # never NULL: NativeJoinCase refuses a NULL event time
                filtered = null_filtered(case, side, row)
                rows.append(ModelRow(side, ids[side], j, t, threshold is not None and t <= threshold,
                                     with_sentinel and j == len(batches) - 1, filtered))
                ids[side] += 1
                if not filtered:
                    top = maxima[side]
                    maxima[side] = t if top is None else max(top, t)
        for side in SIDES:  # an input's own watermark: 0 until it has a row, never lower than before
            top = maxima[side]
            if top is not None:
                input_wm[side] = max(input_wm[side], top - delays[side])
        chosen = min(input_wm.values()) if case.policy == "min" else max(input_wm.values())
        watermarks.append(max(watermarks[-1], chosen))
    return CaseModel(tuple(watermarks), tuple(rows), case.lower_ms, case.upper_ms)


def batch_models(batch: NativeBatch) -> list[CaseModel]:
    """Each case's model under its query's watermark: the merged case's watermarks and late rows (derived from
    every case's rows), the case's own rows in its own ids, and the query's sentinel rows after them."""
    whole = model_case(batch.merged)
    own: list[list[ModelRow]] = [[] for _ in batch.cases]
    sentinels: list[ModelRow] = []
    for r in whole.rows:
        if r.sentinel:
            sentinels.append(r)
            continue
        c, rid = batch.origin[r.side][r.id]
        own[c].append(replace(r, id=rid))
    out = []
    for c, case in enumerate(batch.cases):
        ids = {s: len(case.rows(s)) for s in SIDES}
        rows = (*own[c], *(replace(r, id=ids[r.side]) for r in sentinels))
        out.append(CaseModel(whole.watermarks, rows, whole.lower_ms, whole.upper_ms, whole.rows, len(batch.cases)))
    return out
