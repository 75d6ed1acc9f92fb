"""Computed columns that are other names of a physical column's value: read without a Calc.

Flink's own join tests declare `key AS _1, rowtime AS TO_TIMESTAMP_LTZ(_2, 3),
val AS _3` with `WATERMARK FOR rowtime AS ...`: a computed event-time
attribute over an epoch-millisecond BIGINT, beside columns that only rename.
converge holds a TIMESTAMP(3) / TIMESTAMP_LTZ(3) as its epoch milliseconds
(docs/check-your-query.md §2), so each of these computes nothing on the held
value: `c` itself, `TO_TIMESTAMP_LTZ(c, 3)` of a BIGINT or INT `c` (Flink's
precision 3: `c` is epoch milliseconds), `CAST(c AS TIMESTAMP(3))` of a
TIMESTAMP(p <= 3) `c`. A table whose
computed columns are all such renames is read with each computed name standing
for its physical column (the name's own type, the column's value): the input
is the physical columns, a renamed rowtime is the input's time column, and no
Calc sits in front of the join, so an interval join over it is the plain one
converge models. The query as written computes the columns itself in DuckDB
(oracle/query_sql.py), so a rename read wrong is seen there.
"""

from __future__ import annotations

from sqlglot import exp

from converge.engine.model.flinksql.types import FlinkType

Rename = tuple[str, str, FlinkType]  # (computed name, the physical column it names, the computed column's type)

_MS_TIME = FlinkType("TIMESTAMP_LTZ(3)", "timestamp", "BIGINT")


def rename_of(expr: exp.Expr, physical: dict[str, FlinkType]) -> tuple[str, FlinkType] | None:
    """(physical column, type) when `expr` is another name of that column's held value, else None."""
    while isinstance(expr, exp.Paren):
        expr = expr.this
    if isinstance(expr, exp.Column) and not expr.table:
        column = _column(expr.name, physical)
        return (column, physical[column]) if column is not None else None
    if isinstance(expr, exp.Anonymous) and str(expr.this).upper() == "TO_TIMESTAMP_LTZ" and len(expr.expressions) == 2:
        arg, precision = expr.expressions
        column = _column(arg.name, physical) if isinstance(arg, exp.Column) and not arg.table else None
        if column is not None and physical[column].kind in ("int", "bigint") and isinstance(precision, exp.Literal) \
                and not precision.is_string and precision.name == "3":
            return column, FlinkType(_MS_TIME.name, _MS_TIME.kind, _MS_TIME.model, nullable=physical[column].nullable)
    if isinstance(expr, exp.Cast) and isinstance(expr.this, exp.Column) and not expr.this.table:
        column = _column(expr.this.name, physical)
        to = expr.to
        params = [p.this.name if isinstance(p, exp.DataTypeParam) else p.name for p in to.expressions]
        if column is not None and to.this == exp.DataType.Type.TIMESTAMP and physical[column].kind == "timestamp" \
                and physical[column].name.startswith("TIMESTAMP(") and params == ["3"]:
            return column, FlinkType("TIMESTAMP(3)", "timestamp", "BIGINT", nullable=physical[column].nullable)
    return None


def _column(name: str, physical: dict[str, FlinkType]) -> str | None:
    folded = [c for c in physical if c.casefold() == name.casefold()]
    return folded[0] if len(folded) == 1 else None


def read_renames(computed: list[tuple[str, exp.Expr]], physical: dict[str, FlinkType]) -> tuple[Rename, ...] | None:
    """Every computed column as a rename, or None where one of them computes something (a Calc reads those)."""
    out = []
    for name, expr in computed:
        found = rename_of(expr, physical)
        if found is None:
            return None
        out.append((name, found[0], found[1]))
    return tuple(out)


__all__ = ["Rename", "read_renames", "rename_of"]
