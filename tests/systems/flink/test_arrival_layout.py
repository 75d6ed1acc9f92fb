"""The paced arrival's round layout (converge/systems/flink/program/arrival.py), without Flink or Java.

Expected layouts are written out by hand from the rules in the module's docstring: the lead (a dummy
per input, then fillers), event k of every case per round for record-by-record joins, N events of one
case per round for mini-batch joins, `guard` filler rounds between rounds with events.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from converge.systems.flink.environment import program_module
from tests.support.flink_client import bigint_input, case

arrival = program_module("arrival")
plan = program_module("case_plan").plan
LEAD = arrival.LEAD


def test_record_by_record_rounds_hold_event_k_of_every_case():
    a = [(0, ["+I", 1]), (1, ["+I", 2]), (1, ["-D", 2])]
    b = [(1, ["+I", 7])]
    assert arrival.rounds([a, b], 2) == [
        [(LEAD, 0, ["+I"]), (LEAD, 1, ["+I"])], [None, None],
        [(0, 0, ["+I", 1]), (1, 1, ["+I", 7])],
        [(0, 1, ["+I", 2]), None],
        [(0, 1, ["-D", 2]), None]]


def test_guard_rounds_sit_between_rounds_with_events_only():
    a = [(0, ["+I", 1]), (1, ["+I", 2])]
    assert arrival.rounds([a], 2, guard=2) == [
        [(LEAD, 0, ["+I"]), (LEAD, 1, ["+I"])], [None, None],
        [(0, 0, ["+I", 1]), None], [None, None], [None, None], [(0, 1, ["+I", 2]), None]]


def test_mini_batch_rounds_are_bundles_of_one_case():
    a = [(0, ["+I", 1]), (1, ["+I", 2]), (1, ["-U", 2]), (1, ["+U", 3]), (0, ["+I", 4])]
    b = [(1, ["+I", 9])]
    assert arrival.rounds([a, b], 2, bundle=2) == [
        [(LEAD, 0, ["+I"]), (LEAD, 1, ["+I"])], [None, None],
        [(0, 0, ["+I", 1]), (0, 1, ["+I", 2])],
        [(0, 1, ["-U", 2]), (0, 1, ["+U", 3])],
        [(0, 0, ["+I", 4]), None],
        [(1, 1, ["+I", 9]), None]]


def test_the_lead_is_as_wide_as_the_inputs():
    assert arrival.rounds([[(0, ["+I", 1])]], 3) == [
        [(LEAD, 0, ["+I"]), (LEAD, 1, ["+I"]), (LEAD, 2, ["+I"])], [None, None, None],
        [(0, 0, ["+I", 1]), None, None]]
    assert arrival.rounds([], 2) == [[(LEAD, 0, ["+I"]), (LEAD, 1, ["+I"])], [None, None]]


def test_a_bundle_holds_a_record():
    with pytest.raises(ValueError, match="at least one record"):
        arrival.rounds([[(0, ["+I", 1])]], 2, bundle=0)


event_lists = st.lists(st.lists(st.tuples(st.integers(0, 2), st.lists(st.integers(0, 9), min_size=1, max_size=2)
                                          .map(lambda v: ["+I", *v])), max_size=6), max_size=5)


@given(event_lists, st.sampled_from([None, 1, 2, 3]), st.integers(0, 2))
def test_every_event_once_in_its_case_order_and_rounds_of_one_width(orders, bundle, guard):
    laid = arrival.rounds(orders, 3, bundle, guard)
    assert len({len(r) for r in laid}) == 1
    for c, order in enumerate(orders):
        placed = [(slot[1], slot[2]) for r in laid for slot in r if slot is not None and slot[0] == c]
        assert placed == order
        if bundle is None:  # one event of a case per round: no two of them can share an epoch
            assert all(sum(1 for slot in r if slot is not None and slot[0] == c) <= 1 for r in laid)
    events = [r for r in laid[2:] if any(slot is not None for slot in r)]
    gaps = [i for i, r in enumerate(laid[2:]) if any(slot is not None for slot in r)]
    assert all(b - a == guard + 1 for a, b in itertools.pairwise(gaps)), (gaps, guard)
    assert len(events) == (max((len(o) for o in orders), default=0) if bundle is None
                           else sum(-(-len(o) // bundle) for o in orders))


def test_case_order_follows_the_events_when_they_spell_the_changelogs():
    events = [{"input": "b", "kind": "+I", "row": [1, 2]}, {"input": "a", "watermark": 5},
              {"input": "a", "kind": "+I", "row": [1, 1]}, {"input": "b", "kind": "-D", "row": [1, 2]}]
    rows = [[["+I", 1, 1]], [["+I", 1, 2], ["-D", 1, 2]]]
    assert arrival.case_order(events, ["a", "b"], rows) == [(1, ["+I", 1, 2]), (0, ["+I", 1, 1]), (1, ["-D", 1, 2])]


@pytest.mark.parametrize("events", [
    [],                                                              # no events: a case built by hand
    [{"input": "a", "kind": "+I", "row": [1, 1]}],                   # events that miss a change
    [{"input": "c", "kind": "+I", "row": [1, 1]}],                   # an input outside the chain
])
def test_case_order_falls_back_to_chain_order(events):
    rows = [[["+I", 1, 1]], [["+I", 1, 2]]]
    assert arrival.case_order(events, ["a", "b"], rows) == [(0, ["+I", 1, 1]), (1, ["+I", 1, 2])]


def test_plan_carries_the_case_order():
    a, b = bigint_input("a", ["k", "x"]), bigint_input("b", ["k", "y"])
    events = [{"input": "b", "kind": "+I", "row": [1, 0]}, {"input": "a", "kind": "+I", "row": [1, 5]}]
    planned = plan(case("c", [a, b], ["left"], ["a.k = b.k"], {"a": [["+I", 1, 5]], "b": [["+I", 1, 0]]},
                        events=events))
    assert planned.order == [(1, ["+I", 1, 0]), (0, ["+I", 1, 5])]


def test_runs_are_stretches_of_consecutive_events_on_one_input():
    order = [(0, ["+I", 1]), (0, ["+I", 2]), (1, ["+I", 7]), (0, ["-D", 1]), (1, ["-D", 7]), (1, ["+I", 8])]
    assert arrival.runs_of(order) == [[(0, ["+I", 1]), (0, ["+I", 2])], [(1, ["+I", 7])], [(0, ["-D", 1])],
                                      [(1, ["-D", 7]), (1, ["+I", 8])]]
    assert arrival.runs_of([]) == []


def test_with_runs_round_k_holds_run_k_of_every_case():
    a = [(0, ["+I", 1]), (0, ["+I", 2]), (1, ["+I", 7]), (1, ["-D", 7])]
    b = [(1, ["+I", 9]), (0, ["+I", 3])]
    assert arrival.rounds([a, b], 2, guard=1, runs=True) == [
        [(LEAD, 0, ["+I"]), (LEAD, 1, ["+I"]), None], [None, None, None],
        [(0, 0, ["+I", 1]), (0, 0, ["+I", 2]), (1, 1, ["+I", 9])], [None, None, None],
        [(0, 1, ["+I", 7]), (0, 1, ["-D", 7]), (1, 0, ["+I", 3])]]
    # a mini-batch job keeps its bundles: runs do not apply
    assert arrival.rounds([a], 2, bundle=3, runs=True) == arrival.rounds([a], 2, bundle=3)


@given(event_lists, st.integers(0, 2))
def test_with_runs_no_round_holds_two_inputs_of_one_case(orders, guard):
    laid = arrival.rounds(orders, 3, None, guard, runs=True)
    assert len({len(r) for r in laid}) == 1
    for c, order in enumerate(orders):
        placed = [(slot[1], slot[2]) for r in laid for slot in r if slot is not None and slot[0] == c]
        assert placed == order
        assert all(len({slot[1] for slot in r if slot is not None and slot[0] == c}) <= 1 for r in laid)
    events = [r for r in laid[2:] if any(slot is not None for slot in r)]
    runs = [sum(1 for i, e in enumerate(o) if i == 0 or o[i - 1][0] != e[0]) for o in orders]
    assert len(events) == max(runs, default=0)
