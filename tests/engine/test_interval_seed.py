"""The interval-join write-up's worked example, step by step: what is stored, which timers exist, when state goes.

The scenario file holds the emitted rows and watermarks; this test also checks
the operator's state after every event against a table written by hand from
the write-up's text (times are milliseconds since midnight, 10:00:00 = 36000000).
"""

from __future__ import annotations

import pytest

from converge.engine.model.scenario_json import load_scenario
from converge.engine.runtime.local import LocalRuntime
from tests.support import paths

SCENARIOS = paths.SCENARIOS / "interval"

A, B = 0, 1
T10_00, T10_01_02, T10_05, T10_12 = 36_000_000, 36_062_000, 36_300_000, 36_720_000

# After each event: cached rows as {(side, order_id, time, joined flag)}, and the cleanup timers per key as
# {order_id: (timer of the left cache, timer of the right cache)}.
STORED_1001_A = (A, 1001, T10_00, False)
STORED_1002_B = (B, 1002, T10_01_02, False)
SEED_STEPS = [
    # 1. left 1001 @ 10:00:00 at watermark 0: stored (0 < 10:10:00); timer 10:20:00.001
    ({STORED_1001_A}, {1001: (37_200_001, None)}),
    ({STORED_1001_A}, {1001: (37_200_001, None)}),
    ({STORED_1001_A}, {1001: (37_200_001, None)}),
    # 2. right 1002 @ 10:01:02 at watermark 10:00:00: stored (10:00 < 10:11:02); timer 10:21:02.001
    ({STORED_1001_A, STORED_1002_B}, {1001: (37_200_001, None), 1002: (None, 37_262_001)}),
    ({STORED_1001_A, STORED_1002_B}, {1001: (37_200_001, None), 1002: (None, 37_262_001)}),
    ({STORED_1001_A, STORED_1002_B}, {1001: (37_200_001, None), 1002: (None, 37_262_001)}),
    # 3. left 1002 @ 10:05:00 at watermark 10:01:02 joins right 1002 (both now flagged as joined); stored,
    #    timer 10:25:00.001
    ({STORED_1001_A, (A, 1002, T10_05, True), (B, 1002, T10_01_02, True)},
     {1001: (37_200_001, None), 1002: (37_500_001, 37_262_001)}),
    ({STORED_1001_A, (A, 1002, T10_05, True), (B, 1002, T10_01_02, True)},
     {1001: (37_200_001, None), 1002: (37_500_001, 37_262_001)}),
    ({STORED_1001_A, (A, 1002, T10_05, True), (B, 1002, T10_01_02, True)},
     {1001: (37_200_001, None), 1002: (37_500_001, 37_262_001)}),
    # 4. right 1001 @ 10:12:00 at watermark 10:05:00: left 1001 @ 10:00 is below 10:02:00, no join, and not
    #    expired (09:54:59.999); stored, timer 10:32:00.001
    ({STORED_1001_A, (A, 1002, T10_05, True), (B, 1002, T10_01_02, True), (B, 1001, T10_12, False)},
     {1001: (37_200_001, 37_920_001), 1002: (37_500_001, 37_262_001)}),
    ({STORED_1001_A, (A, 1002, T10_05, True), (B, 1002, T10_01_02, True), (B, 1001, T10_12, False)},
     {1001: (37_200_001, 37_920_001), 1002: (37_500_001, 37_262_001)}),
    # watermark 10:20:00.001: left 1001 expires (10:00 <= 10:10:00) and is padded
    ({(A, 1002, T10_05, True), (B, 1002, T10_01_02, True), (B, 1001, T10_12, False)},
     {1001: (None, 37_920_001), 1002: (37_500_001, 37_262_001)}),
    ({(A, 1002, T10_05, True), (B, 1002, T10_01_02, True), (B, 1001, T10_12, False)},
     {1001: (None, 37_920_001), 1002: (37_500_001, 37_262_001)}),
    # watermark 10:21:02.001: right 1002 expires (joined: no padding)
    ({(A, 1002, T10_05, True), (B, 1001, T10_12, False)}, {1001: (None, 37_920_001), 1002: (37_500_001, None)}),
    ({(A, 1002, T10_05, True), (B, 1001, T10_12, False)}, {1001: (None, 37_920_001), 1002: (37_500_001, None)}),
    # watermark 10:25:00.001: left 1002 expires
    ({(B, 1001, T10_12, False)}, {1001: (None, 37_920_001)}),
    ({(B, 1001, T10_12, False)}, {1001: (None, 37_920_001)}),
    # watermark 10:32:00.001: right 1001 expires unmatched and is padded; nothing is left
    (set(), {}),
]


def _state(rt: LocalRuntime) -> tuple[set, dict]:
    op = rt.plan.root.operator
    stored = {(side, row[0], time, flag) for side, _, time, row, flag in op.stored_rows()}
    timers = {key[0]: value for key, value in op.cleanup_timer_values().items()}
    return stored, timers


def test_seed_walkthrough_state_after_every_event() -> None:
    scenario = load_scenario(SCENARIOS / "seed_walkthrough_seed_cleanup_interval.json")
    assert len(scenario.events) == len(SEED_STEPS)
    rt = LocalRuntime(scenario)
    for i, event in enumerate(scenario.events):
        rt.process_event(event)
        assert _state(rt) == SEED_STEPS[i], f"after event {i}"
    assert rt.state_entries() == 0 and rt.pending_timers() == 0


@pytest.mark.parametrize("watermark, cleared", [(36_599_999, False), (36_600_000, False), (36_600_001, True)])
def test_default_cleanup_fires_one_millisecond_after_the_window(watermark: int, cleared: bool) -> None:
    """Left 1001 @ 10:00:00 with a 10-minute window: timer 10:10:00.001, expiration time wm - 10min - 1."""
    scenario = load_scenario(SCENARIOS / "seed_walkthrough_default_cleanup.json")
    rt = LocalRuntime(scenario)
    rt.process_event(scenario.events[0])
    assert _state(rt)[1] == {1001: (36_600_001, None)}
    from converge.engine.model.scenario import WatermarkEvent

    rt.process_event(WatermarkEvent("a", watermark))
    rt.process_event(WatermarkEvent("b", watermark))
    assert (_state(rt)[0] == set()) is cleared
    assert rt.pending_timers() == (0 if cleared else 1)


def test_explain_names_the_bounds() -> None:
    from converge.engine.planner import plan

    text = plan(load_scenario(SCENARIOS / "seed_walkthrough_seed_cleanup_interval.json")).explain()
    assert "IntervalJoin(joinType=[FullOuterJoin]" in text
    assert "leftLowerBound=-600000, leftUpperBound=600000" in text
    assert "minCleanUpInterval=[600000]" in text
