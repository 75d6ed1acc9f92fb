"""Terminal output of the commands: aligned tables and a progress bar that only draws on a terminal."""

from __future__ import annotations

import sys
from typing import Sequence, TextIO

__all__ = ["failure_excerpt", "format_table", "progress"]


def progress(done: int, total: int, label: str, stream: TextIO | None = None) -> None:
    """Redraw a one-line progress bar on stderr (nothing when it is not a terminal)."""
    stream = stream or sys.stderr
    if not stream.isatty():
        return
    width = 28
    filled = int(width * done / max(total, 1))
    stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {label:<40.40}")
    stream.flush()
    if done == total:
        stream.write("\r" + " " * (width + 60) + "\r")


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Columns padded to their widest cell; the first two left-aligned, the rest (numbers) right-aligned."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for n, r in enumerate(cells):
        lines.append("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def failure_excerpt(message: str, reports: Sequence[str], lines: int = 12) -> str:
    """A failed property's first lines (the rest are in its report) and the paths of its reports."""
    text = message.splitlines()
    more = [f"  ... ({len(text) - lines} more lines in the report)"] if len(text) > lines else []
    return "\n".join(text[:lines] + more + [f"  report: {path}" for path in reports])
