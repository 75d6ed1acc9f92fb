"""`pytest -n auto` keeps each xdist_group on one worker (the Spark tests share one JVM per worker that runs them).

A subprocess pytest run on three workers (plain `-n 3`, as `-n auto`), with
the suite's tests/support/xdist_groups.py, of two test files whose tests share a group: each
test writes the worker it ran on, and all of them must name the same one.
Without the plugin, on pytest 9.2 with xdist 3.8.0, they spread.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT

TESTS = '''
import os, pathlib, pytest

@pytest.mark.xdist_group("jvm")
@pytest.mark.parametrize("i", range(6))
def test_grouped(i):
    out = pathlib.Path(os.environ["GROUP_OUT"])
    (out / f"{__name__}-{i}").write_text(os.environ["PYTEST_XDIST_WORKER"])
'''


def test_grouped_tests_in_two_files_run_on_one_worker(tmp_path: Path) -> None:
    root = tmp_path / "suite"
    out = tmp_path / "out"
    root.mkdir()
    out.mkdir()
    for name in ("test_a.py", "test_b.py"):
        (root / name).write_text(TESTS)
    (root / "conftest.py").write_text('pytest_plugins = ["tests.support.xdist_groups"]\n')  # as the suite's conftest
    checkout = str(ROOT)  # where `tests.support.xdist_groups` imports from
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-n", "3",
                           "-q", "--rootdir", str(root), str(root)],
                          cwd=root, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "GROUP_OUT": str(out), "PYTHONPATH": checkout})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    workers = {p.name: p.read_text() for p in out.iterdir()}
    assert len(workers) == 12, workers
    assert len(set(workers.values())) == 1, workers
