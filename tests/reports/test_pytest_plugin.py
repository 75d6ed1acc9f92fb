"""converge's pytest plugin, as a user gets it by installing converge: reports, options, marker, fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

FAILING = '''
from hypothesis import given, settings
from converge.generators import regular_join_scenarios
from converge.properties.divergence import Divergence, PropertyFailure

@settings(settings.get_profile("converge"), max_examples=3)
@given(regular_join_scenarios())
def test_always_fails(scenario):
    raise PropertyFailure(Divergence("always_fails", scenario, "by design"))
'''


def _written(folder: Path) -> list[str]:
    """What the run wrote: the suffixes of the files in its own directory, which latest-run.txt names."""
    if not folder.exists():
        return []
    runs = [p for p in folder.iterdir() if p.is_dir() and not p.is_symlink()]
    assert len(runs) == 1, runs
    assert (folder / "latest-run.txt").read_text().strip() == runs[0].name
    return sorted(p.suffix for p in runs[0].iterdir())


def test_a_failing_property_leaves_a_report_in_the_folder_given(pytester: pytest.Pytester, tmp_path: Path) -> None:
    pytester.makepyfile(test_user=FAILING)
    result = pytester.runpytest_subprocess(f"--converge-reports={tmp_path / 'reports'}")
    result.assert_outcomes(failed=1)
    assert _written(tmp_path / "reports") == [".json", ".md", ".png"]
    result.stdout.fnmatch_lines(["*converge failure reports*", f"*{tmp_path / 'reports'}/*-pytest-*/always-fails*.json"])


def test_off_writes_nothing(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CONVERGE_REPORTS_DIR", raising=False)
    pytester.makepyfile(test_user=FAILING)
    pytester.runpytest_subprocess("--converge-reports=off").assert_outcomes(failed=1)
    assert not (pytester.path / "converge-reports").exists()


def test_the_environment_variable_is_the_fallback(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    monkeypatch.setenv("CONVERGE_REPORTS_DIR", str(tmp_path / "from-env"))
    pytester.makepyfile(test_user=FAILING)
    pytester.runpytest_subprocess().assert_outcomes(failed=1)
    assert _written(tmp_path / "from-env") == [".json", ".md", ".png"]


def test_without_a_setting_reports_go_to_the_working_directory(pytester: pytest.Pytester,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CONVERGE_REPORTS_DIR", raising=False)
    pytester.makepyfile(test_user=FAILING)
    pytester.runpytest_subprocess().assert_outcomes(failed=1)
    assert _written(pytester.path / "converge-reports") == [".json", ".md", ".png"]


def test_each_run_writes_its_own_directory_and_latest_names_the_last(pytester: pytest.Pytester,
                                                                     tmp_path: Path) -> None:
    pytester.makepyfile(test_user=FAILING)
    folder = tmp_path / "reports"
    for _ in range(2):
        pytester.runpytest_subprocess(f"--converge-reports={folder}").assert_outcomes(failed=1)
    runs = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())
    assert len(runs) == 2 and all("-pytest-" in r.name for r in runs)
    assert [sorted(p.suffix for p in r.iterdir()) for r in runs] == [[".json", ".md", ".png"]] * 2
    assert (folder / "latest-run.txt").read_text().strip() == runs[1].name  # names sort by start time
    assert (folder / "latest").resolve() == runs[1].resolve()


def test_xdist_workers_share_one_run_directory(pytester: pytest.Pytester, tmp_path: Path) -> None:
    pytester.makepyfile(test_user=FAILING + FAILING.replace("test_always_fails", "test_fails_too"))
    pytester.runpytest_subprocess("-n", "2", f"--converge-reports={tmp_path / 'reports'}").assert_outcomes(failed=2)
    (run,) = [p for p in (tmp_path / "reports").iterdir() if p.is_dir() and not p.is_symlink()]
    assert sorted(p.suffix for p in run.iterdir()) == [".json", ".json", ".md", ".md", ".png", ".png"]


def test_the_marker_overrides_the_option_for_one_test(pytester: pytest.Pytester, tmp_path: Path) -> None:
    pytester.makepyfile(test_user="import pytest\n" + FAILING.replace(
        "def test_always_fails", "@pytest.mark.converge_reports('off')\ndef test_always_fails"))
    result = pytester.runpytest_subprocess("--strict-markers", f"--converge-reports={tmp_path / 'reports'}")
    result.assert_outcomes(failed=1)
    assert not (tmp_path / "reports").exists()


def test_a_failure_that_is_not_a_property_failure_is_left_alone(pytester: pytest.Pytester, tmp_path: Path) -> None:
    pytester.makepyfile(test_user="import converge.properties.divergence\n"
                                  "def test_plain():\n    assert 1 == 2\n")
    result = pytester.runpytest_subprocess(f"--converge-reports={tmp_path / 'reports'}")
    result.assert_outcomes(failed=1)
    assert not (tmp_path / "reports").exists() and "converge failure reports" not in result.stdout.str()


def test_an_unwritable_folder_is_reported_not_crashed(pytester: pytest.Pytester, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    pytester.makepyfile(test_user=FAILING)
    result = pytester.runpytest_subprocess(f"--converge-reports={blocker / 'reports'}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*not written to*a-file*"])


def test_fixtures_a_user_gets(pytester: pytest.Pytester, tmp_path: Path) -> None:
    pytester.makepyfile(test_fixtures='''
import json
from collections import Counter

SCENARIO = {"name": "one match",
            "inputs": [{"name": "a", "columns": [["k", "BIGINT"]], "changelog_mode": "insert_only"},
                       {"name": "b", "columns": [["k", "BIGINT"]], "changelog_mode": "insert_only"}],
            "join": {"inputs": ["a", "b"], "types": ["inner"], "conditions": ["a.k = b.k"]},
            "events": [{"input": "a", "kind": "+I", "row": [1]}, {"input": "b", "kind": "+I", "row": [1]}]}

def test_oracle_and_loader(converge_oracle, converge_scenario, tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SCENARIO))
    for source in (SCENARIO, json.dumps(SCENARIO), path):
        assert converge_oracle.final(converge_scenario(source)) == Counter({(1, 1): 1})

def test_reports_dir(converge_reports_dir, pytestconfig):
    assert str(converge_reports_dir) == pytestconfig.getoption("converge_reports")
''')
    pytester.runpytest_subprocess(f"--converge-reports={tmp_path / 'r'}").assert_outcomes(passed=2)


def test_option_and_marker_are_registered(pytester: pytest.Pytester) -> None:
    pytester.runpytest_subprocess("--help").stdout.fnmatch_lines(["*--converge-reports=DIR|off*"])
    pytester.runpytest_subprocess("--markers").stdout.fnmatch_lines(["*converge_reports(folder)*"])


def test_the_projects_reports_dir_is_honoured_after_the_environment(pytester: pytest.Pytester,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """`[tool.converge] reports-dir`, relative to its pyproject.toml, as `converge run` reads it (issue 41 row 7);
    $CONVERGE_REPORTS_DIR and --converge-reports still win over it."""
    monkeypatch.delenv("CONVERGE_REPORTS_DIR", raising=False)
    pytester.makefile(".toml", pyproject='[tool.converge]\nreports-dir = "build/property-reports"\n')
    pytester.makepyfile(test_user=FAILING)
    sub = pytester.mkdir("sub")
    monkeypatch.chdir(sub)  # pytest started below the project's folder: the path is the file's, not the cwd's
    pytester.runpytest_subprocess(str(pytester.path)).assert_outcomes(failed=1)
    assert _written(pytester.path / "build" / "property-reports") == [".json", ".md", ".png"]
    assert not (pytester.path / "converge-reports").exists() and not (sub / "build").exists()
    monkeypatch.setenv("CONVERGE_REPORTS_DIR", str(pytester.path / "from-env"))
    pytester.runpytest_subprocess(str(pytester.path)).assert_outcomes(failed=1)
    assert _written(pytester.path / "from-env") == [".json", ".md", ".png"]


def test_a_reports_dir_of_the_wrong_type_is_a_usage_error(pytester: pytest.Pytester,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CONVERGE_REPORTS_DIR", raising=False)
    pytester.makefile(".toml", pyproject="[tool.converge]\nreports-dir = 3\n")
    pytester.makepyfile(test_user=FAILING)
    result = pytester.runpytest_subprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "pyproject.toml: [tool.converge] reports-dir: expected a string, got 3" in result.stdout.str() + \
        result.stderr.str()
