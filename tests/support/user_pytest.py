"""A user's pytest run in a subprocess (the plugin loaded from its entry point, as installed), on three failing
tests that draw converge scenarios; the reports it leaves and the example Hypothesis prints. The pytest plugin's
report tests (tests/reports/test_pytest_reports_*.py) share it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from hypothesis._settings import _CI_VARS  # the variables Hypothesis reads to detect CI (no public list)

USER_TESTS = '''
from hypothesis import given, settings, strategies as st
from converge import BadInputError, Divergence, PropertyFailure
from converge.generators import regular_join_scenarios

@settings(settings.get_profile("converge"), max_examples=20, database=None)
@given(regular_join_scenarios(min_ops=1))
def test_plain_assert(scenario):
    assert len(scenario.events) < 3, "too many events"

@settings(settings.get_profile("converge"), max_examples=3, database=None)
@given(regular_join_scenarios())
def test_registered_property(scenario):
    raise PropertyFailure(Divergence("final_convergence", scenario, "by design"))

@settings(settings.get_profile("converge"), max_examples=5, database=None)
@given(st.data())
def test_bad_input(data):
    scenario = data.draw(regular_join_scenarios())
    raise BadInputError("this scenario is refused on purpose")
'''


def not_ci() -> dict[str, str]:
    """This environment without the variables that make Hypothesis load its derandomizing `ci` profile (CI
    machines set them), so a run's seed is the one the command line gives."""
    return {k: v for k, v in os.environ.items() if k not in _CI_VARS}


def user_pytest(root: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", *args],
                          cwd=root, capture_output=True, text=True, timeout=600, env=env)


def reports_for(reports: Path, test: str) -> list[Path]:
    (run_dir,) = [p for p in reports.iterdir() if p.is_dir() and not p.is_symlink()]
    found = []
    for path in sorted(run_dir.glob("*.json")):
        meta = json.loads(path.read_text())["meta"]["converge_failure"]
        if meta.get("test", "").endswith(f"::{test}"):
            found.append(path)
    return found


def printed_scenario(stdout: str) -> str:
    printed = re.search(r"(?:Falsifying example|Failing test case): test_plain_assert\(\nE?\s+scenario=(\{.*\}),\n",
                        stdout)
    assert printed is not None, stdout[-3000:]
    return printed.group(1)
