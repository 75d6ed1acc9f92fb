"""The static checks: ruff finds nothing, and mypy finds no error beyond its per-module baseline.

mypy runs once for this file (a module-scoped fixture), on converge as it is installed
(tools/mypy_baseline.py builds that shape; its docstring says why). Its baseline,
tools/mypy_baseline.json (module -> error count), only goes down: a module with more errors
than its entry, or with errors and no entry, fails with that module's errors printed; a module
with fewer fails too, with the lowered entries to write. Write them by hand or with

    python -m tools.mypy_baseline --write-baseline

which lowers entries and never raises one. `.ci/run` runs the same two checks before the suite.
.ci/weekly-oldest leaves these tests out (-m "not static"): the baseline is counted on the
newest dependencies, whose types are the ones .ci/run installs.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.paths import ROOT
from tools import mypy_baseline

# one worker runs them all, so mypy runs once (and never twice at a time on one cache)
pytestmark = [pytest.mark.static, pytest.mark.xdist_group("static_checks")]


@pytest.fixture(scope="module")
def mypy_errors() -> list[mypy_baseline.MypyError]:
    return mypy_baseline.run_mypy(ROOT)


def test_no_module_has_more_mypy_errors_than_its_baseline(mypy_errors: list[mypy_baseline.MypyError]) -> None:
    report = mypy_baseline.above_report(mypy_errors, mypy_baseline.load_baseline())
    assert not report, report


def test_a_module_with_fewer_mypy_errors_lowers_its_baseline(mypy_errors: list[mypy_baseline.MypyError]) -> None:
    report = mypy_baseline.below_report(mypy_errors, mypy_baseline.load_baseline())
    assert not report, report


def test_ruff_finds_nothing() -> None:
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
