"""A small step model of Flink's interval join, to decide what late records do.

It replays a scenario event by event with plain lists of records (no
MapState, no flags in state rows, no runtime): per join key and side, the
records still cached; per key and side, the pending cleanup timer; the
inputs' watermarks combined by MIN over the inputs that are not idle. Each
record is identified by its event position, so duplicates by value stay
apart. It evaluates the whole join condition as SQL (keys included) rather
than the engine's null filter + residual.

What it yields per event: the emitted items as a bag of
("join", left_pos, right_pos), ("pad", side, pos) and ("wm", watermark);
after every event, the cached records and, for each, the watermark (or
processing time) by which it must be gone: max(its own cleanup time, the
timer pending for its side when it was cached). It also classifies records
as late: event time, time <= max(watermark, 0) at arrival; processing time,
arriving at the same processing time as an earlier record of the other input
(but for a self-join's own left copy when that copy was cached, the right
copy then meeting it, or when the window does not hold 0).
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from converge.engine.model.scenario import (
    ChangeEvent,
    IdleEvent,
    ProcessingTimeEvent,
    Scenario,
    WatermarkEvent,
    interval_time_name,
    sources_of,
)
from converge.properties.reference import LONG_MAX as MAX_TIME
from converge.properties.reference import JavaHashMap, PairMatcher, equality_keys, java_long_hash

_LONG_MASK = (1 << 64) - 1


@dataclass
class _Record:
    pos: int
    side: int
    time: int
    row: tuple
    joined: bool = False
    deadline: int = 0


@dataclass
class _KeyState:
    cached: tuple[list[_Record], list[_Record]] = field(default_factory=lambda: ([], []))
    timer: list[int | None] = field(default_factory=lambda: [None, None])
    stamps: tuple[dict[int, int], dict[int, int]] = field(default_factory=lambda: ({}, {}))
    maps: list[JavaHashMap | None] = field(default_factory=lambda: [None, None])   # hashmap: each side's table


@dataclass
class ModelRun:
    per_event: list[Counter] = field(default_factory=list)
    stored: list[frozenset[tuple[int, int]]] = field(default_factory=list)   # (side, pos) after each event
    late: set[int] = field(default_factory=set)
    records: dict[int, tuple[int, int]] = field(default_factory=dict)        # pos -> (first side, time)
    sides: dict[int, tuple[int, ...]] = field(default_factory=dict)          # pos -> the sides it reached
    deadlines: dict[tuple[int, int], int] = field(default_factory=dict)      # cached (side, pos) -> cleanup time
    clocks: list[int | None] = field(default_factory=list)                   # watermark / processing time


class IntervalJoinModel:
    """Replays one interval-join scenario; `run()` returns a ModelRun.

    A stream both inputs read (`source`, a self-join) hands each record, watermark and idle marker to both
    sides within the event: left first, as converge's runtime does (docs/interval-joins.md "One source, both
    inputs"); `right_first` hands them over the other way round, the order Flink's join task may equally read
    them in."""

    def __init__(self, scenario: Scenario, *, right_first: bool = False) -> None:
        iv = scenario.join.interval
        assert iv is not None, "not an interval join"
        self.scenario = scenario
        left, right = scenario.chain
        self.names = (left.name, right.name)
        # the stream an event names -> the sides it reaches, in the order they take it
        self.fed = {stream: tuple(self.names.index(n) for n in (readers[::-1] if right_first else readers))
                    for stream, readers in sources_of(scenario).items()}
        self.event_time = iv.time == "event"
        self.size = (-iv.lower_ms, iv.upper_ms)
        self.lateness = iv.allowed_lateness_ms
        self.min_cleanup = max(0, scenario.config.min_cleanup_interval_ms)
        self.delay = max(self.size) + self.lateness
        self.self_apart = not iv.lower_ms <= 0 <= iv.upper_ms  # a record's two copies never pair
        jtype = scenario.join.types[0]
        self.outer = (jtype in ("left", "full"), jtype in ("right", "full"))
        self.flink = scenario.config.semantics == "flink"
        cond = scenario.join.conditions[0]
        self.cond = PairMatcher(scenario).matches  # the whole condition as SQL, decided by DuckDB
        keys = equality_keys(cond, [left.name], right.name)
        self.key_idx = (tuple(left.index_of(lc) for _, lc, _, _ in keys),
                        tuple(right.index_of(rc) for _, _, rc, _ in keys))
        self.time_idx: tuple[int | None, int | None] = (None, None)
        if self.event_time:
            refs = (iv.left_time, iv.right_time)
            self.time_idx = tuple(  # type: ignore[assignment]
                spec.index_of(interval_time_name(spec, ref))  # type: ignore[arg-type]
                for spec, ref in zip((left, right), refs, strict=False))
        self.order = self._iteration_order(scenario.config.map_state_order)
        self.hashmap = scenario.config.map_state_order == "hashmap"

    @staticmethod
    def _iteration_order(mode: str) -> Callable[[int], object] | None:
        """Sort key of a cached time in iteration order; None for `arrival` (bucket creation stamps).

        rocksdb: a Java Long map key's big-endian bytes, i.e. the time as an unsigned 64-bit number;
        hashmap: handled apart (`_iteration`: a JavaHashMap per key and side, Long.hashCode of the time).
        """
        if mode == "rocksdb":
            return lambda time: time & _LONG_MASK
        return None

    # ------------------------------------------------------------ running
    def run(self) -> ModelRun:
        self.keys: dict[tuple, _KeyState] = {}
        self.timers: list[tuple[int, str, tuple]] = []
        self.timer_set: set[tuple[int, tuple]] = set()
        self.wms: list[int | None] = [None, None]
        self.idle = [False, False]
        self.wm: int | None = None
        self.now = 0
        self.expiration = [0, 0]
        self.stamp = 0
        # processing time -> side -> (position, cached) of each record that arrived on it then
        self.arrived_at: dict[int, tuple[list[tuple[int, bool]], list[tuple[int, bool]]]] = {}
        self.result = ModelRun()
        for event in self.scenario.events:
            out: Counter = Counter()
            self._event(event, out)
            self.result.per_event.append(out)
            self._after_event()
        return self.result

    def _clock(self) -> int | None:
        return self.wm if self.event_time else self.now

    def _op_time(self) -> int:
        if self.event_time:
            return self.wm if self.wm is not None and self.wm > 0 else 0
        return self.now

    def _after_event(self) -> None:
        stored = {(side, rec.pos) for state in self.keys.values() for side in (0, 1) for rec in state.cached[side]}
        self.result.stored.append(frozenset(stored))
        self.result.clocks.append(self._clock())

    def _event(self, event: object, out: Counter) -> None:
        if isinstance(event, ChangeEvent):
            for side in self.fed.get(event.input, ()):
                self.idle[side] = False
                self._record(side, event, out)
        elif isinstance(event, WatermarkEvent):
            for side in self.fed.get(event.input, ()):
                self.idle[side] = False
                current = self.wms[side]
                if current is None or event.watermark > current:
                    self.wms[side] = event.watermark
                self._combine(out)
        elif isinstance(event, IdleEvent):
            for side in self.fed.get(event.input, ()):
                self.idle[side] = True
                self._combine(out)
        elif isinstance(event, ProcessingTimeEvent):
            self.now = event.processing_time
            if not self.event_time:
                self._fire(self.now, out)

    def _combine(self, out: Counter) -> None:
        watermarks = [w for w, idle in zip(self.wms, self.idle, strict=False) if not idle]
        active = [w for w in watermarks if w is not None]
        if not active or len(active) < len(watermarks):  # none active, or one without a watermark yet
            return
        combined = min(active)
        if self.wm is not None and combined <= self.wm:
            return
        self.wm = combined
        if self.event_time:
            self._fire(combined, out)
            out[("wm", combined - self.delay)] += 1
        else:
            out[("wm", combined)] += 1

    # ------------------------------------------------------------ records
    def _expiration(self, op_time: int, side: int) -> int:
        return MAX_TIME if op_time >= MAX_TIME else op_time - self.size[side] - self.lateness - 1

    def _record(self, side: int, event: ChangeEvent, out: Counter) -> None:
        pos = len(self.result.per_event)
        row = tuple(event.row)
        other = 1 - side
        time = self.now if not self.event_time else row[self.time_idx[side]]  # type: ignore[index]
        op = self._op_time()
        if self.event_time:
            late = time <= op
        else:
            # a same-time record of the other input may miss this one; its own other copy (a self-join) does
            # not when it was cached (this copy's pass meets it) or when the window cannot hold the two (0 outside)
            late = any(p != pos or not (cached or self.self_apart)
                       for p, cached in self.arrived_at.get(self.now, ([], []))[other])
        if late:
            self.result.late.add(pos)
        self.result.records.setdefault(pos, (side, time))
        self.result.sides[pos] = self.result.sides.get(pos, ()) + (side,)
        key = tuple(row[i] for i in self.key_idx[side])
        state = self.keys.setdefault(key, _KeyState())
        lower, upper = time - self.size[other], time + self.size[side]
        rec = _Record(pos, side, time, row)
        if not self.flink or self.expiration[other] < upper:
            exp = self._expiration(op, other)
            self.expiration[other] = exp
            keep = []
            for partner in state.cached[other]:
                pair = (row, partner.row) if side == 0 else (partner.row, row)
                if lower <= partner.time <= upper and self.cond(*pair):
                    out[("join", pos, partner.pos) if side == 0 else ("join", partner.pos, pos)] += 1
                    rec.joined = partner.joined = True
                if partner.time <= exp:
                    if self.outer[other] and not partner.joined:
                        out[("pad", other, partner.pos)] += 1
                else:
                    keep.append(partner)
            self._replace(state, other, keep)
        if not self.event_time:
            self.arrived_at.setdefault(self.now, ([], []))[side].append((pos, op < upper))
        if op < upper:
            own = time + self.size[side] + self.min_cleanup + self.lateness + 1
            pending = state.timer[side]
            rec.deadline = own if pending is None else max(own, pending)
            self.result.deadlines[(side, pos)] = rec.deadline
            state.cached[side].append(rec)
            if time not in state.stamps[side]:
                self.stamp += 1
                state.stamps[side][time] = self.stamp
                if self.hashmap:
                    table = state.maps[side] = state.maps[side] or JavaHashMap(java_long_hash)
                    table.put(time)
            if pending is None:
                self._register(key, state, side, time)
        elif self.outer[side] and not rec.joined:
            out[("pad", side, pos)] += 1

    def _replace(self, state: _KeyState, side: int, keep: list[_Record], *, clear: bool = False) -> None:
        """Keep `keep` of the side's cached rows. Flink removes the others through the cache's iterator, which
        leaves an emptied HashMap (its table) in place; only `clear` (MapState.clear) drops it."""
        state.cached[side][:] = keep
        times = {r.time for r in keep}
        for t in [t for t in state.stamps[side] if t not in times]:
            del state.stamps[side][t]
            table = state.maps[side]
            if table is not None:
                table.remove(t)
        if clear:
            state.maps[side] = None

    # ------------------------------------------------------------ timers
    def _register(self, key: tuple, state: _KeyState, side: int, row_time: int) -> None:
        ts = row_time + self.size[side] + self.min_cleanup + self.lateness + 1
        state.timer[side] = ts
        if (ts, key) not in self.timer_set:
            self.timer_set.add((ts, key))
            heapq.heappush(self.timers, (ts, repr(key), key))

    def _fire(self, upto: int, out: Counter) -> None:
        while self.timers and self.timers[0][0] <= upto:
            ts, _, key = heapq.heappop(self.timers)
            self.timer_set.discard((ts, key))
            state = self.keys[key]
            for side in (1, 0):
                if state.timer[side] == ts:
                    self._cleanup(key, state, side, out)

    def _cleanup(self, key: tuple, state: _KeyState, side: int, out: Counter) -> None:
        exp = self._expiration(self._op_time(), side)
        self.expiration[side] = exp
        keep = []
        for rec in state.cached[side]:
            if rec.time <= exp:
                if self.outer[side] and not rec.joined:
                    out[("pad", side, rec.pos)] += 1
            else:
                keep.append(rec)
        self._replace(state, side, keep, clear=self.flink and not keep)   # Flink clears an emptied cache
        if not keep:
            state.timer[side] = None
            return
        if not self.flink:
            self._register(key, state, side, min(r.time for r in keep))
            return
        earliest = -1
        for time in self._iteration(state, side):
            if time < earliest or earliest < 0:
                earliest = time
        if earliest > 0:
            self._register(key, state, side, earliest)
        else:  # Flink drops the timer and every remaining row, unpadded
            state.timer[side] = None
            self._replace(state, side, [], clear=True)

    def _iteration(self, state: _KeyState, side: int) -> list[int]:
        """The distinct cached times of one side, in the state backend's iteration order."""
        stamps = state.stamps[side]
        if self.hashmap:
            table = state.maps[side]
            return [] if table is None else list(table)
        order = self.order
        if order is None:
            return sorted(stamps, key=lambda t: stamps[t])
        return sorted(stamps, key=order)  # type: ignore[arg-type]
