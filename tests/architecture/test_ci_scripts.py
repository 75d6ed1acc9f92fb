"""The CI helper scripts in `.ci/`: the artificial load the suite's robustness is measured under."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT

UNDER_LOAD = ROOT / ".ci" / "under-load"


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


def test_under_load_passes_the_commands_status_through_and_stops_its_busy_processes() -> None:
    done = subprocess.run([str(UNDER_LOAD), "--busy", "2", "--", "sh", "-c", "echo ran; exit 3"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 3
    assert done.stdout == "ran\n"
    started = re.search(r"under-load: 2 busy processes \(pids (\d+) (\d+)\)", done.stderr)
    assert started, done.stderr
    assert "under-load: exit 3 after" in done.stderr
    pids = [int(started.group(1)), int(started.group(2))]
    assert all(pid != os.getpid() for pid in pids)
    assert not [pid for pid in pids if _alive(pid)]


def test_under_load_refuses_a_count_that_is_not_a_number() -> None:
    done = subprocess.run([str(UNDER_LOAD), "--busy", "many", "true"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "--busy takes a whole number of processes, not 'many'" in done.stderr


def test_every_test_the_default_run_leaves_to_run_slow_exists() -> None:
    """A renamed test must not drop out of the slow list silently (it would come back into the default run)."""
    from tests.conftest import SLOW_IN_THE_DEFAULT_RUN
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "--run-slow",
                           *sorted({prefix.split("::")[0] for prefix in SLOW_IN_THE_DEFAULT_RUN})],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    ids = [line for line in done.stdout.splitlines() if "::" in line]
    missing = [prefix for prefix in SLOW_IN_THE_DEFAULT_RUN if not any(i.startswith(prefix) for i in ids)]
    assert ids and not missing, (missing, done.stderr[-2000:])
