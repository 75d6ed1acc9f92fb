"""The machine a figure was measured on, printed beside every budget: cores and load average."""

from __future__ import annotations

import os


def load_average() -> list[float]:
    """The 1, 5 and 15 minute load averages, rounded as every benchmark document records them."""
    return [round(x, 2) for x in os.getloadavg()]


def machine_line() -> str:
    """'N cores, load 1/5/15 min a/b/c': a budget read without the load beside it says little on a shared machine."""
    one, five, fifteen = load_average()
    return f"{os.cpu_count()} cores, load 1/5/15 min {one:.2f}/{five:.2f}/{fifteen:.2f}"
