"""`converge repro --system flink` without Flink: the generated program stands alone (no converge import, it
compiles, ruff passes it under the project's rules and under ruff's defaults), holds the case's data and options,
and the command writes it and REPORT.md (--no-run). The program run on Flink: tests/systems/flink/test_repro_live.py."""

from __future__ import annotations

import dataclasses
import shutil

import pytest

from converge.cli.commands.repro import scenario_path
from converge.cli.main import main
from converge.engine.model.errors import UsageError
from converge.properties.replay import load_scenario_file
from converge.properties.systems.known import BUILTIN
from converge.systems.flink.repro import build, refusal
from tests.support.paths import ROOT
from tests.support.repro_programs import imported_packages, literals, ruff_on_its_own

PADDING = BUILTIN / "cases" / "flink_minibatch_suppressed_padding.json"
SEMI = BUILTIN / "cases" / "flink_exists_correlated_null_semi.json"
UPSERT_SINK = BUILTIN / "cases" / "flink_upsert_sink_left_padding_lost.json"
ROWTIME = BUILTIN / "cases" / "flink_upsert_rowtime_plan_fails.json"


def _program(path=PADDING, **config) -> str:
    scenario = load_scenario_file(path)
    if config:
        scenario = dataclasses.replace(scenario, config=dataclasses.replace(scenario.config, **config))
    return build(scenario, path.name, "2.3.0").program




@pytest.mark.parametrize("path", [PADDING, SEMI, UPSERT_SINK, ROWTIME], ids=["minibatch", "semi", "sink", "rowtime"])
def test_the_program_imports_no_converge_and_compiles(path) -> None:
    program = _program(path)
    compile(program, "repro.py", "exec")
    assert imported_packages(program) == {"os", "sys", "tempfile", "collections", "pyflink"}


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not on PATH")
@pytest.mark.parametrize("rules", [["--config", str(ROOT / "pyproject.toml")], ["--isolated"]],
                         ids=["project", "defaults"])
def test_ruff_passes_the_program_on_its_own(tmp_path, rules) -> None:
    done = ruff_on_its_own(_program(SEMI), tmp_path, rules)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_program_holds_the_case_its_options_and_the_hand_worked_answer() -> None:
    found = literals(_program())
    # docs/flink-findings.md #2, worked by hand: the order keeps no partner, so LEFT JOIN pads it
    assert found["EXPECTED"] == [(1, 5, None, None)]
    assert found["EVENTS"] == [("orders", "+I", (1, 5)), ("vouchers", "+I", (1, 3)), ("vouchers", "-U", (1, 3)),
                               ("vouchers", "+U", (1, 9))]
    assert found["INPUTS"]["vouchers"] == {"columns": [("order_id", "BIGINT"), ("min_amount", "BIGINT")],
                                           "primary_key": ["order_id"], "mode": "retract"}
    assert found["OPTIONS"]["table.exec.mini-batch.enabled"] == "true"
    assert found["OPTIONS"]["table.exec.mini-batch.size"] == "2"
    assert found["ROUND_SIZE"] == 2
    # the lead records share no value with the case's rows (their keys never meet a real row's)
    assert found["LEAD"] == {"orders": (2, 6), "vouchers": (2, 10)}
    assert "LEFT JOIN vouchers ON" in found["QUERY"]
    off = literals(_program(mini_batch_size=None))
    assert "table.exec.mini-batch.enabled" not in off["OPTIONS"] and off["ROUND_SIZE"] == 1


def test_a_semi_join_is_an_exists_subquery_over_the_users_names() -> None:
    query = literals(_program(SEMI))["QUERY"]
    assert query.startswith("SELECT *\nFROM a\nWHERE EXISTS (SELECT 1 FROM b WHERE ")
    assert literals(_program(SEMI))["EXPECTED"] == [(2, None)]  # finding #1, worked by hand


def test_an_upsert_sink_key_on_a_padded_side_is_refused_with_the_reason() -> None:
    scenario = load_scenario_file(UPSERT_SINK)
    padded = dataclasses.replace(scenario, config=dataclasses.replace(scenario.config, sink_key=("items.k",)))
    assert "items.k may be NULL" in (refusal(padded) or "")
    with pytest.raises(UsageError, match="no Flink repro"):
        build(padded, "x.json", "2.3.0")


def test_an_upsert_sink_case_names_each_output_column_and_keys_the_sink_as_declared() -> None:
    found = literals(_program(UPSERT_SINK))
    assert found["SINK"] == {"columns": ["orders_id", "orders_k", "items_k", "items_v"], "primary_key": ["orders_k"]}
    assert found["QUERY"].startswith("SELECT orders.id AS orders_id, orders.k AS orders_k, items.k AS items_k, "
                                     "items.v AS items_v\nFROM orders\n  LEFT JOIN items ON")
    assert found["OPTIONS"]["table.exec.sink.upsert-materialize"] == "AUTO"
    assert found["OPTIONS"]["table.exec.sink.require-on-conflict"] == "false"
    assert found["EXPECTED"] == [(1, 10, None, None)]  # docs/flink-findings.md #10, worked by hand
    assert found["LEAD"] == {}  # no mini-batch: no lead, so no filter stands between an input and the join
    assert literals(_program())["SINK"] is None


def test_a_time_column_becomes_a_rowtime_whose_watermark_passes_no_row() -> None:
    found = literals(_program(ROWTIME))
    # c's one time is 100 and there is no lead record: a delay of 1 puts the watermark at 99, before the row
    assert found["ROWTIMES"] == {"c": ("ts", 1, False)}
    assert found["INPUTS"]["c"]["mode"] == "upsert" and found["INPUTS"]["c"]["primary_key"] == ["id"]
    assert found["QUERY"] == "SELECT *\nFROM a\n  JOIN c ON (a.k = c.k)"


def test_a_comparison_of_two_time_columns_is_made_on_their_rowtimes_as_the_adapter_does() -> None:
    found = literals(_program(BUILTIN / "cases" / "flink_2_1_multiway_rowtime_condition.json"))
    # a's times 10 and c's 20 and 5 (no lead record): the watermark's delay spans 5..20, so it is 16
    assert found["ROWTIMES"] == {"a": ("ts", 16, True), "c": ("ts", 16, True)}
    # the rowtimes are read, so SELECT * would carry them out: the query names each output column instead
    assert found["QUERY"] == ("SELECT a.k AS a_k, a.ts AS a_ts, b.k AS b_k, b.v AS b_v, c.k AS c_k, c.ts AS c_ts\n"
                              "FROM a\n  JOIN b ON (a.k = b.k)\n  JOIN c ON ((b.k = c.k) AND (a.a_rowtime <= "
                              "c.c_rowtime))")
    assert found["OPTIONS"]["table.optimizer.multi-join.enabled"] == "true"
    assert found["EXPECTED"] == [(1, 10, 1, 5, 1, 20)]  # docs/flink-findings.md #9, worked by hand


def test_a_rowtime_under_mini_batch_is_refused_with_the_reason() -> None:
    scenario = load_scenario_file(ROWTIME)
    batched = dataclasses.replace(scenario, config=dataclasses.replace(scenario.config, mini_batch_size=2))
    assert "under mini-batch" in (refusal(batched) or "")


def test_an_intermittent_finding_runs_the_job_several_times() -> None:
    scenario = load_scenario_file(PADDING)
    program = build(scenario, PADDING.name, "2.3.0", runs=5).program
    assert literals(program)["RUNS"] == 5
    assert "intermittent" in program.split('"""')[1]
    assert literals(_program())["RUNS"] == 1


def test_the_command_writes_the_program_and_the_report(tmp_path) -> None:
    assert main(["repro", str(PADDING), "--system", "flink:2.3.0", "-o", str(tmp_path), "--no-run"]) == 0
    program = tmp_path / "repro_flink_minibatch_suppressed_padding.py"
    assert program.is_file()
    report = (tmp_path / "REPORT.md").read_text(encoding="utf-8")
    assert report.startswith("# [Flink SQL] a mini-batch LEFT JOIN suppresses the padding")
    assert "SET 'table.exec.mini-batch.size' = '2';" in report
    assert "(1, 5, NULL, NULL)" in report
    assert "| 3 | -U | 1 | 3 |" in report
    assert "`python repro_flink_minibatch_suppressed_padding.py`" in report
    assert "apache-flink==2.3.0" in report and "Actual" in report and "not run" in report


def test_only_flink_has_repros_so_far(tmp_path) -> None:
    assert main(["repro", str(PADDING), "--system", "spark", "-o", str(tmp_path)]) == 2


def test_a_report_markdown_leads_to_its_scenario_file(tmp_path) -> None:
    report = tmp_path / "case.md"
    report.write_text("# a report", encoding="utf-8")
    with pytest.raises(UsageError, match="case.json"):
        scenario_path(str(report))
    (tmp_path / "case.json").write_text(PADDING.read_text(encoding="utf-8"), encoding="utf-8")
    assert scenario_path(str(report)) == tmp_path / "case.json"
    assert scenario_path(str(PADDING)) == PADDING
