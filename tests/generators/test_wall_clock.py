"""TTL cases laid on a wall clock (generators/wall_clock.py): each instant one run, no advance longer than the TTL,
the decisions of converge's TTL model unchanged by the shortened advances; and same_shape's fresh streams of a
TTL template laid out the same way."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from converge.engine.model.errors import ApiMisuseError
from converge.engine.model.scenario import ChangeEvent, Config, InputSpec, JoinSpec, ProcessingTimeEvent, Scenario
from converge.generators.scenarios import regular_join_scenarios
from converge.generators.shapes import same_shape
from converge.generators.wall_clock import MAX_OPS, on_wall_clock, wall_clock_cases
from converge.properties.ttl_model import TtlJoinModel

COLUMNS = (("k", "BIGINT"), ("x", "BIGINT"))


def scenario(events: list, ttl: int | None = 2) -> Scenario:
    inputs = (InputSpec("a", COLUMNS, None, "insert_only"), InputSpec("b", COLUMNS, None, "insert_only"))
    return Scenario(name="hand", inputs=inputs, join=JoinSpec(("a", "b"), ("left",), ("a.k = b.k",)),
                    config=Config(state_ttl_ms=ttl), events=tuple(events))


def a(k: int) -> ChangeEvent:
    return ChangeEvent("a", "+I", (k, 0))


def b(k: int) -> ChangeEvent:
    return ChangeEvent("b", "+I", (k, 0))


def test_a_change_of_input_within_an_instant_gets_the_next_logical_ms():
    laid = on_wall_clock(scenario([a(1), a(2), b(1), a(3), ProcessingTimeEvent(5), b(2)]))
    assert laid.events == (a(1), a(2), ProcessingTimeEvent(1), b(1), ProcessingTimeEvent(2), a(3),
                           ProcessingTimeEvent(4), b(2))


def test_an_advance_longer_than_the_ttl_is_the_ttl_and_an_empty_one_goes():
    laid = on_wall_clock(scenario([a(1), ProcessingTimeEvent(0), ProcessingTimeEvent(9), a(2),
                                   ProcessingTimeEvent(10), a(3)], ttl=3))
    assert laid.events == (a(1), ProcessingTimeEvent(3), a(2), ProcessingTimeEvent(4), a(3))


def test_a_scenario_without_one_ttl_is_refused():
    with pytest.raises(ApiMisuseError, match="no single TTL"):
        on_wall_clock(scenario([a(1)], ttl=None))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(regular_join_scenarios(ttl="short", modes=("insert_only", "retract")))
def test_shortened_advances_keep_every_expiry_decision(drawn: Scenario):
    """Shortening an advance to the TTL never changes the TTL model's answer; only the run splits can."""
    changes = [e for e in drawn.events if isinstance(e, ChangeEvent)]
    ttl = drawn.config.state_ttl_ms
    assert isinstance(ttl, int)
    clamped = []
    before = now = 0
    for event in drawn.events:  # the advances shortened alone, no run split
        if isinstance(event, ProcessingTimeEvent):
            now += min(event.processing_time - before, ttl)
            before = event.processing_time
            clamped.append(ProcessingTimeEvent(now))
        else:
            clamped.append(event)
    short = drawn.with_events(clamped)
    assert TtlJoinModel(drawn).run(drawn) == TtlJoinModel(short).run(short)  # after every event
    laid = on_wall_clock(drawn)
    assert [e for e in laid.events if isinstance(e, ChangeEvent)] == changes
    _assert_on_wall_clock(laid)


def _assert_on_wall_clock(laid: Scenario) -> None:
    ttl = laid.config.state_ttl_ms
    assert isinstance(ttl, int)
    now, run, last = 0, None, 0
    for event in laid.events:
        if isinstance(event, ProcessingTimeEvent):
            assert 1 <= event.processing_time - last <= ttl
            last, run = event.processing_time, None
        elif isinstance(event, ChangeEvent):
            assert run in (None, event.input), f"two inputs at instant {now}"
            run = event.input


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(wall_clock_cases(regular_join_scenarios(ttl="short", max_ops=MAX_OPS)).flatmap(
    lambda template: same_shape(template).map(lambda more: (template, more))))
def test_more_cases_of_a_ttl_shape_are_laid_on_the_wall_clock_too(pair):
    template, more = pair
    assert (more.inputs, more.join, more.config) == (template.inputs, template.join, template.config)
    assert sum(isinstance(e, ChangeEvent) for e in more.events) <= 2 * MAX_OPS  # an update is two changes
    _assert_on_wall_clock(more)
