"""Under CI, Hypothesis derandomizes a run: the report of a failing pytest test says so, and its reproduce
command carries CI=true and reproduces the same shrunk example from a shell that is not CI.

Outside the module of the other pytest-report tests (their xdist group), so its two pytest runs go to
another worker while that module's run goes on.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.user_pytest import USER_TESTS, not_ci, printed_scenario, reports_for, user_pytest


def test_under_ci_the_report_says_derandomized_and_its_command_reproduces_the_failure(tmp_path: Path) -> None:
    root = tmp_path / "user"
    root.mkdir()
    (root / "test_user.py").write_text(USER_TESTS)
    reports = root / "reports"
    proc = user_pytest(root, f"--converge-reports={reports}", "test_user.py::test_plain_assert",
                        env={**not_ci(), "CI": "true"})
    assert "1 failed" in proc.stdout, proc.stdout[-3000:]
    (path,) = reports_for(reports, "test_plain_assert")
    meta = json.loads(path.read_text())["meta"]["converge_failure"]
    assert (meta["seed"], meta["seed_source"]) == (None, "derandomize")
    assert meta["reproduce"] == "CI=true pytest test_user.py::test_plain_assert"
    md = path.with_suffix(".md").read_text()
    assert "derandomized (no seed" in md and "seed unknown" not in md
    # the command, run from a shell that is not CI, fails on the same shrunk example
    again = subprocess.run(["sh", "-c", meta["reproduce"].replace(
        "pytest", f"{sys.executable} -m pytest -p no:cacheprovider -p no:randomly", 1)],
        cwd=root, capture_output=True, text=True, timeout=600, env=not_ci())
    assert "1 failed" in again.stdout, again.stdout[-3000:]
    assert printed_scenario(again.stdout) == printed_scenario(proc.stdout)
