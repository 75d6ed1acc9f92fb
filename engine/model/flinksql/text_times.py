"""A rowtime computed from a STRING column: `ts AS TO_TIMESTAMP(s)`, `WATERMARK FOR ts AS ts - INTERVAL ...`.

Flink computes the attribute in the scan's Calc, before its
WatermarkAssigner (Source -> Calc -> WatermarkAssigner in the plan). These
forms parse the text as Flink 2.3's TO_TIMESTAMP does
(DateTimeUtils.parseTimestampData, precision 3); measured on Flink 2.3.0, they
agree on every canonical text `yyyy-MM-dd HH:mm:ss[.S..SSS]`:

* `TO_TIMESTAMP(s)`;
* `TO_TIMESTAMP(s, 'yyyy-MM-dd HH:mm:ss')` and `TO_TIMESTAMP(s,
  'yyyy-MM-dd HH:mm:ss.SSS')` (DateTimeUtils.parseTimestampData(String,
  String): the pattern, then java.sql.Timestamp.valueOf for a fraction);
* `CAST(s AS TIMESTAMP(3))`.

And one from epoch seconds: `TO_TIMESTAMP_LTZ(n, 0)` of an INT or BIGINT `n`
(DateTimeUtils.toTimestampData(long, 0): n * 1000 milliseconds, NULL outside
the seconds of the years 0000-9999); `TO_TIMESTAMP_LTZ(n, 3)` only names its
column (flinksql/renames.py).

The input reads the attribute as a projected column
(engine/model/time_text.py): its events carry the text, the engine's Calc and
the oracle compute the time. Where the text does not parse, TO_TIMESTAMP gives
NULL and CAST fails the job; a NULL rowtime fails the job too (Flink's
WatermarkAssignerOperator: "RowTime field should not be null"), so converge's
engine refuses such a row (a NULL text: bad input, as a NULL time is; a text
outside the canonical form: unsupported), and the generators never draw one.
"""

from __future__ import annotations

from sqlglot import exp

from converge.engine.model.flinksql.types import FlinkType
from converge.engine.model.time_text import TimeForm, seconds_time_sql, text_time_sql

__all__ = ["TEXT_TIME_FORMS", "TIME_TYPE", "computed_time", "computed_time_sql", "text_time_source"]

TEXT_TIME_FORMS = ("TO_TIMESTAMP(s)", "TO_TIMESTAMP(s, 'yyyy-MM-dd HH:mm:ss[.SSS]')", "CAST(s AS TIMESTAMP(3))",
                   "TO_TIMESTAMP_LTZ(n, 0) of epoch seconds")
TIME_TYPE = FlinkType("TIMESTAMP(3)", "timestamp", "BIGINT")
LTZ_TYPE = FlinkType("TIMESTAMP_LTZ(3)", "timestamp", "BIGINT")
_FORMATS = ("yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm:ss.SSS")


def computed_time(expr: exp.Expr, physical: dict[str, FlinkType]) -> tuple[str, TimeForm, FlinkType] | None:
    """(source column, form, type) of a rowtime computed from one column in a form converge computes, else None."""
    text = text_time_source(expr, physical)
    if text is not None:
        return text, "text", TIME_TYPE
    seconds = _seconds_source(expr, physical)
    return (seconds, "seconds", LTZ_TYPE) if seconds is not None else None


def computed_time_sql(form: TimeForm, column_sql: str) -> str:
    """The projected expression (model SQL) of a computed rowtime."""
    return text_time_sql(column_sql) if form == "text" else seconds_time_sql(column_sql)


def _seconds_source(expr: exp.Expr, physical: dict[str, FlinkType]) -> str | None:
    """The INT / BIGINT column of `TO_TIMESTAMP_LTZ(n, 0)` (n epoch seconds, DateTimeUtils.toTimestampData)."""
    while isinstance(expr, exp.Paren):
        expr = expr.this
    if not (isinstance(expr, exp.Anonymous) and str(expr.this).upper() == "TO_TIMESTAMP_LTZ"
            and len(expr.expressions) == 2):
        return None
    arg, precision = expr.expressions
    if not (isinstance(precision, exp.Literal) and not precision.is_string and precision.name == "0"):
        return None
    column = _column(arg, physical)
    return column if column is not None and physical[column].kind in ("int", "bigint") else None


def _column(arg: exp.Expr | None, physical: dict[str, FlinkType]) -> str | None:
    if not isinstance(arg, exp.Column) or arg.table:
        return None
    folded = [c for c in physical if c.casefold() == arg.name.casefold()]
    return folded[0] if len(folded) == 1 else None


def text_time_source(expr: exp.Expr, physical: dict[str, FlinkType]) -> str | None:
    """The STRING column whose text `expr` parses to a TIMESTAMP(3) (TO_TIMESTAMP or CAST), else None."""
    while isinstance(expr, exp.Paren):
        expr = expr.this
    arg: exp.Expr | None = None
    if isinstance(expr, exp.Anonymous) and str(expr.this).upper() == "TO_TIMESTAMP" and expr.expressions:
        arg, *rest = expr.expressions
        if rest and not (len(rest) == 1 and isinstance(rest[0], exp.Literal) and rest[0].is_string
                         and rest[0].name in _FORMATS):
            return None
    elif isinstance(expr, exp.Cast) and expr.to.this == exp.DataType.Type.TIMESTAMP:
        params = [p.this.name if isinstance(p, exp.DataTypeParam) else p.name for p in expr.to.expressions]
        arg = expr.this if params == ["3"] else None
    column = _column(arg, physical)
    return column if column is not None and physical[column].kind == "string" else None
