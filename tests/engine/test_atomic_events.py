"""An event that is rejected part-way through a plan leaves no trace in any operator.

Each test drives a plan where the rejection happens after an earlier operator
(or an earlier step of the same operator) has already written state, checks
that the runtime's snapshot is exactly what it was before the bad event, and
then sends a valid retraction that a half-applied event would make fail (the
issue's "not in the join state" symptom) with the output it must give.
"""

from __future__ import annotations

import copy

import pytest

from converge.engine.model.changelog import Change
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import ChangeEvent, Scenario
from converge.engine.model.scenario_json import scenario_from_dict
from converge.engine.runtime.local import LocalRuntime


def _two_columns(name: str, mode: str = "retract", unique_key=None) -> dict:
    return {"name": name, "columns": [["k", "BIGINT"], [f"{name}v", "BIGINT"]], "unique_key": unique_key,
            "changelog_mode": mode}


def _runtime(inputs: list[dict], types: list[str], conditions: list[str], config: dict | None = None) -> LocalRuntime:
    scenario: Scenario = scenario_from_dict({
        "name": "atomic events",
        "inputs": inputs,
        "join": {"inputs": [i["name"] for i in inputs], "types": types, "conditions": conditions},
        "config": config or {},
        "events": [],
    })
    return LocalRuntime(scenario)


def _rejected_without_trace(rt: LocalRuntime, event: ChangeEvent, needle: str) -> None:
    before = copy.deepcopy(rt.snapshot())
    with pytest.raises(BadInputError, match=needle) as info:
        rt.process_event(event)
    assert info.value.event_index == before["event_index"]
    after = rt.snapshot()
    assert after == {**before, "event_index": before["event_index"] + 1}  # only the position moved past it


def test_a_run_that_goes_on_after_refused_events_names_each_by_its_own_index() -> None:
    rt = _runtime([_two_columns("a"), _two_columns("b")], ["inner"], ["a.k = b.k"])
    assert rt.process_event(ChangeEvent("a", "+I", (1, 1))) == []                   # event 0
    for index in (1, 2):                                                             # events 1 and 2: refused
        with pytest.raises(BadInputError, match="not in the join state") as info:
            rt.process_event(ChangeEvent("b", "-D", (9, 9)))
        assert info.value.event_index == index and str(info.value).startswith(f"event {index}: ")
    assert rt.process_event(ChangeEvent("b", "+I", (1, 5))) == [Change("+I", (1, 1, 1, 5))]  # event 3
    with pytest.raises(BadInputError) as info:                                       # event 4
        rt.process_event(ChangeEvent("a", "-D", (2, 2)))
    assert info.value.event_index == 4


def test_residual_error_in_the_second_join_of_a_chain_undoes_the_first_join() -> None:
    # (a JOIN b) JOIN c: b's row is stored by the first join, then the second join's residual divides by c.cv = 0
    rt = _runtime([_two_columns("a"), _two_columns("b"), _two_columns("c")], ["inner", "inner"],
                  ["a.k = b.k", "b.k = c.k AND 10 // c.cv > 0"])
    assert rt.process_event(ChangeEvent("a", "+I", (1, 1))) == []
    assert rt.process_event(ChangeEvent("c", "+I", (1, 0))) == []
    _rejected_without_trace(rt, ChangeEvent("b", "+I", (1, 5)), "division by zero")
    # a's row never met b's: its retraction is valid and changes nothing downstream
    assert rt.process_event(ChangeEvent("a", "-D", (1, 1))) == []
    assert rt.process_event(ChangeEvent("c", "-D", (1, 0))) == []


def test_residual_overflow_after_a_unique_key_replacement_keeps_the_replaced_row() -> None:
    # semantics=correct: a duplicate +I on a's unique key first retracts the stored row, then the new row overflows
    rt = _runtime([_two_columns("a", unique_key=["k"]), _two_columns("b")], ["inner"],
                  ["a.k = b.k AND a.av * 4611686018427387904 < 1"])
    assert rt.process_event(ChangeEvent("a", "+I", (1, 0))) == []
    assert rt.process_event(ChangeEvent("b", "+I", (1, 7))) == [Change("+I", (1, 0, 1, 7))]
    _rejected_without_trace(rt, ChangeEvent("a", "+I", (1, 2)), "overflow")
    # the replaced row is still there: retracting it is valid and retracts its joined row
    assert rt.process_event(ChangeEvent("a", "-D", (1, 0))) == [Change("-D", (1, 0, 1, 7))]


def test_upsert_rejected_behind_changelog_normalize_keeps_the_normalized_row() -> None:
    # normalize stores the new image of key 1, then the join's residual divides by its av = 0
    rt = _runtime([_two_columns("a", mode="upsert", unique_key=["k"]), _two_columns("b")], ["inner"],
                  ["a.k = b.k AND 10 // a.av > 0"])
    assert rt.process_event(ChangeEvent("a", "+I", (1, 5))) == []
    assert rt.process_event(ChangeEvent("b", "+I", (1, 7))) == [Change("+I", (1, 5, 1, 7))]
    _rejected_without_trace(rt, ChangeEvent("a", "+U", (1, 0)), "division by zero")
    # the upsert delete of key 1 retracts the row the join still holds
    assert rt.process_event(ChangeEvent("a", "-D", (1, 5))) == [Change("-D", (1, 5, 1, 7))]
