"""An interval join of a table with itself: one stream (`source`) feeds both inputs of the interval join.

The hand case (tests/scenarios/interval/self_join_one_source_left.json, worked out in its description) is
checked here against answers written by hand: the engine's output at every event, the DuckDB batch answer,
the records the step model calls late, and what the other order of the two inputs would give.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings

from converge.engine.model.changelog import Change, OutputWatermark
from converge.engine.model.errors import BadInputError, UnsupportedError
from converge.engine.model.scenario import Scenario
from converge.engine.model.scenario_json import load_scenario, scenario_from_dict, scenario_to_dict
from converge.engine.reference_system import ReferenceSystem
from converge.engine.runtime.local import run_scenario
from converge.generators.self_interval import self_interval_join_scenarios
from converge.oracle.interval import batch_interval_join, interval_records
from converge.properties import interval
from converge.properties.divergence import Divergence
from converge.properties.empty_window import empty_window_equals_oracle, empty_window_matches_flink
from converge.properties.interval_model import IntervalJoinModel
from converge.reports.failure import write_failure_report
from tests.support.paths import SCENARIOS

HAND = SCENARIOS / "interval" / "self_join_one_source_left.json"
NULL3 = (None, None, None)


def _hand() -> Scenario:
    return load_scenario(HAND)


def test_each_record_and_watermark_reaches_the_left_input_then_the_right() -> None:
    out = run_scenario(_hand()).per_event
    assert out == [
        [Change("+I", (1, 10, 5, 1, 10, 5))],                       # y@10 joins x@10 (itself)
        [],                                                         # v NULL: x@12 joins nothing, not even itself
        [Change("+I", (1, 10, 5, 1, 11, 7)), Change("+I", (1, 11, 7, 1, 11, 7))],
        [OutputWatermark(9)],                                       # right timer 11: y@10 cleaned
        [Change("+I", (2, 11, 3, 2, 11, 3))],                       # late, cached on the left: its right copy joins it
        [Change("+I", (1, 9, 4, 1, 11, 7))],                        # late, cached nowhere, joins the cached y@11
        [Change("+I", (3, 9, 1) + NULL3)],                          # late, joins nothing: padded at once
        [Change("+I", (1, 12, None) + NULL3), OutputWatermark(18)],  # x@12 never joined: padded at cleanup
    ]


def test_the_batch_answer_joins_the_table_with_itself() -> None:
    s = _hand()
    assert {name: [pos for pos, _, _ in recs] for name, recs in interval_records(s).items()} == \
        {"x": [0, 1, 2, 4, 5, 6], "y": [0, 1, 2, 4, 5, 6]}
    # every record: x.k = y.k AND x.v <= y.v AND y.t - 2 <= x.t <= y.t, worked by hand
    assert batch_interval_join(s) == Counter({
        (1, 10, 5, 1, 10, 5): 1, (1, 10, 5, 1, 11, 7): 1, (1, 11, 7, 1, 11, 7): 1, (1, 12, None) + NULL3: 1,
        (2, 11, 3, 2, 11, 3): 1, (1, 9, 4, 1, 9, 4): 1, (1, 9, 4, 1, 10, 5): 1, (1, 9, 4, 1, 11, 7): 1,
        (3, 9, 1, 3, 9, 1): 1})
    # the records at 4, 5, 6 arrive at or behind the watermark 11: late, so the answers may differ there
    model = interval.model_of(interval.with_positions(s))
    assert model.late == {4, 5, 6}
    assert model.sides == {pos: (0, 1) for pos in (0, 1, 2, 4, 5, 6)}
    interval.late_records_bounded(s)
    interval.matches_step_model(s)


def test_the_order_of_the_two_inputs_decides_a_late_record() -> None:
    """(2, 11) at watermark 11 is cached on the left (11 < 11 + 2) and not on the right (11 < 11 + 0 fails):
    left first, its right copy joins its cached left copy; right first, neither copy meets the other, and the
    left copy, never joined, is padded when its cleanup timer (14) fires."""
    s = interval.with_positions(_hand())
    left_first, right_first = IntervalJoinModel(s).run(), IntervalJoinModel(s, right_first=True).run()
    assert left_first.per_event[4] == Counter({("join", 4, 4): 1})
    assert right_first.per_event[4] == Counter()
    assert right_first.per_event[7] - left_first.per_event[7] == Counter({("pad", 0, 4): 1})
    assert [i for i in range(len(s.events)) if left_first.per_event[i] != right_first.per_event[i]] == [4, 7]


def test_the_scenario_round_trips_and_a_stream_carries_the_time_attribute_check() -> None:
    s = _hand()
    assert scenario_from_dict(scenario_to_dict(s)) == s
    doc = scenario_to_dict(s)
    doc["events"] = [{"input": "e", "kind": "+I", "row": [1, None, 2]}]
    with pytest.raises(BadInputError, match=r"events\[0\].row\[1\]: the event-time attribute 't' is NULL"):
        scenario_from_dict(doc)


@pytest.mark.parametrize("patch, error, message", [
    # a Flink table has one rowtime: both uses of it name that one attribute
    (lambda d: d["join"]["interval"].update(right_time="y.v"), BadInputError,
     "join.interval: inputs 'x' and 'y' read the one stream 'e', so their time attributes are its one time "
     "attribute: 't' and 'v' differ"),
    (lambda d: d["events"].append({"input": "x", "watermark": 3}), BadInputError,
     "input 'x' reads the stream of 'e'"),
    (lambda d: d.update(config={"dedupe_before_join": {"x": ["k"]}}), BadInputError,
     "an interval join takes append-only"),
])
def test_wrong_self_interval_joins_are_refused(patch, error: type[Exception], message: str) -> None:
    doc = scenario_to_dict(_hand())
    patch(doc)
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        scenario_from_dict(doc)


def test_a_dedupe_under_a_shared_source_is_still_unsupported() -> None:
    doc = scenario_to_dict(_hand())
    doc["join"].pop("interval")
    doc["config"] = {"dedupe_before_join": {"x": ["k"]}}
    with pytest.raises(UnsupportedError, match="dedupe_before_join is not modelled yet"):
        scenario_from_dict(doc)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(self_interval_join_scenarios(join_types=("left", "full")))
def test_generated_self_interval_joins_keep_their_promises(scenario: Scenario) -> None:
    """One stream, both inputs read it, no late record: the outer answer is DuckDB's interval join of the
    table with itself."""
    assert [(s.name, s.source) for s in scenario.inputs] == [("t", None), ("a", "t"), ("b", "t")]
    assert {getattr(e, "input", "t") for e in scenario.events} <= {"t"}
    assert not interval.model_of(interval.with_positions(scenario)).late
    interval.no_late_equals_oracle(scenario)


def _empty_window_full() -> Scenario:
    """x.t BETWEEN y.t + 3 AND y.t + 1 (FULL): a window that holds no time difference, so Flink plans no join and
    pads each row on both outer sides as it arrives, the left input's copy first."""
    doc = scenario_to_dict(_hand())
    doc["join"]["types"] = ["full"]
    doc["join"]["interval"].update(lower_ms=3, upper_ms=1)
    doc["events"] = [{"input": "e", "kind": "+I", "row": [1, 10, 5]}, {"input": "e", "watermark": 30},
                     {"input": "e", "kind": "+I", "row": [1, 12, 6]}]
    return scenario_from_dict(doc)


def test_an_empty_window_self_join_pads_each_record_on_both_sides() -> None:
    s = _empty_window_full()
    assert [[c for c in out if isinstance(c, Change)] for out in run_scenario(s).per_event] == [
        [Change("+I", (1, 10, 5) + NULL3), Change("+I", NULL3 + (1, 10, 5))],
        [],
        [Change("+I", (1, 12, 6) + NULL3), Change("+I", NULL3 + (1, 12, 6))]]
    empty_window_matches_flink(s)
    empty_window_equals_oracle(s)


def test_the_reference_system_ends_the_one_stream() -> None:
    """A system's case ends as a bounded source does: one +inf watermark on the stream (a watermark on a reader is
    refused), so the row never joined is padded."""
    [result] = ReferenceSystem().run_cases([_hand()])
    assert result.status == "ok", result.message
    assert Counter(c.row for c in result.changelog or ()) == Counter(
        c.row for out in run_scenario(_hand()).per_event for c in out if isinstance(c, Change))


def _proctime_self_join(lower: int, upper: int) -> Scenario:
    """x.pt - y.pt in [lower, upper], INNER, each row's time its arrival: (1, 1) arrives at 1, (1, 2) at 2."""
    columns = [["k", "BIGINT"], ["v", "BIGINT"]]
    return scenario_from_dict({
        "inputs": [{"name": "p", "columns": columns, "changelog_mode": "insert_only"},
                   *({"name": n, "columns": columns, "changelog_mode": "insert_only", "source": "p"} for n in "xy")],
        "join": {"inputs": ["x", "y"], "types": ["inner"], "conditions": ["x.k = y.k"],
                 "interval": {"left_time": None, "right_time": None, "lower_ms": lower, "upper_ms": upper,
                              "time": "processing"}},
        "events": [{"processing_time": 1}, {"input": "p", "kind": "+I", "row": [1, 1]},
                   {"processing_time": 2}, {"input": "p", "kind": "+I", "row": [1, 2]}]})


@pytest.mark.parametrize("lower, upper, late, pairs, batch", [
    # the left copy is cached (1 < 1 + 2): the right copy meets it; as the batch join
    (-2, 0, set(), {(1, 1), (1, 3), (3, 3)}, {(1, 1), (1, 3), (3, 3)}),
    # the left copy is not cached (its side has size 0): the right copy misses it; each row's own pair is lost
    (0, 2, {1, 3}, {(3, 1)}, {(1, 1), (3, 1), (3, 3)}),
    # the window does not hold 0: a row's copies never pair, whichever input takes it first
    (1, 3, set(), {(3, 1)}, {(3, 1)}),
])
def test_a_processing_time_self_join_row_is_late_only_when_it_can_miss_itself(
        lower: int, upper: int, late: set, pairs: set, batch: set) -> None:
    s = interval.with_positions(interval.with_final(_proctime_self_join(lower, upper)))
    assert interval.model_of(s).late == late
    assert {(r[2], r[-1]) for r in (c.row for c in run_scenario(s).changes)} == pairs
    assert {(r[2], r[-1]) for r in batch_interval_join(s)} == batch


def test_a_failure_report_shows_the_stream_once_and_names_its_readers(tmp_path) -> None:
    """The report's input tables and the picture's lanes follow the events: one for the stream, which the readers
    name (they had empty tables and empty lanes of their own)."""
    pytest.importorskip("matplotlib")
    from converge.reports.timeline import timeline_figure  # lazy: needs matplotlib, skipped above without it
    s = _hand()
    lanes = [t.get_text() for t in timeline_figure(s, event_index=4).axes[0].get_yticklabels()]
    assert lanes[0] == "input e (read by x, y)" and len(lanes) == 2
    paths = write_failure_report(Divergence("matches_step_model", s, "a message", event_index=4), tmp_path,
                                 timeline=False)
    report = next(p for p in paths if p.suffix == ".md").read_text()
    assert "### e (insert_only)" in report and "| 4 ◀ | +I | 2 | 11 | 3 |" in report
    assert "### x: reads the stream of e\n" in report and "### y: reads the stream of e\n" in report
    assert "### x (" not in report
