"""Where failure reports and summaries go: the one place that reads the reports setting.

A command-line value (`converge run --reports-dir`, pytest's
`--converge-reports`) wins; without one, $CONVERGE_REPORTS_DIR; without that,
./converge-reports. The value "off" turns reports off. Inside it, each run
writes into a directory of its own (converge.reports.runs), named here.
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

__all__ = ["DEFAULT_FOLDER", "ENVIRONMENT_VARIABLE", "OFF", "new_run_name", "reports_folder"]

DEFAULT_FOLDER = "converge-reports"
ENVIRONMENT_VARIABLE = "CONVERGE_REPORTS_DIR"
OFF = "off"


def reports_folder(setting: str | os.PathLike[str] | None = None) -> Path | None:
    """The folder reports go to, or None when they are off."""
    value = os.fspath(setting) if setting is not None else os.environ.get(ENVIRONMENT_VARIABLE) or DEFAULT_FOLDER
    return None if value == OFF else Path(value)


def new_run_name(command: str = "run", started: float | None = None) -> str:
    """A run directory's name: sorts by UTC start time, names the process, e.g. 20261123T101530.123456Z-run-4242-a1b2.

    The random tail keeps two runs apart even when they share a process id (two machines, one folder)."""
    started = time.time() if started is None else started
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(started)) + f".{int(started % 1 * 1e6):06d}Z"
    return f"{stamp}-{command}-{os.getpid()}-{secrets.token_hex(2)}"
