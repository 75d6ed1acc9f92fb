"""StreamingMultiJoinOperator: what it stores (counted by hand), bad input, and its contract."""

from __future__ import annotations

import pytest

from converge.cli.benches.multiway import chain_scenario, compare
from converge.engine.model.changelog import Change
from converge.engine.model.errors import BadInputError, InternalError
from converge.engine.model.scenario import ChangeEvent, Config, InputSpec, JoinSpec, ProcessingTimeEvent, Scenario
from converge.engine.operators.multi_join import MultiJoinInput, MultiJoinSpec, StreamingMultiJoinOperator
from converge.engine.planner import plan
from converge.engine.runtime.local import LocalRuntime
from converge.engine.views import JoinInputSideSpec

COLS = (("k", "BIGINT"), ("v", "BIGINT"))


def star(types: tuple[str, ...], events: list, *, multi: bool = True, uk: tuple | None = None,
         mode: str = "retract", ttl=None) -> Scenario:
    names = "abcde"[:len(types) + 1]
    specs = tuple(InputSpec(n, COLS, uk, mode) for n in names)  # type: ignore[arg-type]
    conds = tuple(f"a.k = {n}.k" for n in names[1:])
    cfg = Config(state_ttl_ms=ttl, multi_join="on" if multi else "off")
    return Scenario("star", specs, JoinSpec(tuple(names), types, conds), cfg, tuple(events))


def test_state_is_the_input_records_and_the_binary_chain_keeps_intermediate_rows() -> None:
    # key 1: two rows in each of a, b, c (no unique key: one map entry per distinct row)
    events = [ChangeEvent(n, "+I", (1, v)) for v in (1, 2) for n in "abc"]
    multi = LocalRuntime(star(("inner", "inner"), events))
    binary = LocalRuntime(star(("inner", "inner"), events, multi=False))
    multi.run()
    binary.run()
    assert multi.state_entries() == 6
    # join[0]: a 2 + b 2; join[1]: the 4 rows of a JOIN b + c 2
    assert binary.state_entries() == 10
    (node, backend), = multi.node_backends()
    assert backend.live_entries() == {"multi-join-input-0": 2, "multi-join-input-1": 2, "multi-join-input-2": 2}


def test_retractions_leave_no_trace() -> None:
    events = [ChangeEvent("a", "+I", (1, 1)), ChangeEvent("b", "+I", (1, 2)), ChangeEvent("c", "+I", (1, 3)),
              ChangeEvent("b", "-D", (1, 2)), ChangeEvent("a", "-D", (1, 1)), ChangeEvent("c", "-D", (1, 3))]
    rt = LocalRuntime(star(("left", "left"), events))
    out = rt.run()
    assert rt.state_entries() == 0
    # a's last change emits the padded row's retraction with a's own kind, as Flink's multi-way join does
    assert out.per_event[4] == [Change("-D", (1, 1, None, None, 1, 3))]


def test_upsert_inputs_hold_one_row_per_key_behind_normalize() -> None:
    events = [ChangeEvent("a", "+I", (1, 1)), ChangeEvent("b", "+I", (1, 2)), ChangeEvent("c", "+I", (1, 3)),
              ChangeEvent("b", "+U", (1, 4)), ChangeEvent("b", "+U", (1, 5))]
    s = star(("inner", "inner"), events, uk=("k",), mode="upsert")
    rt = LocalRuntime(s)
    out = rt.run()
    multi = next(b for n, b in rt.node_backends() if isinstance(n.operator, StreamingMultiJoinOperator))
    assert multi.live_entries() == {"multi-join-input-0": 1, "multi-join-input-1": 1, "multi-join-input-2": 1}
    assert out.per_event[4] == [Change("-U", (1, 1, 1, 4, 1, 3)), Change("+U", (1, 1, 1, 5, 1, 3))]


def test_per_input_ttl_expires_each_input_on_its_own() -> None:
    events = [ProcessingTimeEvent(0)] + [ChangeEvent(n, "+I", (1, 1)) for n in "abc"] + [ProcessingTimeEvent(5)]
    rt = LocalRuntime(star(("inner", "inner"), events, ttl={"a": 100, "b": 5, "c": 6}))
    rt.run()
    (_, backend), = rt.node_backends()
    assert backend.live_entries() == {"multi-join-input-0": 1, "multi-join-input-1": 0, "multi-join-input-2": 1}
    # b's row is gone: a new c row finds no combination to join
    assert rt.process_event(ChangeEvent("c", "+I", (1, 2))) == []


def test_retracting_an_unknown_row_is_bad_input_and_changes_nothing() -> None:
    events = [ChangeEvent("a", "+I", (1, 1)), ChangeEvent("b", "+I", (1, 2))]
    rt = LocalRuntime(star(("left", "left"), events))
    rt.run()
    before = rt.snapshot()
    with pytest.raises(BadInputError, match=r"event 2: .*retracts row \[1, 9\]"):
        rt.process_event(ChangeEvent("b", "-D", (1, 9)))
    assert rt.snapshot()["nodes"] == before["nodes"]


def _input(name: str, key: tuple[int, ...] = (0,)) -> MultiJoinInput:
    spec = InputSpec(name, COLS)
    return MultiJoinInput(spec, JoinInputSideSpec("InputSideHasNoUniqueKey", None), key, None, True)


def test_operator_runs_inner_and_left_only_on_one_key_width() -> None:
    good = dict(conditions=(None, None, None), condition_sql=("", "", ""), common_key=("a.k",))
    with pytest.raises(InternalError, match="INNER and LEFT"):
        StreamingMultiJoinOperator(MultiJoinSpec(inputs=(_input("a"), _input("b"), _input("c")),
                                                 join_types=("inner", "full", "inner"), **good))
    with pytest.raises(InternalError, match="same non-empty common key"):
        StreamingMultiJoinOperator(MultiJoinSpec(inputs=(_input("a"), _input("b", (0, 1)), _input("c")),
                                                 join_types=("inner", "inner", "left"), **good))
    op = StreamingMultiJoinOperator(MultiJoinSpec(inputs=(_input("a"), _input("b"), _input("c")),
                                                  join_types=("inner", "inner", "left"), **good))
    assert op.num_inputs == 3 and op.key_of(2, (7, 8)) == (7,)


def test_benchmark_workloads_show_the_saving() -> None:
    case = compare(4, "low_selectivity", 240)
    # per key 3 rows in each of a, b, c, d (12 live); the chain's state per key: a 3 + b 3, a⋈b 9 + c 3,
    # a⋈b⋈c 27 + d 3 = 48 entries, four times the live rows
    assert case["multi_state_equals_live_inputs"]
    assert case["binary"]["state_entries"] == 4 * case["live_input_records"]
    assert case["multi"]["multi_way_operators"] == 1 and case["binary"]["multi_way_operators"] == 0
    hot = chain_scenario(3, "hot_key", 200, multi=True)
    assert len(plan(hot).nodes()) == 1
