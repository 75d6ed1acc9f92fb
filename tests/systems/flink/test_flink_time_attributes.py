"""Rowtime attributes on the inputs of regular and multi-way joins, on real Flink through the shared adapter.

A regular join over time attributes must give the batch answer: the planner materializes the rowtimes
(they become plain TIMESTAMP_LTZ values in the join's output). The adapter outputs each joined input's
rowtime as text and strips it only where it equals the row's own time column (time_attributes.py), so a
lost or misplaced time attribute would show as a longer row. Answers below are worked out by hand.
"""

from __future__ import annotations

import pytest

from converge.systems.adapter.client import AdapterSystem
from converge.systems.flink.environment import program_module
from tests.support import paths
from tests.support.flink_client import ProtocolClient, bag, bigint_input, case, folded

pytestmark = [pytest.mark.flink, pytest.mark.xdist_group("flink")]

N = None
SCENARIOS = paths.SCENARIOS / "systems"
# a(k, x, t) and b(k, y, t): t is each row's event time in ms (a rowtime with a watermark in Flink)
A = [["+I", 1, 5, 100], ["+I", 2, 7, 90], ["-U", 1, 5, 100], ["+U", 1, 15, 130], ["+I", 3, 1, 80]]
B = [["+I", 1, 10, 120], ["+I", 2, 3, 60], ["-D", 2, 3, 60], ["+I", 4, 4, 200]]
TIMED = [bigint_input("a", ["k", "x", "t"], time_column="t"), bigint_input("b", ["k", "y", "t"], time_column="t")]


def test_rowtime_text_is_flinks_utc_text_of_the_millis() -> None:
    ta = program_module("time_attributes")
    assert ta.rowtime_text(5) == "1970-01-01 00:00:00.005"
    assert ta.rowtime_text(-1) == "1969-12-31 23:59:59.999"
    assert ta.rowtime_text(86_400_000 + 61_001) == "1970-01-02 00:01:01.001"
    assert ta.rowtime_text(None) is None
    # a row keeps its texts where one is not its time column's: the divergence shows the value Flink gave
    assert ta.strip([1, 100, "1970-01-01 00:00:00.100"], (1,)) == [1, 100]
    assert ta.strip([1, 100, "1970-01-01 00:00:00.101"], (1,)) == [1, 100, "1970-01-01 00:00:00.101"]
    assert ta.strip([N, N, N], (1,)) == [N, N]


def test_left_join_with_rowtimes_on_both_inputs_gives_the_batch_answer(flink: ProtocolClient) -> None:
    # final a: (1,15,130) (2,7,90) (3,1,80); final b: (1,10,120) (4,4,200); ON a.k = b.k AND a.x > b.y
    expected = {"left": [[1, 15, 130, 1, 10, 120], [2, 7, 90, N, N, N], [3, 1, 80, N, N, N]],
                "full": [[1, 15, 130, 1, 10, 120], [2, 7, 90, N, N, N], [3, 1, 80, N, N, N], [N, N, N, 4, 4, 200]],
                "anti": [[2, 7, 90], [3, 1, 80]]}
    cases = [case(t, TIMED, [t], ["a.k = b.k AND a.x > b.y"], {"a": A, "b": B}) for t in expected]
    for result in flink.run(cases):
        assert result["status"] == "ok", result
        assert folded(result) == bag(expected[result["id"]]), result["id"]


@pytest.mark.parametrize("multi_join", ["on", pytest.param("off", marks=pytest.mark.slow)])
def test_three_way_chain_with_rowtimes_on_later_inputs(flink_system: AdapterSystem, flink: ProtocolClient,
                                                       multi_join: str) -> None:
    """Rowtimes on the second and third inputs only: the multi-way operator's materialization once read the
    wrong fields for them (FLINK-38379, fixed in 2.2.0)."""
    inputs = [bigint_input("a", ["k", "x"]), bigint_input("b", ["k", "t"], time_column="t"),
              bigint_input("c", ["k", "u"], time_column="u")]
    data = {"a": [["+I", 1, 5], ["+I", 2, 6]], "b": [["+I", 1, 40], ["+I", 2, 50], ["-D", 2, 50]],
            "c": [["+I", 1, 7], ["+I", 2, 8]]}
    [result] = flink.run([case(f"chain-{multi_join}", inputs, ["inner", "left"], ["a.k = b.k", "a.k = c.k"], data,
                               config={"multi_join": multi_join})])
    assert result["status"] == "ok", result
    assert folded(result) == bag([[1, 5, 1, 40, 1, 7]])


def test_a_null_time_is_unsupported_as_flink_refuses_a_null_rowtime(flink: ProtocolClient) -> None:
    [result] = flink.run([case("null-time", TIMED, ["inner"], ["a.k = b.k"],
                               {"a": [["+I", 1, 5, None]], "b": [["+I", 1, 6, 3]]})])
    assert result["status"] == "unsupported", result
    assert "event time None" in result["message"], result


@pytest.mark.slow
def test_finding_8_an_upsert_input_with_a_rowtime_is_not_planned(flink_system: AdapterSystem) -> None:
    """docs/flink-findings.md #8, on the session's Flink (2.3.0): the scenario file's case fails while Flink plans
    it, and the same case without the rowtime (or with a retract input) gives the batch answer."""
    from dataclasses import replace

    from converge.engine.model.scenario_json import load_scenario

    found = load_scenario(SCENARIOS / "flink_upsert_rowtime_plan_fails.json")
    plain = replace(found, inputs=(found.inputs[0], replace(found.inputs[1], time_column=None)))
    retract = replace(found, inputs=(found.inputs[0], replace(found.inputs[1], changelog_mode="retract")))
    failed, untimed, keyed = flink_system.run_cases([found, plain, retract])
    assert failed.status == "error" and "IndexOutOfBoundsException: 0" in (failed.message or ""), failed
    for result in (untimed, keyed):
        assert result.status == "ok" and sorted(result.final.elements()) == [(1, 0, 1, 7, 100)], result


def test_the_plan_selects_each_joined_rowtime_and_compares_time_columns_on_rowtimes() -> None:
    """No Java: the job's SELECT for a LEFT join of two timed inputs, one condition comparing their times."""
    plan = program_module("case_plan").plan
    planned = plan(case("plan", TIMED, ["left"], ["a.k = b.k AND (a.t <= b.t)"], {"a": A, "b": B}))
    shape = planned.shape
    assert [p.time_column for p in shape.inputs] == [2, 2]
    assert shape.rowtimes == (2, 5)  # a.t and b.t in the output row (case id aside)
    assert shape.select.endswith(", CAST(t0rt AS STRING), CAST(t1rt AS STRING) NULL ON NULL) FROM {v0} LEFT JOIN "
                                 "{v1} ON t0cid = t1cid AND ((t0c0 = t1c0) AND (t0rt <= t1rt))"), shape.select
    anti = plan(case("anti", TIMED, ["anti"], ["a.k = b.k"], {"a": A, "b": B})).shape
    assert anti.rowtimes == (2,) and "t1rt AS STRING" not in anti.select  # b only filters: no rowtime of it


def test_check_on_flink_sends_the_files_job_options_or_says_which_it_cannot(
        flink_system: AdapterSystem, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """`converge check --system flink` on docs/examples/job_options.sql (RocksDB, parallelism 2, an upsert sink):
    the options go with every case; an adapter that does not declare one of them in its hello makes
    check/system_final_answer not applicable, naming it, instead of running Flink's defaults; with all of them
    declared the check passes (an upsert sink at parallelism 2 was refused before program/parallel.py kept each job's
    arrival source at parallelism 1)."""
    from converge.cli.commands import check
    from converge.cli.main import main
    from tests.support.shared_adapter import Borrowed

    monkeypatch.setattr(check, "open_system_under_test", lambda spec, timeout=None: Borrowed(flink_system))
    example = paths.EXAMPLES / "job_options.sql"
    main(["check", str(example), "--system", "flink", "--examples", "4", "--seed", "1", "--no-reports"])
    out = capsys.readouterr().out
    assert "job options sent to flink with every case: state_backend=rocksdb, parallelism=2, sink=upsert, " \
           "sink_key=o.order_id,p.payment_id" in out, out
    row = next(line for line in out.splitlines() if line.startswith("check/system_final_answer"))
    missing = [s for s in ("state_backend", "parallelism", "upsert_sink") if s not in flink_system.capabilities.settings]
    if missing:
        meaning = {"state_backend": "config.state_backend", "parallelism": "config.parallelism",
                   "upsert_sink": "config.sink=upsert"}[missing[0]]
        own = dict(flink_system.capabilities.lacks).get(missing[0])  # the hello's own sentence, when it gives one
        assert "not applicable" in row and (meaning in row if own is None else own[:40] in row), row
    else:  # every option declared: the cases run with them and give the batch answer (docs/flink.md, Parallelism)
        assert row.split()[1] == "passed", out


@pytest.mark.slow
def test_finding_9_rowtimes_compared_in_a_multi_way_condition_give_the_batch_answer_on_2_3(
        flink_system: AdapterSystem) -> None:
    """docs/flink-findings.md #9 failed to plan on 2.1.0 (FLINK-38379); the session's Flink (2.3.0) gives the file's
    hand-checked answer with the multi-way operator and with the binary chain."""
    from dataclasses import replace

    from converge.engine.model.scenario_json import load_scenario

    found = load_scenario(SCENARIOS / "flink_2_1_multiway_rowtime_condition.json")
    chain = replace(found, config=replace(found.config, multi_join="off"))
    for result in flink_system.run_cases([found, chain]):
        assert result.status == "ok" and sorted(result.final.elements()) == [(1, 10, 1, 5, 1, 20)], result
