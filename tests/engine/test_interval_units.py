"""Unit checks of the interval join's parts: cache key order, the batch oracle, the step model, the generators."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings

from converge.engine.model.scenario import (
    ChangeEvent,
    Config,
    InputSpec,
    IntervalSpec,
    JoinSpec,
    ProcessingTimeEvent,
    Scenario,
    WatermarkEvent,
)
from converge.engine.operators.interval_join import MAX_TIME, cache_map_key, cache_time
from converge.generators.interval import interval_join_scenarios
from converge.oracle.interval import batch_interval_join, interval_records
from converge.properties.interval import model_of, with_final, with_positions
from tests.conftest import examples

A = InputSpec("a", (("k", "BIGINT"), ("t", "BIGINT")), None, "insert_only", "t")
B = InputSpec("b", (("k", "BIGINT"), ("t", "BIGINT")), None, "insert_only", "t")


def _scenario(events, lower=-2, upper=3, jtype="inner", time="event", cond="a.k = b.k") -> Scenario:
    iv = IntervalSpec("a.t" if time == "event" else None, "b.t" if time == "event" else None, lower, upper, time)
    return Scenario("unit", (A, B), JoinSpec(("a", "b"), (jtype,), (cond,), iv), Config(), tuple(events))


def test_cache_keys_iterate_like_rocksdb_longs() -> None:
    """Big-endian two's complement: 0 .. MAX, then MIN .. -1."""
    times = [-1, 256, 0, -(2**63), 1, MAX_TIME, -256]
    assert sorted(times, key=cache_map_key) == [0, 1, 256, MAX_TIME, -(2**63), -256, -1]
    assert [cache_time(cache_map_key(t)) for t in times] == times


def test_oracle_bounds_are_inclusive() -> None:
    # a.t BETWEEN b.t - 2 AND b.t + 3, b@10: a@8 and a@13 match, a@7 and a@14 do not
    events = [ChangeEvent("b", "+I", (1, 10))] + [ChangeEvent("a", "+I", (1, t)) for t in (7, 8, 13, 14)]
    got = batch_interval_join(_scenario(events))
    assert got == Counter({(1, 8, 1, 10): 1, (1, 13, 1, 10): 1})
    full = batch_interval_join(_scenario(events, jtype="full"))
    assert full == Counter({(1, 8, 1, 10): 1, (1, 13, 1, 10): 1, (1, 7, None, None): 1, (1, 14, None, None): 1})


def test_oracle_include_and_null_keys() -> None:
    events = [ChangeEvent("b", "+I", (1, 10)), ChangeEvent("a", "+I", (1, 10)), ChangeEvent("a", "+I", (None, 10)),
              ChangeEvent("b", "+I", (None, 10))]
    assert batch_interval_join(_scenario(events), {1, 2, 3}) == Counter()
    assert batch_interval_join(_scenario(events, jtype="left"), {1, 2}) == Counter(
        {(1, 10, None, None): 1, (None, 10, None, None): 1})
    null_safe = _scenario(events, cond="a.k IS NOT DISTINCT FROM b.k")
    assert batch_interval_join(null_safe) == Counter({(1, 10, 1, 10): 1, (None, 10, None, 10): 1})


def test_oracle_processing_time_is_the_arrival_time_and_no_overflow() -> None:
    events = [ProcessingTimeEvent(5), ChangeEvent("a", "+I", (1, 0)), ProcessingTimeEvent(9),
              ChangeEvent("b", "+I", (1, 0))]
    s = _scenario(events, lower=-4, upper=0, time="processing")
    assert [(p, t) for p, t, _ in interval_records(s)["a"]] == [(1, 5)]
    assert batch_interval_join(s) == Counter({(1, 0, 1, 0): 1})        # 5 BETWEEN 9 - 4 AND 9 + 0
    assert batch_interval_join(_scenario(events, lower=-3, upper=0, time="processing")) == Counter()
    huge = [ChangeEvent("a", "+I", (1, MAX_TIME)), ChangeEvent("b", "+I", (1, MAX_TIME))]
    assert batch_interval_join(_scenario(huge, lower=0, upper=5)) == Counter({(1, MAX_TIME, 1, MAX_TIME): 1})


def test_model_classifies_late_records() -> None:
    # event time: late when time <= max(combined watermark, 0) at arrival
    events = [ChangeEvent("a", "+I", (1, 0)), ChangeEvent("a", "+I", (1, 1)), WatermarkEvent("a", 10),
              ChangeEvent("b", "+I", (1, 5)), WatermarkEvent("b", 10), ChangeEvent("b", "+I", (1, 10)),
              ChangeEvent("a", "+I", (1, 11))]
    assert model_of(_scenario(events)).late == {0, 5}
    # processing time: late when an earlier record of the other input arrived at the same processing time
    proc = [ChangeEvent("a", "+I", (1, 0)), ChangeEvent("a", "+I", (1, 0)), ChangeEvent("b", "+I", (1, 0)),
            ProcessingTimeEvent(3), ChangeEvent("b", "+I", (1, 0)), ChangeEvent("a", "+I", (1, 0))]
    assert model_of(_scenario(proc, time="processing")).late == {2, 5}


def test_with_positions_and_final() -> None:
    s = with_positions(with_final(_scenario([ChangeEvent("a", "+I", (1, 2))])))
    assert s.chain[0].column_names == ("k", "t", "__pos")
    assert s.events[0].row == (1, 2, 0)
    assert [e.watermark for e in s.events[1:]] == [MAX_TIME, MAX_TIME]


_SETTINGS = settings(max_examples=examples(60), deadline=None, database=None,
                     suppress_health_check=list(HealthCheck))


@_SETTINGS
@given(interval_join_scenarios(strategies=("bounded", "creep", "jumps", "idle")))
def test_generator_without_late_share_makes_no_late_record(scenario: Scenario) -> None:
    assert model_of(scenario).late == set()


@_SETTINGS
@given(interval_join_scenarios(time="processing"))
def test_processing_time_generator_without_late_share_has_no_ties(scenario: Scenario) -> None:
    assert model_of(scenario).late == set()


@_SETTINGS
@given(interval_join_scenarios(late_share=(100, 100)))
def test_late_records_have_positive_times_unless_asked(scenario: Scenario) -> None:
    assert all(time >= 1 for _, time in model_of(scenario).records.values())


def test_late_share_draws_late_records() -> None:
    seen = Counter()

    @settings(max_examples=30, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(interval_join_scenarios(late_share=(50, 50), negative_times=True))
    def run(scenario: Scenario) -> None:
        model = model_of(scenario)
        seen["late"] += len(model.late)
        seen["records"] += len(model.records)
        seen["negative"] += sum(1 for _, t in model.records.values() if t <= 0)

    run()
    assert seen["late"] > seen["records"] // 5
    assert seen["negative"] > 0
