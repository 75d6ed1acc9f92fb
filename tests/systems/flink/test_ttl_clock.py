"""State TTL on the paced wall clock (converge/systems/flink/program/ttl_clock.py and its use in case_plan.py),
without Flink or Java.

Expected layouts and decisions are worked out by hand from the module's rules: instant t is round 3 + 8t
(two lead rounds and a filler before it), a logical ms is 800 ms of wall clock, the TTL sent is half a logical
ms short, and a pair of instants w < r is undecided when the measured slip between them plus the 200 ms margin
reaches |r - w - ttl + 1/2| * 800 ms.
"""

from __future__ import annotations

import json

import pytest

from converge.properties.systems.ttl import NOT_DECIDED
from converge.systems.flink.environment import program_module
from tests.support.flink_client import bigint_input, case

ttl_clock = program_module("ttl_clock")
case_plan = program_module("case_plan")
Untranslatable = program_module("condition_sql").Untranslatable
LEAD, PROBE = program_module("arrival").LEAD, ttl_clock.PROBE
AB = [bigint_input("a", ["k", "x"], mode="insert_only"), bigint_input("b", ["k", "y"], mode="retract")]


def ttl_case(events: list, ttl=2, types=("left",), inputs=AB, **config) -> dict:
    changes = {"a": [], "b": []}
    for e in events:
        if "input" in e:
            changes[e["input"]].append([e["kind"], *e["row"]])
    return case("c", inputs, list(types), ["a.k = b.k"], changes, config={"state_ttl_ms": ttl, **config},
                events=events)


def ins(name: str, *row) -> dict:
    return {"input": name, "kind": "+I", "row": list(row)}


def test_the_clock_constants_are_the_documented_ones():
    clock = ttl_clock.CLOCK
    assert (clock.round_ms, clock.rounds_per_ms, clock.ms_per_logical_ms) == (100, 8, 800)
    assert ttl_clock.MARGIN_MS == 200
    assert ttl_clock.UNDECIDED == NOT_DECIDED  # converge's property recognises the adapter's answer by it


def test_the_ttl_sent_is_half_a_logical_ms_short():
    # written at w, read at w + ttl - 1: (ttl - 1) * 800 < sent (visible); read at w + ttl: ttl * 800 >= sent (gone)
    assert [ttl_clock.CLOCK.wall_ttl(t) for t in (1, 2, 6)] == [400, 1200, 4400]
    assert [ttl_clock.CLOCK.logical_ttl(w) for w in (400, 1200, 4400)] == [1, 2, 6]
    with pytest.raises(ttl_clock.ClockError):
        ttl_clock.CLOCK.wall_ttl(0)


def test_instants_follow_processing_time_events():
    events = [ins("a", 1, 1), {"processing_time": 2}, ins("b", 1, 5), ins("b", 2, 5), {"processing_time": 5},
              {"watermark": 3, "input": "a"}, ins("a", 2, 2)]
    assert ttl_clock.instants(events, ["a", "b"]) == [0, 2, 2, 5]
    with pytest.raises(ttl_clock.ClockError, match="never"):
        ttl_clock.instants([{"processing_time": 3}, {"processing_time": 1}], ["a", "b"])


def test_an_instant_with_changes_of_two_inputs_is_refused():
    order = [(0, ["+I", 1, 1]), (1, ["+I", 1, 5])]
    ttl_clock.check_runs(order, [0, 1])
    with pytest.raises(ttl_clock.ClockError, match="share processing time 0 on two inputs"):
        ttl_clock.check_runs(order, [0, 0])
    with pytest.raises(Untranslatable, match="share processing time 0 on two inputs"):
        case_plan.plan(ttl_case([ins("a", 1, 1), ins("b", 1, 5)]))  # both at instant 0


def test_a_ttl_case_is_planned_with_its_instants_and_the_wall_ttl():
    planned = case_plan.plan(ttl_case([ins("a", 1, 1), ins("a", 2, 2), {"processing_time": 1}, ins("b", 1, 5),
                                       {"processing_time": 4}, ins("a", 1, 3)], ttl=3))
    assert planned.instants == [0, 0, 1, 4]
    assert planned.shape.ttl_ms == 2000
    assert json.loads(planned.shape.job_key)[-1] == 2000  # the TTL is a setting of the whole job
    other = case_plan.plan(ttl_case([ins("a", 1, 1)], ttl=2))
    assert other.shape.key != planned.shape.key and other.shape.job_key != planned.shape.job_key
    plain = case_plan.plan(case("p", AB, ["left"], ["a.k = b.k"], {"a": [["+I", 1, 1]]}))
    assert plain.shape.ttl_ms is None and plain.instants == []


@pytest.mark.parametrize(("change", "reason"), [
    ({"ttl": {"a": 2}}, "per input"),
    ({"types": ("semi",)}, "binary INNER/LEFT/RIGHT/FULL"),
    ({"inputs": [AB[0], bigint_input("b", ["k", "y"], unique_key=["k"], mode="upsert")]}, "ChangelogNormalize"),
    ({"mini_batch_size": 2}, "mini-batch"),
    ({"parallelism": 2}, "parallelism 1"),
    ({"restart_after": 1}, "no restart"),
    ({"ttl": 0}, "expires nothing"),
])
def test_what_the_wall_clock_does_not_drive_is_unsupported_with_the_reason(change, reason):
    with pytest.raises(Untranslatable, match=reason):
        case_plan.plan(ttl_case([ins("a", 1, 1)], **change))


def test_rounds_sit_on_the_grid_with_a_probe_in_each_round_of_changes():
    a = [(0, ["+I", 1, 1]), (0, ["+I", 2, 2]), (1, ["+I", 1, 5])]
    b = [(1, ["+I", 7, 7])]
    laid = ttl_clock.timed_rounds([a, b], [[0, 0, 2], [1]], 2)
    assert len(laid) == 3 + 2 * 8 + 1  # instant 2's round is 3 + 16
    assert laid[0] == [(LEAD, 0, ["+I"]), (LEAD, 1, ["+I"]), None]
    assert laid[3] == [(PROBE, 0, ["+I"]), (0, 0, ["+I", 1, 1]), (0, 0, ["+I", 2, 2])]
    assert laid[11] == [(PROBE, 0, ["+I"]), (1, 1, ["+I", 7, 7]), None]
    assert laid[19] == [(PROBE, 0, ["+I"]), (0, 1, ["+I", 1, 5]), None]
    busy = {3, 11, 19}
    assert all(r == [None, None, None] for n, r in enumerate(laid) if n and n not in busy)
    assert ttl_clock.probed([[0, 0, 2], [1]]) == [0, 1, 2]


def test_slips_are_measured_from_the_first_probed_instant():
    assert ttl_clock.slips([1000.0, 1810.0, 3390.0], [1, 2, 4]) == {1: 0.0, 2: 10.0, 4: -10.0}
    assert ttl_clock.slips([], []) == {}


def test_a_pair_is_undecided_when_the_slip_and_the_margin_reach_its_distance():
    # ttl 2: instants 0 and 2 are 1/2 logical ms past the boundary (400 ms): decided while slip + 200 < 400
    assert ttl_clock.undecided([0, 2], 2, {0: 0.0, 2: 199.0}) is None
    why = ttl_clock.undecided([0, 2], 2, {0: 0.0, 2: 200.0})
    assert why.startswith(NOT_DECIDED) and "slipped 200 ms between logical instants 0 and 2" in why
    # 0 and 1 are 1/2 logical ms before it; 0 and 5 are 3.5 logical ms past it (2800 ms): a slip of 2 s is fine
    assert ttl_clock.undecided([0, 1], 2, {0: 0.0, 1: -200.0}) is not None
    assert ttl_clock.undecided([0, 5], 2, {0: 0.0, 5: 2000.0}) is None
    # a slip shared by both instants moves nothing
    assert ttl_clock.undecided([3, 5], 2, {3: 900.0, 5: 900.0}) is None
    assert "not every one" in ttl_clock.undecided([0, 5], 2, {0: 0.0})


def test_the_probe_branch_stamps_its_own_case_id():
    sql = ttl_clock.probe_sql("v0", "v1")
    assert sql.startswith("SELECT JSON_ARRAY(t0cid - 1, CAST(CURRENT_TIMESTAMP AS STRING) NULL ON NULL) FROM ")
    assert f"WHERE t0cid = {PROBE}" in sql and f"WHERE t1cid = {PROBE}" in sql and "LEFT JOIN" in sql
    assert ttl_clock.STAMPED == PROBE - 1
