"""The pytest plugin's reports of any failure of a test that drew converge scenarios (issue 28).

One pytest run in a subprocess (as a user's pytest runs, with the plugin
loaded from its entry point) of three failing tests: a plain `assert` over a
drawn scenario, a BadInputError raised on a scenario drawn with `st.data()`
and a registered property's PropertyFailure. The reports must exist, name the
test, the seed and a reproduce command; Hypothesis's falsifying example must
print the scenario as JSON; and replaying the report of a test's own check
must say "not rerun", never "passed". (Under CI: test_pytest_reports_under_ci.py.)
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from converge.engine.model.scenario_json import load_scenario, scenario_from_dict
from converge.properties.replay import replay_file
from tests.support.user_pytest import USER_TESTS, not_ci, printed_scenario, reports_for, user_pytest

# one worker runs the module, so its module-scoped pytest run (the three failing user tests) runs once
pytestmark = pytest.mark.xdist_group("pytest-reports")

@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess, Path]:
    """One subprocess pytest run shared by the tests below (each run costs seconds: DuckDB, Hypothesis)."""
    root = tmp_path_factory.mktemp("user")
    (root / "test_user.py").write_text(USER_TESTS)
    reports = root / "reports"
    proc = user_pytest(root, "--hypothesis-seed=4242", f"--converge-reports={reports}", "test_user.py",
                        env=not_ci())
    return proc, reports


def test_both_failures_leave_a_report_naming_the_test_and_the_seed(run) -> None:
    proc, reports = run
    assert "3 failed" in proc.stdout, proc.stdout[-3000:]
    for test in ("test_plain_assert", "test_bad_input"):
        (path,) = reports_for(reports, test)
        meta = json.loads(path.read_text())["meta"]["converge_failure"]
        assert meta["test"] == f"test_user.py::{test}" and meta["seed"] == 4242
        assert meta["reproduce"] == f"pytest --hypothesis-seed=4242 test_user.py::{test}"
        md = path.with_suffix(".md").read_text()
        assert md.startswith(f"# test_user.py::{test} failed")
        assert "seed 4242" in md and "seed unknown" not in md and "?/" not in md
        assert f"`pytest --hypothesis-seed=4242 test_user.py::{test}`" in md
    assert "too many events" in json.loads(reports_for(reports, "test_plain_assert")[0].read_text()
                                           )["meta"]["converge_failure"]["message"]
    assert "data.draw #1" in reports_for(reports, "test_bad_input")[0].with_suffix(".md").read_text()
    assert proc.stdout.count("reproduce: pytest --hypothesis-seed=4242 test_user.py::") == 2


def test_a_property_failure_names_the_test_and_reproduces_with_replay(run) -> None:
    proc, reports = run
    (path,) = reports_for(reports, "test_registered_property")
    md = path.with_suffix(".md").read_text()
    assert md.startswith("# test_user.py::test_registered_property failed (`final_convergence`)")
    assert "seed 4242" in md and "checks the file's expectations only" not in md
    assert f"reproduce: converge replay {path}" in proc.stdout


def test_the_report_holds_the_final_shrunk_example_hypothesis_printed_as_json(run) -> None:
    proc, reports = run
    assert "lambda packed" not in proc.stdout and "_byte_picker" not in proc.stdout
    # the heading: "Falsifying example:" in Hypothesis 6.155, "Failing test case:" in 6.170
    shown = scenario_from_dict(json.loads(printed_scenario(proc.stdout)))
    (path,) = reports_for(reports, "test_plain_assert")
    written = load_scenario(path)
    assert (written.inputs, written.join, written.config, written.events) == (
        shown.inputs, shown.join, shown.config, shown.events)
    assert len(written.events) >= 3  # the failing example, not the last passing one
    assert re.search(r"Draw 1: \{\"name\": \"generated ", proc.stdout)  # st.data()'s draws print as JSON too


def test_replaying_a_custom_property_report_says_not_rerun_never_passed(run) -> None:
    _, reports = run
    (path,) = reports_for(reports, "test_plain_assert")
    outcome = replay_file(path)
    assert outcome.label == "not checked" and outcome.exit_code == 2
    assert any("not rerun" in c for c in outcome.checked)
    assert "pytest --hypothesis-seed=4242 test_user.py::test_plain_assert" in outcome.problems[0]
