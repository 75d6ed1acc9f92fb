"""`converge repro --system spark` programs run on the installed PySpark, alone in an empty folder: the FULL OUTER
NULL-key finding (docs/spark.md) exits 1, the same case with its trigger removed (a LEFT join, or non-NULL keys)
exits 0. Default suite: the one-micro-batch finding, then as a LEFT join; the rest behind --run-slow. A JVM per
run (about 25 s each at load 14)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from converge.cli.main import main
from converge.engine.model.native_join_case import NativeJoinCase, load_case
from converge.systems.spark.repro import build
from tests.support.paths import NATIVE_CASES

# No xdist_group: each program starts its own PySpark (a JVM of its own) and shares nothing with the suite's Spark
# session, so it runs beside the "spark" worker instead of adding a minute to it (the suite's longest path).
pytestmark = [pytest.mark.spark]
CASES = NATIVE_CASES
FINDING = CASES / "bug_full_outer_null_keys_match.json"
FROM_STATE = CASES / "bug_full_outer_null_keys_match_from_state.json"


def _run(case: NativeJoinCase, folder: Path) -> tuple[int, str]:
    """The program written for `case`, alone in an empty folder, run by an interpreter that has pyspark."""
    from pyspark import __version__  # lazy: pyspark is optional

    repro = build(case, "case.json", __version__)
    folder.mkdir()
    program = folder / f"repro_{repro.slug}.py"
    program.write_text(repro.program, encoding="utf-8")
    done = subprocess.run([sys.executable, program.name], cwd=folder, capture_output=True, text=True, timeout=600,
                          check=False)
    assert sorted(p.name for p in folder.iterdir()) == [program.name], "the program left files behind"
    return done.returncode, done.stdout + done.stderr[-2000:]


def _non_null_keys(case: NativeJoinCase) -> NativeJoinCase:
    """The finding's trigger is the NULL key on both sides: 1 on the left, 2 on the right (they never match)."""
    def fix(side: str, row: tuple) -> tuple:
        return tuple((1 if side == "left" else 2) if v is None else v for v in row)

    return case.with_batches([{s: [fix(s, r) for r in b[s]] for s in ("left", "right")} for b in case.batches])


def test_the_null_key_finding_diverges_and_agrees_as_a_left_join(tmp_path) -> None:
    case = load_case(FINDING)
    code, out = _run(case, tmp_path / "finding")
    assert code == 1, out
    # Spark pairs the two NULL-key rows; SQL (and the expected answer) pads each
    assert "final answer: [(0, None, 10000, 0, None, 10000)]" in out
    assert "expected:     [(0, None, 10000, None, None, None), (None, None, None, 0, None, 10000)]" in out
    assert "DIVERGED" in out
    # Spark's own batch query of the same join pads both rows, as SQL says
    assert ("batch query of the same join (every row of BATCHES, late ones too): [(0, None, 10000, None, None, None), "
            "(None, None, None, 0, None, 10000)]") in out
    code, out = _run(dataclasses.replace(case, join="left"), tmp_path / "left")
    assert code == 0, out
    assert "final answer: [(0, None, 10000, None, None, None)]" in out
    assert "AGREED" in out


@pytest.mark.slow
def test_the_finding_from_state_diverges_and_agrees_without_null_keys(tmp_path) -> None:
    case = load_case(FROM_STATE)
    code, out = _run(case, tmp_path / "finding")
    assert code == 1, out
    assert "final answer: [(0, None, 10000, 0, 0, None, 10000, 0)]" in out
    code, out = _run(_non_null_keys(case), tmp_path / "non_null")
    assert code == 0, out
    assert "expected:     [(0, 1, 10000, 0, None, None, None, None), (None, None, None, None, 0, 2, 10000, 0)]" in out


@pytest.mark.slow
def test_a_query_spark_rejects_exits_2(tmp_path) -> None:
    case = load_case(CASES / "left_anti_rejected.json")
    code, out = _run(case, tmp_path / "anti")
    assert code == 2, out
    assert "Spark failed the query" in out


@pytest.mark.slow
def test_the_command_writes_runs_and_reports(tmp_path, capsys) -> None:
    assert main(["repro", str(FINDING), "--system", "spark", "-o", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "exit code 1" in printed
    report = (tmp_path / "REPORT.md").read_text(encoding="utf-8")
    assert report.startswith("# [SS] Stream-stream FULL OUTER join matches rows whose join keys are NULL")
    assert "it diverges." in report
    assert "DIVERGED: Spark's output differs from the expected one" in report
