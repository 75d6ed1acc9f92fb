"""Calendar and clock fields of a TIMESTAMP(3) or DATE: QUARTER(ts), YEAR, MONTH, DAYOFMONTH, HOUR, MINUTE, SECOND
and EXTRACT(<unit> FROM ts), rendered as Flink computes them.

Calcite turns each function into EXTRACT; Flink's ExtractCallGen computes it on
the timestamp's epoch milliseconds `ms` with Java's integer division and
remainder (both truncate toward zero):

* YEAR, QUARTER, MONTH, DAY: the proleptic Gregorian date of the day number
  `ms / 86400000` (DateTimeUtils.extractFromDate); for a DATE, of its own day
  number. Rendered `quarter(epoch_ms((ms // 86400000) * 86400000))`: DuckDB's
  `//` truncates as Java's `/` does, and the engine compiles exactly this shape
  (engine/condition_dates.py), so a timestamp before 1970 that is not on a day
  boundary takes the day Flink takes (the one after it), not its calendar day;
* HOUR, MINUTE, SECOND: `(ms % factor) / unit` (86400000 / 3600000,
  3600000 / 60000, 60000 / 1000), negative before 1970 as in Flink; plain
  integer arithmetic in the subset. Of a DATE they are refused.

Each is a BIGINT, NULL of a NULL. Other units (WEEK, DOW, DOY, MILLISECOND,
...) are unsupported.
"""

from __future__ import annotations

from sqlglot import exp

from converge.engine.model.flinksql.positions import SourceText

__all__ = ["TIME_PART_NODES", "time_part_sql", "unit_of"]

_DAY_MS = 86_400_000
_CLOCK = {"hour": (86_400_000, 3_600_000), "minute": (3_600_000, 60_000), "second": (60_000, 1000)}
_DAY_PARTS = ("year", "quarter", "month", "day")
TIME_PART_NODES: dict[type[exp.Expr], str] = {exp.Year: "year", exp.Quarter: "quarter", exp.Month: "month",
                                              exp.DayOfMonth: "day", exp.Hour: "hour", exp.Minute: "minute",
                                              exp.Second: "second"}


def unit_of(node: exp.Expr, text: SourceText) -> tuple[str, exp.Expr]:
    """(unit, operand) of QUARTER(x) / EXTRACT(QUARTER FROM x); unsupported for another unit."""
    if isinstance(node, exp.Extract):
        unit = node.this.name.lower() if isinstance(node.this, exp.Var) else ""
        if unit not in _DAY_PARTS and unit not in _CLOCK:
            raise text.unsupported(node, f"EXTRACT({unit.upper() or node.this.sql()} FROM ...): converge extracts "
                                         f"YEAR, QUARTER, MONTH, DAY, HOUR, MINUTE and SECOND")
        return unit, node.expression
    return TIME_PART_NODES[type(node)], node.this


def time_part_sql(unit: str, operand_sql: str, kind: str, node: exp.Expr, text: SourceText) -> str:
    """The model SQL of one field of a rendered TIMESTAMP(3) (epoch ms) or DATE (day number) operand."""
    if kind == "null":
        return "CAST(NULL AS BIGINT)"
    if kind == "timestamp" and unit in _DAY_PARTS:
        return f"{unit}(epoch_ms((({operand_sql}) // {_DAY_MS}) * {_DAY_MS}))"
    if kind == "date" and unit in _DAY_PARTS:
        return f"{unit}(epoch_ms(CAST({operand_sql} AS BIGINT) * {_DAY_MS}))"  # an INTEGER day: widened first
    if kind == "timestamp":
        factor, size = _CLOCK[unit]
        return f"((({operand_sql}) % {factor}) // {size})"
    if kind == "date":
        raise text.unsupported(node, f"{unit.upper()} of a DATE: converge extracts the day's fields of a DATE")
    raise text.error(node, f"{unit.upper()} needs a TIMESTAMP or DATE value, got a {kind} value")
