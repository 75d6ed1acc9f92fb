"""The Spark stage processor without a JVM: per-key state slices, in-band time, ordering, errors.

tests/systems/spark/in_memory.py stands in for Spark between processors (grouping,
one ValueState per group, shuffled group and row order), so Hypothesis can
check hundreds of scenarios a second against the local runtime: the same
output at every event, whatever the micro-batch cut and the order Spark
hands groups and rows over in.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from converge.engine.model.changelog import Change
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import ChangeEvent, Scenario
from converge.engine.model.scenario_json import load_scenario
from converge.engine.runtime.local import run_scenario
from converge.engine.runtime.spark.job import SparkJoinJob, UnsupportedOnSpark
from converge.engine.state import KeyedStateBackend
from converge.generators.interval import interval_join_scenarios
from converge.generators.minibatch import minibatch_variants
from converge.generators.scenarios import regular_join_scenarios
from tests.conftest import examples
from tests.support import paths
from tests.support.spark_runs import MINIBATCH, SCENARIOS, first_difference, local_outcome
from tests.systems.spark.in_memory import run_all_in_memory, run_in_memory

pytest.importorskip("pyspark")

HAND_WRITTEN = paths.SCENARIOS / "regular"

@settings(max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(SCENARIOS, min_size=1, max_size=3), st.integers(1, 5), st.integers(0, 2**16))
def test_stage_processors_reproduce_the_local_runtime_event_by_event(scenarios, batches, shuffle_seed) -> None:
    got = run_all_in_memory(scenarios, batches=batches, shuffle_seed=shuffle_seed)
    for scenario, outcome in zip(scenarios, got, strict=False):
        difference = first_difference(outcome, local_outcome(scenario))
        assert difference is None, f"{scenario.name} ({batches} micro-batches): {difference}"


@settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(MINIBATCH, min_size=1, max_size=3), st.integers(1, 5), st.integers(0, 2**16))
def test_minibatch_nodes_restart_from_their_saved_bundle_and_state_event_by_event(scenarios, batches,
                                                                                  shuffle_seed) -> None:
    """A mini-batch node is grouped by node alone; every micro-batch starts in a worker that kept nothing
    (as after a restart from a checkpoint), so a bundle left partly filled by one micro-batch must come
    back from the ValueState. The output equals the local runtime's at every event."""
    got = run_all_in_memory(scenarios, batches=batches, shuffle_seed=shuffle_seed, fresh_workers=True)
    for scenario, outcome in zip(scenarios, got, strict=False):
        difference = first_difference(outcome, local_outcome(scenario))
        assert difference is None, f"{scenario.name} ({batches} micro-batches): {difference}"


def test_a_bundle_left_partly_filled_by_a_micro_batch_is_completed_by_the_next() -> None:
    """Bundle size 3, micro-batches of two events: the first bundle spans the cut, the last one is flushed
    by the end-of-input marker."""
    from converge.engine.model.scenario import Config, InputSpec, JoinSpec

    a = InputSpec("a", (("k", "BIGINT"), ("v", "BIGINT")), ("k",), "retract")
    b = InputSpec("b", (("k", "BIGINT"), ("w", "BIGINT")), None, "insert_only")
    events = (ChangeEvent("a", "+I", (1, 1)), ChangeEvent("b", "+I", (1, 10)), ChangeEvent("a", "-U", (1, 1)),
              ChangeEvent("a", "+U", (1, 2)))
    scenario = Scenario("bundle across a cut", (a, b), JoinSpec(("a", "b"), ("left",), ("a.k = b.k",)),
                        Config(mini_batch_size=3), events)
    (got,) = run_in_memory(SparkJoinJob([scenario], bounds=[2]), fresh_workers=True)
    # hand-derived: +I, -U of a's key cancel in the first bundle; +U alone at the end joins b's row
    assert got.per_event == [[], [], [], [Change("+I", (1, 2, 1, 10))]]
    assert got.per_event == run_scenario(scenario).per_event


def test_a_table_read_by_two_inputs_is_refused_as_unsupported_not_bad_input() -> None:
    """A self-join is valid input the Spark runtime does not fan out: unsupported (it was "not part of the join",
    a BadInputError)."""
    scenario = load_scenario(paths.SCENARIOS / "views" / "self_join_employees.json")
    assert any(spec.source is not None for spec in scenario.inputs)
    with pytest.raises(UnsupportedOnSpark, match="read by several inputs"):
        SparkJoinJob([scenario])


def test_a_watermark_for_a_minibatch_plan_is_refused_with_the_reason() -> None:
    from converge.engine.model.scenario import WatermarkEvent

    scenario = find_one(minibatch_variants())
    scenario = scenario.with_events(scenario.events + (WatermarkEvent("a", 5),))
    with pytest.raises(UnsupportedOnSpark, match="watermark flushes the mini-batch bundle"):
        SparkJoinJob([scenario])


def find_one(strategy: st.SearchStrategy[Scenario]) -> Scenario:
    from hypothesis import find

    return find(strategy, lambda s: True)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=list(HealthCheck))
@given(regular_join_scenarios(join_types=("inner", "left", "full"), modes=("retract",)), st.integers(1, 4),
       st.data())
def test_a_bad_retraction_is_reported_at_its_event_as_locally(scenario, batches, data) -> None:
    """Insert a retraction of a row that was never inserted; both runtimes name the same event."""
    at = data.draw(st.integers(0, len(scenario.events)))
    ghost = ChangeEvent("a", "-D", tuple("never inserted" if t == "VARCHAR" else 7  # in a's own column order
                                         for t in scenario.input("a").column_types))
    bad = scenario.with_events(scenario.events[:at] + (ghost,) + scenario.events[at:])
    want = local_outcome(bad)
    assert isinstance(want, BadInputError) and want.event_index == at
    (got,) = run_in_memory(SparkJoinJob([bad], batches=batches), shuffle_seed=at)
    assert isinstance(got, BadInputError) and str(got) == str(want)


def test_bad_input_found_on_the_driver_names_the_event_before_spark_starts() -> None:
    scenario = load_scenario(HAND_WRITTEN / "acc_outer_no_match.json")
    bad = scenario.with_events(scenario.events[:1] + (ChangeEvent("a", "+I", ("not a number", 1)),))
    with pytest.raises(BadInputError, match="event 1: "):
        SparkJoinJob([bad])


def test_flink_semantics_interval_joins_are_refused_with_the_reason() -> None:
    from hypothesis import find

    scenario = find(interval_join_scenarios(semantics=("flink",)), lambda s: True)
    with pytest.raises(UnsupportedOnSpark, match="shares operator state across keys"):
        SparkJoinJob([scenario])


def test_key_slices_move_one_key_between_backends_with_its_arrival_order() -> None:
    first = KeyedStateBackend("arrival")
    m = first.map_state("m", ["BIGINT"])
    v = first.value_state("v", ttl_ms=5)
    first.current_key = ("k",)
    for i in (3, 1, 2):
        m.put((i,), f"row {i}")
    v.update("value")
    first.current_key = ("other",)
    m.put((9,), "other key")
    taken = first.take_key_slice(("k",))
    assert taken is not None and first.take_key_slice(("k",)) is None
    first.current_key = ("k",)
    assert m.items() == [] and v.get() is None            # gone from the first backend

    second = KeyedStateBackend("arrival")
    m2 = second.map_state("m", ["BIGINT"])
    v2 = second.value_state("v", ttl_ms=5)
    second.put_key_slice(("k",), taken)
    second.current_key = ("k",)
    m2.put((0,), "after the move")                        # a new arrival goes after the moved ones
    assert [k for k, _ in m2.items()] == [(3,), (1,), (2,), (0,)]
    second.now = 4
    assert v2.get() == "value"
    second.now = 5
    assert v2.get() is None                               # the TTL moved with the value


def _chain_with_a_residual_that_divides_by_zero() -> Scenario:
    from converge.engine.model.scenario_json import scenario_from_dict

    cols = {n: [["k", "BIGINT"], [f"{n}v", "BIGINT"]] for n in "abc"}
    return scenario_from_dict({
        "name": "second join divides by zero",
        "inputs": [{"name": n, "columns": c} for n, c in cols.items()],
        "join": {"inputs": ["a", "b", "c"], "types": ["inner", "inner"],
                 "conditions": ["a.k = b.k", "b.k = c.k AND 10 // c.cv > 0"]},
        "events": [{"input": "a", "kind": "+I", "row": [1, 1]}, {"input": "c", "kind": "+I", "row": [1, 0]},
                   {"input": "b", "kind": "+I", "row": [1, 5]}, {"input": "a", "kind": "-D", "row": [1, 1]}],
    })


@pytest.mark.parametrize("batches", [1, 2, 4])
def test_an_event_rejected_by_the_second_join_ends_both_runtimes_at_that_event(batches) -> None:
    """The first join took the row, the second rejects it: both runtimes report event 2 with the same message."""
    scenario = _chain_with_a_residual_that_divides_by_zero()
    want = local_outcome(scenario)
    assert isinstance(want, BadInputError) and want.event_index == 2 and "division by zero" in str(want)
    (got,) = run_in_memory(SparkJoinJob([scenario], batches=batches), shuffle_seed=batches)
    assert isinstance(got, BadInputError) and str(got) == str(want)


def test_a_looping_timer_ends_the_spark_run_with_the_local_runtimes_non_termination_error() -> None:
    from converge.cli import mutant_catalog
    from converge.engine.model.errors import NonTerminationError
    from converge.engine.model.scenario_json import scenario_from_dict

    scenario = scenario_from_dict({
        "name": "looping cleanup timer",
        "inputs": [{"name": "a", "columns": [["k", "BIGINT"], ["x", "BIGINT"]]},
                   {"name": "b", "columns": [["k", "BIGINT"], ["y", "BIGINT"]]}],
        "join": {"inputs": ["a", "b"], "types": ["inner"], "conditions": ["a.k = b.k"],
                 "interval": {"lower_ms": -1, "upper_ms": -1, "time": "processing"}},
        "events": [{"processing_time": 1}, {"input": "a", "kind": "+I", "row": [0, 0]}, {"processing_time": 2},
                   {"input": "a", "kind": "+I", "row": [0, 0]}, {"processing_time": 3},
                   {"input": "b", "kind": "+I", "row": [0, 0]}],
    })
    with mutant_catalog.applied(mutant_catalog.by_name("interval_cleanup_timer_not_advanced")[0]):
        with pytest.raises(NonTerminationError) as info:
            run_scenario(scenario)
        want = info.value
        assert str(want).startswith("event 4: ")
        (got,) = run_in_memory(SparkJoinJob([scenario], batches=2))
    assert isinstance(got, NonTerminationError) and str(got) == str(want)
