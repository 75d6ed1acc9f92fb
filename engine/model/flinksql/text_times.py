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

__all__ = ["TEXT_TIME_FORMS", "TIME_TYPE", "text_time_source"]

TEXT_TIME_FORMS = ("TO_TIMESTAMP(s)", "TO_TIMESTAMP(s, 'yyyy-MM-dd HH:mm:ss[.SSS]')", "CAST(s AS TIMESTAMP(3))")
TIME_TYPE = FlinkType("TIMESTAMP(3)", "timestamp", "BIGINT")
_FORMATS = ("yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm:ss.SSS")


def text_time_source(expr: exp.Expr, physical: dict[str, FlinkType]) -> str | None:
    """The STRING column whose text `expr` parses to a TIMESTAMP(3) in one of TEXT_TIME_FORMS, else None."""
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
    if not isinstance(arg, exp.Column) or arg.table:
        return None
    folded = [c for c in physical if c.casefold() == arg.name.casefold()]
    return folded[0] if len(folded) == 1 and physical[folded[0]].kind == "string" else None
