"""Interval joins of a table with itself: one stream feeding both inputs (`source`), as Flink's reused scan does.

`SELECT * FROM e x JOIN e y ON x.k = y.k AND x.ts BETWEEN y.ts - INTERVAL '2' SECOND AND y.ts` is the
form users write (an event followed by events of its key within N seconds). The streams are those of
`interval_join_scenarios`, read as one: every record, watermark and idle marker of `a` or `b` becomes one
of the stream `t`, which both `a` and `b` read, and `b`'s value column is `a`'s (`b.y` is `b.x`). So the
bound-aimed times of the two-input generator (a record exactly on, or one millisecond outside, a window
bound of an earlier record) become pairs of one stream on a bound in either role. With
`above_every_watermark` every non-late record lies above every watermark sent before it on either
input, so above the one stream's watermark too: a stream drawn without late records keeps that promise
(a processing-time one gets a millisecond per record, `apart`; a record whose window holds its own time is
still late when its left copy is not cached, L >= 0: the right copy then misses it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from hypothesis import strategies as st

from converge.engine.model.scenario import (
    ChangeEvent,
    Event,
    IdleEvent,
    ProcessingTimeEvent,
    Scenario,
    TimeMode,
    WatermarkEvent,
)
from converge.generators.interval import BOUND_SHAPES, JOIN_TYPES, interval_join_scenarios

__all__ = ["STREAM", "apart", "one_source_interval", "self_interval_join_scenarios"]

STREAM = "t"


def one_source_interval(scenario: Scenario) -> Scenario:
    """An interval join of `a` and `b` (interval_join_scenarios) as the join of one stream `t` with itself."""
    a = scenario.input("a")
    stream = replace(a, name=STREAM)
    readers = tuple(replace(a, name=name, source=STREAM) for name in ("a", "b"))
    events: list[Event] = []
    for e in scenario.events:
        if isinstance(e, (ChangeEvent, WatermarkEvent, IdleEvent)) and e.input in ("a", "b"):
            e = replace(e, input=STREAM)
        events.append(e)
    join = replace(scenario.join, conditions=tuple(re.sub(r"\bb\.y\b", "b.x", c) for c in scenario.join.conditions))
    return replace(scenario, inputs=(stream, *readers), join=join, events=tuple(events),
                   name=scenario.name + " of one source")


def self_interval_join_scenarios(*, time: TimeMode = "event", join_types: Sequence[str] = JOIN_TYPES,
                                 late_share: tuple[int, int] = (0, 0), semantics: Sequence[str] = ("correct",),
                                 negative_times: bool = False, bounds: Sequence[tuple[int, int]] | None = None,
                                 max_steps: int = 30) -> st.SearchStrategy[Scenario]:
    """interval_join_scenarios(...) as a self-join (`one_source_interval`); event-time streams are drawn above
    every watermark, so that `late_share` (0, 0) gives no late record on the one stream either."""
    if time == "processing" and late_share == (0, 0):
        # with L = 0 <= U a row's left copy is not cached and its right copy misses it: late whatever the schedule
        bounds = tuple(b for b in (bounds or BOUND_SHAPES) if not b[0] == 0 <= b[1])
    drawn = interval_join_scenarios(time=time, join_types=join_types, late_share=late_share,
                                    semantics=semantics, negative_times=negative_times, bounds=bounds,
                                    max_steps=max_steps,
                                    above_every_watermark=time == "event")
    if time == "processing" and late_share == (0, 0):
        return drawn.map(lambda s: one_source_interval(apart(s)))
    return drawn.map(one_source_interval)


def apart(scenario: Scenario) -> Scenario:
    """A processing-time stream with each record in a millisecond of its own (the clock moved on by one, and every
    later time with it): two records of one stream in one millisecond would be a late pair in a self-join, whose
    second record's copies arrive after the first's (properties/interval_model.py)."""
    out: list[Event] = []
    shift, taken = 0, False
    now = 0
    for e in scenario.events:
        if isinstance(e, ProcessingTimeEvent):
            now, taken = e.processing_time + shift, False
            out.append(replace(e, processing_time=now))
            continue
        if isinstance(e, ChangeEvent):
            if taken:
                shift, now = shift + 1, now + 1
                out.append(ProcessingTimeEvent(now))
            taken = True
        out.append(e)
    return scenario.with_events(out)
