"""Many shapes in one Flink job (converge/systems/flink/program/session.py, FlinkSession.run_shapes).

A run request's cases of several shapes that share their job settings run as ONE job: one paced source whose
round k holds event k of every case of every shape, each shape's query over its own views, one UNION ALL. Each
case must come back with the changelog it gets in a request of its shape alone, exactly: where one input record
meets several stored rows, they come in the order of Flink's state, which on the heap backend hashes the case id,
so a case keeps in its input rows the id it has in a job of its shape alone (its index there) and only its
output rows carry its position in the job.
"""

from __future__ import annotations

import pytest

from converge.systems.flink.environment import program_module
from tests.support.flink_client import ProtocolClient, bigint_input, case

adapter_program = program_module("adapter")
pacing = program_module("pacing")
plan = program_module("case_plan").plan


def _events(rows: list[tuple]) -> tuple[dict, list[dict]]:
    logs: dict[str, list] = {}
    for name, kind, *row in rows:
        logs.setdefault(name, []).append([kind, *row])
    return logs, [{"input": n, "kind": k, "row": list(r)} for n, k, *r in rows]


def _left(case_id: str, shift: int) -> dict:
    """A LEFT join with a residual: the padding of a's row flips as b's row updates in and out of the match."""
    a, b = bigint_input("a", ["k", "x"]), bigint_input("b", ["k", "y"])
    logs, events = _events([("a", "+I", 1, 5 + shift), ("b", "+I", 1, 3), ("b", "-U", 1, 3), ("b", "+U", 1, 9 + shift),
                            ("a", "+I", 2, 7), ("b", "+I", 2, 1 + shift), ("a", "-D", 1, 5 + shift)])
    return case(case_id, [a, b], ["left"], ["a.k = b.k AND a.x > b.y"], logs, events=events)


def _chain(case_id: str, shift: int) -> dict:
    """A 3-input FULL then INNER chain of keyed upsert/insert-only inputs with other column counts."""
    p = bigint_input("p", ["id", "v", "w"], unique_key=["id"], mode="upsert")
    q = bigint_input("q", ["id", "u"], mode="insert_only")
    r = bigint_input("r", ["pid"], mode="retract")
    logs, events = _events([("p", "+I", 1, 10, shift), ("q", "+I", 2, 4), ("r", "+I", 1), ("p", "+U", 1, 11, shift),
                            ("q", "+I", 1, 6 + shift), ("r", "-D", 1), ("r", "+I", 2), ("p", "-D", 1, 11, shift)])
    return case(case_id, [p, q, r], ["full", "inner"], ["p.id = q.id", "r.pid = q.id"], logs,
                events=events)


def _semi(case_id: str) -> dict:
    """A SEMI join (EXISTS) whose right side is deleted and inserted again."""
    a, b = bigint_input("a", ["k"]), bigint_input("b", ["k", "z"])
    logs, events = _events([("a", "+I", 1), ("b", "+I", 1, 0), ("a", "+I", 2), ("b", "-D", 1, 0),
                            ("b", "+I", 2, 5), ("b", "+I", 1, 1)])
    return case(case_id, [a, b], ["semi"], ["a.k = b.k"], logs, events=events)


@pytest.mark.flink
@pytest.mark.xdist_group("flink")
def test_cases_of_three_shapes_in_one_request_get_their_one_shape_changelogs(flink: ProtocolClient):
    mixed = [_left("l0", 0), _chain("c0", 0), _semi("s0"), _left("l1", 20), _chain("c1", 3)]
    together = {r["id"]: r for r in flink.run(mixed)}
    alone = {r["id"]: r for r in flink.run([_left("l0", 0), _left("l1", 20)])}
    alone |= {r["id"]: r for r in flink.run([_chain("c0", 0), _chain("c1", 3)])}
    alone |= {r["id"]: r for r in flink.run([_semi("s0")])}
    assert all(r["status"] == "ok" for r in [*together.values(), *alone.values()]), together | alone
    assert {i: r["changelog"] for i, r in together.items()} == {i: r["changelog"] for i, r in alone.items()}
    # by hand, so that equal-but-wrong (say, every case empty) cannot pass: a's (1,5) is padded, then joins
    # (1,3), loses it as b's row becomes (1,9) (the joined row retracted with the input's kind, -U, then the
    # padding back), then is deleted; a's (2,7) is padded, then joins (2,1)
    assert together["l0"]["changelog"] == [
        ["+I", 1, 5, None, None], ["-D", 1, 5, None, None], ["+I", 1, 5, 1, 3], ["-U", 1, 5, 1, 3],
        ["+I", 1, 5, None, None], ["+I", 2, 7, None, None], ["-D", 2, 7, None, None], ["+I", 2, 7, 2, 1],
        ["-D", 1, 5, None, None]]
    assert together["s0"]["changelog"] == [["+I", 1], ["-D", 1], ["+I", 2], ["+I", 1]]


@pytest.mark.flink
@pytest.mark.xdist_group("flink")
def test_a_failing_shape_does_not_cost_the_others_their_answers(flink: ProtocolClient):
    """One shape's job fails at run time (a division by zero in its condition): the shared job fails, the adapter
    runs a job per shape, and the other shape's cases still get their answers; the failing case its error."""
    a, b = bigint_input("a", ["k", "x"]), bigint_input("b", ["k", "y"])
    logs, events = _events([("a", "+I", 1, 4), ("b", "+I", 1, 0)])
    failing = case("div0", [a, b], ["inner"], ["a.k = b.k AND a.x // b.y > 1"], logs, events=events)
    results = {r["id"]: r for r in flink.run([_left("l0", 0), failing, _semi("s0")])}
    assert results["div0"]["status"] == "error", results["div0"]
    assert results["l0"]["status"] == results["s0"]["status"] == "ok", results
    assert results["s0"]["changelog"] == [["+I", 1], ["-D", 1], ["+I", 2], ["+I", 1]]


def _fan_out(case_id: str, backend: str, shift: int = 0) -> dict:
    """A SEMI join on the heap backend whose right row, inserted then deleted, matches six stored left rows: the
    left rows come out in the HashMap order of their BinaryRowData, case id included."""
    a, b = bigint_input("a", ["k", "x"]), bigint_input("b", ["k"])
    rows = [("a", "+I", 1, x + shift) for x in range(6)] + [("b", "+I", 1), ("b", "-D", 1)]
    logs, events = _events(rows)
    one = case(case_id, [a, b], ["semi"], ["a.k = b.k"], logs, events=events)
    one["scenario"]["config"] = {"state_backend": backend}
    return one


@pytest.mark.flink
@pytest.mark.xdist_group("flink")
def test_a_later_shape_in_a_shared_job_keeps_its_heap_order(flink: ProtocolClient):
    """The second shape of a job: its cases' rows come in the order they come alone. Before, its input rows
    carried its position in the job (here 1 and 2, alone 0 and 1) and the heap backend's order moved with it."""
    first = _fan_out("f0", "hashmap")
    first["scenario"]["join"]["conditions"] = ["a.k = b.k AND a.x >= 0"]  # a shape of its own
    later = [_fan_out("g0", "hashmap"), _fan_out("g1", "hashmap", 3)]
    together = {r["id"]: r for r in flink.run([first, *later])}
    alone = {r["id"]: r for r in flink.run(later)}
    assert all(r["status"] == "ok" for r in [*together.values(), *alone.values()]), together | alone
    for cid in ("g0", "g1"):
        assert together[cid]["changelog"] == alone[cid]["changelog"], cid
        # every row in and out once; which order is the state's
        assert sorted(r[1:] for r in together[cid]["changelog"] if r[0] == "+I") == sorted(
            [[1, x] for x in range(6)] if cid == "g0" else [[1, x + 3] for x in range(6)])


def _planned(*cases: dict) -> list[list[tuple[int, object]]]:
    groups: dict[str, list] = {}
    for n, one in enumerate(cases):
        planned = plan(one)
        groups.setdefault(planned.shape.key, []).append((n, planned))
    return list(groups.values())


def _adapter(arrival: str = "paced", jobs: str = "request"):
    return adapter_program.Adapter(lambda message: None, lambda: None, arrival, pacing.parse(f"jobs={jobs}"))


def test_shapes_with_the_same_job_settings_share_a_job_and_others_do_not():
    mini = _left("m0", 0)
    mini["scenario"]["config"] = {"mini_batch_size": 2}
    restart = _left("r0", 0)
    restart["scenario"]["config"] = {"restart_after": 2}
    groups = _planned(_left("l0", 0), _chain("c0", 0), mini, _semi("s0"), restart, _left("l1", 1))
    jobs = _adapter().jobs(groups)
    assert [[[n for n, _ in group] for group in job] for job in jobs] == [[[0, 5], [1], [3]], [[2]], [[4]]]
    assert [[[n for n, _ in g] for g in job] for job in _adapter(jobs="shape").jobs(groups)] == [
        [[0, 5]], [[1]], [[2]], [[3]], [[4]]]
    assert len(_adapter("free").jobs(groups)) == 5


def test_a_job_holds_at_most_max_shapes_per_job_shapes():
    cases = [_left(f"l{i}", 0) for i in range(adapter_program.MAX_SHAPES_PER_JOB + 3)]
    for i, one in enumerate(cases):  # a shape each: the residual's constant differs
        one["scenario"]["join"]["conditions"] = [f"a.k = b.k AND a.x > b.y + {i}"]
    jobs = _adapter().jobs(_planned(*cases))
    assert [len(job) for job in jobs] == [adapter_program.MAX_SHAPES_PER_JOB, 3]


def test_pacing_refuses_unknown_keys_and_bad_values():
    assert pacing.parse("pause_ms=0, guard=2").guard == 2
    for text, message in (("pause=1", "expected key=value"), ("guard=1.5", "whole number"),
                          ("interval_ms=5", "least checkpoint interval"), ("jobs=all", "jobs='all'"),
                          ("pause_ms=x", "not a number"), ("pause_ms=-1", "0 to 60000")):
        with pytest.raises(pacing.PacingError, match=message):
            pacing.parse(text)
