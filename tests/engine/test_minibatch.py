"""The mini-batch join: bundle folds by hand, triggers, bad input at its own event, snapshots, planners, mutants."""

from __future__ import annotations

from dataclasses import replace

import pytest

from converge.cli.mutant_catalog import by_name
from converge.cli.mutants import run_mutant
from converge.engine.model.changelog import Change
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import ChangeEvent, Config, InputSpec, JoinSpec, ProcessingTimeEvent, Scenario
from converge.engine.model.scenario_json import scenario_from_dict, scenario_to_dict
from converge.engine.operators.bundle_fold import fold_no_unique_key, fold_unique_key
from converge.engine.planner import plan
from converge.engine.runtime.local import LocalRuntime, run_scenario

I, UB, UA, D = "+I", "-U", "+U", "-D"  # noqa: E741 - the RowKinds as Flink prints them


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
    outcome = run_mutant(by_name(name)[0], examples=150, seed=2)
    assert outcome.status == "killed", outcome
    assert outcome.killed_by and 1 <= outcome.shrunk_events <= 8


# ---------------------------------------------------------------- bundle ends counted in elements reaching the join

U = InputSpec("u", (("k", "BIGINT"), ("v", "BIGINT")), ("k",), "upsert")


def upsert_scenario(events: tuple, **config) -> Scenario:
    return Scenario("u", (U, B), JoinSpec(("u", "b"), ("left",), ("u.k = b.k",)), Config(**config), events)


def test_join_elements_model_changelog_normalize_by_hand() -> None:
    from converge.properties.minibatch import bundle_ends, join_elements

    events = (ChangeEvent("u", "+I", (1, 1)),      # new key: +I                       1
              ChangeEvent("u", "+U", (1, 2)),      # known key, new row: -U, +U        2
              ChangeEvent("u", "+U", (1, 2)),      # unchanged row: dropped            0
              ChangeEvent("u", "-D", (2, None)),   # unknown key: dropped              0
              ChangeEvent("b", "+I", (1, 10)),     # insert-only input                 1
              ChangeEvent("u", "-D", (1, None)),   # known key: -D of the full image   1
              ChangeEvent("u", "+I", (1, 3)))      # the key is new again              1
    assert join_elements(upsert_scenario(events, mini_batch_size=2)) == [1, 2, 0, 0, 1, 1, 1]
    # with TTL ChangelogNormalize forwards the unchanged row too (-U, +U)
    assert join_elements(upsert_scenario(events, mini_batch_size=2, state_ttl_ms=100)) == [1, 2, 2, 0, 1, 1, 1]
    # totals 1, 3, 3, 3, 4, 5, 6: size 2 ends bundles exactly after events 4 and 6 (event 1 splits one)
    assert bundle_ends(upsert_scenario(events, mini_batch_size=2)) == [4, 6]
    assert bundle_ends(upsert_scenario(events, mini_batch_size=3)) == [1, 6]


def test_the_element_model_agrees_with_the_engine_at_a_split_event() -> None:
    """Size 2: the -U of event 1 fills the first bundle, its +U waits in the next one."""
    events = (ChangeEvent("b", "+I", (1, 10)), ChangeEvent("u", "+I", (1, 1)), ChangeEvent("u", "+U", (1, 2)))
    out = run_scenario(upsert_scenario(events[1:], mini_batch_size=2)).per_event
    assert out == [[], [Change("+I", (1, 2, None, None))]]          # +I then -U cancel; +U flushed at the end
    out = run_scenario(upsert_scenario(events, mini_batch_size=2)).per_event
    assert out[1] == [Change("+I", (1, 1, 1, 10))]                  # b's row and u's +I: one bundle
    assert out[2] == [Change("-D", (1, 1, 1, 10)), Change("+I", (1, 2, 1, 10))]   # -U alone, then +U at the end


def test_raw_upsert_is_refused_by_equals_off_because_a_bundle_keeps_the_replaced_version() -> None:
    """Why raw upsert input is excluded: +U (replacing v=1 without a -U) and -D of one key in one bundle
    cancel, so v=1 stays in the join state; record by record the key is gone."""
    from converge.properties.minibatch import minibatch_equals_off

    events = (ChangeEvent("b", "+I", (1, 10)), ChangeEvent("u", "+I", (1, 1)),
              ChangeEvent("u", "+U", (1, 2)), ChangeEvent("u", "-D", (1, 2)))
    on = upsert_scenario(events, mini_batch_size=2, changelog_normalize=False)
    off = upsert_scenario(events, changelog_normalize=False)
    assert [c for x in run_scenario(on).per_event for c in x] == [Change("+I", (1, 1, 1, 10))]
    assert [c for x in run_scenario(off).per_event for c in x][-1] == Change("-D", (1, 2, 1, 10))
    with pytest.raises(BadInputError, match="raw upsert"):
        minibatch_equals_off(on)


def test_expiring_state_is_refused_by_equals_off_because_the_fold_ignores_expiry() -> None:
    """Why expiring TTL is excluded: b's row expired at t=1; -U/+U of it in one bundle cancel, so it is not
    stored again, while record by record the -U is a no-op and the +U stores it (a's later row joins)."""
    from converge.properties.minibatch import minibatch_equals_off

    a = InputSpec("a", (("k", "BIGINT"), ("v", "BIGINT")), None, "insert_only")
    b = InputSpec("b", (("k", "BIGINT"), ("w", "BIGINT")), None, "retract")
    events = (ChangeEvent("b", "+I", (0, 0)), ChangeEvent("a", "+I", (9, 9)), ProcessingTimeEvent(1),
              ChangeEvent("b", "-U", (0, 0)),
              ChangeEvent("b", "+U", (0, 0)), ChangeEvent("a", "+I", (0, 5)))

    def make(**config) -> Scenario:
        return Scenario("ttl", (a, b), JoinSpec(("a", "b"), ("inner",), ("a.k = b.k",)),
                        Config(state_ttl_ms=1, **config), events)

    assert [c for x in run_scenario(make(mini_batch_size=2)).per_event for c in x] == []
    assert [c for x in run_scenario(make()).per_event for c in x] == [Change("+I", (0, 5, 0, 0))]
    with pytest.raises(BadInputError, match="expires during the stream"):
        minibatch_equals_off(make(mini_batch_size=2))


def test_the_bundled_changelog_is_well_formed_and_the_check_sees_a_broken_fold() -> None:
    """minibatch/changelog_wellformed holds on the mini-batch join, and fails when a bundle keeps the -D of an
    insert it cancelled (the join then retracts a row its output never held)."""
    from converge.cli.mutant_catalog import applied
    from converge.properties.campaign import run_property
    from converge.properties.registry import select

    spec = select("minibatch", "changelog_wellformed")[0]
    assert run_property(spec, seed=3, max_examples=150).ok
    with applied(by_name("bundle_keeps_retraction_of_cancelled_insert")[0]):
        broken = run_property(spec, seed=3, max_examples=300)
    assert broken.failure is not None and "retracts a row the output does not hold" in str(broken.failure)
