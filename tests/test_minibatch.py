"""The mini-batch join: bundle folds by hand, triggers, bad input at its own event, snapshots, planners, mutants."""

from __future__ import annotations

from dataclasses import replace

import pytest

from converge.engine.changelog import Change
from converge.engine.errors import BadInputError
from converge.engine.operators.bundle_fold import fold_no_unique_key, fold_unique_key
from converge.engine.planner import plan
from converge.engine.runtime.local import LocalRuntime, run_scenario
from converge.engine.scenario import ChangeEvent, Config, InputSpec, JoinSpec, ProcessingTimeEvent, Scenario
from converge.engine.scenario_json import scenario_from_dict, scenario_to_dict
from converge.reports.tooling.mutant_catalog import by_name
from converge.reports.tooling.mutants import run_mutant

I, UB, UA, D = "+I", "-U", "+U", "-D"


def ch(kind: str, v: int) -> Change:
    return Change(kind, (1, v))


@pytest.mark.parametrize("records, flink, correct", [
    ([ch(I, 1), ch(UB, 1), ch(UA, 2)], [ch(UA, 2)], [ch(I, 2)]),           # FLINK-34380
    ([ch(I, 1), ch(UA, 2)], [ch(UA, 2)], [ch(I, 2)]),
    ([ch(UA, 1), ch(UA, 2)], [ch(UA, 2)], [ch(UA, 2)]),
    ([ch(UB, 1), ch(UA, 2)], [ch(UB, 1), ch(UA, 2)], [ch(UB, 1), ch(UA, 2)]),
    ([ch(UB, 1), ch(UA, 2), ch(UB, 2), ch(UA, 3)], [ch(UB, 1), ch(UA, 3)], [ch(UB, 1), ch(UA, 3)]),
    ([ch(UB, 1), ch(D, 1)], [ch(D, 1)], [ch(D, 1)]),
    ([ch(I, 1), ch(D, 1)], [], []),
    ([ch(I, 1), ch(D, 1), ch(I, 3)], [ch(I, 3)], [ch(I, 3)]),
])
def test_unique_key_fold(records, flink, correct) -> None:
    assert fold_unique_key(records, "flink") == flink
    assert fold_unique_key(records, "correct") == correct


def test_no_unique_key_fold_cancels_equal_rows_of_opposite_direction_only() -> None:
    assert fold_no_unique_key([ch(I, 1), ch(I, 1), ch(D, 1), ch(I, 2), ch(UB, 3)]) == [ch(I, 1), ch(I, 2), ch(UB, 3)]
    assert fold_no_unique_key([ch(UB, 1), ch(UA, 1)]) == []
    assert fold_no_unique_key([ch(I, 1), ch(D, 2)]) == [ch(I, 1), ch(D, 2)]


A = InputSpec("a", (("k", "BIGINT"), ("v", "BIGINT")), ("k",), "retract")
B = InputSpec("b", (("k", "BIGINT"), ("w", "BIGINT")), None, "insert_only")


def scenario(jtype: str = "left", **config) -> Scenario:
    events = (ChangeEvent("b", "+I", (1, 10)), ChangeEvent("a", "+I", (1, 1)), ChangeEvent("a", "-U", (1, 1)),
              ChangeEvent("a", "+U", (1, 2)), ChangeEvent("a", "+I", (2, 5)))
    return Scenario("t", (A, B), JoinSpec(("a", "b"), (jtype,), ("a.k = b.k",)), Config(**config), events)


def test_count_trigger_flushes_after_n_elements_and_the_end_flushes_the_rest() -> None:
    out = run_scenario(scenario(mini_batch_size=2)).per_event
    assert [len(x) for x in out[:4]] == [0, 1, 0, 2]
    # b's row is in state when a's +I arrives in the same bundle: joined, never padded
    assert out[1] == [Change("+I", (1, 1, 1, 10))]
    assert out[3] == [Change("-D", (1, 1, 1, 10)), Change("+I", (1, 2, 1, 10))]    # the -U/+U pair
    assert out[4] == [Change("+I", (2, 5, None, None))]      # event 4 alone: flushed at the end of the input


def test_latency_trigger_flushes_when_processing_time_crosses_a_multiple() -> None:
    s = scenario(mini_batch_size=100, mini_batch_latency_ms=10)
    s = s.with_events(s.events[:2] + (ProcessingTimeEvent(9), ProcessingTimeEvent(10)))
    out = LocalRuntime(s).run().per_event
    assert out[2] == [] and out[3] == [Change("+I", (1, 1, 1, 10))]


def test_a_bad_retraction_is_rejected_at_its_own_event_and_the_bundle_survives() -> None:
    s = scenario(mini_batch_size=10)
    rt = LocalRuntime(s)
    rt.process_event(ChangeEvent("a", "+I", (1, 1)))
    with pytest.raises(BadInputError) as err:
        rt.process_event(ChangeEvent("a", "-U", (1, 7)))
    assert err.value.event_index == 1
    rt.process_event(ChangeEvent("a", "-U", (1, 1)))          # the buffered +I is still there to retract
    assert rt.finish() == []


def test_snapshot_with_a_partly_filled_bundle_restores_it() -> None:
    s = scenario(mini_batch_size=4)
    first = LocalRuntime(s)
    for e in s.events[:3]:
        first.process_event(e)
    second = LocalRuntime(s)
    second.restore(first.snapshot())
    assert second.process_event(s.events[3]) == [Change("+I", (1, 2, 1, 10))]


def test_config_is_typed_validated_and_written_back() -> None:
    with pytest.raises(BadInputError, match="mini_batch_size"):
        Config(mini_batch_size=0)
    with pytest.raises(BadInputError, match="mini_batch_latency_ms"):
        Config(mini_batch_latency_ms=5)
    s = scenario(mini_batch_size=3, mini_batch_latency_ms=7)
    again = scenario_from_dict(scenario_to_dict(s))
    assert again.config.mini_batch_size == 3 and again.config.mini_batch_latency_ms == 7


def test_binary_and_multiway_fallback_plans_use_the_minibatch_operator() -> None:
    assert "MiniBatchJoin" in plan(scenario(mini_batch_size=3)).explain()
    fallback = replace(scenario(mini_batch_size=3), config=Config(mini_batch_size=3, multi_join="on"))
    assert "MiniBatchJoin" in plan(fallback).explain()       # two inputs: below multi_join_min_tables
    assert "MiniBatchJoin" not in plan(scenario(jtype="inner")).explain()


@pytest.mark.parametrize("name", ["bundle_keeps_retraction_of_cancelled_insert", "bundle_cancels_unequal_rows",
                                  "bundle_cancels_equal_inserts", "bundle_pair_padding_not_netted"])
def test_broken_bundle_folds_are_killed_with_a_shrunk_counterexample(name: str) -> None:
    outcome = run_mutant(by_name(name)[0], examples=150, seed=1)
    assert outcome.status == "killed", outcome
    assert outcome.killed_by and 1 <= outcome.shrunk_events <= 8
