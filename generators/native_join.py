"""Hypothesis strategies for native-join cases (Spark's stream-stream join), valid by construction.

A case is drawn batch by batch: how far event time moves on (so the
watermark advances between batches), then each input's rows. A row is drawn
late only with probability `late_share`; otherwise its event time is placed
above the previous epoch's watermark, computed with the same rule the
properties use (oracle/native_join_model.py), so `late_share=0` gives no late
row by construction, and every shrunk example is still a valid case. Keys
come from a small domain with NULL; times cluster near the watermark and the
range ends, where eviction and matching meet.

`native_join_batches` draws what one Spark query runs (docs/spark.md, "A
batch: one query, many cases"): the shape and the epoch structure (how far
event time moves on before each micro-batch) once, then each case's rows,
micro-batch by micro-batch across the cases, each placed against the
watermark of the query so far (every case's rows), so `late_share=0` still
draws no late row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import cast

from hypothesis import strategies as st

from converge.engine.model.native_join_batch import NativeBatch, merge_cases
from converge.engine.model.native_join_case import (
    SIDES,
    NativeInput,
    NativeJoinCase,
    NativeJoinType,
    Residual,
    WatermarkPolicy,
)
from converge.oracle.native_join_model import model_case

GENERATED_JOINS = ("inner", "left", "right", "full", "left_semi")
COLUMNS = ("k", "t", "v")
START_MS = 10_000


def _input(delay: int) -> NativeInput:
    return NativeInput(COLUMNS, "t", delay)


@st.composite
def native_join_cases(draw: st.DrawFn, *, join_types: Sequence[str] = GENERATED_JOINS,
                      late_share: float | Sequence[float] = (0.0, 0.3), max_batches: int = 4,
                      max_rows: int = 3, keys: int = 2) -> NativeJoinCase:
    """One case: 1..max_batches micro-batches of 0..max_rows rows per input; `late_share` (or one of several,
    drawn) is the chance that a row is placed at or below the previous epoch's watermark."""
    shares = (late_share,) if isinstance(late_share, (int, float)) else tuple(late_share)
    share = draw(st.sampled_from(shares))
    join = draw(st.sampled_from(tuple(join_types)))
    delays = {s: draw(st.sampled_from((0, 1000, 3000)), label=f"{s} delay") for s in SIDES}
    lower = draw(st.sampled_from((0, -1000, 1000, -3000)))
    upper = lower + draw(st.sampled_from((0, 1000, 2000, 4000)))
    residual = draw(st.one_of(st.none(), st.builds(Residual, st.just("v"), st.sampled_from(("<", "<=", "<>")),
                                                   st.just("v"))))
    policy = draw(st.sampled_from(("min", "max")))
    base = NativeJoinCase("generated", _input(delays["left"]), _input(delays["right"]), join, (("k", "k"),),
                          lower, upper, residual, policy, ({"left": (), "right": ()},))
    key = st.one_of(st.integers(1, keys), st.none())
    batches: list[dict[str, list[tuple]]] = []
    clock = START_MS
    # a late row needs a watermark above 0 before its epoch's previous one: rows on both inputs in the first batch
    # and at least three batches (shrinking the share to 0 drops both demands)
    late_possible = share > 0
    for j in range(draw(st.integers(min(3, max_batches) if late_possible else 1, max_batches))):
        clock += draw(st.sampled_from((0, 1000, 2000, 5000)), label="advance")
        threshold = model_case(base.with_batches(batches), with_sentinel=False).watermarks[-1] if j > 0 else None
        batch: dict[str, list[tuple]] = {}
        for side in SIDES:
            rows = []
            least = 1 if late_possible and j == 0 else 0
            for _ in range(draw(st.integers(least, max(least, max_rows)), label=f"{side} rows")):
                late = threshold is not None and threshold > 0 and share > 0 and draw(
                    st.integers(0, 99), label="late draw") < round(share * 100)
                if late:
                    t = max(1, threshold - draw(st.integers(0, 2000)))
                else:
                    floor = clock if threshold is None else max(clock, threshold + 1)
                    t = floor + draw(st.integers(0, 3000))
                rows.append((draw(key), t, draw(st.integers(0, 2))))
            batch[side] = rows
        batches.append(batch)
    return base.with_batches(batches)


@st.composite
def native_join_batches(draw: st.DrawFn, *, cases: int = 10, join_types: Sequence[str] = GENERATED_JOINS,
                        late_share: float | Sequence[float] = (0.0, 0.3), max_batches: int = 4, max_rows: int = 3,
                        keys: int = 2) -> NativeBatch:
    """One query's batch: a shape and epoch structure, then `cases` cases of it, each as `native_join_cases` draws
    one, its rows placed against the query's watermark."""
    shares = (late_share,) if isinstance(late_share, (int, float)) else tuple(late_share)
    share = draw(st.sampled_from(shares))
    join = cast(NativeJoinType, draw(st.sampled_from(tuple(join_types))))
    delays = {s: draw(st.sampled_from((0, 1000, 3000)), label=f"{s} delay") for s in SIDES}
    lower = draw(st.sampled_from((0, -1000, 1000, -3000)))
    upper = lower + draw(st.sampled_from((0, 1000, 2000, 4000)))
    residual = draw(st.one_of(st.none(), st.builds(Residual, st.just("v"), st.sampled_from(("<", "<=", "<>")),
                                                   st.just("v"))))
    policy: WatermarkPolicy = draw(st.sampled_from(("min", "max")))
    late_possible = share > 0
    epochs = draw(st.integers(min(3, max_batches) if late_possible else 1, max_batches), label="micro-batches")
    clocks = []
    clock = START_MS
    for _ in range(epochs):
        clock += draw(st.sampled_from((0, 1000, 2000, 5000)), label="advance")
        clocks.append(clock)
    count = cases   # fewer cases is the reducer's step on Spark (properties/native_join/reduce.py), not Hypothesis's
    base = NativeJoinCase("generated", _input(delays["left"]), _input(delays["right"]), join, (("k", "k"),),
                          lower, upper, residual, policy, ({"left": (), "right": ()},))
    key = st.one_of(st.integers(1, keys), st.none())
    rows: list[list[dict[str, list[tuple]]]] = [[] for _ in range(count)]
    for j in range(epochs):
        threshold = None
        if j > 0:   # the query's watermark after micro-batch j - 1: every case's rows so far
            threshold = model_case(merge_cases([base.with_batches(r) for r in rows]).merged,
                                   with_sentinel=False).watermarks[-1]
        for c in range(count):
            batch: dict[str, list[tuple]] = {}
            for side in SIDES:
                batch[side] = []
                least = 1 if late_possible and j == 0 and c == 0 else 0
                for _ in range(draw(st.integers(least, max(least, max_rows)), label=f"{side} rows")):
                    late = threshold is not None and threshold > 0 and share > 0 and draw(
                        st.integers(0, 99), label="late draw") < round(share * 100)
                    if late:
                        t = max(1, cast(int, threshold) - draw(st.integers(0, 2000)))
                    else:
                        floor = clocks[j] if threshold is None else max(clocks[j], threshold + 1)
                        t = floor + draw(st.integers(0, 3000))
                    batch[side].append((draw(key), t, draw(st.integers(0, 2))))
            rows[c].append(batch)
    return merge_cases([replace(base.with_batches(r), name=f"generated-{c}") for c, r in enumerate(rows)])
