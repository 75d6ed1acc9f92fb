"""A native-join property as a campaign by batches: an example is one query shape and many cases, one Spark query.

Each example is a batch (generators/native_join.py, `native_join_batches`):
its merged case runs once on Spark through the campaign's cache and every
case is checked under the query's watermark (properties/native_join/
batches.py). The property's Hypothesis run does not shrink on Spark (a try
is a query); the first failing case is kept, with its batch, and reduced on
Spark afterwards (properties/native_join/reduce.py), one query a round.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from hypothesis import strategies as st

from converge.engine.model.native_join_batch import NativeBatch
from converge.generators.native_join import native_join_batches
from converge.properties import exercise
from converge.properties.campaign import run_property
from converge.properties.divergence import Divergence, PropertyFailure
from converge.properties.native_join.batches import check_batch
from converge.properties.native_join.checks import NativeProperty
from converge.properties.native_join.reduce import NativeReduction, reduce_on_spark
from converge.properties.spec import PropertySpec
from converge.properties.systems.known import KnownDivergence
from converge.systems.spark.runs import RunCache

FAMILY = "spark_native"


@dataclass
class BatchTally:
    """What a property's run by batches checked: cases (each a check), queries, and the first failure's batch."""

    examples: int = 0          # cases checked (over every batch, the final replay of a failure's included)
    exercised: int = 0         # ... that exercised the property
    with_late: int = 0         # ... whose case has a late row under its query's watermark
    unsupported: int = 0       # ... whose query Spark rejected
    spark_runs: int = 0        # queries started for this property (the rest came from the cache)
    batches: int = 0           # batches (queries' worth of cases) checked
    failed: list[tuple[NativeBatch, int, PropertyFailure]] = field(default_factory=list)
    known: Counter = field(default_factory=Counter)   # entry id -> cases whose failure a known entry matched


Recognise = Callable[[Divergence], KnownDivergence | None]   # properties/native_join/known.py, NativeRecogniser


def batch_plan(examples: int, per_query: int) -> tuple[int, int]:
    """(batches, cases per batch) for `examples` cases at most `per_query` a query: as few queries as that allows."""
    per = max(1, min(per_query, examples))
    return math.ceil(examples / per), per


def batch_strategy(per_query: int) -> st.SearchStrategy[tuple]:
    """Batches of `per_query` cases, as 1-tuples (what PropertySpec's strategy gives the check)."""
    return native_join_batches(cases=per_query).map(lambda b: (b,))


def batch_spec(prop: NativeProperty, cache: RunCache, tally: BatchTally, batches: int, per_query: int,
               recognise: Recognise | None = None) -> PropertySpec:
    """The property as a PropertySpec whose example is a batch: one query, every case checked under its watermark.

    A case whose failure `recognise` matches (a known divergence) is counted as known under the entry's id and
    does not fail the batch, so it is never reduced on Spark again; the batch's other cases are still judged."""
    def check(batch: NativeBatch) -> None:
        before = cache.spark_runs
        run = cache.run(batch.merged)
        tally.spark_runs += cache.spark_runs - before
        tally.batches += 1
        exercised, known = 0, 0
        for verdict in check_batch(prop, batch, run):
            tally.examples += 1
            tally.unsupported += run.status != "ok"
            tally.with_late += any(r.late and not r.sentinel for r in verdict.model.rows)
            if verdict.failure is not None:
                entry = recognise(verdict.failure.divergence) if recognise is not None else None
                if entry is not None:
                    exercise.known(entry.id)
                    tally.known[entry.id] += 1
                    known += 1
                    continue
                tally.failed.append((batch, verdict.index, verdict.failure))
                raise verdict.failure
            tally.exercised += verdict.exercised
            exercised += verdict.exercised
        if run.status != "ok":
            exercise.unsupported(f"Spark rejected the query ({run.status})")
        elif known:
            exercise.compared(exercised)  # the batch's judged cases, beside its known ones
        elif not exercised:
            exercise.skipped(f"no case of the batch exercises {prop.name}")

    return PropertySpec(FAMILY, prop.name, lambda: batch_strategy(per_query), check, batches, prop.description)


def drawn_batches(batches: int, per_query: int, seed: int) -> list[NativeBatch]:
    """The batches a property's run draws with this seed before any fails (same strategy, seed and settings as
    run_property gives each property), drawn without Spark."""
    drawn: list[NativeBatch] = []
    spec = PropertySpec(FAMILY, "drawn_batches", lambda: batch_strategy(per_query), drawn.append, batches,
                        "the batches of a campaign, drawn without Spark")
    run_property(spec, max_examples=batches, seed=seed, shrink=False)
    return drawn


def reduce_failure(prop: NativeProperty, cache: RunCache, tally: BatchTally, budget_s: float) -> NativeReduction | None:
    """Reduce the property's first failing case on Spark (None when the run failed no case)."""
    if not tally.failed:
        return None
    batch, index, failure = tally.failed[0]
    before = cache.spark_runs
    reduction = reduce_on_spark(prop, batch, index, failure, cache.run, budget_s)
    tally.spark_runs += cache.spark_runs - before
    return reduction
