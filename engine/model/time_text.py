"""A time attribute computed from a string column: `ts AS TO_TIMESTAMP(s)` with `WATERMARK FOR ts`.

JSON sources often carry their event time as text. Flink computes the
rowtime in the scan's Calc (TO_TIMESTAMP, DateTimeUtils.parseTimestampData;
`CAST(s AS TIMESTAMP(3))` parses alike), before its WatermarkAssigner. A
scenario says it as the input's projection: the projected column
`epoch_ms(CAST(s AS TIMESTAMP))` (DuckDB SQL, epoch milliseconds as converge
holds a TIMESTAMP(3)) named by the input's `time_column`. The engine's Calc
computes it per row (engine/condition_compiler.py), the oracle in DuckDB.

Both compute the canonical text only: `yyyy-MM-dd HH:mm:ss` with an optional
fraction of one to three digits, a real calendar date, hours 00-23. Flink 2.3
reads more (measured: `2024-1-1 0:0:1`, a bare date, up to nine fraction
digits floored to milliseconds, `2024-02-30` clamped to the 29th, `24:00:00` as
the next day), and DuckDB reads differently there (it rounds the fourth digit,
refuses the 30th of February); a string outside the canonical form is refused
as unsupported by the engine, never computed. The generators write every time
in the canonical form (`time_text`), so every drawn and every shrunk example
is one converge computes.

A time attribute from epoch seconds (`TO_TIMESTAMP_LTZ(n, 0)`) is the projected
column `(CASE WHEN n BETWEEN ... THEN CAST(n AS BIGINT) * 1000 END)`, NULL
outside the seconds Flink converts; `derived_time` names either form's source
column, which the generators fill from each drawn time.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Literal

from converge.engine.model.scenario import InputSpec

__all__ = ["CANONICAL_TIME_TEXT", "TimeForm", "derived_time", "seconds_time_sql", "text_time_column",
           "text_time_sql", "time_text"]

CANONICAL_TIME_TEXT = re.compile(r"(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?")
_EPOCH = dt.datetime(1970, 1, 1)
TimeForm = Literal["text", "seconds"]
# (prefix, suffix, source column types) of each form's projected expression around the source column
_FORMS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "text": ("epoch_ms(CAST(", " AS TIMESTAMP))", ("VARCHAR",)),
    # TO_TIMESTAMP_LTZ(n, 0): NULL outside the seconds of years 0000-9999 (DateTimeUtils.toTimestampData), so a
    # rowtime there fails Flink's job as a NULL one does; converge's engine refuses it as a NULL time
    "seconds": ("(CASE WHEN {c} BETWEEN -62167219200 AND 253402300799 THEN CAST(", " AS BIGINT) * 1000 END)",
                ("BIGINT", "INTEGER")),
}


def text_time_sql(column_sql: str) -> str:
    """The projected expression of a time attribute parsed from the text column `column_sql`."""
    prefix, suffix, _ = _FORMS["text"]
    return f"{prefix}{column_sql}{suffix}"


def seconds_time_sql(column_sql: str) -> str:
    """The projected expression of a time attribute from epoch seconds (`TO_TIMESTAMP_LTZ(n, 0)`)."""
    prefix, suffix, _ = _FORMS["seconds"]
    return f"{prefix.replace('{c}', column_sql)}{column_sql}{suffix}"


def derived_time(spec: InputSpec) -> tuple[str, TimeForm] | None:
    """(source column, form) when the input's time attribute is a projected column computed from one source
    column in a form converge writes (None: it is none)."""
    if spec.project is None or spec.time_column is None:
        return None
    expr = dict(spec.project).get(spec.time_column) or ""
    types = dict(spec.columns)
    for form, (prefix, suffix, kinds) in _FORMS.items():
        for column in types:
            for name in (column, f"{spec.name}.{column}"):
                if types[column] in kinds and expr == f"{prefix.replace('{c}', name)}{name}{suffix}":
                    return column, form  # type: ignore[return-value]
    return None


def text_time_column(spec: InputSpec) -> str | None:
    """The VARCHAR source column whose text the input's time attribute is (None: its time is no such column)."""
    found = derived_time(spec)
    return found[0] if found is not None and found[1] == "text" else None


def time_text(ms: int) -> str:
    """The canonical text of a time held as epoch milliseconds (`1970-01-01 00:00:00.001` for 1)."""
    at = _EPOCH + dt.timedelta(milliseconds=ms)
    return at.strftime("%Y-%m-%d %H:%M:%S") + f".{at.microsecond // 1000:03d}"
