"""Interval joins reject what Flink rejects: updates and retractions, NULL times, impossible specs."""

from __future__ import annotations

import copy

import pytest

from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import ChangeEvent, WatermarkEvent
from converge.engine.model.scenario_json import scenario_from_dict
from converge.engine.planner import plan
from converge.engine.runtime.local import LocalRuntime


def _doc(mode: str = "retract", jtype: str = "left", interval: dict | None = None, **inputs_extra) -> dict:
    iv = {"left_time": "a.t", "right_time": "b.t", "lower_ms": -5, "upper_ms": 5}
    iv.update(interval or {})
    cols = [["k", "BIGINT"], ["t", "BIGINT"], ["s", "VARCHAR"]]
    return {
        "name": "bad interval input",
        "inputs": [{"name": "a", "columns": cols, "changelog_mode": mode, **inputs_extra},
                   {"name": "b", "columns": cols, "changelog_mode": "insert_only"}],
        "join": {"inputs": ["a", "b"], "types": [jtype], "conditions": ["a.k = b.k"], "interval": iv},
    }


GOOD = [ChangeEvent("a", "+I", (1, 10, "x")), WatermarkEvent("a", 3), WatermarkEvent("b", 3),
        ChangeEvent("b", "+I", (1, 12, "y"))]


def _runtime(doc: dict | None = None) -> LocalRuntime:
    rt = LocalRuntime(scenario_from_dict(doc or _doc()))
    for e in GOOD:
        rt.process_event(e)
    return rt


@pytest.mark.parametrize("event, needle", [
    (ChangeEvent("a", "-D", (1, 10, "x")), "-D on input 'a': interval join inputs are append-only"),
    (ChangeEvent("a", "-U", (1, 10, "x")), "-U on input 'a': interval join inputs are append-only"),
    (ChangeEvent("a", "+U", (1, 11, "x")), "+U on input 'a': interval join inputs are append-only"),
    (ChangeEvent("a", "+I", (1, None, "x")), "NULL time attribute 't'"),
    (ChangeEvent("b", "+I", (2, None, "y")), "row [2, None, 'y'] on input 'b' has a NULL time attribute"),
    (ChangeEvent("b", "-D", (1, 12, "y")), "accepts only +I"),  # insert_only input: refused by the runtime
    (ChangeEvent("a", "+I", (1, "10", "x")), "column 't' of input 'a': expected BIGINT"),
])
def test_bad_event_names_index_and_leaves_state(event, needle) -> None:
    rt = _runtime()
    before = copy.deepcopy(rt.snapshot())
    with pytest.raises(BadInputError) as info:
        rt.process_event(event)
    assert info.value.event_index == len(GOOD)
    assert needle in str(info.value)
    after = rt.snapshot()
    after["event_index"] = before["event_index"]
    assert after == before
    assert rt.process_event(ChangeEvent("a", "+I", (1, 12, "z"))) == [
        ("+I", (1, 12, "z", 1, 12, "y"))]


@pytest.mark.parametrize("doc, needle", [
    (_doc(mode="upsert", unique_key=["k"]), "input 'a' is an upsert (updating) input"),
    (_doc(jtype="semi"), "an interval join cannot be 'semi'"),
    (_doc(jtype="anti"), "an interval join cannot be 'anti'"),
    (_doc(interval={"allowed_lateness_ms": -1}), "join.interval.allowed_lateness_ms: -1 is outside [0, "),
    (_doc(interval={"time": "processing", "left_time": None, "right_time": None, "allowed_lateness_ms": 3}),
     "a processing-time interval join has no allowed lateness"),
    (_doc(interval={"left_time": "a.s"}), "time attribute a.s is VARCHAR"),
    (_doc(interval={"left_time": "b.t"}), "'b.t' must be a column of input 'a'"),
    (_doc(interval={"left_time": "a.nope"}), "has no column 'nope'"),
    (_doc(interval={"left_time": None}), "needs the time attribute of input 'a'"),
])
def test_bad_spec_is_refused_at_planning(doc, needle) -> None:
    with pytest.raises(BadInputError) as info:
        plan(scenario_from_dict(doc))
    assert needle in str(info.value)


def test_time_column_stands_in_for_a_missing_time_reference() -> None:
    doc = _doc(interval={"left_time": None}, time_column="t")
    assert "leftTimeIndex=1" in plan(scenario_from_dict(doc)).explain()


def test_oracle_refuses_what_the_engine_refuses() -> None:
    from converge.oracle.interval import interval_records

    # the file reader refuses both events first; built in Python, they reach the oracle's own checks
    doc = _doc()
    doc["events"] = [{"input": "a", "kind": "+I", "row": [1, 2, "x"]}]
    base = scenario_from_dict(doc)
    with pytest.raises(BadInputError) as info:
        interval_records(base.with_events((*base.events, ChangeEvent("a", "-D", (1, 2, "x")))))
    assert info.value.event_index == 1
    with pytest.raises(BadInputError, match="NULL time"):
        interval_records(base.with_events((ChangeEvent("b", "+I", (1, None, "x")),)))
