"""Flink's time interval join (TimeIntervalJoin, RowTimeIntervalJoin / ProcTimeIntervalJoin).

`a.t BETWEEN b.t + L AND b.t + U` (both bounds inclusive) over two
append-only inputs, keyed by the equi-join key. With Flink's names:
leftRelativeSize = -L, rightRelativeSize = U, and `size[s]` below is the
relative size of side s (0 = left, 1 = right).

Per key the state is one cache per side, `MapState<time, [(row, emitted)]>`,
and one cleanup-timer value per side. A row of side s with time t:

1. joins the other side's cached rows whose time lies in
   [t - size[o], t + size[s]] (o = the other side), under the null-key filter
   and the residual condition; in the same pass it removes the other side's
   rows with time <= opTime - size[o] - lateness - 1 (padding an outer row
   that never joined);
2. is cached while opTime < t + size[s] (for a left row: max(wm, 0) < t - L,
   for a right row: max(wm, 0) < t + U), and the side's cleanup timer is
   registered at t + size[s] + minCleanUp + lateness + 1 if none is pending;
   otherwise, if it is outer and joined nothing, it is padded at once.

A cleanup timer removes the expired rows of its cache (padding the outer
ones that never joined) and re-registers itself for the earliest remaining
row. opTime is max(watermark, 0) for event time and the processing time for
processing time (where a row's time is its arrival's processing time).

`semantics="flink"` reproduces two quirks of Flink's code; `correct` (the
default) drops them (docs/interval-joins.md has the evidence):

* the other side's expiration time is an operator-wide field shared by all
  keys, and a row skips its join pass when its upper bound is not above it,
  so a late row's matches depend on other keys' traffic;
* after a cleanup pass the cache is cleared and the timer dropped when the
  earliest remaining time is not > 0 (computed in iteration order with -1
  as "none"), so rows at time <= 0 can make every remaining row vanish
  unpadded.

The output is append-only (+I). An event-time join emits the output
watermark wm - (max(-L, U) + lateness) after the timers of wm.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from converge.engine.java_hashmap import long_key_fn
from converge.engine.model.changelog import Change, OutputWatermark
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import InputSpec, Semantics, TimeMode
from converge.engine.operators.base import Operator, OperatorContext
from converge.engine.operators.regular_join import key_extractor

MAX_TIME = 2**63 - 1          # Long.MAX_VALUE: the watermark that ends a stream
_LONG_MASK = (1 << 64) - 1
_SIGN = 1 << 63

IntervalJoinType = Literal["inner", "left", "right", "full"]


def cache_map_key(time: int) -> tuple[str]:
    """The MapState key of a time bucket.

    Flink's caches are MapState<Long, ...>; RocksDB orders a Long map key by
    its big-endian bytes (0 .. MAX, then MIN .. -1). The 16 hex digits of the
    64-bit two's complement sort the same way, and as a VARCHAR map key they
    make the state backend iterate in exactly that order.
    """
    return (format(time & _LONG_MASK, "016x"),)


def cache_time(map_key: tuple[str]) -> int:
    value = int(map_key[0], 16)
    return value - (1 << 64) if value & _SIGN else value


@dataclass(frozen=True)
class IntervalJoinSpec:
    join_type: IntervalJoinType
    left: InputSpec
    right: InputSpec
    left_key_indexes: tuple[int, ...]
    right_key_indexes: tuple[int, ...]
    filter_nulls: tuple[bool, ...]             # per key field: True for '=', False for IS NOT DISTINCT FROM
    residual: Callable[[tuple, tuple], bool] | None
    residual_sql: str | None
    lower_ms: int                              # L in a.t BETWEEN b.t + L AND b.t + U
    upper_ms: int                              # U
    time_mode: TimeMode
    left_time_index: int | None                # event time: the time attribute's column
    right_time_index: int | None
    allowed_lateness_ms: int = 0
    min_cleanup_interval_ms: int = 0
    semantics: Semantics = "correct"

    @property
    def output_delay(self) -> int:
        """How far the output watermark is held back: max(-L, U) + allowed lateness."""
        return max(-self.lower_ms, self.upper_ms) + self.allowed_lateness_ms


class TimeIntervalJoinOperator(Operator):
    """INNER / LEFT / RIGHT / FULL interval join; see the module docstring for the algorithm."""

    def __init__(self, spec: IntervalJoinSpec) -> None:
        if spec.join_type not in ("inner", "left", "right", "full"):
            raise BadInputError(f"an interval join cannot be {spec.join_type!r} (inner, left, right or full)")
        self.spec = spec
        self.event_time = spec.time_mode == "event"
        self.size = (-spec.lower_ms, spec.upper_ms)
        self.outer = (spec.join_type in ("left", "full"), spec.join_type in ("right", "full"))
        self.lateness = spec.allowed_lateness_ms
        self.min_cleanup = max(0, spec.min_cleanup_interval_ms)
        self.flink_quirks = spec.semantics == "flink"
        self._keys = (key_extractor(spec.left_key_indexes) if spec.left_key_indexes else _no_key,
                      key_extractor(spec.right_key_indexes) if spec.right_key_indexes else _no_key)
        self._time_index = (spec.left_time_index, spec.right_time_index)
        self._names = (spec.left.name, spec.right.name)
        self._nulls = ((None,) * len(spec.left.columns), (None,) * len(spec.right.columns))
        checked = tuple(i for i, f in enumerate(spec.filter_nulls) if f)
        self._null_checked = checked
        self._residual = spec.residual
        # Flink keeps these as plain fields of the operator instance: shared by every key and not
        # checkpointed. Only `semantics="flink"` reads them (the join-pass shortcut).
        self.expiration = [0, 0]

    # ------------------------------------------------------------ set-up
    def open(self, ctx: OperatorContext) -> None:
        st = ctx.state
        self._state = st
        # MapState<Long, List<Tuple2<RowData, Boolean>>>: on the HashMapStateBackend a HashMap<Long, ...>,
        # hashed by Long.hashCode of the time (engine/java_hashmap.py), not by the VARCHAR stand-in key
        by_time = long_key_fn(cache_time)
        self.caches = (st.map_state("IntervalJoinLeftCache", ("VARCHAR",), java_hash=by_time),
                       st.map_state("IntervalJoinRightCache", ("VARCHAR",), java_hash=by_time))
        # cleanup_timers[s] cleans cache s. Flink calls the left cache's timer "rightTimerState"
        # (a timer "on the right stream") and the right cache's "leftTimerState".
        self.cleanup_timers = (st.value_state("IntervalJoinRightTimerState"),
                               st.value_state("IntervalJoinLeftTimerState"))
        self.expiration = [0, 0]

    def key_of(self, input_index: int, row: tuple) -> tuple:
        return self._keys[input_index](row)

    def key_selector(self, input_index: int) -> Callable[[tuple], tuple]:
        return self._keys[input_index]

    # ------------------------------------------------------------ clocks
    def operator_time(self, ctx: OperatorContext) -> int:
        if self.event_time:
            wm = ctx.watermark
            return wm if wm is not None and wm > 0 else 0
        return ctx.processing_time

    def expiration_time(self, op_time: int, side: int) -> int:
        """Rows of `side` with time <= this can no longer join (calExpirationTime)."""
        if op_time >= MAX_TIME:
            return MAX_TIME
        return op_time - self.size[side] - self.lateness - 1

    def _row_time(self, side: int, row: tuple, ctx: OperatorContext) -> int:
        if not self.event_time:
            return ctx.processing_time
        index = self._time_index[side]
        time = row[index]  # type: ignore[index]
        if time is None:
            spec = self.spec.left if side == 0 else self.spec.right
            raise BadInputError(
                f"row {list(row)} on input {self._names[side]!r} has a NULL time attribute "
                f"{spec.column_names[index]!r}; every row of an event-time interval join needs a time")
        return time

    # ------------------------------------------------------------ records
    def process(self, input_index: int, change: Change, ctx: OperatorContext) -> list:
        kind, row = change
        if kind != "+I":
            raise BadInputError(
                f"{kind} on input {self._names[input_index]!r}: interval join inputs are append-only "
                f"(only +I); retractions and updates are not supported, as in Flink")
        time = self._row_time(input_index, row, ctx)
        out: list[Change] = []
        self._process_row(input_index, row, time, self.operator_time(ctx), ctx, out)
        return out

    def _matches(self, key: tuple) -> bool:
        """False when the key holds a NULL in a field compared with '=' (Flink's null filter)."""
        return not any(key[i] is None for i in self._null_checked)

    def _process_row(self, side: int, row: tuple, time: int, op_time: int, ctx: OperatorContext,
                     out: list) -> None:
        other = 1 - side
        lower = time - self.size[other]     # the other side's qualifying times, both inclusive
        upper = time + self.size[side]
        emitted = False
        if not self.flink_quirks or self.expiration[other] < upper:
            expiration = self.expiration_time(op_time, other)
            self.expiration[other] = expiration
            emitted = self._join_pass(side, row, lower, upper, expiration, ctx, out)
        if op_time < upper:
            cache = self.caches[side]
            map_key = cache_map_key(time)
            bucket = cache.get(map_key)
            if bucket is None:
                cache.put(map_key, [[row, emitted]])
            else:  # a new list: state values are never changed in place (engine/state.py)
                cache.put(map_key, bucket + [[row, emitted]], new_arrival=False)
            if self.cleanup_timers[side].get() is None:
                self._register_cleanup(ctx, time, side)
        elif not emitted and self.outer[side]:
            out.append(Change("+I", self._padded(side, row)))

    def _join_pass(self, side: int, row: tuple, lower: int, upper: int, expiration: int,
                   ctx: OperatorContext, out: list) -> bool:
        """Join `row` with the other cache's qualifying rows; drop its expired ones on the way."""
        other = 1 - side
        cache = self.caches[other]
        other_outer = self.outer[other]
        can_match = self._matches(ctx.current_key)
        residual = self._residual
        emitted = False
        for map_key, bucket in cache.items():
            other_time = cache_time(map_key)
            if lower <= other_time <= upper and can_match:
                updated: list | None = None
                for i, entry in enumerate(bucket):
                    left, right = (row, entry[0]) if side == 0 else (entry[0], row)
                    if residual is None or residual(left, right):
                        out.append(Change("+I", left + right))
                        emitted = True
                        if other_outer and not entry[1]:
                            if updated is None:  # copy on write: state values are never changed in place
                                updated = [list(e) for e in bucket]
                            updated[i][1] = True
                if updated is not None:
                    cache.put(map_key, updated, new_arrival=False)
                    bucket = updated
            if other_time <= expiration:
                if other_outer:
                    for entry in bucket:
                        if not entry[1]:
                            out.append(Change("+I", self._padded(other, entry[0])))
                cache.remove(map_key, by_iterator=True)   # Iterator.remove: an emptied HashMap stays
        return emitted

    def _padded(self, side: int, row: tuple) -> tuple:
        return row + self._nulls[1] if side == 0 else self._nulls[0] + row

    # ------------------------------------------------------------ timers
    def _register_cleanup(self, ctx: OperatorContext, row_time: int, side: int) -> None:
        cleanup_time = row_time + self.size[side] + self.min_cleanup + self.lateness + 1
        if self.event_time:
            ctx.timers.register_event_time_timer(cleanup_time)  # type: ignore[union-attr]
        else:
            ctx.timers.register_processing_time_timer(cleanup_time)  # type: ignore[union-attr]
        self.cleanup_timers[side].update(cleanup_time)

    def on_timer(self, timestamp: int, ctx: OperatorContext, *, event_time: bool) -> list:
        op_time = self.operator_time(ctx)
        out: list[Change] = []
        for side in (1, 0):  # Flink checks the right cache's timer (leftTimerState) first
            if self.cleanup_timers[side].get() == timestamp:
                expiration = self.expiration_time(op_time, side)
                self.expiration[side] = expiration
                self._remove_expired(side, expiration, ctx, out)
        return out

    def _remove_expired(self, side: int, expiration: int, ctx: OperatorContext, out: list) -> None:
        """A full pass over cache `side`; re-register the timer for the earliest remaining row."""
        cache = self.caches[side]
        outer = self.outer[side]
        earliest = -1 if self.flink_quirks else None
        for map_key, bucket in cache.items():
            time = cache_time(map_key)
            if time <= expiration:
                if outer:
                    for entry in bucket:
                        if not entry[1]:
                            out.append(Change("+I", self._padded(side, entry[0])))
                cache.remove(map_key, by_iterator=True)
            elif earliest is None:
                earliest = time
            elif self.flink_quirks:
                if time < earliest or earliest < 0:   # Flink: -1 means "none yet"
                    earliest = time
            elif time < earliest:
                earliest = time
        if self.flink_quirks:
            if earliest > 0:  # type: ignore[operator]
                self._register_cleanup(ctx, earliest, side)  # type: ignore[arg-type]
            else:             # Flink: also drops remaining rows whose time is <= 0, unpadded
                self.cleanup_timers[side].clear()
                cache.clear()
        elif earliest is not None:
            self._register_cleanup(ctx, earliest, side)
        else:
            self.cleanup_timers[side].clear()

    def volatile_state(self) -> list[int]:
        return list(self.expiration)

    def restore_volatile_state(self, saved: list[int]) -> None:
        self.expiration = list(saved)

    def on_watermark(self, watermark: int, ctx: OperatorContext) -> list:
        """Called after the timers of `watermark`: the held-back output watermark."""
        if not self.event_time:
            return [OutputWatermark(watermark)]  # Flink's plain KeyedCoProcessOperator forwards it
        return [OutputWatermark(watermark - self.spec.output_delay)]

    # ------------------------------------------------------------ introspection (properties, benches)
    def stored_rows(self) -> list[tuple[int, Any, int, tuple, bool]]:
        """(side, key, time, row, emitted) of every cached row, for properties and benchmarks."""
        state = self._state
        saved = state.current_key
        out = []
        try:
            for key in sorted(state.keys(), key=repr):
                state.current_key = key
                for side in (0, 1):
                    for map_key, bucket in self.caches[side].items():
                        out.extend((side, key, cache_time(map_key), entry[0], entry[1]) for entry in bucket)
        finally:
            state.current_key = saved
        return out

    def cleanup_timer_values(self) -> dict[Any, tuple[int | None, int | None]]:
        """Per key: (left cache's cleanup timer, right cache's cleanup timer)."""
        state = self._state
        saved = state.current_key
        out = {}
        try:
            for key in sorted(state.keys(), key=repr):
                state.current_key = key
                values = (self.cleanup_timers[0].get(), self.cleanup_timers[1].get())
                if values != (None, None):
                    out[key] = values
        finally:
            state.current_key = saved
        return out


def _no_key(row: tuple) -> tuple:
    """No equi-join key: every row goes to one key group (Flink runs such a join with parallelism 1)."""
    return ()
