"""Bad input raises a typed error that names the event and what is wrong, and leaves state untouched."""

from __future__ import annotations

import copy

import pytest

from converge.engine.model.errors import BadInputError, ConvergeError
from converge.engine.model.scenario import ChangeEvent, ProcessingTimeEvent
from converge.engine.model.scenario_json import scenario_from_dict
from converge.engine.runtime.local import LocalRuntime


def _scenario(mode_a: str = "retract", uk_a=None, cond: str = "a.k = b.k", jtype: str = "left", events=()):
    return scenario_from_dict({
        "name": "bad input",
        "inputs": [
            {"name": "a", "columns": [["k", "BIGINT"], ["x", "VARCHAR"]], "unique_key": uk_a, "changelog_mode": mode_a},
            {"name": "b", "columns": [["k", "BIGINT"], ["y", "DOUBLE"]]},
        ],
        "join": {"inputs": ["a", "b"], "types": [jtype], "conditions": [cond]},
        "events": list(events),
    })


def _runtime_after(events) -> LocalRuntime:
    rt = LocalRuntime(_scenario())
    for e in events:
        rt.process_event(e)
    return rt


GOOD = [ChangeEvent("a", "+I", (1, "p")), ChangeEvent("b", "+I", (1, 2.5))]


@pytest.mark.parametrize("event, needle", [
    (ChangeEvent("a", "+I", (1,)), "has 1 values"),
    (ChangeEvent("a", "+I", (1, 2)), "column 'x' of input 'a': expected VARCHAR"),
    (ChangeEvent("b", "+I", ("one", 2.0)), "column 'k' of input 'b': expected BIGINT"),
    (ChangeEvent("a", "+I", (True, "p")), "expected BIGINT"),
    (ChangeEvent("a", "+I", (2**63, "p")), "out of BIGINT range"),
    (ChangeEvent("a", "-D", (1, "q")), "retracts row [1, 'q'], which is not in the join state"),
    (ChangeEvent("b", "-U", (7, 1.0)), "retracts row [7, 1.0]"),
    (ProcessingTimeEvent(-1), "processing time goes backwards"),
])
def test_bad_event_names_index_and_leaves_state(event, needle) -> None:
    rt = _runtime_after(GOOD)
    before = copy.deepcopy(rt.snapshot())
    with pytest.raises(BadInputError) as info:
        rt.process_event(event)
    assert info.value.event_index == 2
    assert str(info.value).startswith("event 2: ")
    assert needle in str(info.value)
    after = rt.snapshot()
    after["event_index"] = before["event_index"]
    assert after == before
    # the runtime goes on after a rejected event
    assert rt.process_event(ChangeEvent("a", "+I", (1, "z"))) != []


def test_update_on_insert_only_input() -> None:
    rt = LocalRuntime(_scenario(mode_a="insert_only"))
    rt.process_event(ChangeEvent("a", "+I", (1, "p")))
    with pytest.raises(BadInputError, match=r"event 1: -U on input 'a': a insert_only input accepts only \+I"):
        rt.process_event(ChangeEvent("a", "-U", (1, "p")))


def test_minus_u_on_upsert_input() -> None:
    rt = LocalRuntime(_scenario(mode_a="upsert", uk_a=["k"]))
    with pytest.raises(BadInputError, match="upsert input accepts only"):
        rt.process_event(ChangeEvent("a", "-U", (1, "p")))


@pytest.mark.parametrize("obj_patch, needle", [
    ({"events": [{"input": "a", "kind": "+X", "row": [1, "p"]}]}, "events[0].kind: '+X' is not one of +I, -U, +U, -D"),
    ({"events": [{"input": "zz", "kind": "+I", "row": [1, "p"]}]}, "events[0].input: unknown input 'zz'"),
    ({"join": {"inputs": ["a", "b"], "types": ["outer"], "conditions": ["a.k = b.k"]}}, "join.types[0]: 'outer'"),
    ({"config": {"map_state_order": "sorted"}}, "config.map_state_order: 'sorted'"),
    ({"config": {"state_ttl_ms": 0}}, "config.state_ttl_ms: 0 is outside [1, "),
])
def test_bad_scenario_files(obj_patch, needle) -> None:
    base = {
        "inputs": [{"name": "a", "columns": [["k", "BIGINT"], ["x", "VARCHAR"]]},
                   {"name": "b", "columns": [["k", "BIGINT"], ["y", "BIGINT"]]}],
        "join": {"inputs": ["a", "b"], "types": ["inner"], "conditions": ["a.k = b.k"]},
    }
    base.update(obj_patch)
    with pytest.raises(BadInputError) as info:
        scenario_from_dict(base)
    assert needle in str(info.value)


def test_condition_errors_name_the_condition() -> None:
    with pytest.raises(BadInputError, match=r"join.conditions\[0\]"):
        LocalRuntime(_scenario(cond="a.k = b.nope"))
    with pytest.raises(ConvergeError):
        LocalRuntime(_scenario(cond="a.k = = b.k"))


def test_ttl_tolerates_retraction_of_expired_rows() -> None:
    s = scenario_from_dict({
        "inputs": [{"name": "a", "columns": [["k", "BIGINT"]]}, {"name": "b", "columns": [["k", "BIGINT"]]}],
        "join": {"inputs": ["a", "b"], "types": ["inner"], "conditions": ["a.k = b.k"]},
        "config": {"state_ttl_ms": 5},
        "events": [{"input": "a", "kind": "+I", "row": [1]}, {"processing_time": 10},
                   {"input": "a", "kind": "-D", "row": [1]}],
    })
    rt = LocalRuntime(s)
    assert rt.run().per_event == [[], [], []]
