"""Python code run in a new interpreter: an import path must be resolved by import, not found in sys.modules."""

from __future__ import annotations

import subprocess
import sys


def run_fresh(code: str, *, warnings: str = "always::DeprecationWarning") -> subprocess.CompletedProcess[str]:
    """`code` run by `python -W warnings -c`, its output captured (a failure is the caller's to assert)."""
    return subprocess.run([sys.executable, "-W", warnings, "-c", code], capture_output=True, text=True, check=False)
