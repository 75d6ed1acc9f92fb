"""`converge repro --system spark` without Spark: the generated program stands alone (no converge import, it
compiles, ruff passes it under the project's rules and under ruff's defaults), holds the case's micro-batches and
the hand-worked expected answer, and the command writes it and REPORT.md (--no-run). The program run on Spark:
tests/systems/spark/test_spark_repro_live.py."""

from __future__ import annotations

import shutil

import pytest

from converge.cli.main import main
from converge.engine.model.native_join_case import load_case
from converge.systems.spark.repro import build
from tests.support.paths import NATIVE_CASES, ROOT
from tests.support.repro_programs import imported_packages, literals, ruff_on_its_own

FINDING = NATIVE_CASES / "bug_full_outer_null_keys_match.json"
LATE = NATIVE_CASES / "late_rule_previous_epoch.json"
SEMI = NATIVE_CASES / "semi_once.json"


def _program(path=FINDING) -> str:
    return build(load_case(path), path.name, "4.3.0").program




@pytest.mark.parametrize("path", [FINDING, LATE, SEMI], ids=["finding", "late", "semi"])
def test_the_program_imports_no_converge_and_compiles(path) -> None:
    program = _program(path)
    compile(program, "repro.py", "exec")
    assert imported_packages(program) == {"json", "os", "shutil", "sys", "tempfile", "time", "collections", "datetime", "pyspark"}


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not on PATH")
@pytest.mark.parametrize("rules", [["--config", str(ROOT / "pyproject.toml")], ["--isolated"]],
                         ids=["project", "defaults"])
def test_ruff_passes_the_program_on_its_own(tmp_path, rules) -> None:
    done = ruff_on_its_own(_program(LATE), tmp_path, rules)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_program_holds_the_micro_batches_and_the_hand_worked_answer() -> None:
    found = literals(_program())
    assert found["BATCHES"] == [{"left": [(0, None, 10000)], "right": [(0, None, 10000)]}]
    assert found["INPUTS"]["left"] == {"columns": ["_id", "k", "t"], "time": "t", "delay_ms": 5000}
    assert found["JOIN"] == "full_outer"
    assert found["CONF"]["spark.sql.streaming.multipleWatermarkPolicy"] == "min"
    assert found["CONF"]["spark.sql.streaming.noDataMicroBatches.enabled"] == "true"
    # SQL: NULL = NULL is not true, so each row comes out null-padded (worked by hand, docs/spark.md)
    assert sorted(found["EXPECTED"], key=repr) == sorted([(0, None, 10000, None, None, None),
                                                          (None, None, None, 0, None, 10000)], key=repr)
    # the flush rows' ids follow the case's and their keys match nothing of the case
    assert found["FLUSH"]["left"][0] == 1 and found["FLUSH"]["right"][0] == 1
    assert found["FLUSH"]["left"][1] != found["FLUSH"]["right"][1]


def test_late_rows_are_left_out_of_the_expected_answer() -> None:
    case = load_case(LATE)
    found = literals(_program(LATE))
    width = len(found["INPUTS"]["left"]["columns"])
    pairs = sorted(((row[0], row[width]) for row in found["EXPECTED"]), key=repr)
    # the case file's own hand-worked output (rows at 94999 and 95000 in epoch 2 are late and dropped)
    assert pairs == sorted((tuple(p) for p in case.meta["expect_output"]), key=repr)
    # epoch 1's watermark is 95000: the rows at 94999 and 95000 of epoch 2 are late, on both sides (docs/spark.md)
    for side in ("left", "right"):
        rows = {row[0]: row for batch in found["BATCHES"] for row in batch[side]}
        assert sorted(rows[i][2] for i in found["LATE"][side]) == [94999, 95000]


def test_a_semi_join_selects_the_left_columns_only() -> None:
    found = literals(_program(SEMI))
    assert found["OUTPUT"] == ["left"] and found["JOIN"] == "left_semi"
    assert {len(row) for row in found["EXPECTED"]} == {len(found["INPUTS"]["left"]["columns"])}


def test_the_command_writes_the_program_and_the_report_without_running(tmp_path, capsys) -> None:
    assert main(["repro", str(FINDING), "--system", "spark", "-o", str(tmp_path), "--no-run"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["REPORT.md", "repro_bug_full_outer_null_keys_match.py"]
    report = (tmp_path / "REPORT.md").read_text(encoding="utf-8")
    assert report.startswith("# [SS] Stream-stream FULL OUTER join matches rows whose join keys are NULL")
    for part in ("## Versions", "## Input", "## Query", "## Expected", "## Actual", "## How to reproduce",
                 "| 0 | 0 | NULL | 10000 |", "FULL OUTER JOIN", "(0, NULL, 10000, NULL, NULL, NULL)",
                 "SELECT l._id, r._id FROM l FULL JOIN r", "`python repro_bug_full_outer_null_keys_match.py`",
                 "- Diverges on: PySpark 4.3.0 (converge's known divergence `spark-full-outer-null-keys-match`)"):
        assert part in report, part
    assert "wrote" in capsys.readouterr().out
    # a case that is no known entry's minimal case names none
    assert main(["repro", str(LATE), "--system", "spark", "-o", str(tmp_path / "late"), "--no-run"]) == 0
    assert "known divergence" not in (tmp_path / "late" / "REPORT.md").read_text(encoding="utf-8")


def test_a_version_or_a_scenario_file_is_refused(tmp_path) -> None:
    assert main(["repro", str(FINDING), "--system", "spark:4.3.0", "-o", str(tmp_path), "--no-run"]) == 2
    scenario = ROOT / "tests" / "scenarios" / "regular" / "acc_outer_match_other_inner.json"
    assert main(["repro", str(scenario), "--system", "spark", "-o", str(tmp_path), "--no-run"]) != 0
