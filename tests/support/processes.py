"""Whether a process a test started has ended, with every process of its group."""

from __future__ import annotations

import os


def gone(pid: int) -> bool:
    """True when no process of the group `pid` leads is left (adapters run in their own session)."""
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return True
    return False
