"""A user's first hour, scripted (issue 41): in a project folder of their own, each command as the README and the
docs give it, run as a process. The embedded campaign with JUnit XML; `check` on a query; `capture` making a
capture and `verify` checking it; a pytest property of their own that fails, with its reproduce line run again;
a buggy adapter's campaign and `--last-failed` rerunning what failed, failing again until it is fixed.

Marked slow: about 40 s of CPU in its processes (233 s of wall time at load 40 on 2 cores); the default run covers
`capture` and `verify` in tests/cli/check_verify/test_capture.py and each command's own pieces in its folder."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.support.paths import EXAMPLES, FAKE_ADAPTERS

pytestmark = pytest.mark.slow

CONVERGE = [sys.executable, "-m", "converge.cli.main"]
USER_TEST = '''
from hypothesis import given, settings
from converge.generators import regular_join_scenarios
from converge.properties.divergence import Divergence, PropertyFailure

@settings(settings.get_profile("converge"), max_examples=3)
@given(regular_join_scenarios())
def test_my_property(scenario):
    raise PropertyFailure(Divergence("my_property", scenario, "my join engine disagrees"))
'''


def _run(folder: Path, *argv: str, command: list[str] | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CONVERGE_REPORTS_DIR", "PYTEST_ADDOPTS")}
    return subprocess.run([*(command or CONVERGE), *argv], cwd=folder, capture_output=True, text=True, timeout=1200,
                          env=env)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("first-hour") / "my-project"
    folder.mkdir()
    (folder / "pyproject.toml").write_text('[project]\nname = "my-project"\n\n[tool.converge]\n'
                                           'reports-dir = "build/converge-reports"\n')
    (folder / "query.sql").write_text((EXAMPLES / "left_join_residual.sql").read_text())
    return folder


def test_the_first_campaign_passes_and_writes_junit_xml(project: Path) -> None:
    done = _run(project, "run", "--examples", "5", "--seed", "1", "--junit-xml", "junit.xml")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    suite = ET.parse(project / "junit.xml").getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    assert suite is not None and int(suite.get("tests", "0")) >= 40 and suite.get("failures") == "0"
    assert (project / "build" / "converge-reports" / "latest-run.txt").is_file()  # [tool.converge] reports-dir


def test_check_then_capture_then_verify_the_capture(project: Path) -> None:
    check = _run(project, "check", "query.sql", "--examples", "3", "--seed", "1", "--no-reports")
    assert check.returncode == 0, check.stdout[-3000:] + check.stderr[-3000:]
    assert "check/reading_equals_query" in check.stdout
    capture = _run(project, "capture", "query.sql", "--out", "capture", "--seed", "2")
    assert capture.returncode == 0, capture.stderr
    command = next(line for line in capture.stdout.splitlines() if line.startswith("check it: "))
    verify = _run(project, *shlex.split(command.removeprefix("check it: converge ")))  # the printed command, as is
    assert verify.returncode == 0, verify.stderr
    assert verify.stdout.startswith("passed: the output equals the answer after every input record"), verify.stdout
    records = (project / "capture" / "output.jsonl").read_text().splitlines()
    bad = project / "capture" / "output-changed.jsonl"
    bad.write_text("\n".join(records[1:]) + "\n")  # the output's first record lost, as a buggy job would
    if records:
        verify = _run(project, *shlex.split(command.removeprefix("check it: converge ").replace("output.jsonl",
                                                                                               "output-changed.jsonl")))
        assert verify.returncode == 1, verify.stdout + verify.stderr


def test_a_failing_pytest_property_names_its_reports_and_a_reproduce_line_that_fails_again(project: Path) -> None:
    (project / "test_mine.py").write_text(USER_TEST)
    done = _run(project, "-p", "no:cacheprovider", "test_mine.py", command=[sys.executable, "-m", "pytest"])
    assert done.returncode == 1, done.stdout[-3000:]
    assert "converge failure reports" in done.stdout and "build/converge-reports/" in done.stdout, done.stdout[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("reproduce: "))
    again = subprocess.run(line.removeprefix("reproduce: ") + " -p no:cacheprovider", shell=True, cwd=project,
                           capture_output=True, text=True, timeout=600)
    assert again.returncode == 1 and "my join engine disagrees" in again.stdout, again.stdout[-3000:]


def test_last_failed_reruns_what_failed_and_fails_again(project: Path) -> None:
    adapter = f"cmd:{sys.executable} {FAKE_ADAPTERS / 'sql_join.py'} --ignore-residual"  # the user's buggy adapter
    first = _run(project, "run", "--system", adapter, "-k", "regular/final_equals_oracle", "--examples", "5",
                 "--seed", "1", "--shrink-budget", "5")
    assert first.returncode == 1, first.stdout[-3000:] + first.stderr[-3000:]
    again = _run(project, "run", "--system", adapter, "--last-failed", "--shrink-budget", "5")
    assert again.returncode == 1, again.stdout[-3000:] + again.stderr[-3000:]
    assert "final_equals_oracle" in again.stdout and "diverged" in again.stdout, again.stdout[-3000:]
