"""The interval-join family: event-time and processing-time interval joins with watermarks and late records."""

from __future__ import annotations

from hypothesis import strategies as st

from converge.generators.interval import interval_join_scenarios
from converge.generators.self_interval import self_interval_join_scenarios
from converge.properties import interval, regular, wellformed
from converge.properties.spec import PropertySpec

INTERVAL = "interval"

# Streams with no late record (event time: disorder, idle inputs, watermark jumps; processing time: no two
# inputs share an arrival time), in either semantics since Flink's quirks only touch late records; and
# streams where up to half the records are late.
_NO_LATE = lambda: st.one_of(  # noqa: E731
    interval_join_scenarios(semantics=("correct", "flink")),
    interval_join_scenarios(time="processing", semantics=("correct", "flink")))
_LATE = lambda: st.one_of(  # noqa: E731
    interval_join_scenarios(late_share=(5, 50), negative_times=True),
    interval_join_scenarios(time="processing", late_share=(5, 60)))
_EITHER_SEMANTICS = lambda: st.one_of(  # noqa: E731
    interval_join_scenarios(late_share=(0, 50), negative_times=True, semantics=("correct", "flink")),
    interval_join_scenarios(time="processing", late_share=(0, 60), semantics=("correct", "flink")))
# Where Flink's quirks show: many late rows near time 0, watermarks creeping up, windows around 0.
_QUIRKY = lambda: interval_join_scenarios(  # noqa: E731
    late_share=(40, 80), negative_times=True, semantics=("flink",), strategies=("creep", "bounded"),
    bounds=((-10, 10), (-8, 4), (-4, 8), (-12, 12)))


# One stream read by both inputs (a self-join): each record, watermark and idle marker reaches both.
_ONE_SOURCE_ON_TIME = lambda: self_interval_join_scenarios(semantics=("correct", "flink"))  # noqa: E731
_ONE_SOURCE_NO_LATE = lambda: st.one_of(  # noqa: E731
    _ONE_SOURCE_ON_TIME(), self_interval_join_scenarios(time="processing", semantics=("correct", "flink")))
_ONE_SOURCE_LATE = lambda: st.one_of(  # noqa: E731
    self_interval_join_scenarios(late_share=(5, 50), negative_times=True),
    self_interval_join_scenarios(time="processing", late_share=(0, 60)))
# (a late record's answer depends on which input takes it first: the step model's order is checked there)
_ONE_SOURCE_EITHER = lambda: st.one_of(  # noqa: E731
    self_interval_join_scenarios(late_share=(0, 50), negative_times=True, semantics=("correct", "flink")),
    self_interval_join_scenarios(time="processing", late_share=(20, 60), semantics=("correct", "flink"),
                                 bounds=((0, 10), (-10, 0), (-4, 6))),
    self_interval_join_scenarios(late_share=(30, 80), semantics=("correct", "flink"), bounds=((-10, 10), (-8, 4))))


def _single(factory):
    return lambda: factory().map(lambda s: (s,))


@st.composite
def _snapshot_cut(draw: st.DrawFn) -> tuple:
    scenario = draw(st.one_of(
        interval_join_scenarios(late_share=(0, 50), negative_times=True),
        interval_join_scenarios(time="processing", late_share=(0, 60))))
    return scenario, draw(st.integers(0, len(scenario.events)))


PROPERTIES: list[PropertySpec] = [
    PropertySpec(INTERVAL, "no_late_equals_oracle", _single(_NO_LATE), interval.no_late_equals_oracle, 300,
                 "no late record: after a final +inf watermark the output is the DuckDB batch interval join; "
                 "no state or timer is left", suite_examples=100),
    PropertySpec(INTERVAL, "late_records_bounded", _single(_LATE), interval.late_records_bounded, 200,
                 "late records: batch(non-late) pairs <= output pairs <= batch(all) pairs; an unmatched outer "
                 "record is padded exactly once", suite_examples=80),
    PropertySpec(INTERVAL, "matches_step_model", _single(lambda: st.one_of(_EITHER_SEMANTICS(), _QUIRKY())),
                 interval.matches_step_model, 300,
                 "at every event the same output and the same cached records as the step model of Flink's "
                 "caching rule (semantics correct and flink)", suite_examples=150),
    PropertySpec(INTERVAL, "pairs_and_padding_once", _single(_EITHER_SEMANTICS), interval.pairs_and_padding_once,
                 100, "no (left, right) pair twice (records by position); padding at most once, never after a "
                 "join, exactly once when unmatched (semantics correct)", suite_examples=50),
    PropertySpec(INTERVAL, "state_empty_after_final", _single(_EITHER_SEMANTICS),
                 interval.state_empty_after_final, 100,
                 "after the final +inf watermark / processing time: no state, no timers", suite_examples=50),
    PropertySpec(INTERVAL, "cleanup_timely", _single(_LATE), interval.cleanup_timely, 100,
                 "no cached row outlives its cleanup time for the current watermark", suite_examples=50),
    PropertySpec(INTERVAL, "output_watermarks", _single(_EITHER_SEMANTICS), interval.output_watermarks, 100,
                 "output watermark = MIN of active input watermarks - (max(-L, U) + lateness), after the "
                 "timers, only when it rises; no joined row of non-late records behind it", suite_examples=50),
    PropertySpec(INTERVAL, "disorder_invariance", lambda: interval_join_scenarios().map(lambda s: (s,)),
                 interval.disorder_invariance, 100,
                 "disorder without late records gives the same answer as the records in time order",
                 suite_examples=50),
    PropertySpec(INTERVAL, "snapshot_restore", _snapshot_cut, regular.snapshot_restore, 100,
                 "snapshot after any event (caches, cleanup timers, watermarks), restore into a fresh runtime, "
                 "continue: identical output (semantics correct)", suite_examples=50),
    PropertySpec(INTERVAL, "no_late_equals_oracle_one_source", _single(_ONE_SOURCE_NO_LATE),
                 interval.no_late_equals_oracle, 200,
                 "a self-join (one stream feeds both inputs), no late record: the DuckDB batch interval join of "
                 "the table with itself", suite_examples=60),
    PropertySpec(INTERVAL, "late_records_bounded_one_source", _single(_ONE_SOURCE_LATE), interval.late_records_bounded,
                 100, "a self-join with late records: batch(non-late) pairs <= output pairs <= batch(all) pairs; "
                 "each side's copy of an unmatched outer record padded exactly once", suite_examples=40),
    PropertySpec(INTERVAL, "matches_step_model_one_source", _single(_ONE_SOURCE_EITHER), interval.matches_step_model,
                 200, "a self-join: at every event the step model's output and cache, each record handed to the "
                 "left input, then the right (semantics correct and flink)", suite_examples=60),
    PropertySpec(INTERVAL, "one_source_order_invariance", _single(_ONE_SOURCE_ON_TIME),
                 interval.one_source_order_invariance, 100,
                 "an event-time self-join, no late record: handing each record to the right input first changes "
                 "no output and no cache at any event", suite_examples=40),
    PropertySpec(INTERVAL, "changelog_wellformed", _single(_EITHER_SEMANTICS), wellformed.changelog_wellformed,
                 100, "append-only output (+I alone), never a retraction", suite_examples=40),
]
