"""The agreement measurement's mini-batch and interval families without Java: what their generators draw, that the
Flink adapter plans them as drawn, and the order the model gives them, worked out by hand.

The interval join's order at the end of input follows TimeIntervalJoin (flink-table-runtime): the final watermark
(Long.MAX_VALUE) fires each key's two cleanup timers in timestamp order, and each expires its whole cache in the
MapState's iteration order, padding the outer rows that never joined (removeExpiredRows)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings

from converge.cli.benches import flink_map_order
from converge.engine.model.changelog import Change
from converge.engine.model.scenario import (
    ChangeEvent,
    Config,
    InputSpec,
    IntervalSpec,
    JoinSpec,
    Scenario,
    WatermarkEvent,
)
from converge.engine.model.system_cases import case_to_json
from converge.engine.runtime.local import run_scenario
from converge.generators.map_order import (
    END_OF_INPUT,
    MINIBATCH_SIZE,
    interval_order_scenarios,
    minibatch_order_scenarios,
)
from converge.properties.systems.changelogs import model_events
from converge.properties.systems.order_model import model_per_event
from converge.systems.flink.environment import program_module

A = InputSpec("a", (("k", "BIGINT"), ("t", "BIGINT"), ("x", "BIGINT")), None, "insert_only", "t")
B = InputSpec("b", (("k", "BIGINT"), ("t", "BIGINT"), ("y", "BIGINT")), None, "insert_only", "t")
END = (WatermarkEvent("a", END_OF_INPUT), WatermarkEvent("b", END_OF_INPUT))


def _interval(jtype: str, backend: str, events: tuple, bounds: tuple[int, int] = (0, 16)) -> Scenario:
    return Scenario("unit", (A, B), JoinSpec(("a", "b"), (jtype,), ("a.k = b.k",),
                                             IntervalSpec("a.t", "b.t", bounds[0], bounds[1], "event")),
                    Config(state_backend=backend), events)


def _times(changes: list[Change], at: int) -> list[int]:
    return [c.row[at] for c in changes]


def test_the_final_watermark_pads_the_left_cache_in_the_backends_order() -> None:
    """Three left rows that never join (a.t BETWEEN b.t AND b.t + 16, the right row at 1000), arriving at times 17,
    1, 16. RocksDB iterates the cache's Long keys by their big-endian bytes: 1, 16, 17. The HashMap's buckets
    (Long.hashCode is the time, 16 buckets): 16 in bucket 0, 17 and 1 in bucket 1 in the order they were put: 16,
    17, 1. The left cache's timer (17 + 0 + 1) fires before the right one's (1000 + 16 + 1), so the right row's
    padding (FULL) comes last."""
    events = (ChangeEvent("a", "+I", (1, 17, 0)), ChangeEvent("a", "+I", (1, 1, 1)),
              ChangeEvent("a", "+I", (1, 16, 2)), ChangeEvent("b", "+I", (1, 1000, 0)), *END)
    for backend, order in (("rocksdb", [1, 16, 17]), ("hashmap", [16, 17, 1])):
        per_event = model_per_event(_interval("full", backend, events), 0)
        assert per_event[:5] == [[], [], [], [], []]
        last = per_event[5]
        assert _times(last[:3], 1) == order and all(c.row[3:] == (None, None, None) for c in last[:3]), backend
        assert last[3:] == [Change("+I", (None, None, None, 1, 1000, 0))], backend


def test_one_record_visits_the_other_cache_in_the_backends_order() -> None:
    """A right row at 1 meets the left rows at 17, 1 and 16 (a.t BETWEEN b.t AND b.t + 16) in the cache's order;
    the timers then pad nothing (every row joined, INNER has no padding anyway)."""
    events = (ChangeEvent("a", "+I", (1, 17, 0)), ChangeEvent("a", "+I", (1, 1, 1)),
              ChangeEvent("a", "+I", (1, 16, 2)), ChangeEvent("b", "+I", (1, 1, 5)), *END)
    for backend, order in (("rocksdb", [1, 16, 17]), ("hashmap", [16, 17, 1])):
        per_event = model_per_event(_interval("left", backend, events), 0)
        assert _times(per_event[3], 1) == order, backend
        assert per_event[5] == [], backend


def test_watermarks_below_every_time_change_nothing() -> None:
    """The regime the interval family relies on (generators/map_order.py, INTERVAL_BOUNDS): the adapter's watermark
    (the largest time so far less a delay spanning every time of the job) stays below every time, so the outputs
    are those of a scenario with the end's watermark alone."""
    @settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(interval_order_scenarios())
    def check(scenario: Scenario) -> None:
        rows = [e for e in scenario.events if isinstance(e, ChangeEvent)]
        times = [e.row[1] for e in rows]
        delay = max(times) - min(times) + 1
        seen = {"a": min(times), "b": min(times)}      # the adapter's lead: a dummy row per input at the least time
        paced: list = []
        for event in rows:
            seen[event.input] = max(seen[event.input], event.row[1])
            paced += [event, WatermarkEvent(event.input, seen[event.input] - delay)]
        plain = model_per_event(scenario, 0)
        watermarked = model_per_event(replace(scenario, events=(*paced, *END)), 0)
        assert [c for piece in watermarked for c in piece] == [c for piece in plain for c in piece]
        assert watermarked[1:2 * len(rows):2] == [[]] * len(rows)   # the watermarks emit nothing

    check()


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(interval_order_scenarios())
def test_interval_cases_keep_the_regime_and_meet_two_stored_rows(scenario: Scenario) -> None:
    interval = scenario.join.interval
    assert interval is not None and interval.time == "event"
    assert interval.lower_ms <= 0 <= interval.upper_ms
    assert scenario.events[-2:] == END
    rows = scenario.events[:-2]
    assert all(isinstance(e, ChangeEvent) and e.kind == "+I" and e.row[0] == 1 and e.row[1] >= 1 for e in rows)
    assert len(model_per_event(scenario, 0)[2]) >= 2        # the witness's third record meets both stored rows


@settings(max_examples=30, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(minibatch_order_scenarios())
def test_minibatch_cases_are_modelled_on_the_adapters_rows(scenario: Scenario) -> None:
    assert scenario.config.mini_batch_size == MINIBATCH_SIZE
    assert all(s.changelog_mode == "retract" for s in scenario.inputs)
    assert isinstance(model_events(scenario, "flink", 3, "2.3"), list)


def test_the_adapter_plans_both_families_as_drawn() -> None:
    """No case is refused (a late row, a processing time) and each keeps its operator: an interval join with a
    rowtime per input, a mini-batch of the drawn size."""
    case_plan = program_module("case_plan")
    for family in flink_map_order.GENERATED:
        for scenario in flink_map_order.draw_cases("rocksdb", 8, 1, family=family):
            planned = case_plan.plan(case_to_json("c", scenario))
            if family == flink_map_order.INTERVAL:
                assert planned.shape.interval and "BETWEEN" in planned.shape.select
                assert all(p.time_column == 1 for p in planned.shape.inputs)
            else:
                assert planned.shape.mini_batch is not None and planned.shape.mini_batch[0] == MINIBATCH_SIZE


def test_the_measurement_compares_exact_sequences_for_both_families() -> None:
    """A mini-batch or interval event agrees only with the model's exact output sequence (no stored-row visit to
    read), and the mini-batch model is the one changelog_rowkinds uses (the case id in the rows it hashes)."""
    [mini] = flink_map_order.draw_cases("hashmap", 1, 1, family=flink_map_order.MINIBATCH)
    [interval] = flink_map_order.draw_cases("hashmap", 1, 1, family=flink_map_order.INTERVAL)
    assert flink_map_order.visits_of(mini) is None and flink_map_order.visits_of(interval) is None
    assert flink_map_order.modelled_events(mini, 2, "2.3") == model_events(mini, "flink", 2, "2.3")
    ran = run_scenario(replace(interval, config=replace(interval.config, semantics="flink",
                                                        map_state_order="hashmap")))
    assert flink_map_order.modelled_events(interval, 2, "2.3") == [
        [c for c in items if isinstance(c, Change)] for items in ran.per_event]
