"""The restart's round layout (converge/systems/flink/program/restart.py), without Flink or Java.

Expected layouts are written out by hand from the module's docstring: the rounds of every case's first
`restart_after` changes (a mini-batch join: rounded up to whole bundles), a marker round, the gap's filler
rounds, a second lead (the gap's end on input 0, the other inputs' dummies, a filler round), then the rounds of
the remaining changes, all as wide as the widest round.
"""

from __future__ import annotations

import pytest

from converge.systems.flink.environment import program_module

restart = program_module("restart")
LEAD = program_module("arrival").LEAD
M, E = restart.MARKER, restart.GAP_END


def test_record_by_record_the_cut_falls_after_event_k_of_every_case():
    a = [(0, ["+I", 1]), (1, ["+I", 2]), (1, ["-D", 2])]
    b = [(1, ["+I", 7]), (0, ["+I", 8])]
    laid, marker = restart.restart_rounds([a, b], 2, None, 0, 1, gap=2)
    assert laid == [
        [(LEAD, 0, ["+I"]), (LEAD, 1, ["+I"])], [None, None],
        [(0, 0, ["+I", 1]), (1, 1, ["+I", 7])],
        [(M, 0, ["+I"]), None], [None, None], [None, None], [(E, 0, ["+I"]), (LEAD, 1, ["+I"])], [None, None],
        [(0, 1, ["+I", 2]), (1, 0, ["+I", 8])],
        [(0, 1, ["-D", 2]), None]]
    assert marker == 3


def test_a_guard_precedes_the_marker_and_the_second_lead_has_a_dummy_per_input():
    a = [(0, ["+I", 1]), (1, ["+I", 2])]
    laid, marker = restart.restart_rounds([a], 3, None, 1, 1, gap=1)
    assert laid == [
        [(LEAD, 0, ["+I"]), (LEAD, 1, ["+I"]), (LEAD, 2, ["+I"])], [None, None, None],
        [(0, 0, ["+I", 1]), None, None],
        [None, None, None], [(M, 0, ["+I"]), None, None], [None, None, None],
        [(E, 0, ["+I"]), (LEAD, 1, ["+I"]), (LEAD, 2, ["+I"])], [None, None, None],
        [(0, 1, ["+I", 2]), None, None]]
    assert laid[marker] == [(M, 0, ["+I"]), None, None]


def test_mini_batch_cut_is_rounded_up_to_a_whole_bundle():
    a = [(0, ["+I", 1]), (1, ["+I", 2]), (1, ["-U", 2]), (1, ["+U", 3]), (0, ["+I", 4])]
    laid, marker = restart.restart_rounds([a], 2, 2, 0, 1, gap=0)
    assert laid == [
        [(LEAD, 0, ["+I"]), (LEAD, 1, ["+I"])], [None, None],
        [(0, 0, ["+I", 1]), (0, 1, ["+I", 2])],
        [(M, 0, ["+I"]), None], [(E, 0, ["+I"]), (LEAD, 1, ["+I"])], [None, None],
        [(0, 1, ["-U", 2]), (0, 1, ["+U", 3])],
        [(0, 0, ["+I", 4]), None]]
    assert marker == 3


def test_cut_points_never_pass_a_case_end():
    orders = [[(0, ["+I", n]) for n in range(5)], [(0, ["+I", 1])], []]
    assert restart.cut_points(orders, 3, None) == [3, 1, 0]
    assert restart.cut_points(orders, 3, 2) == [4, 1, 0]
    assert restart.cut_points(orders, 0, 4) == [0, 0, 0]
    with pytest.raises(ValueError, match="counts changes"):
        restart.cut_points(orders, -1, None)


def test_restart_at_zero_or_at_the_end_keeps_every_event_once():
    a = [(0, ["+I", 1]), (1, ["+I", 2])]
    for after in (0, 2, 9):
        laid, _ = restart.restart_rounds([a], 2, None, 0, after, gap=3)
        events = [slot for r in laid for slot in r if slot is not None and slot[0] >= 0]
        assert events == [(0, 0, ["+I", 1]), (0, 1, ["+I", 2])]
        assert sum(slot == (M, 0, ["+I"]) for r in laid for slot in r) == 1


def test_every_round_is_as_wide_as_the_widest():
    a = [(0, ["+I", 1])]
    b = [(1, ["+I", 2]), (1, ["+I", 3])]
    c = [(0, ["+I", 4]), (0, ["+I", 5])]
    laid, _ = restart.restart_rounds([a, b, c], 2, None, 0, 1, gap=1)
    assert {len(r) for r in laid} == {3}


def test_the_marker_query_adds_an_unjoined_branch_of_input_zero():
    assert restart.marked_query("SELECT JSON_ARRAY(t0cid) FROM v0", "j1_v0") == (
        "SELECT JSON_ARRAY(t0cid) FROM v0 UNION ALL SELECT JSON_ARRAY(t0cid NULL ON NULL) FROM j1_v0 "
        "WHERE t0cid <= -1000")


def test_a_late_savepoint_is_retried_with_a_wider_gap():
    gaps = []

    def run(gap):
        gaps.append(gap)
        if len(gaps) < 3:
            raise restart.RestartMissed("late")
        return "done"

    assert restart.retrying(run) == "done"
    assert gaps == [restart.GAP, 2 * restart.GAP, 4 * restart.GAP]


def test_retrying_gives_up_after_its_tries():
    gaps = []

    def always_late(gap):
        gaps.append(gap)
        raise restart.RestartMissed("late")

    with pytest.raises(restart.RestartMissed):
        restart.retrying(always_late)
    assert len(gaps) == restart.TRIES


def test_the_restore_key_follows_flink_2_0s_rename():
    assert restart.restore_key("1.19.0") == restart.restore_key("1.20.3") == "execution.savepoint.path"
    assert restart.restore_key("2.0.1") == restart.restore_key("2.3.0") == "execution.state-recovery.path"
