"""One table in several places: inputs that read another input's stream (`source`), as a self-join does.

The expected answers are written by hand: the one change reaches every input that reads the stream, within
the one event, in chain order; the oracle joins the one table with itself.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings

from converge.engine.model.changelog import Change
from converge.engine.model.errors import BadInputError, UnsupportedError
from converge.engine.model.scenario import Scenario, WatermarkEvent
from converge.engine.model.scenario_json import scenario_from_dict, scenario_to_dict
from converge.engine.runtime.local import LocalRuntime, run_scenario
from converge.generators.views import self_join_scenarios
from converge.oracle.duckdb_oracle import DuckDBOracle
from converge.properties import regular

COLUMNS = [["id", "BIGINT"], ["boss", "BIGINT"], ["name", "VARCHAR"]]


def employees(events: list[list], **patch: object) -> dict:
    """SELECT * FROM emp AS e LEFT JOIN emp AS m ON e.boss = m.id: e and m both read emp's stream."""
    doc = {"inputs": [{"name": "emp", "columns": COLUMNS},
                      {"name": "e", "columns": COLUMNS, "source": "emp"},
                      {"name": "m", "columns": COLUMNS, "source": "emp"}],
           "join": {"inputs": ["e", "m"], "types": ["left"], "conditions": ["e.boss = m.id"]},
           "events": [{"input": name, "kind": kind, "row": row} for name, kind, row in events]}
    doc.update(patch)
    return doc


SELF_JOIN = scenario_from_dict(employees([
    ["emp", "+I", [1, None, "ann"]],   # 0: e: ann has no boss (padded); m: ann joins nobody yet
    ["emp", "+I", [2, 1, "bob"]],      # 1: e: bob's boss is ann; m: bob is nobody's boss
    ["emp", "+I", [3, 3, "cat"]],      # 2: e: cat padded first; then m: cat is her own boss
    ["emp", "-D", [1, None, "ann"]],   # 3: e: ann's padded row goes; m: bob loses his boss, padded again
]))


def test_a_self_join_feeds_each_change_to_both_inputs_in_chain_order() -> None:
    out = [[c for c in items if isinstance(c, Change)] for items in run_scenario(SELF_JOIN).per_event]
    assert out == [
        [Change("+I", (1, None, "ann", None, None, None))],
        [Change("+I", (2, 1, "bob", 1, None, "ann"))],
        [Change("+I", (3, 3, "cat", None, None, None)), Change("-D", (3, 3, "cat", None, None, None)),
         Change("+I", (3, 3, "cat", 3, 3, "cat"))],
        [Change("-D", (1, None, "ann", None, None, None)), Change("-D", (2, 1, "bob", 1, None, "ann")),
         Change("+I", (2, 1, "bob", None, None, None))],
    ]
    final = Counter({(2, 1, "bob", None, None, None): 1, (3, 3, "cat", 3, 3, "cat"): 1})
    assert run_scenario(SELF_JOIN).final == final
    assert DuckDBOracle().final(SELF_JOIN) == final
    assert DuckDBOracle().history(SELF_JOIN)[1] == Counter({(1, None, "ann", None, None, None): 1,
                                                            (2, 1, "bob", 1, None, "ann"): 1})


def test_a_reader_with_its_own_view() -> None:
    doc = employees([["emp", "+I", [1, None, "ann"]], ["emp", "+I", [2, 1, "bob"]]])
    doc["inputs"][2]["project"] = [["id", "id"], ["boss_name", "upper(name)"]]
    doc["join"]["select"] = [["who", "e.name"], ["boss", "m.boss_name"]]
    s = scenario_from_dict(doc)
    want = Counter({("ann", None): 1, ("bob", "ANN"): 1})
    assert run_scenario(s).final == want and DuckDBOracle().final(s) == want
    assert scenario_from_dict(scenario_to_dict(s)) == s


@pytest.mark.parametrize("patch, error, message", [
    (lambda d: d["events"].append({"input": "e", "kind": "+I", "row": [1, None, "x"]}), BadInputError,
     "events[0].input: input 'e' reads the stream of 'emp': write its events on 'emp'"),
    (lambda d: d["inputs"][1].update(source="nope"), BadInputError, "inputs[1].source: 'nope' is not another"),
    (lambda d: d["inputs"][1].update(source="e"), BadInputError, "inputs[1].source: 'e' is not another"),
    (lambda d: d["inputs"][2].update(source="e"), BadInputError, "reads 'emp' itself"),
    (lambda d: d["inputs"][1].update(columns=COLUMNS[:2]), BadInputError, "declares the same columns"),
    (lambda d: d.update(config={"dedupe_before_join": {"e": ["id"]}}), UnsupportedError, "not modelled yet"),
])
def test_wrong_sources_are_refused(patch, error: type[Exception], message: str) -> None:
    doc = employees([])
    patch(doc)
    with pytest.raises(error, match=message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")):
        scenario_from_dict(doc)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(self_join_scenarios())
def test_generated_self_joins_agree_with_the_oracle(scenario: Scenario) -> None:
    assert {spec.source for spec in scenario.chain} == {"t"}
    regular.prefix_consistency(scenario)
    regular.final_convergence(scenario)


def test_a_watermark_on_the_stream_reaches_every_reader_and_one_on_a_reader_is_refused() -> None:
    """Flink's scan of the one table emits one watermark, and both join inputs that read the scan see it."""
    runtime = LocalRuntime(SELF_JOIN)
    runtime.process_event(WatermarkEvent("emp", 7))
    [join] = runtime._order
    assert join.input_wms == [7, 7]
    runtime.process_event(WatermarkEvent("emp", 5))  # lower: each input keeps the higher one
    assert join.input_wms == [7, 7]
    with pytest.raises(BadInputError, match="input 'e' reads the stream of 'emp': write its watermarks on 'emp'"):
        runtime.process_event(WatermarkEvent("e", 9))
    marked = SELF_JOIN.with_events(tuple(e for pair in zip(SELF_JOIN.events, [WatermarkEvent("emp", i)
                                                                               for i in range(4)], strict=True)
                                         for e in pair))
    assert run_scenario(marked).final == run_scenario(SELF_JOIN).final
