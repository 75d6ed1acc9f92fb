"""Fuzzing the runtime with damaged event streams: typed errors only, rejected events leave no trace, no hang.

A valid changelog from the project's generators (every plan shape: binary
regular joins of each type, upsert inputs behind ChangelogNormalize, chains
with multi_join on and off, event- and processing-time interval joins, and
residuals that can divide by zero or overflow) is interleaved with damaged
events: kinds the input's mode does not accept, retractions of rows never
inserted, rows of the wrong arity or type, NaN / infinities, integers out of
range, NULL time attributes, processing time going backwards, watermarks and
idle markers on inputs that are not joined or do not exist.

For every event the runtime either accepts it or raises a ConvergeError; after
a rejection its snapshot (state, timers, clocks, watermarks) and its
operators' own fields equal exactly what they were before (only the
position moves past the refused event), and at the end a
fresh runtime fed only the accepted events emits exactly what this one did
(so nothing of a rejected event leaks into later output either). A SIGALRM
deadline turns a hang into a failure instead of a stuck suite.
"""

from __future__ import annotations

import copy
import math
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from converge.engine.model.errors import ConvergeError
from converge.engine.model.scenario import (
    ChangeEvent,
    Event,
    IdleEvent,
    InputSpec,
    ProcessingTimeEvent,
    Scenario,
    WatermarkEvent,
)
from converge.engine.runtime.local import LocalRuntime
from converge.generators.interval import interval_join_scenarios
from converge.generators.multiway import multiway_scenarios
from converge.generators.scenarios import regular_join_scenarios
from tests.conftest import examples
from tests.fuzz.outcomes import no_hang

RISKY_RESIDUALS = ("a.x // b.y > 0", "a.x * 4611686018427387904 > b.y", "a.x % b.y = 0", None)
NOT_JOINED = InputSpec("spare", (("k", "BIGINT"), ("z", "BIGINT")), None, "retract")


def _with_risky_last_condition(scenario: Scenario) -> Scenario:
    """A chain whose last join divides by a column of its new input (zero is a drawn value)."""
    last = scenario.join.inputs[-1]
    conditions = scenario.join.conditions[:-1] + (f"({scenario.join.conditions[-1]}) AND 10 // {last}.v >= 0",)
    return replace(scenario, join=replace(scenario.join, conditions=conditions))


def _with_spare_input(scenario: Scenario) -> Scenario:
    """The scenario with one more declared input that the join does not use."""
    return replace(scenario, inputs=scenario.inputs + (NOT_JOINED,))


SHAPES = st.one_of(
    regular_join_scenarios(residuals=RISKY_RESIDUALS, max_ops=16),
    regular_join_scenarios(modes=("upsert",), uk_shapes=("own", "join_key"), residuals=RISKY_RESIDUALS,
                           max_ops=16),
    regular_join_scenarios(ttl="short", residuals=RISKY_RESIDUALS, max_ops=16),
    regular_join_scenarios(semantics="flink", max_ops=16),
    multiway_scenarios(multi_join="on", max_ops=16).map(_with_risky_last_condition),
    multiway_scenarios(multi_join="off", join_types=("inner", "left", "right", "full", "semi", "anti"),
                       max_ops=16).map(_with_risky_last_condition),
    interval_join_scenarios(late_share=(0, 40), max_steps=16),
    interval_join_scenarios(time="processing", late_share=(0, 30), max_steps=16),
    interval_join_scenarios(semantics=("flink",), negative_times=True, max_steps=16),
).map(_with_spare_input)

EXTREME = st.sampled_from([0, -1, 2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 10**400, math.nan, math.inf,
                           -math.inf, 1e308, "", "\x00", "x" * 50, True, None, 1.5, [1], {"a": 1}])


@st.composite
def damaged_event(draw, scenario: Scenario) -> Event:
    """One event that may be wrong in any of the ways the module docstring lists."""
    names = [s.name for s in scenario.inputs]
    valid_rows = [e for e in scenario.events if isinstance(e, ChangeEvent)]
    how = draw(st.sampled_from(("kind", "retract", "arity", "value", "time", "watermark", "idle")))
    if how == "time":
        return ProcessingTimeEvent(draw(st.integers(-(2**63), 2**63)))
    if how == "watermark":
        return WatermarkEvent(draw(st.sampled_from(names + ["spare", "nowhere"])), draw(st.integers(-5, 50)))
    if how == "idle":
        return IdleEvent(draw(st.sampled_from(names + ["nowhere"])))
    if valid_rows:
        base = draw(st.sampled_from(valid_rows))
        name, row = base.input, tuple(base.row)
    else:
        name = draw(st.sampled_from(names))
        row = tuple(0 for _ in scenario.input(name).columns)
    kind = draw(st.sampled_from(("+I", "-U", "+U", "-D")))
    if how == "arity":
        row = row[:-1] if row and draw(st.booleans()) else row + (0,)
    elif how in ("value", "retract") and row:
        i = draw(st.integers(0, len(row) - 1))
        row = row[:i] + (draw(EXTREME) if how == "value" else draw(st.integers(-3, 3)),) + row[i + 1:]
    if how == "retract":
        kind = draw(st.sampled_from(("-U", "-D")))
    return ChangeEvent(name, kind, row)


@st.composite
def damaged_streams(draw) -> tuple[Scenario, list[Event]]:
    scenario = draw(SHAPES)
    events = list(scenario.events)
    for _ in range(draw(st.integers(1, 6))):
        events.insert(draw(st.integers(0, len(events))), draw(damaged_event(scenario)))
    return scenario, events


def _volatile(rt: LocalRuntime) -> list:
    return [rt_node.operator.volatile_state() for rt_node, _ in rt.node_backends()]


def check_stream(scenario: Scenario, events: list[Event]) -> tuple[int, int]:
    """Run `events`; returns (accepted, rejected) after checking the module docstring's claims."""
    try:
        rt = LocalRuntime(scenario)
    except ConvergeError:
        return 0, 0          # the damaged scenario is refused as a whole: fine
    accepted: list[Event] = []
    output: list = []
    rejected = 0
    with no_hang(60):  # fail instead of hanging the suite
        for event in events:
            before = copy.deepcopy(rt.snapshot())
            fields = copy.deepcopy(_volatile(rt))
            try:
                out = rt.process_event(event)
            except ConvergeError:
                rejected += 1
                assert rt.snapshot() == {**before, "event_index": before["event_index"] + 1}, (  # only the position
                    f"{event!r} was rejected but changed state, timers or clocks")
                assert _volatile(rt) == fields, f"{event!r} was rejected but changed an operator's own fields"
                continue
            accepted.append(event)
            output.append(out)
        replayed = LocalRuntime(scenario)
        again = [replayed.process_event(e) for e in accepted]
    assert again == output, "a rejected event changed the output of later events"
    return len(accepted), rejected


def _fuzz(count: int) -> settings:
    return settings(max_examples=count, deadline=None, suppress_health_check=list(HealthCheck), database=None)


@_fuzz(examples(60))
@given(damaged_streams())
def test_damaged_streams_raise_typed_errors_and_leave_no_trace(stream) -> None:
    check_stream(*stream)


@pytest.mark.slow
@_fuzz(examples(3000))
@given(damaged_streams())
def test_damaged_streams_long_run(stream) -> None:
    check_stream(*stream)
