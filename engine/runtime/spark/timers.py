"""Our timers on Spark: kept in the key's state slice, fired in event order, woken up by Spark's timers.

The operator registers timers through the ordinary TimerService protocol.
A timer fires at the first clock rise at or after its registration that
reaches its time (engine/runtime/spark/clocks.py), exactly as the local
runtime pops it, and its output is attributed to that event. Before a key's
change at event s is processed, every timer of the key that fires before s
is fired, so the operator sees the state the local runtime would. A key that
gets no change after its timer is due is woken through its bucket (the Spark
group it shares with other keys, processor.py): one Spark event-time timer
per bucket, set for the micro-batch after the one holding the earliest
firing event of its keys (Spark's watermark is the micro-batch number, see
job.py); the wake-up fires every key's due timers and sets the next one.
"""

from __future__ import annotations

from typing import Any

from converge.engine.runtime.spark.clocks import Clocks


class KeyTimers:
    """The pending timers of the key being processed: {(time, is event time): event it was registered at}."""

    def __init__(self) -> None:
        self.pending: dict[tuple[int, bool], int] = {}
        self.seq = 0             # the event being processed: timers registered now are eligible from it on

    def register_event_time_timer(self, timestamp: int) -> None:
        self.pending.setdefault((timestamp, True), self.seq)

    def register_processing_time_timer(self, timestamp: int) -> None:
        self.pending.setdefault((timestamp, False), self.seq)

    def delete_event_time_timer(self, timestamp: int) -> None:
        self.pending.pop((timestamp, True), None)

    def delete_processing_time_timer(self, timestamp: int) -> None:
        self.pending.pop((timestamp, False), None)

    def next_due(self, clocks: Clocks, before: int) -> tuple[int, int, bool] | None:
        """(firing event, time, is event time) of the timer that fires first, if it fires before `before`."""
        return due_before(self.pending, clocks, before)


def due_before(pending: dict[tuple[int, bool], int], clocks: Clocks, before: int) -> tuple[int, int, bool] | None:
    """(firing event, time, is event time) of the first of `pending` to fire, if it fires before `before`."""
    best: tuple[int, int, bool] | None = None
    for (ts, event_time), registered in pending.items():
        at = clocks.fires_at(ts, registered, event_time)
        if at is not None and at < before and (best is None or (at, ts) < best[:2]):
            best = (at, ts, event_time)
    return best


def first_firing(pending: dict[tuple[int, bool], int], clocks: Clocks) -> int | None:
    """The earliest event at which one of `pending` fires (None: none ever does)."""
    found = [at for (ts, ev), reg in pending.items() if (at := clocks.fires_at(ts, reg, ev)) is not None]
    return min(found) if found else None


def spark_timer_for(clocks: Clocks, firing_event: int) -> int:
    """The Spark timer (ms) that wakes a key once the micro-batch holding `firing_event` is done."""
    return clocks.batch_of(firing_event) + 1


def completed_before(clocks: Clocks, spark_watermark_ms: Any) -> int:
    """The first event not yet in a finished micro-batch, given Spark's watermark (batch number + 1)."""
    done = int(spark_watermark_ms) - 1
    return clocks.end_of_batch(done) if done >= 0 else 0
