"""The Flink adapter through the protocol, against answers worked out by hand (one MiniCluster for the module).

Data of the regular joins (tests in docs/flink.md use the same):
A(k,x) = +I(1,5) +I(2,7) +I(3,1) -U(1,5) +U(1,15) -D(2,7) +I(4,9)       final A: (1,15) (3,1) (4,9)
B(k,y) = +I(1,10) +I(2,3) +I(3,0) -U(3,0) +U(3,2) -D(1,10) +I(1,1) +I(5,5)  final B: (1,1) (2,3) (3,2) (5,5)
"""

from __future__ import annotations

import pytest

from converge.systems.adapter.client import AdapterProcess, AdapterSystem
from tests.support.flink_cases import A_ROWS, AB, B_ROWS, N
from tests.support.flink_client import ProtocolClient, bag, bigint_input, case, folded

pytestmark = [pytest.mark.flink, pytest.mark.xdist_group("flink")]



def test_hello_declares_what_flink_can_do(flink_system: AdapterSystem) -> None:
    assert (flink_system.name, flink_system.version) == ("flink", "2.3.0")
    caps = flink_system.capabilities
    assert caps.output == "changelog" and caps.deterministic_order is True  # paced arrival
    assert caps.state_ttl is True and caps.time_domains == ("event_time",)  # TTL on the paced wall clock
    assert set(caps.join_types) == {"inner", "left", "right", "full", "semi", "anti"}
    assert set(caps.settings) == {"mini_batch", "multi_join", "state_backend", "restart", "upsert_sink",
                                   "parallelism"}  # 2.3.0: multi-way too


def test_regular_joins_with_a_residual_condition(flink: ProtocolClient) -> None:
    expected = {
        "inner": [[1, 15, 1, 1]],
        "left": [[1, 15, 1, 1], [3, 1, N, N], [4, 9, N, N]],
        "right": [[1, 15, 1, 1], [N, N, 2, 3], [N, N, 3, 2], [N, N, 5, 5]],
        "full": [[1, 15, 1, 1], [3, 1, N, N], [4, 9, N, N], [N, N, 2, 3], [N, N, 3, 2], [N, N, 5, 5]],
        "semi": [[1, 15]],
        "anti": [[3, 1], [4, 9]],
    }
    cases = [case(t, AB, [t], ["a.k = b.k AND a.x > b.y"], {"a": A_ROWS, "b": B_ROWS}) for t in expected]
    for result in flink.run(cases):
        assert result["status"] == "ok", result
        assert folded(result) == bag(expected[result["id"]]), result["id"]


@pytest.mark.parametrize("size", [1, 3, 1000])
def test_flinks_mini_batch_join_gives_the_same_hand_worked_answers(flink: ProtocolClient, size: int) -> None:
    """config.mini_batch_size turns on Flink's own mini-batch join (table.exec.mini-batch.*): bundles of one
    record, of three, and one bundle holding both whole inputs reach the same final answers."""
    expected = {"left": [[1, 15, 1, 1], [3, 1, N, N], [4, 9, N, N]],
                "full": [[1, 15, 1, 1], [3, 1, N, N], [4, 9, N, N], [N, N, 2, 3], [N, N, 3, 2], [N, N, 5, 5]],
                "anti": [[3, 1], [4, 9]]}
    cases = [case(t, AB, [t], ["a.k = b.k AND a.x > b.y"], {"a": A_ROWS, "b": B_ROWS},
                  config={"mini_batch_size": size}) for t in expected]
    for result in flink.run(cases):
        assert result["status"] == "ok", result
        assert folded(result) == bag(expected[result["id"]]), result["id"]


def test_upsert_and_keyed_retract_inputs(flink: ProtocolClient) -> None:
    inputs = [bigint_input("a", ["k", "x"], unique_key=["k"], mode="upsert"),
              bigint_input("b", ["k", "y"], unique_key=["k"], mode="retract")]
    a = [["+I", 1, 5], ["+U", 1, 7], ["+I", 2, 3], ["-D", 2, 3], ["+U", 3, 4], ["+U", 3, 6]]  # final (1,7) (3,6)
    b = [["+I", 1, 100], ["+I", 3, 300], ["+I", 2, 200], ["-U", 3, 300], ["+U", 3, 301]]   # (1,100) (2,200) (3,301)
    (result,) = flink.run([case("upsert", inputs, ["left"], ["a.k = b.k"], {"a": a, "b": b})])
    assert result["status"] == "ok", result
    assert folded(result) == bag([[1, 7, 1, 100], [3, 6, 3, 301]])


def test_a_lone_small_case_at_parallelism_four(flink: ProtocolClient) -> None:
    """Rounds of three records (one per input) at parallelism 4, on the multi-way operator, then on binary joins.
    The paced source must run at 1. Measured before each job set the environment's parallelism back to 1
    (parallel.before_arrival): a job after one planned at 4 ran it at 4, its rate limiter (a round's records
    spread over the subtasks) failed the job, and every later job of the adapter failed the same way, which a
    campaign reported as a divergence (the parallel family, seed 11)."""
    inputs = [bigint_input("a", ["k", "x"]), bigint_input("b", ["k", "y"], unique_key=["k"]),
              bigint_input("c", ["k", "z"], unique_key=["k"], mode="upsert")]
    rows = {"a": [["+I", 1, 5]], "b": [["+I", 1, 7]], "c": [["+I", 2, 9]]}
    for multi_join in ("on", "off"):
        (result,) = flink.run([case("p4", inputs, ["left", "left"], ["a.k = b.k", "a.k = c.k"], rows,
                                    config={"parallelism": 4, "multi_join": multi_join})])
        assert result["status"] == "ok", (multi_join, result)
        assert folded(result) == bag([[1, 5, 1, 7, N, N]]), multi_join


@pytest.mark.parametrize("multi_join", ["on", "off"])
def test_three_way_chain_with_and_without_the_multi_join(flink: ProtocolClient, multi_join: str) -> None:
    inputs = AB + [bigint_input("c", ["k", "z"])]
    c = [["+I", 1, 50], ["+I", 1, 150], ["+I", 3, 500], ["-D", 1, 150], ["+I", 1, 200], ["+I", 4, 101]]
    # a JOIN b gives (1,15,1,1) only; c rows of k=1 with z > 100: (1,200)
    conditions = ["a.k = b.k AND a.x > b.y", "a.k = c.k AND c.z > 100"]
    (result,) = flink.run([case("3way", inputs, ["inner", "left"], conditions, {"a": A_ROWS, "b": B_ROWS, "c": c},
                                config={"multi_join": multi_join})])
    assert result["status"] == "ok", result
    assert folded(result) == bag([[1, 15, 1, 1, 1, 200]])


def test_interval_join_on_event_time(flink: ProtocolClient) -> None:
    inputs = [bigint_input("a", ["k", "t"], mode="insert_only", time_column="t"),
              bigint_input("b", ["k", "t"], mode="insert_only", time_column="t")]
    interval = {"left_time": "a.t", "right_time": "b.t", "lower_ms": -2, "upper_ms": 3, "time": "event",
                "allowed_lateness_ms": 0}
    a = [["+I", 1, 8], ["+I", 1, 13], ["+I", 1, 7], ["+I", 1, 14], ["+I", 2, 20]]
    b = [["+I", 1, 10], ["+I", 2, 17], ["+I", 2, 22], ["+I", 2, 16], ["+I", 2, 23]]
    # a.t BETWEEN b.t - 2 AND b.t + 3: b10 takes a8..a13; a20 takes b17..b22 (arrival out of time order)
    matched = [[1, 8, 1, 10], [1, 13, 1, 10], [2, 20, 2, 17], [2, 20, 2, 22]]
    inner, full = flink.run([case(t, inputs, [t], ["a.k = b.k"], {"a": a, "b": b}, interval=interval)
                             for t in ("inner", "full")])
    assert folded(inner) == bag(matched)
    assert folded(full) == bag(matched + [[1, 7, N, N], [1, 14, N, N], [N, N, 2, 16], [N, N, 2, 23]])


def _chain_case(i: int) -> tuple[dict, list[list]]:
    """Case i of one FULL-FULL shape; every case uses key 1, so only the case id keeps them apart."""
    inputs = [bigint_input("a", ["k", "x"]), bigint_input("b", ["k", "y"]), bigint_input("c", ["k", "z"])]
    variant = i % 5
    data: dict = {"a": [], "b": [], "c": []}
    if variant == 0:
        data["a"] = [["+I", 1, i]]
        final = [[1, i, N, N, N, N]]
    elif variant == 1:
        data["b"] = [["+I", 1, i]]
        final = [[N, N, 1, i, N, N]]
    elif variant == 2:
        data["c"] = [["+I", 1, i], ["+I", 1, -i], ["-D", 1, -i]]
        final = [[N, N, N, N, 1, i]]
    elif variant == 3:  # a padded: b and c still meet (the case id comes from b)
        data["b"] = [["+I", 1, i]]
        data["c"] = [["+I", 1, i + 1000]]
        final = [[N, N, 1, i, 1, i + 1000]]
    else:
        data["a"] = [["+I", 1, i]]
        data["b"] = [["+I", 1, i]]
        data["c"] = [["+I", 2, i]]
        final = [[1, i, 1, i, N, N], [N, N, N, N, 2, i]]
    return case(f"c{i}", inputs, ["full", "full"], ["a.k = b.k", "b.k = c.k"], data), final


def test_many_cases_of_one_shape_in_one_request(flink: ProtocolClient) -> None:
    pairs = [_chain_case(i) for i in range(120)]
    odd = case("other-shape", AB, ["inner"], ["a.k = b.k"], {"a": [["+I", 7, 1]], "b": [["+I", 7, 2]]})
    unsupported = case("ttl", AB, ["inner"], ["a.k = b.k"], {}, config={"state_ttl_ms": {"a": 10}})  # per input
    cases = [c for c, _ in pairs[:60]] + [odd, unsupported] + [c for c, _ in pairs[60:]]
    results = {r["id"]: r for r in flink.run(cases)}
    for c, final in pairs:
        assert results[c["id"]]["status"] == "ok", results[c["id"]]
        assert folded(results[c["id"]]) == bag(final), c["id"]
    assert results["other-shape"]["changelog"] == [["+I", 7, 1, 7, 2]]
    assert results["ttl"]["status"] == "unsupported" and "state TTL" in results["ttl"]["message"]


def test_untranslatable_and_undrivable_cases_are_unsupported(flink: ProtocolClient) -> None:
    like = case("like", AB, ["inner"], ["a.k = b.k AND CAST(a.x AS VARCHAR) LIKE '1%'"], {})
    inputs = [bigint_input("a", ["k", "t"], mode="insert_only", time_column="t"),
              bigint_input("b", ["k", "t"], mode="insert_only", time_column="t")]
    late = case("late", inputs, ["inner"], ["a.k = b.k"], {"a": [["+I", 1, 10]], "b": [["+I", 1, 7]]},
                interval={"left_time": "a.t", "right_time": "b.t", "lower_ms": 0, "upper_ms": 5, "time": "event"},
                events=[{"input": "a", "kind": "+I", "row": [1, 10]}, {"input": "a", "watermark": 9},
                        {"input": "b", "watermark": 9}, {"input": "b", "kind": "+I", "row": [1, 7]}])
    results = flink.run([like, late])
    assert [r["status"] for r in results] == ["unsupported", "unsupported"]
    assert "LIKE" in results[0]["message"] and "late row" in results[1]["message"]


def test_a_flink_failure_is_an_error_of_that_case_only(flink: ProtocolClient) -> None:
    cond = ["a.k = b.k AND a.x // b.y > 0"]  # integer division: Java throws on a zero divisor
    good = case("good", AB, ["inner"], cond, {"a": [["+I", 1, 4]], "b": [["+I", 1, 2]]})
    bad = case("bad", AB, ["inner"], cond, {"a": [["+I", 1, 4]], "b": [["+I", 1, 0]]})
    results = flink.run([good, bad])
    assert results[0] == {"id": "good", "status": "ok", "changelog": [["+I", 1, 4, 1, 2]]}
    assert results[1]["status"] == "error" and "by zero" in results[1]["message"], results[1]


def test_a_malformed_request_is_answered_and_the_adapter_stays_up(flink: ProtocolClient) -> None:
    flink.send_line("{not json")
    answer = flink.receive()
    assert answer["type"] == "error" and "not a JSON line" in answer["message"]
    answer = flink.ask({"type": "run", "request": 900, "cases": [{"id": "x"}]})
    assert answer == {"type": "error", "request": 900, "message": answer["message"]}
    assert "scenario" in answer["message"]
    answer = flink.ask({"type": "run", "request": 901, "cases": [], "extra": True})
    assert answer["type"] == "error" and "'extra'" in answer["message"]
    (result,) = flink.run([case("after", AB, ["inner"], ["a.k = b.k"], {"a": [["+I", 1, 1]], "b": [["+I", 1, 2]]})])
    assert result["changelog"] == [["+I", 1, 1, 1, 2]]


def test_shutdown_before_any_hello_exits_cleanly_without_a_jvm(flink_command: list[str]) -> None:
    process = AdapterProcess(flink_command)
    adapter = ProtocolClient(process)
    try:
        answer = adapter.ask({"type": "run", "request": 1, "cases": []}, timeout=60)
        assert answer["type"] == "error" and "hello" in answer["message"]
        wrong = adapter.ask({"type": "hello", "protocol": "converge-adapter", "versions": [2]}, timeout=60)
        assert wrong["type"] == "error" and "version 1" in wrong["message"]
        assert process.wait_exit(30) == 0  # an adapter that speaks none of the versions exits
    finally:
        process.kill()
    assert AdapterProcess(flink_command).shutdown(30) == 0
