"""Where failure reports and summaries go: the one place that reads the reports setting.

A command-line value (`converge run --reports-dir`, pytest's
`--converge-reports`) wins; without one, $CONVERGE_REPORTS_DIR; without that,
./converge-reports. The value "off" turns reports off.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DEFAULT_FOLDER", "ENVIRONMENT_VARIABLE", "OFF", "reports_folder"]

DEFAULT_FOLDER = "converge-reports"
ENVIRONMENT_VARIABLE = "CONVERGE_REPORTS_DIR"
OFF = "off"


def reports_folder(setting: str | os.PathLike[str] | None = None) -> Path | None:
    """The folder reports go to, or None when they are off."""
    value = os.fspath(setting) if setting is not None else os.environ.get(ENVIRONMENT_VARIABLE) or DEFAULT_FOLDER
    return None if value == OFF else Path(value)
