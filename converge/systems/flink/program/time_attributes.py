"""Time attributes on the inputs of regular and multi-way joins (part of the Flink adapter program).

Standard library only. A converge input with a `time_column` becomes, in Flink, a rowtime attribute
(`TO_TIMESTAMP_LTZ(ms, 3)`) with a watermark, also when the join is not an interval join: users declare
rowtimes on every table, and the planner must then materialize them in a regular or multi-way join
(RelTimeIndicatorConverter; FLINK-37962 added it for the multi-way join, FLINK-38379 fixed its field
indices). A rowtime that the query never reads is pruned before that step, so the job's SELECT also
outputs each joined input's rowtime, as text: the join must carry the time attribute through. The
adapter checks every such value against the row's own time column and strips it; a value that does not
match stays in the row, so the answer differs from the batch answer and the divergence shows it.
"""

from __future__ import annotations

import datetime
import re
from typing import Any

# The session's time zone for TIMESTAMP_LTZ text (table.local-time-zone): the check below writes UTC.
TIME_ZONE = "UTC"
_EPOCH = datetime.datetime(1970, 1, 1)


def rowtime_sql(view: int) -> str:
    """The SELECT item that reads input `view`'s rowtime after the join (NULL on a padded side)."""
    return f"CAST(t{view}rt AS STRING)"


_COMPARISON = re.compile(r"\((t(\d+)c(\d+)) (<=|<|>=|>|=|<>) (t(\d+)c(\d+))\)")


def on_rowtimes(sql: str, timed: dict[int, int]) -> str:
    """A translated condition with every comparison of two time columns (`(t0c2 <= t1c2)`) made on their rowtimes
    instead (`(t0rt <= t1rt)`): the same truth value (TO_TIMESTAMP_LTZ keeps the order of the millis, and NULL),
    but now the join's condition reads time attributes, which the planner must materialize there."""
    def swap(m: re.Match) -> str:
        left, right = (int(m.group(2)), int(m.group(3))), (int(m.group(6)), int(m.group(7)))
        if timed.get(left[0]) != left[1] or timed.get(right[0]) != right[1]:
            return m.group(0)
        return f"(t{left[0]}rt {m.group(4)} t{right[0]}rt)"
    return _COMPARISON.sub(swap, sql)


def rowtime_text(ms: int | None) -> str | None:
    """How Flink writes TO_TIMESTAMP_LTZ(ms, 3) as a STRING in time zone UTC ('1970-01-01 00:00:00.005')."""
    if ms is None:
        return None
    t = _EPOCH + datetime.timedelta(milliseconds=ms)
    return (f"{t.year:04d}-{t.month:02d}-{t.day:02d} {t.hour:02d}:{t.minute:02d}:{t.second:02d}"
            f".{t.microsecond // 1000:03d}")


def strip(row: list[Any], checks: tuple[int, ...]) -> list[Any]:
    """`row` without its trailing rowtime texts, one per position (in the row) of a joined input's time column;
    the row as Flink gave it when one text is not its time column's (a wrong or lost time attribute)."""
    if not checks:
        return row
    width = len(row) - len(checks)
    if width < 0:
        return row
    for position, text in zip(checks, row[width:]):
        if rowtime_text(row[position]) != text:
            return row
    return row[:width]


def strip_all(changelogs: dict[int, list[list[Any]]], checks: tuple[int, ...]) -> dict[int, list[list[Any]]]:
    """Every case's changelog ([kind, value...]) with strip applied to each row."""
    if not checks:
        return changelogs
    return {case: [[kind, *strip(values, checks)] for kind, *values in rows] for case, rows in changelogs.items()}
