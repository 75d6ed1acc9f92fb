"""An interval join whose lower bound is above its upper bound (issue 40): valid SQL that Flink plans as no join
(StreamExecIntervalJoin.createNegativeWindowSizeJoin): nothing joins, every outer row is padded as it arrives,
late rows too. Expected outputs are worked by hand below."""

from __future__ import annotations

from collections import Counter

import pytest

from converge.engine.materialize import clean, fold
from converge.engine.model.changelog import Change, OutputWatermark
from converge.engine.model.scenario_json import scenario_from_dict
from converge.engine.operators.negative_window import NegativeWindowJoinOperator
from converge.engine.planner import plan
from converge.engine.runtime.local import run_scenario
from converge.oracle.interval import batch_interval_join
from converge.properties.divergence import PropertyFailure
from converge.properties.empty_window import empty_window_equals_oracle, empty_window_matches_flink
from converge.properties.replay import applicable_properties, replay_scenario

# a.ta - b.tb must lie in [3000, 1000]: no difference does
EVENTS = [{"input": "a", "kind": "+I", "row": [1, 5000]},   # 0
          {"input": "b", "kind": "+I", "row": [1, 3000]},   # 1: 5000 - 3000 = 2000 would join a window [1000, 3000]
          {"input": "a", "watermark": 10000},               # 2
          {"input": "b", "watermark": 10000},               # 3: the combined watermark rises to 10000
          {"input": "a", "kind": "+I", "row": [2, 4000]},   # 4: late (4000 <= 10000): a map drops nothing
          {"input": "b", "kind": "+I", "row": [2, 2000]}]   # 5: late


def _doc(jtype: str, lower: int = 3000, upper: int = 1000) -> dict:
    return {"name": f"empty window {jtype}",
            "inputs": [{"name": "a", "columns": [["k", "BIGINT"], ["ta", "BIGINT"]], "changelog_mode": "insert_only",
                        "time_column": "ta"},
                       {"name": "b", "columns": [["k", "BIGINT"], ["tb", "BIGINT"]], "changelog_mode": "insert_only",
                        "time_column": "tb"}],
            "join": {"inputs": ["a", "b"], "types": [jtype], "conditions": ["a.k = b.k"],
                     "interval": {"left_time": "a.ta", "right_time": "b.tb", "lower_ms": lower, "upper_ms": upper,
                                  "time": "event"}},
            "events": EVENTS}


L1, L2 = (1, 5000, None, None), (2, 4000, None, None)
R1, R2 = (None, None, 1, 3000), (None, None, 2, 2000)
# per event: the rows emitted (all +I), worked by hand from Flink's PadLeft / PadRight / FilterLeft / FilterRight
BY_HAND = {
    "inner": [[], [], [], [], [], []],
    "left": [[L1], [], [], [], [L2], []],
    "right": [[], [R1], [], [], [], [R2]],
    "full": [[L1], [R1], [], [], [L2], [R2]],
}


@pytest.mark.parametrize("jtype", BY_HAND)
def test_the_engine_emits_the_hand_worked_output(jtype: str) -> None:
    result = run_scenario(scenario_from_dict(_doc(jtype)))
    assert [[c.row for c in items if isinstance(c, Change)] for items in result.per_event] == BY_HAND[jtype]
    assert all(c.kind == "+I" for c in result.changes)
    # the union's watermark: the least of the inputs', not held back (no operator delays rows)
    assert [[o.watermark for o in items if isinstance(o, OutputWatermark)] for items in result.per_event] == \
        [[], [], [], [10000], [], []]


@pytest.mark.parametrize("jtype", BY_HAND)
def test_the_oracle_gives_the_hand_worked_answer(jtype: str) -> None:
    want = Counter(row for rows in BY_HAND[jtype] for row in rows)
    assert batch_interval_join(scenario_from_dict(_doc(jtype))) == want


def test_the_plan_is_flinks_union_of_maps() -> None:
    p = plan(scenario_from_dict(_doc("left")))
    assert isinstance(p.root.operator, NegativeWindowJoinOperator)
    assert p.explain().splitlines()[0].startswith("Union(PadLeft, FilterRight) (IntervalJoin(joinType=[LeftOuterJoin], "
                                                  "leftLowerBound=3000, leftUpperBound=1000)")


def test_a_window_of_one_point_still_joins() -> None:
    """[2000, 2000] (an equality of the time attributes, shifted) is a window: row 0 and row 1 join there."""
    result = run_scenario(scenario_from_dict(_doc("inner", 2000, 2000)))
    assert clean(fold(result.changes)) == Counter({(1, 5000, 1, 3000): 1})


@pytest.mark.parametrize("jtype", BY_HAND)
def test_replay_decides_an_empty_window_file_by_its_own_properties(jtype: str) -> None:
    scenario = scenario_from_dict(_doc(jtype))
    assert [n for n, _ in applicable_properties(scenario)] == [
        "empty_window_matches_flink", "empty_window_equals_oracle", "pairs_and_padding_once",
        "state_empty_after_final"]
    outcome = replay_scenario(scenario, scenario.name)  # type: ignore[arg-type]
    assert outcome.ok, outcome.problems


def test_the_properties_catch_an_operator_that_drops_late_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    original = NegativeWindowJoinOperator.process

    def drops_late(self, input_index, change, ctx):  # a join operator's habit, not a map's
        wm = ctx.watermark
        return [] if wm is not None and change.row[1] <= wm else original(self, input_index, change, ctx)

    monkeypatch.setattr(NegativeWindowJoinOperator, "process", drops_late)
    scenario = scenario_from_dict(_doc("full"))
    for check in (empty_window_matches_flink, empty_window_equals_oracle):
        with pytest.raises(PropertyFailure):
            check(scenario)
