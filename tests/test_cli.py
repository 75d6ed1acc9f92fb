"""The `converge` command: run, replay, explain, exit codes and messages."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from converge.reports.tooling.cli import main

SCENARIOS = Path(__file__).parent / "scenarios" / "regular"


def test_replay_ok_and_exit_code(capsys) -> None:
    assert main(["replay", str(SCENARIOS / "acc_outer_no_match.json")]) == 0
    assert "1 passed, 0 failed" in capsys.readouterr().out


def test_replay_takes_several_paths_and_wildcards_the_shell_left_alone(capsys) -> None:
    acc = sorted(SCENARIOS.glob("acc_*.json"))
    assert len(acc) >= 3
    assert main(["replay", str(SCENARIOS / "ret_inner_no_match.json"), str(SCENARIOS / "acc_*.json")]) == 0
    out = capsys.readouterr().out
    assert f"{len(acc) + 1} passed, 0 failed" in out and all(p.name in out for p in acc)
    assert main(["replay", str(SCENARIOS / "no_such_*.json")]) == 2
    assert "no file or directory matches" in capsys.readouterr().err


def test_version(capsys) -> None:
    from converge import __version__

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"converge {__version__}"


def test_replay_prints_a_diff_and_exits_1(tmp_path: Path, capsys) -> None:
    data = json.loads((SCENARIOS / "acc_inner_first_match_retracts_padding.json").read_text())
    data["events"][1]["expect"]["emits"][0]["kind"] = "-U"  # Flink retracts padding with -D, not -U
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    assert main(["replay", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "expected [-U[1, 10, None, None]" in out


def test_replay_without_expectations_uses_the_oracle(tmp_path: Path, capsys) -> None:
    data = json.loads((SCENARIOS / "ret_full_outer_both_sides.json").read_text())
    for e in data["events"]:
        e.pop("expect", None)
    data.pop("expect_final")
    path = tmp_path / "plain.json"
    path.write_text(json.dumps(data))
    assert main(["replay", str(path)]) == 0
    assert "prefix_consistency" in capsys.readouterr().out


def test_bad_file_is_reported_not_crashed(tmp_path: Path, capsys) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"inputs": []')
    assert main(["replay", str(path)]) == 1
    assert "not valid JSON" in capsys.readouterr().out


def test_missing_path_exit_2(capsys) -> None:
    assert main(["replay", "/nonexistent/x.json"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_run_small_campaign_writes_summary(tmp_path: Path, capsys) -> None:
    code = main(["run", "--family", "regular", "--property", "prefix_consistency", "--examples", "15",
                 "--seed", "3", "--reports-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "prefix_consistency" in out and "examples/s" in out
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["failed"] == 0 and summary["properties"][0]["examples"] >= 15


def test_unknown_family_is_bad_input(capsys) -> None:
    assert main(["run", "--family", "nope", "--no-reports"]) == 2
    assert "known families" in capsys.readouterr().err


def test_explain_prints_the_plan(capsys) -> None:
    assert main(["explain", str(SCENARIOS / "upsert_normalized.json")]) == 0
    out = capsys.readouterr().out
    assert "Join(joinType=[LeftOuterJoin]" in out and "ChangelogNormalize" in out
    assert "leftInputSpec=[JoinKeyContainsUniqueKey]" in out


@pytest.mark.skipif(shutil.which("converge") is None, reason="console script not installed (pip install -e .)")
def test_console_script_is_installed() -> None:
    import subprocess

    out = subprocess.run(["converge", "--help"], capture_output=True, text=True, check=True).stdout
    assert "replay" in out and "bench" in out
