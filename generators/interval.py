"""Hypothesis strategies for interval-join scenarios: event-time streams with watermarks, processing-time schedules.

Streams are built by construction from abstract steps, interpreted against a
model of the operator's clocks (each input's watermark, idle inputs, the MIN
combination, the processing time), so every drawn and every shrunk stream
keeps the promises its options make:

* a non-late event-time record has a time above max(combined watermark, its
  own input's watermark, 0), near a clock shared by both inputs, so records
  arrive out of order but never late; some sit exactly on a window bound of
  an earlier record of the other input (or one millisecond outside it);
* a late record (chosen with the drawn share; the selector shrinks towards
  "not late") has a time <= max(combined watermark, 0), down to `disorder`
  below it, and below 1 only when `negative_times` allows it;
* watermark strategies: `bounded` (an input's watermark is its largest time
  seen minus its own delay), `creep` (a watermark moves up by 1 to 3 ms),
  `jumps` (a watermark leaps ahead), `idle` (an input goes idle and stops
  holding the combined watermark back);
* processing time: records take the current processing time; with
  `late_share` 0 two inputs never share an arrival time (a processing-time
  "late" record arrives at the same time as an earlier record of the other
  input), which is when the batch answer is exact.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from converge.engine.model.scenario import (
    ChangeEvent,
    Config,
    Event,
    IdleEvent,
    InputSpec,
    IntervalSpec,
    JoinSpec,
    MapStateOrder,
    ProcessingTimeEvent,
    Scenario,
    Semantics,
    TimeMode,
    WatermarkEvent,
)
from converge.generators.arguments import check_choices, check_count_range, check_one

JOIN_TYPES = ("inner", "left", "right", "full")
STRATEGIES = ("bounded", "creep", "jumps", "idle")
# The last two: a composite key whose columns pair up crosswise (a's key column with b's value column and back),
# and equalities inside an OR (docs/generators.md); sampled_from shrinks to the first, the plain key.
KEY_CONDITIONS = ("a.k = b.k", "a.k IS NOT DISTINCT FROM b.k", "a.x <= b.y + 2", "a.k = b.y AND a.x = b.k",
                  "(a.k = b.k OR a.x = b.y)")
RESIDUALS = (None, "a.x <> b.y", None, "a.x + b.y <= 3", "a.x IS NULL OR b.y > 1")
# (L, U) shapes worth covering on purpose: symmetric, zero-width, one-sided, entirely negative / positive
BOUND_SHAPES = ((-10, 10), (0, 0), (0, 10), (-10, 0), (-10, -4), (3, 9), (-1, 1), (-5, 12))
KEY_DOMAIN = (0, 1, 0, 1, None)
VALUE_DOMAIN = (0, 1, 2, None)

RECORD, WATERMARK, JUMP, IDLE, ADVANCE, CREEP = range(6)


def _spec(name: str, value: str, event_time: bool) -> InputSpec:
    cols = (("k", "BIGINT"),) + ((("t", "BIGINT"),) if event_time else ()) + ((value, "BIGINT"),)
    return InputSpec(name, cols, None, "insert_only", "t" if event_time else None)


class _Clocks:
    """The watermarks as the runtime combines them (MIN over inputs that are not idle)."""

    def __init__(self) -> None:
        self.wms: list[int | None] = [None, None]
        self.idle = [False, False]
        self.combined: int | None = None
        self.max_seen: list[int | None] = [None, None]

    def record(self, side: int, time: int) -> None:
        self.idle[side] = False
        seen = self.max_seen[side]
        self.max_seen[side] = time if seen is None else max(seen, time)

    def watermark(self, side: int, wm: int) -> bool:
        """Set an input's watermark; False when it would not rise (no event then)."""
        current = self.wms[side]
        if current is not None and wm <= current:
            return False
        self.wms[side] = wm
        self.idle[side] = False
        self._combine()
        return True

    def go_idle(self, side: int) -> None:
        self.idle[side] = True
        self._combine()

    def _combine(self) -> None:
        watermarks = [w for w, i in zip(self.wms, self.idle, strict=False) if not i]
        active = [w for w in watermarks if w is not None]
        if not active or len(active) < len(watermarks):  # none active, or one without a watermark yet
            return
        combined = min(active)
        if self.combined is None or combined > self.combined:
            self.combined = combined

    def op_time(self) -> int:
        return max(self.combined or 0, 0)

    def floor(self, side: int, *, every_watermark: bool = False) -> int:
        """The time a non-late record of `side` must lie above; with `every_watermark`, above every
        watermark sent so far on either input too."""
        own = self.wms[side]
        floor = max(self.op_time(), own if own is not None else 0)
        if every_watermark:
            floor = max([floor] + [w for w in self.wms if w is not None])
        return floor


def _decode_step(parts: tuple[int, int, int]) -> tuple[int, int, int, int, int]:
    """(action code, input, offset, late selector, packed key/value/advance) from three integers."""
    head, late_sel, body = parts
    packed, offset = divmod(body, 64)
    return head // 2, head % 2, offset, late_sel, packed


def _step_strategy(max_steps: int, min_steps: int) -> st.SearchStrategy[list[tuple[int, int, int, int, int]]]:
    """Three lists joined: about three times Hypothesis's usual list length, yet each shrinks to nothing.

    A step is three draws (generation speed is the campaign's budget; the late selector gets its own
    so that its share is not skewed); every part shrinks towards 0: a record on the first input, on
    time, at the shared clock, key 0.
    """
    step = st.tuples(st.integers(0, 19), st.integers(0, 99), st.integers(0, 64 * 60 - 1)).map(_decode_step)
    third = max(max_steps // 3, 1)
    return st.tuples(st.lists(step, min_size=min_steps, max_size=third), st.lists(step, max_size=third),
                     st.lists(step, max_size=max(max_steps - 2 * third, 0))).map(lambda p: p[0] + p[1] + p[2])


def _action(code: int, time: TimeMode, strategies: Sequence[str]) -> int:
    if code <= 5:
        return RECORD
    if time == "processing":
        return ADVANCE if code <= 8 else WATERMARK
    if code == 7 and "creep" in strategies:
        return CREEP
    if code == 8 and "jumps" in strategies:
        return JUMP
    if code == 9 and "idle" in strategies:
        return IDLE
    return WATERMARK


def _on_a_bound(side: int, offset: int, bounds: tuple[int, int], records: list[tuple[int, int, object]]
                ) -> tuple[object, int] | None:
    """(key, time) exactly on (or just outside) a bound of an earlier record of the other input, or None.

    Offsets 32..63 ask for it: which earlier record, which bound, and whether one
    millisecond outside it. A left row at tr + L / tr + U is on the bounds of a
    right row at tr; a right row at tl - U / tl - L is on the bounds of a left row.
    """
    partners = [(t, k) for s, t, k in records if s != side]
    if offset < 32 or not partners:
        return None
    pick = offset - 32
    time, key = partners[-1 - pick // 4 % len(partners)]
    lower, upper = bounds
    at_upper, outside = pick % 2, pick // 2 % 2
    if side == 0:
        t = time + upper + outside if at_upper else time + lower - outside
    else:
        t = time - lower + outside if at_upper else time - upper - outside
    return key, t


def build_event_time_events(steps: Sequence[tuple], *, delays: tuple[int, int], disorder: int, late_pct: int,
                            strategies: Sequence[str], negative_times: bool,
                            bounds: tuple[int, int] = (0, 0), above_every_watermark: bool = False) -> list[Event]:
    """Interpret steps into an event-time stream (see the module docstring for the promises).

    Both inputs draw their times around one shared clock that moves forward a
    little with each record, so records of the two inputs stay close enough in
    time to join; a non-late record lies up to `disorder` behind that clock,
    but always above its floor. Some records are put exactly on (or one
    millisecond outside) a bound of an earlier record of the other input, with
    its key, when that time is not late.

    `above_every_watermark` puts every non-late record above every watermark
    sent before it on either input, not only above its operator's (MIN)
    watermark: the stream an engine that is not given the interleaving (one
    source per input, its own watermarks) still sees without a late row.
    """
    clocks = _Clocks()
    events: list[Event] = []
    records: list[tuple[int, int, object]] = []
    names = ("a", "b")
    now = 1
    for code, side, offset, late_sel, packed in steps:
        action = _action(code, "event", strategies)
        name = names[side]
        if action == RECORD:
            k, v, advance = KEY_DOMAIN[packed % 5], VALUE_DOMAIN[packed // 5 % 4], packed // 20
            now += advance
            late = late_sel >= 100 - late_pct
            if late:
                time = clocks.op_time() - offset % (disorder + 1)
                if time < 1 and not negative_times:
                    late = False
            if not late:
                floor = clocks.floor(side, every_watermark=above_every_watermark)
                time = max(floor + 1, now - offset % disorder)
                aimed = _on_a_bound(side, offset, bounds, records)
                if aimed is not None and aimed[1] > floor:
                    k, time = aimed
            clocks.record(side, time)
            records.append((side, time, k))
            events.append(ChangeEvent(name, "+I", (k, time, v)))
        elif action == WATERMARK:
            seen = clocks.max_seen[side]
            own = clocks.wms[side]
            target = seen - delays[side] if seen is not None else (own if own is not None else 0) + 1 + offset % 3
            if clocks.watermark(side, target):
                events.append(WatermarkEvent(name, target))
        elif action == CREEP:
            target = (clocks.wms[side] or 0) + 1 + offset % 3
            if clocks.watermark(side, target):
                events.append(WatermarkEvent(name, target))
        elif action == JUMP:
            target = max(clocks.wms[side] or 0, now) + 3 + offset % 12
            if clocks.watermark(side, target):
                events.append(WatermarkEvent(name, target))
                now = max(now, target)
        else:
            clocks.go_idle(side)
            events.append(IdleEvent(name))
    return events


def build_processing_time_events(steps: Sequence[tuple], *, late_pct: int) -> list[Event]:
    """Interpret steps into a processing-time schedule: records at the current time, advances, watermarks."""
    now = 1     # a processing-time clock is never at 0 (epoch milliseconds); the schedule starts at 1
    events: list[Event] = [ProcessingTimeEvent(now)]
    names = ("a", "b")
    sides_now: set[int] = set()
    wms = [0, 0]
    for code, side, offset, late_sel, packed in steps:
        action = _action(code, "processing", ())
        if action == RECORD:
            tie_allowed = late_sel >= 100 - late_pct
            if (1 - side) in sides_now and not tie_allowed:
                now += 1
                sides_now = set()
                events.append(ProcessingTimeEvent(now))
            sides_now.add(side)
            events.append(ChangeEvent(names[side], "+I", (KEY_DOMAIN[packed % 5], VALUE_DOMAIN[packed // 5 % 4])))
        elif action == ADVANCE:
            now += 1 + offset % 6
            sides_now = set()
            events.append(ProcessingTimeEvent(now))
        else:
            wms[side] += 1 + offset % 5
            events.append(WatermarkEvent(names[side], wms[side]))
    return events


def interval_join_scenarios(
    *,
    time: TimeMode = "event",
    join_types: Sequence[str] = JOIN_TYPES,
    late_share: tuple[int, int] = (0, 0),
    strategies: Sequence[str] = STRATEGIES,
    semantics: Sequence[str] = ("correct",),
    map_state_orders: Sequence[str] = ("rocksdb", "hashmap", "arrival"),
    residuals: Sequence[str | None] = RESIDUALS,
    negative_times: bool = False,
    bounds: Sequence[tuple[int, int]] | None = None,
    min_steps: int = 1,
    max_steps: int = 30,
    above_every_watermark: bool = False,
    cleanup_intervals: Sequence[int] = (0, 0, 4),
) -> st.SearchStrategy[Scenario]:
    """An interval join (`a.t BETWEEN b.t + L AND b.t + U`) with a valid append-only stream.

    `late_share` is the (min, max) percentage of records drawn late; (0, 0)
    gives streams with no late record at all. `bounds` restricts (L, U) to the
    given pairs. `cleanup_intervals` are the config's min_cleanup_interval_ms
    drawn (repeat one to weight it). `above_every_watermark` (event time, no late share) keeps
    every record above every watermark sent before it on either input, for a
    system under test that cannot be given the interleaving. Sub-strategies
    are built once.
    """
    name = "interval_join_scenarios"
    check_one(name, "time", time, TimeMode)
    join_types = check_choices(name, "join_types", join_types, JOIN_TYPES)
    strategies = check_choices(name, "strategies", strategies, STRATEGIES)
    semantics = check_choices(name, "semantics", semantics, Semantics)
    map_state_orders = check_choices(name, "map_state_orders", map_state_orders, MapStateOrder)
    residuals = check_choices(name, "residuals", residuals)
    check_count_range(name, "late_share[0]", late_share[0], "late_share[1]", late_share[1])
    check_count_range(name, "min_steps", min_steps, "max_steps", max_steps, floor=1)
    jtypes = st.sampled_from(tuple(join_types))
    keys = st.sampled_from(KEY_CONDITIONS)
    res = st.sampled_from(tuple(residuals))
    bounds_st = st.sampled_from(tuple(bounds)) if bounds else st.one_of(
        st.sampled_from(BOUND_SHAPES),
        st.tuples(st.integers(-12, 8), st.integers(0, 20)).map(lambda p: (p[0], p[0] + p[1])))
    lateness = st.sampled_from((0, 0, 2)) if time == "event" else st.just(0)
    cleanup = st.sampled_from(tuple(check_choices(name, "cleanup_intervals", cleanup_intervals)))
    delays = st.tuples(st.integers(0, 6), st.integers(0, 6))
    disorder = st.integers(1, 12)
    late_pct = st.integers(*late_share)
    modes = st.sampled_from(tuple(semantics))
    orders = st.sampled_from(tuple(map_state_orders))
    steps_st = _step_strategy(max_steps, min_steps)

    @st.composite
    def scenarios(draw: st.DrawFn) -> Scenario:
        jtype = draw(jtypes)
        key_sql = draw(keys)
        residual = draw(res)
        condition = key_sql if residual is None else f"{key_sql} AND ({residual})"
        lower, upper = draw(bounds_st)
        event_time = time == "event"
        specs = (_spec("a", "x", event_time), _spec("b", "y", event_time))
        pct = draw(late_pct)
        steps = draw(steps_st)
        if event_time:
            events = build_event_time_events(steps, delays=draw(delays), disorder=draw(disorder), late_pct=pct,
                                             strategies=strategies, negative_times=negative_times,
                                             bounds=(lower, upper), above_every_watermark=above_every_watermark)
        else:
            events = build_processing_time_events(steps, late_pct=pct)
        interval = IntervalSpec("a.t" if event_time else None, "b.t" if event_time else None, lower, upper,
                                time, draw(lateness))
        config = Config(map_state_order=draw(orders), semantics=draw(modes),
                        min_cleanup_interval_ms=draw(cleanup))
        return Scenario(
            name=f"generated {time}-time {jtype} interval join",
            inputs=specs,
            join=JoinSpec(("a", "b"), (jtype,), (condition,), interval),
            config=config,
            events=tuple(events),
        )

    return scenarios()
