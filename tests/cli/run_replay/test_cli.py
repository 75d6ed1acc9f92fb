"""The `converge` command: run, replay, explain, exit codes and messages."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from converge.cli.main import main
from converge.engine.model.errors import UsageError
from tests.support import paths

SCENARIOS = paths.SCENARIOS / "regular"


def test_replay_ok_and_exit_code(capsys) -> None:
    assert main(["replay", str(SCENARIOS / "acc_outer_no_match.json")]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1 passed"


def test_replay_takes_several_paths_and_wildcards_the_shell_left_alone(capsys) -> None:
    acc = sorted(SCENARIOS.glob("acc_*.json"))
    assert len(acc) >= 3
    assert main(["replay", str(SCENARIOS / "ret_inner_no_match.json"), str(SCENARIOS / "acc_*.json")]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == f"{len(acc) + 1} passed" and all(p.name in out for p in acc)
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
    assert out.startswith("diverged ") and "expected [-U[1, 10, None, None]" in out


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
    assert main(["replay", str(path)]) == 2
    out = capsys.readouterr().out
    assert out.startswith("bad input ") and "not valid JSON" in out


def test_missing_path_exit_2(capsys) -> None:
    assert main(["replay", "/nonexistent/x.json"]) == 2
    err = capsys.readouterr().err
    assert err == "converge: usage: /nonexistent/x.json: no such file or directory\n"  # one line, no traceback


def test_run_small_campaign_writes_summary(tmp_path: Path, capsys) -> None:
    code = main(["run", "--family", "regular", "--property", "prefix_consistency", "--examples", "15",
                 "--seed", "3", "--reports-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "prefix_consistency" in out and "cases/s" in out
    run = tmp_path / (tmp_path / "latest-run.txt").read_text().strip()
    summary = json.loads((run / "summary.json").read_text())
    (prop,) = summary["properties"]  # the scenarios asked and checked, in batches of one join (issue 43)
    assert summary["failed"] == 0 and (prop["examples"], prop["cases"]) == (15, 15)
    assert isinstance(prop["batches"], int) and 2 <= prop["batches"] < 15  # at most 8 scenarios a batch
    assert f"summary: {run / 'summary.md'}" in out


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


# ---------------------------------------------------------------- exit codes and labels (engine/model/errors.py)

GOOD = SCENARIOS / "acc_outer_no_match.json"


def _diverging(tmp_path: Path) -> Path:
    data = json.loads((SCENARIOS / "acc_inner_first_match_retracts_padding.json").read_text())
    data["events"][1]["expect"]["emits"][0]["kind"] = "-U"
    path = tmp_path / "diverges.json"
    path.write_text(json.dumps(data))
    return path


def _rows(out: str) -> dict[str, str]:
    """replay's first column per file name."""
    rows = {}
    for line in out.splitlines():
        parts = line.split(" /", 1)
        if len(parts) == 2 and parts[0].strip():
            rows[Path("/" + parts[1].split("  ")[0]).name] = parts[0].strip()
    return rows


def test_replay_exit_code_is_the_most_severe_outcome(tmp_path: Path, capsys, monkeypatch) -> None:
    diverging = _diverging(tmp_path)
    missing_key = tmp_path / "missing_key.json"
    missing_key.write_text(json.dumps({"inputs": []}))
    assert main(["replay", str(diverging)]) == 1
    assert main(["replay", str(missing_key)]) == 2
    assert main(["replay", str(diverging), str(missing_key), str(GOOD)]) == 2
    out = capsys.readouterr().out
    assert _rows(out) == {"diverges.json": "diverged", "missing_key.json": "bad input",
                          "acc_outer_no_match.json": "passed"}
    assert out.splitlines()[-1] == "1 passed, 1 bad input, 1 diverged"

    import converge.properties.replay as replay

    def crash(scenario, runtime):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(replay, "run_on", crash)
    assert main(["replay", str(diverging), str(missing_key), str(GOOD)]) == 3
    out = capsys.readouterr().out
    assert _rows(out)["acc_outer_no_match.json"] == "crashed" and "ZeroDivisionError: a bug" in out


def test_a_typed_error_is_labelled_by_its_class_not_as_a_crash(capsys, monkeypatch) -> None:
    import converge.properties.replay as replay
    from converge.engine.model.errors import BadInputError, NonTerminationError

    for error, label, code in ((NonTerminationError("timers re-fire"), "internal error", 3),
                               (BadInputError("no such input", event_index=2), "bad input", 2)):
        def fail(scenario, runtime, error=error):
            raise error

        monkeypatch.setattr(replay, "run_on", fail)
        assert main(["replay", str(GOOD)]) == code
        out = capsys.readouterr().out
        assert out.startswith(f"{label} ") and "crashed" not in out, out


def test_one_unreadable_file_does_not_hide_the_others(tmp_path: Path, capsys) -> None:
    shutil.copy(GOOD, tmp_path / "a_good.json")
    (tmp_path / "b_latin1.json").write_bytes(b'{"name": "caf\xe9", "inputs": []}')
    shutil.copy(GOOD, tmp_path / "c_good.json")
    assert main(["replay", str(tmp_path)]) == 2
    out = capsys.readouterr().out
    assert _rows(out) == {"a_good.json": "passed", "b_latin1.json": "bad input", "c_good.json": "passed"}
    assert "not UTF-8 text: byte 0xe9 at offset 13" in out


def test_replaying_a_reports_folder_skips_what_is_not_a_scenario(tmp_path: Path, capsys) -> None:
    reports = tmp_path / "reports"
    for _ in range(2):
        assert main(["run", "--family", "regular", "--property", "prefix_consistency", "--examples", "3",
                     "--seed", "1", "--reports-dir", str(reports)]) == 0
    runs = sorted(p for p in reports.iterdir() if p.is_dir() and not p.is_symlink())
    assert len(runs) == 2 and all((r / "summary.json").exists() for r in runs)  # the second run kept the first's
    shutil.copy(GOOD, runs[0] / "promoted.json")
    (runs[1] / "damaged.json").write_text('{"inputs": [], "join": {"inputs": ["a"')  # looks like one, is broken
    capsys.readouterr()
    for target in (reports, runs[0]):
        assert main(["replay", str(target)]) == (2 if target == reports else 0)
    out = capsys.readouterr().out
    assert "passed         " + str(runs[0] / "promoted.json") in out
    assert "bad input      " + str(runs[1] / "damaged.json") in out
    assert f"skipped        {runs[1] / 'summary.json'}  (JSON without any of the scenario keys" in out
    assert f"skipped        {runs[0] / 'summary.md'}  (not a .json file)" in out
    assert f"skipped        {reports / 'latest'}" in out or not (reports / "latest").is_symlink()
    assert main(["replay", str(runs[1] / "summary.json")]) == 2  # named alone: nothing to replay
    assert "no scenario files found (1 other files skipped)" in capsys.readouterr().err


def test_replay_on_another_runtime_names_each_comparison_once(capsys, monkeypatch) -> None:
    import converge.properties.replay as replay
    from converge.engine.runtime.local import run_scenario

    monkeypatch.setattr(replay, "run_scenario_on_spark", run_scenario)  # Spark's answer is the local one here
    data = json.loads((SCENARIOS / "ret_full_outer_both_sides.json").read_text())
    for e in data["events"]:
        e.pop("expect", None)
    data.pop("expect_final")
    (outcome,) = [replay.replay_scenario(replay.scenario_from_dict(data), Path("plain.json"), "spark")]
    assert outcome.ok and outcome.checked == ["spark_final_equals_local", "spark_final_equals_oracle"]


def test_an_unwritable_reports_folder_warns_and_still_prints_the_table(tmp_path: Path, capsys) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    args = ["run", "--family", "regular", "--property", "prefix_consistency", "--examples", "3", "--seed", "1",
            "--quiet"]  # no progress line: stderr holds the warning alone
    assert main(args + ["--reports-dir", str(blocker)]) == 2
    out, err = capsys.readouterr()
    assert "prefix_consistency  passed" in out and "summary:" not in out
    assert err.count("\n") == 1 and err.startswith(f"converge: warning: reports folder {blocker}: cannot write")


def test_bad_command_line_values_exit_2_without_a_traceback(tmp_path: Path, capsys) -> None:
    for argv in (["run", "--examples", "0"], ["bench", "--out", str(tmp_path)], ["mutants", "--examples", "x"]):
        with pytest.raises(SystemExit) as done:
            main(argv)
        assert done.value.code == 2
        assert "Traceback" not in capsys.readouterr().err
    assert main(["explain", str(tmp_path / "nope.json")]) == 2
    assert capsys.readouterr().err == f"converge: usage: {tmp_path / 'nope.json'}: no such file\n"


def test_the_spark_campaign_does_not_count_a_property_that_checked_nothing_as_passed(capsys, monkeypatch) -> None:
    from converge.cli import spark_campaign
    from converge.engine.runtime.local import run_scenario
    from converge.reports.options import RunOptions

    def on_local(scenarios, properties, **kw):  # stands in for Spark: the checks are what is tested here
        return spark_campaign.check_results(scenarios, [run_scenario(s) for s in scenarios], properties=properties)

    monkeypatch.setattr(spark_campaign, "check_on_spark", on_local)
    monkeypatch.setattr(spark_campaign, "oracle_decides", lambda scenario: False)
    code = spark_campaign.run_spark_campaign(RunOptions(examples=2, seed=1, family="regular", runtime="spark"))
    out = capsys.readouterr().out
    assert code == 2
    assert "spark_final_equals_oracle  not checked         0" in out
    assert "NOT CHECKED regular/spark_final_equals_oracle: none of the 2 scenarios" in out
    assert out.splitlines()[-1].startswith("1 passed, 1 not checked (")
    with pytest.raises(UsageError, match="decides no scenario of the interval family"):
        spark_campaign.run_spark_campaign(RunOptions(examples=2, family="interval",
                                                     property="spark_final_equals_oracle", runtime="spark"))
