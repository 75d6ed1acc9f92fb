"""Terminal output of the commands: aligned tables and a progress bar that only draws on a terminal."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

__all__ = ["Footnotes", "failure_excerpt", "format_table", "outcome_cell", "progress", "shrink_note", "tally"]

REASON_WIDTH = 70


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


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Columns padded to their widest cell; numbers right-aligned, text (names, outcomes, reasons) left-aligned."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    numbers = [i >= 2 and all(_numeric(r[i]) or r[i] in ("", "...") for r in cells[1:]) for i in range(len(headers))]
    lines = []
    for n, r in enumerate(cells):
        lines.append("  ".join(c.rjust(w) if numbers[i] else c.ljust(w)
                               for i, (c, w) in enumerate(zip(r, widths, strict=False))).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


@dataclass
class Footnotes:
    """Reasons kept out of a table's cells, so that a row fits a terminal: the cell holds a short outcome and
    "[n]", and the reasons are listed under the table, [1], [2], ... (one number per distinct reason)."""

    notes: list[str] = field(default_factory=list)

    def mark(self, short: str, reason: str | None, label: str | None = None) -> str:
        """`short` with the number of `reason`'s footnote ("short [n]", the note "label: reason", `label`
        defaulting to `short`); `short` alone when there is no reason."""
        if not reason:
            return short
        text = f"{label or short}: {reason}"
        if text not in self.notes:
            self.notes.append(text)
        return f"{short} [{self.notes.index(text) + 1}]"

    def under(self, table: str) -> str:
        """`table` with the footnotes under it."""
        if not self.notes:
            return table
        return table + "\n" + "\n".join(f"[{n}] {text}" for n, text in enumerate(self.notes, 1))


def tally(labels: Iterable[str]) -> str:
    """ "4 passed, 1 diverged, 2 bad input": every label that occurred, passed first."""
    counts = Counter(labels)
    order = ["passed"] + sorted(k for k in counts if k != "passed")
    return ", ".join(f"{counts[k]} {k}" for k in order)


def outcome_cell(label: str, error: BaseException | None) -> str:
    """A table's outcome: the label, and for "not checked" why (cut; the whole reason is printed below)."""
    if label != "not checked" or error is None:
        return label
    reason = str(error).splitlines()[0] if str(error) else ""
    if len(reason) > REASON_WIDTH:
        reason = reason[:REASON_WIDTH - 3] + "..."
    return f"{label}: {reason}" if reason else label


def shrink_note(stopped: float | None) -> str:
    """What a table's outcome adds when shrinking stopped at its budget (the case shown is the best found by then)."""
    return "" if stopped is None else f" (shrink stopped after {stopped:.0f} s)"


def failure_excerpt(message: str, reports: Sequence[str], lines: int = 12) -> str:
    """A failed property's first lines (the rest are in its report) and the paths of its reports."""
    text = message.splitlines()
    more = [f"  ... ({len(text) - lines} more lines in the report)"] if len(text) > lines else []
    return "\n".join(text[:lines] + more + [f"  report: {path}" for path in reports])


def print_replay_outcomes(outcomes: Sequence[Any], problems: Callable[[Any], Iterable[str]]) -> int:
    """A replay's outcomes, one line each (label, file, what was checked) with their problems indented, then
    the count per label; the worst exit code. `problems` gives an outcome's problem texts."""
    indent = " " * 15
    for o in outcomes:
        checked = ", ".join(o.checked)
        print(f"{o.label:<14} {o.path}" + (f"  [{checked}]" if checked else ""))
        for text in problems(o):
            print(indent + text.replace("\n", "\n" + indent))
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.label] = counts.get(o.label, 0) + 1
    print(", ".join(f"{n} {k}" for k, n in counts.items()))
    return max(o.exit_code for o in outcomes)
