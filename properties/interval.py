"""Properties of interval joins: each check raises PropertyFailure with evidence.

Records are identified by their position in the stream, not by their
values: every check runs the engine on the scenario with one extra column
per input (`__pos`, the event's position), so two equal rows stay two
records and a pair emitted twice is visible. Checks that speak about the end
of the stream append a final watermark of +inf (Long.MAX_VALUE) on both
inputs, or a processing time of +inf for a processing-time join.

Late records (properties/interval_model.py): an event-time record is late
when its time is <= max(combined watermark, 0) at its arrival; a
processing-time record is late when it arrives at the same processing time
as an earlier record of the other input.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import NoReturn

from converge.engine.model.changelog import Change, OutputWatermark
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import (
    ChangeEvent,
    Event,
    IdleEvent,
    ProcessingTimeEvent,
    Scenario,
    WatermarkEvent,
    sources_of,
)
from converge.engine.runtime.local import LocalRuntime, RunResult
from converge.oracle.interval import batch_interval_join, interval_final_sql
from converge.properties.divergence import fail, require
from converge.properties.empty_window import empty_window_equals_oracle, empty_window_matches_flink, is_empty_window
from converge.properties.interval_model import IntervalJoinModel, ModelRun
from converge.properties.reference import LONG_MAX as MAX_TIME

POS = "__pos"


# ---------------------------------------------------------------- scenario transformations


def with_positions(scenario: Scenario) -> Scenario:
    """Each joined input (and a stream they read, `source`) gains a last column `__pos` holding the event's
    position; expectations are dropped. A record of a stream both inputs read has one position on both sides."""
    names = set(scenario.join.inputs) | set(sources_of(scenario))
    inputs = tuple(replace(s, columns=s.columns + ((POS, "BIGINT"),)) if s.name in names else s
                   for s in scenario.inputs)
    for spec in scenario.inputs:
        if spec.name in names and POS in spec.column_names:
            raise BadInputError(f"input {spec.name!r} already has a column {POS!r}")
    events: list[Event] = []
    for pos, e in enumerate(scenario.events):
        if isinstance(e, ChangeEvent) and e.input in names:
            events.append(ChangeEvent(e.input, e.kind, tuple(e.row) + (pos,)))
        else:
            events.append(replace(e, expect=None))
    return replace(scenario, inputs=inputs, events=tuple(events), expect_final=None, expect_changelog=None)


def final_events(scenario: Scenario) -> tuple[Event, ...]:
    """What ends the stream: +inf watermarks on every stream the inputs read (event time; one for a self-join,
    whose scan feeds both inputs) or processing time +inf."""
    iv = scenario.join.interval
    assert iv is not None
    if iv.time == "processing":
        return (ProcessingTimeEvent(MAX_TIME),)
    return tuple(WatermarkEvent(name, MAX_TIME) for name in sources_of(scenario))


def with_final(scenario: Scenario) -> Scenario:
    return scenario.with_events(tuple(scenario.events) + final_events(scenario))


# ---------------------------------------------------------------- running and reading the output


def _fail(prop: str, scenario: Scenario, message: str, *, event_index: int | None = None,
          emitted: list | None = None, **kw) -> NoReturn:
    """Raise the failure on the scenario as given; an index past its events (the appended end) becomes None,
    which reports read as "the final answer". `emitted` (the position-tagged run's output per event) is cut
    to the given scenario's events."""
    if event_index is not None and event_index >= len(scenario.events):
        event_index = None
    if emitted is not None:
        emitted = list(emitted[:len(scenario.events)])
    fail(prop, scenario, message, event_index=event_index, emitted=emitted, **kw)


def run_positioned(scenario: Scenario) -> tuple[RunResult, LocalRuntime]:
    """Run the position-tagged scenario on the local runtime."""
    rt = LocalRuntime(scenario)
    return rt.run(), rt


def _widths(scenario: Scenario) -> tuple[int, int]:
    left, right = scenario.chain
    return len(left.columns), len(right.columns)


def items_of(scenario: Scenario, output: list) -> Counter:
    """Engine output of a position-tagged run as ("join", l, r) / ("pad", side, pos) / ("wm", w) items."""
    lw, _ = _widths(scenario)
    bag: Counter = Counter()
    for item in output:
        if isinstance(item, OutputWatermark):
            bag[("wm", item.watermark)] += 1
            continue
        if item.kind != "+I":
            bag[("non-insert", item.kind, item.row)] += 1
            continue
        lpos, rpos = item.row[lw - 1], item.row[-1]
        if lpos is not None and rpos is not None:
            bag[("join", lpos, rpos)] += 1
        elif lpos is not None:
            bag[("pad", 0, lpos)] += 1
        else:
            bag[("pad", 1, rpos)] += 1
    return bag


def stored_positions(rt: LocalRuntime) -> frozenset[tuple[int, int]]:
    op = rt.plan.root.operator
    return frozenset((side, row[-1]) for side, _, _, row, _ in op.stored_rows())  # type: ignore[attr-defined]


def _pairs(bag: Counter) -> Counter:
    return Counter({(it[1], it[2]): n for it, n in bag.items() if it[0] == "join"})


def _rows_to_pairs(scenario: Scenario, rows: Counter) -> Counter:
    return _pairs(items_of(scenario, [Change("+I", r) for r in rows.elements()]))


def model_of(scenario: Scenario) -> ModelRun:
    return IntervalJoinModel(scenario).run()


def _pos_scenario(scenario: Scenario) -> Scenario:
    return with_positions(with_final(scenario))


# ---------------------------------------------------------------- properties
#
# Each check runs on the scenario tagged with positions (and, where it speaks about
# the end of the stream, with the final watermark appended), but a failure reports
# the scenario it was given: a failure at the appended final watermark(s) has no
# event index, and rows in the evidence end with their records' positions.


def why_not_exact(scenario: Scenario, model: ModelRun) -> str | None:
    """Why the streaming answer need not be the batch answer, or None when it must be.

    It must when no record is late, and, under semantics=flink, no record has a
    time <= 0: Flink's join-pass shortcut starts from an expiration time of 0,
    so a partner at time <= 0 can be skipped (only processing time starts at 0;
    an on-time event-time record is always above 0).
    """
    if model.late:
        return f"records at positions {sorted(model.late)} are late"
    if scenario.config.semantics == "flink":
        low = sorted(pos for pos, (_, time) in model.records.items() if time <= 0)
        if low:
            return f"semantics=flink and records at positions {low} have a time <= 0"
    return None


def no_late_equals_oracle(scenario: Scenario) -> None:
    """With no late record, the output after a final +inf watermark is exactly the batch interval join."""
    prop = "no_late_equals_oracle"
    s = _pos_scenario(scenario)
    model = model_of(s)
    reason = why_not_exact(scenario, model)
    require(reason is None, prop, reason or "")
    result, rt = run_positioned(s)
    got = Counter(c.row for c in result.changes)
    want = batch_interval_join(s)
    if got != want:
        _fail(prop, scenario, "after the final watermark the output differs from the batch interval join "
              "(no record is late; rows end with the records' positions)",
              event_index=len(s.events) - 1, engine=got, expected=want, emitted=result.per_event,
              oracle_sql=interval_final_sql(s))
    _state_empty(prop, scenario, s, rt)


def late_records_bounded(scenario: Scenario) -> None:
    """With late records: pairs of batch(non-late) <= output pairs <= pairs of batch(all); padding only when unmatched."""
    prop = "late_records_bounded"
    require(scenario.config.semantics == "correct", prop, "needs semantics=correct (flink mode may drop rows)")
    s = _pos_scenario(scenario)
    model = model_of(s)
    result, _ = run_positioned(s)
    items = items_of(s, result.changes)
    got = _pairs(items)
    records = set(model.records)
    low = _rows_to_pairs(s, batch_interval_join(s, records - model.late))
    high = _rows_to_pairs(s, batch_interval_join(s, records))
    last = len(s.events) - 1
    if low - got:
        _fail(prop, scenario, f"(left, right) position pairs of non-late records are missing "
              f"(late records: {sorted(model.late)})", event_index=last, engine=got, expected=low,
              emitted=result.per_event, oracle_sql=interval_final_sql(s, records - model.late))
    if got - high:
        _fail(prop, scenario, "(left, right) position pairs outside the batch interval join of all records",
              event_index=last, engine=got, expected=high, emitted=result.per_event,
              oracle_sql=interval_final_sql(s, records))
    _padding_exactly_once(prop, scenario, items, model, result.per_event)


def _joined_records(items: Counter) -> set[tuple[int, int]]:
    return {(0, it[1]) for it in items if it[0] == "join"} | {(1, it[2]) for it in items if it[0] == "join"}


def _padding_exactly_once(prop: str, scenario: Scenario, items: Counter, model: ModelRun,
                          emitted: list | None = None) -> None:
    jtype = scenario.join.types[0]
    outer = (jtype in ("left", "full"), jtype in ("right", "full"))
    joined = _joined_records(items)
    pads = {(it[1], it[2]): n for it, n in items.items() if it[0] == "pad"}
    for pos, side in sorted((pos, side) for pos, sides in model.sides.items() for side in sides):
        n = pads.get((side, pos), 0)
        want = 1 if outer[side] and (side, pos) not in joined else 0
        if n != want:
            what = ("padded although it joined" if (side, pos) in joined and n else
                    "padded on an inner side" if not outer[side] and n else f"padded {n} times")
            _fail(prop, scenario, f"the record at position {pos} (input {scenario.join.inputs[side]!r}) is {what}; "
                  f"an unmatched outer record is padded exactly once", emitted=emitted)


def pairs_and_padding_once(scenario: Scenario) -> None:
    """No (left, right) pair is emitted twice; each outer record is padded at most once, never after joining."""
    prop = "pairs_and_padding_once"
    s = _pos_scenario(scenario)
    result, _ = run_positioned(s)
    items = items_of(s, result.changes)
    for it, n in sorted(items.items(), key=repr):
        if it[0] == "non-insert":
            _fail(prop, scenario, f"an interval join emitted {it[1]} {list(it[2])}; its output is append-only",
                  emitted=result.per_event)
        if n > 1:
            _fail(prop, scenario, f"{it} (by record positions) was emitted {n} times", emitted=result.per_event)
    if scenario.config.semantics == "correct":
        _padding_exactly_once(prop, scenario, items, model_of(s), result.per_event)
        return
    # flink: a row dropped by the time <= 0 quirk is padded 0 times (matches_step_model decides that exactly)
    joined = _joined_records(items)
    for it in items:
        if it[0] == "pad" and (it[1], it[2]) in joined:
            _fail(prop, scenario, f"the record at position {it[2]} was padded although it joined",
                  emitted=result.per_event)


def _state_empty(prop: str, scenario: Scenario, s: Scenario, rt: LocalRuntime) -> None:
    entries, timers = rt.state_entries(), rt.pending_timers()
    if entries or timers:
        _fail(prop, scenario, f"after the final watermark the operator still holds {entries} state entries and "
              f"{timers} timers; cached (side, position): {sorted(stored_positions(rt))}",
              event_index=len(s.events) - 1)


def state_empty_after_final(scenario: Scenario) -> None:
    """After the final +inf watermark (or processing time) the operator holds no state and no timers."""
    s = _pos_scenario(scenario)
    _, rt = run_positioned(s)
    _state_empty("state_empty_after_final", scenario, s, rt)


def matches_step_model(scenario: Scenario) -> None:
    """At every event: the same emitted items and the same cached records as the step model (either semantics)."""
    prop = "matches_step_model"
    require(not is_empty_window(scenario), prop, "models the interval join operator; an empty window has none "
            "(properties/empty_window.py checks it)")
    s = _pos_scenario(scenario)
    model = model_of(s)
    rt = LocalRuntime(s)
    outputs: list[list] = []
    for i, event in enumerate(s.events):
        outputs.append(rt.process_event(event))
        got = items_of(s, outputs[-1])
        if got != model.per_event[i]:
            _fail(prop, scenario, f"event {i} emitted {_show(got)}, the step model {_show(model.per_event[i])}",
                  event_index=i, emitted=outputs)
        stored = stored_positions(rt)
        if stored != model.stored[i]:
            _fail(prop, scenario, f"after event {i} the engine caches (side, position) {sorted(stored)}, "
                  f"the step model {sorted(model.stored[i])}", event_index=i, emitted=outputs)


def cleanup_timely(scenario: Scenario) -> None:
    """No cached row outlives its cleanup time for the current watermark (processing time).

    A row's cleanup time is max(time + size + minCleanUp + lateness + 1, the
    cleanup timer pending for its side when it was cached): Flink keeps one
    timer per key and side, so a row that arrives behind that timer waits for it.
    """
    prop = "cleanup_timely"
    require(not is_empty_window(scenario), prop, "models the interval join operator; an empty window has none "
            "(properties/empty_window.py checks it)")
    require(scenario.config.semantics == "correct", prop, "needs semantics=correct")
    s = _pos_scenario(scenario)
    model = model_of(s)
    clock_name = "watermark" if s.join.interval.time == "event" else "processing time"  # type: ignore[union-attr]
    rt = LocalRuntime(s)
    outputs: list[list] = []
    for i, event in enumerate(s.events):
        outputs.append(rt.process_event(event))
        clock = model.clocks[i]
        for side, pos in sorted(stored_positions(rt)):
            deadline = model.deadlines.get((side, pos))
            if deadline is None or (clock is not None and clock >= deadline):
                _fail(prop, scenario, f"after event {i} the record at position {pos} is still cached at "
                      f"{clock_name} {clock}; its cleanup time is {deadline}", event_index=i, emitted=outputs)


def output_watermarks(scenario: Scenario) -> None:
    """Output watermarks: min(input watermarks) - (max(-L, U) + lateness), emitted after that watermark's
    timers and only when it rises; no joined row of non-late records is emitted behind one (event time)."""
    prop = "output_watermarks"
    require(not is_empty_window(scenario), prop, "models the interval join operator; an empty window has none "
            "(properties/empty_window.py checks it)")
    s = with_positions(scenario)
    iv = s.join.interval
    assert iv is not None
    event_time = iv.time == "event"
    delay = max(-iv.lower_ms, iv.upper_ms) + iv.allowed_lateness_ms if event_time else 0
    model = model_of(s)
    lw, _ = _widths(s)
    wms: dict[str, int] = {}
    idle: set[str] = set()
    combined: int | None = None
    emitted: int | None = None
    fed = sources_of(s)  # a stream's watermark (or idleness) reaches every input that reads it
    rt = LocalRuntime(s)
    outputs: list[list] = []
    for i, event in enumerate(s.events):
        out = rt.process_event(event)
        outputs.append(out)
        want: list[int] = []
        if isinstance(event, (WatermarkEvent, IdleEvent)) and event.input in fed:
            for reader in fed[event.input]:
                if isinstance(event, WatermarkEvent):
                    idle.discard(reader)
                    wms[reader] = max(wms.get(reader, event.watermark), event.watermark)
                else:
                    idle.add(reader)
            active = [n for n in s.join.inputs if n not in idle]
            if active and all(n in wms for n in active):
                low = min(wms[n] for n in active)   # the MIN of the inputs that are not idle
                if combined is None or low > combined:
                    combined = low
                    want = [low - delay]
        elif isinstance(event, ChangeEvent):
            idle.difference_update(fed.get(event.input, ()))
        got = [item.watermark for item in out if isinstance(item, OutputWatermark)]
        if got != want:
            _fail(prop, scenario, f"event {i}: output watermarks {got}, expected {want} (combined input "
                  f"watermark {combined}, delay {delay})", event_index=i, emitted=outputs)
        if want and not isinstance(out[-1], OutputWatermark):
            _fail(prop, scenario, f"event {i}: the output watermark is not emitted after the timers' output",
                  event_index=i, emitted=outputs)
        for item in out:
            if isinstance(item, OutputWatermark):
                emitted = item.watermark
                continue
            lpos, rpos = item.row[lw - 1], item.row[-1]
            if not event_time or emitted is None or lpos is None or rpos is None or {lpos, rpos} & model.late:
                continue
            if min(model.records[lpos][1], model.records[rpos][1]) <= emitted:
                _fail(prop, scenario, f"event {i}: joined row {list(item.row)} of non-late records is behind "
                      f"the output watermark {emitted}", event_index=i, emitted=outputs)


def disorder_invariance(scenario: Scenario) -> None:
    """A stream with disorder but no late record gives the same answer as its records in time order."""
    prop = "disorder_invariance"
    iv = scenario.join.interval
    require(iv is not None and iv.time == "event", prop, "needs an event-time interval join")
    s = with_positions(scenario)
    model = model_of(s)
    require(not model.late, prop, f"records at positions {sorted(model.late)} are late")
    records = sorted((time, pos) for pos, (_, time) in model.records.items())
    events: list[Event] = []
    for n, (time, pos) in enumerate(records):
        events.append(s.events[pos])
        if n + 1 == len(records) or records[n + 1][0] != time:
            events.extend(WatermarkEvent(name, time - 1) for name in sources_of(s))
    ordered = with_final(s.with_events(events))
    original = with_final(s)
    got = Counter(c.row for c in LocalRuntime(original).run().changes)
    want = Counter(c.row for c in LocalRuntime(ordered).run().changes)
    if got != want:
        _fail(prop, scenario, "the disordered stream and the same records in time order (each followed by "
              "watermark time - 1) give different answers; rows end with the records' positions",
              event_index=len(original.events) - 1, engine=got, expected=want)


def one_source_order_invariance(scenario: Scenario) -> None:
    """An event-time stream both inputs read (a self-join) with no late record: the engine, which hands each record
    to the left input first, emits and caches at every event what the step model does handing it to the right
    first. (In processing time both copies of a record arrive at one time, so a window closed on one side decides
    whether they meet: the order matters there.)

    Flink's join task reads its two inputs in whichever order their buffers arrive, so a faithful model may pick
    either; this is where the pick cannot change the answer (docs/interval-joins.md "One source, both inputs")."""
    prop = "one_source_order_invariance"
    require(any(spec.source is not None for spec in scenario.chain), prop, "needs one stream read by both inputs")
    require(scenario.join.interval is not None and scenario.join.interval.time == "event", prop,
            "needs event time (in processing time the order decides whether a record meets its own other copy)")
    require(not is_empty_window(scenario), prop, "models the interval join operator; an empty window has none")
    s = _pos_scenario(scenario)
    model = model_of(s)
    require(not model.late, prop, f"records at positions {sorted(model.late)} are late (their answer depends on "
            f"which input takes them first)")
    other = IntervalJoinModel(s, right_first=True).run()
    rt = LocalRuntime(s)
    outputs: list[list] = []
    for i, event in enumerate(s.events):
        outputs.append(rt.process_event(event))
        got = items_of(s, outputs[-1])
        if got != other.per_event[i] or stored_positions(rt) != other.stored[i]:
            _fail(prop, scenario, f"event {i}: the engine (left input first) emitted {_show(got)} and caches "
                  f"{sorted(stored_positions(rt))}; the step model with the right input first emitted "
                  f"{_show(other.per_event[i])} and caches {sorted(other.stored[i])}", event_index=i,
                  emitted=outputs)


def _show(bag: Counter) -> str:
    return "[" + ", ".join(f"{it}" + (f"x{n}" if n > 1 else "") for it, n in sorted(bag.items(), key=repr)) + "]"


# ---------------------------------------------------------------- replay


def applicable(scenario: Scenario) -> list[tuple[str, Callable[[Scenario], None]]]:
    """The properties that decide an interval-join scenario file with no written expectations."""
    if is_empty_window(scenario):  # no join operator to model: Flink's maps (properties/empty_window.py)
        return [("empty_window_matches_flink", empty_window_matches_flink),
                ("empty_window_equals_oracle", empty_window_equals_oracle),
                ("pairs_and_padding_once", pairs_and_padding_once),
                ("state_empty_after_final", state_empty_after_final)]
    props: list[tuple[str, Callable[[Scenario], None]]] = [
        ("matches_step_model", matches_step_model),
        ("pairs_and_padding_once", pairs_and_padding_once),
        ("state_empty_after_final", state_empty_after_final),
        ("output_watermarks", output_watermarks),
    ]
    if scenario.config.semantics == "correct":
        props += [("late_records_bounded", late_records_bounded), ("cleanup_timely", cleanup_timely)]
    model = model_of(_pos_scenario(scenario))
    if why_not_exact(scenario, model) is None:
        props.append(("no_late_equals_oracle", no_late_equals_oracle))
    if not model.late and scenario.join.interval is not None and scenario.join.interval.time == "event":
        props.append(("disorder_invariance", disorder_invariance))
    if not model.late and any(spec.source is not None for spec in scenario.chain) \
            and scenario.join.interval is not None and scenario.join.interval.time == "event":
        props.append(("one_source_order_invariance", one_source_order_invariance))
    return props
