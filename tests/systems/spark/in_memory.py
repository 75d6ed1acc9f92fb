"""Runs a SparkJoinJob's stage processors without a JVM: a stand-in for Spark's grouping, ValueState and timers.

It does what Spark does between processors, and nothing more: per micro-batch
and stage, group the rows by their key column, call handleInputRows once per
group with that group's ValueState, feed the output to the next stage; in a
time-driven job, then call handleExpiredTimer for every Spark timer at or
below the watermark (the largest `etime` of earlier micro-batches among the rows a
stage reads: Spark pushes the stage filters below `withWatermark`), and after
the last file run one more batch without data, as Spark does when its
watermark moved. Spark promises no order of groups or of rows inside a
group, so both are shuffled with a seeded random: the processor must not
depend on them. `fresh_workers` forgets every worker's built nodes before each
micro-batch, as a restart from a checkpoint does: what survives a batch must
be in the ValueState, not in an operator object a worker kept.
"""

from __future__ import annotations

import random
from typing import Any

from converge.engine.model.scenario import Scenario
from converge.engine.runtime.spark import processor as stage_processor
from converge.engine.runtime.spark.job import SparkJoinJob, split_by_time
from converge.engine.runtime.spark.processor import StageProcessor


class _ValueState:
    def __init__(self, store: dict) -> None:
        self.store = store
        self.key: Any = None

    def get(self) -> Any:
        return self.store.get(self.key)

    def update(self, value: tuple) -> None:
        assert isinstance(value, tuple) and len(value) == 1 and isinstance(value[0], bytes)
        self.store[self.key] = value

    def clear(self) -> None:
        self.store.pop(self.key, None)


class _Handle:
    def __init__(self, state: _ValueState, timers: dict) -> None:
        self.state = state
        self.timers = timers          # group key -> set of timer times (ms)

    def getValueState(self, name: str, schema: str, ttlDurationMs: int | None = None) -> _ValueState:
        return self.state

    def registerTimer(self, ms: int) -> None:
        self.timers.setdefault(self.state.key, set()).add(ms)


class _TimerValues:
    def __init__(self, watermark: int) -> None:
        self.watermark = watermark

    def getCurrentWatermarkInMs(self) -> int:
        return self.watermark


class _Row(tuple):
    """What handleInputRows reads: positional (key, data)."""


def run_in_memory(job: SparkJoinJob, *, shuffle_seed: int = 0, fresh_workers: bool = False) -> list:
    """Run every micro-batch of `job` through its stage processors; the per-scenario results."""
    rnd = random.Random(shuffle_seed)
    stores: list[dict] = [{} for _ in range(job.stages)]
    timers: list[dict] = [{} for _ in range(job.stages)]
    sink: list[tuple[str, bytes]] = []
    rounds = job.n_batches + (1 if job.time_driven else 0)
    largest = 0                       # the largest etime of a row some stage read, in earlier micro-batches
    for b in range(rounds):
        if fresh_workers:
            stage_processor._BUILT.clear()
        watermark = largest           # Spark's: stage filters run before withWatermark, so unread rows do not count
        cols = job.batch_columns(b) if b < job.n_batches else {"stage": [], "key": [], "data": []}
        largest = max([largest] + [t for s, t in zip(cols["stage"], cols.get("etime", []), strict=False) if 0 <= s < job.stages])
        entering = list(zip(cols["stage"], cols["key"], cols["data"], strict=False))
        flowing: list[tuple[str, bytes]] = []
        for stage in range(job.stages):
            rows = flowing + [(k, d) for s, k, d in entering if s == stage]
            groups: dict[str, list] = {}
            for key, data in rows:
                groups.setdefault(key, []).append(_Row((key, data)))
            state = _ValueState(stores[stage])
            processor = StageProcessor(job.spec, stage)
            processor.init(_Handle(state, timers[stage]))
            order = list(groups)
            rnd.shuffle(order)
            flowing = []
            for group_key in order:
                group = groups[group_key]
                rnd.shuffle(group)
                state.key = group_key
                for out in processor.handleInputRows((group_key,), iter(group), _TimerValues(watermark)):
                    flowing.append((out[0], out[1]))
            expired = [(k, ms) for k, times in timers[stage].items() for ms in times if ms <= watermark]
            rnd.shuffle(expired)
            for group_key, ms in expired:
                timers[stage][group_key].discard(ms)
                state.key = group_key
                for out in processor.handleExpiredTimer((group_key,), _TimerValues(watermark), None):
                    flowing.append((out[0], out[1]))
        sink.extend(flowing)
    return job.results(sink)


def run_all_in_memory(scenarios: list[Scenario], *, batches: int, shuffle_seed: int = 0,
                      fresh_workers: bool = False, buckets: int | None = None) -> list:
    """Like run_scenarios_on_spark: time-driven scenarios in a job of their own."""
    out: list = [None] * len(scenarios)
    for indexes in split_by_time(scenarios).values():
        if indexes:
            job = SparkJoinJob([scenarios[i] for i in indexes], batches=batches, buckets=buckets)
            for i, result in zip(indexes, run_in_memory(job, shuffle_seed=shuffle_seed, fresh_workers=fresh_workers), strict=False):
                out[i] = result
    return out
