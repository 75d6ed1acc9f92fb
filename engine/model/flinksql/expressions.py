"""Flink SQL boolean expressions rendered as the model's conditions (DuckDB SQL over `input.column`).

Only the subset whose meaning converge can hold exactly is accepted:
comparisons, AND/OR/NOT, IS [NOT] NULL, IS [NOT] DISTINCT FROM, BETWEEN, and
+ - * / % on integer and DOUBLE values, with columns, literals, typed
TIMESTAMP/DATE literals and INTERVALs. Types follow Flink where DuckDB would
differ: INT / INT truncates (Flink keeps INT; DuckDB's `/` is DOUBLE, its `//`
truncates), a DECIMAL is compared on its unscaled integer after both sides
are brought to one scale (exact, where a DOUBLE would round), a TIMESTAMP(3)
is epoch milliseconds and an INTERVAL its milliseconds, a DATE its day
number. Anything else is refused with its position in the file.
"""

from __future__ import annotations

import decimal
import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sqlglot import exp

from converge.engine.model.errors import BadInputError
from converge.engine.model.flinksql.positions import SourceText
from converge.engine.model.flinksql.time_parts import TIME_PART_NODES, time_part_sql, unit_of
from converge.engine.model.flinksql.types import FlinkType, date_days, timestamp_millis

_UNIT_MS = {"MILLISECOND": 1, "SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000}
# looked up by a node's own class (type(node)), whatever it is
_CMP: dict[type[exp.Expr], str] = {exp.EQ: "=", exp.NEQ: "<>", exp.GT: ">", exp.GTE: ">=", exp.LT: "<",
                                   exp.LTE: "<=", exp.NullSafeEQ: "IS NOT DISTINCT FROM",
                                   exp.NullSafeNEQ: "IS DISTINCT FROM"}
_ARITH: dict[type[exp.Expr], str] = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/", exp.Mod: "%"}
_NUMERIC = ("int", "bigint", "double")
COMPUTED_KINDS = ("int", "bigint", "double", "boolean")  # the kinds of a computed column converge holds
_MAX_MS = 2**63 - 1
_DOUBLE_MAX = decimal.Decimal("1.7976931348623157e308")


@dataclass(frozen=True)
class Typed:
    """Rendered SQL and its Flink kind (int bigint double decimal boolean string timestamp date interval null)."""

    sql: str
    kind: str
    scale: int = 0
    literal: decimal.Decimal | None = None  # an exact numeric literal, rescaled where it meets a DECIMAL


def column_sql(alias: str, column: str) -> str:
    name = column if column.isidentifier() and column.isascii() else '"' + column.replace('"', '""') + '"'
    return f"{alias}.{name}"


def interval_ms(node: exp.Interval, text: SourceText) -> int:
    """The milliseconds of `INTERVAL '5' SECOND` (a single unit)."""
    unit = (node.unit.name if node.unit is not None else "").upper().rstrip("S")
    if unit not in _UNIT_MS or not isinstance(node.this, exp.Literal):
        raise text.unsupported(node, f"only INTERVAL 'n' {'|'.join(_UNIT_MS)} is supported")
    try:
        amount = decimal.Decimal(node.this.name.strip())
    except decimal.InvalidOperation:
        raise text.error(node, "the interval's amount is not a number") from None
    if not amount.is_finite() or abs(amount) > _MAX_MS:  # before any arithmetic: 1e999999 would overflow it
        raise text.error(node, "the interval is beyond the range of a BIGINT of milliseconds")
    ms = amount * _UNIT_MS[unit]
    if abs(ms) > _MAX_MS:
        raise text.error(node, "the interval is beyond the range of a BIGINT of milliseconds")
    if ms != ms.to_integral_value():
        raise text.error(node, "the interval is not a whole number of milliseconds")
    return int(ms)


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`; did you mean 'x'?` for the known name closest to a misspelt one (case aside), or nothing."""
    folded = {k.casefold(): k for k in known}
    close = difflib.get_close_matches(name.casefold(), list(folded), n=1, cutoff=0.6)
    return f"; did you mean {folded[close[0]]!r}?" if close else ""


class Scope:
    """The inputs an expression may name: alias -> (column names, Flink types)."""

    def __init__(self, inputs: Mapping[str, Sequence[tuple[str, FlinkType]]], text: SourceText,
                 proctime: Mapping[str, str] | None = None,
                 renames: Mapping[str, Sequence[tuple[str, str, FlinkType]]] | None = None) -> None:
        self.inputs = {alias: dict(cols) for alias, cols in inputs.items()}
        self.text = text
        self.proctime = dict(proctime or {})  # alias -> its processing-time attribute (PROCTIME()), no column
        # alias -> {computed name: the physical column it names} (flinksql/renames.py): resolved to the column
        self.renames = {alias: {name: column for name, column, _ in named} for alias, named in (renames or {}).items()}
        for alias, named in (renames or {}).items():
            self.inputs[alias].update((name, ftype) for name, _, ftype in named)

    def proctime_of(self, node: exp.Column) -> str | None:
        """The alias whose processing-time attribute `node` names (None: it names none)."""
        if node.table:
            alias = self._pick(node.table, self.inputs)
            named = self.proctime.get(alias) if alias is not None else None
            return alias if named is not None and named.casefold() == node.name.casefold() else None
        owners = [a for a, p in self.proctime.items() if p.casefold() == node.name.casefold()]
        return owners[0] if len(owners) == 1 and not any(self._pick(node.name, c) for c in self.inputs.values()) \
            else None

    def resolve(self, node: exp.Column) -> tuple[str, str, FlinkType]:
        """(alias, column, type) of a column reference; unqualified names must be unambiguous. A processing-time
        attribute is no value converge holds: named anywhere but an interval join's time bounds
        (flinksql/time_bounds.py reads those first), it is unsupported."""
        name = node.name
        if self.proctime and self.proctime_of(node) is not None:
            raise self.text.unsupported(node, f"{name!r} is a processing-time attribute (PROCTIME()): its value is "
                                              f"the wall clock at each row's arrival; converge reads it only in an "
                                              f"interval join's time bounds")
        if node.table:
            alias = self._pick(node.table, self.inputs)
            if alias is None:
                raise self.text.error(node, f"unknown table or alias {node.table!r}{did_you_mean(node.table, self.inputs)}"
                                            f" (known here: {', '.join(self.inputs)})")
            aliases = [alias]
        else:
            aliases = [a for a, cols in self.inputs.items() if self._pick(name, cols)]
            if len(aliases) != 1:
                if aliases:
                    raise self.text.error(node, f"column {name!r} is ambiguous (in {', '.join(aliases)}); qualify it "
                                                f"with its table's alias")
                every = [c for cols in self.inputs.values() for c in cols]
                raise self.text.error(node, f"column {name!r} is unknown{did_you_mean(name, every)}")
        alias = aliases[0]
        column = self._pick(name, self.inputs[alias])
        if column is None:
            raise self.text.error(node, f"{alias!r} has no column {name!r}{did_you_mean(name, self.inputs[alias])} "
                                        f"(columns: {', '.join(self.inputs[alias])})")
        return alias, self.renames.get(alias, {}).get(column, column), self.inputs[alias][column]

    @staticmethod
    def _pick(name: str, names: Mapping[str, object] | Sequence[str]) -> str | None:
        if name in names:
            return name
        folded = [n for n in names if n.casefold() == name.casefold()]
        return folded[0] if len(folded) == 1 else None


class Renderer:
    """Renders one expression tree; each node returns Typed, every refusal names its clause and position."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.text = scope.text

    def boolean(self, node: exp.Expr) -> str:
        out = self.render(node)
        if out.kind not in ("boolean", "null"):
            raise self.text.error(node, f"expected a boolean condition, got a {out.kind} value")
        return out.sql

    def render(self, node: exp.Expr) -> Typed:
        if isinstance(node, exp.Paren):
            inner = self.render(node.this)
            return Typed(f"({inner.sql})", inner.kind, inner.scale, inner.literal)
        if isinstance(node, (exp.And, exp.Or)):
            op = "AND" if isinstance(node, exp.And) else "OR"
            return Typed(f"({self.boolean(node.this)} {op} {self.boolean(node.expression)})", "boolean")
        if isinstance(node, exp.Not):
            return Typed(f"(NOT {self.boolean(node.this)})", "boolean")
        if isinstance(node, exp.Is):
            if isinstance(node.expression, exp.Boolean):
                # IS [NOT] TRUE / FALSE: never NULL (three-valued logic's UNKNOWN is neither); sqlglot reads
                # IS [NOT] UNKNOWN as IS [NOT] NULL, the same test on a boolean
                operand = self.render(node.this)
                if operand.kind not in ("boolean", "null"):
                    raise self.text.error(node, f"IS {'TRUE' if node.expression.this else 'FALSE'} needs a boolean "
                                                f"operand, got a {operand.kind} value")
                return Typed(f"({operand.sql} IS {'TRUE' if node.expression.this else 'FALSE'})", "boolean")
            if not isinstance(node.expression, exp.Null):
                raise self.text.unsupported(node, "only IS [NOT] NULL / TRUE / FALSE / UNKNOWN are supported")
            return Typed(f"({self.render(node.this).sql} IS NULL)", "boolean")
        if type(node) in _CMP:
            left, right = self._same_footing(node, self.render(node.this), self.render(node.expression))
            return Typed(f"({left.sql} {_CMP[type(node)]} {right.sql})", "boolean")
        if isinstance(node, exp.Between):
            value = self.render(node.this)
            low, high = self.render(node.args["low"]), self.render(node.args["high"])
            v1, lo = self._same_footing(node, value, low)
            v2, hi = self._same_footing(node, value, high)
            return Typed(f"({v1.sql} >= {lo.sql} AND {v2.sql} <= {hi.sql})", "boolean")
        if type(node) in _ARITH:
            return self._arith(node)
        if isinstance(node, exp.Neg):
            inner = self.render(node.this)
            if inner.kind not in _NUMERIC + ("decimal",):
                raise self.text.error(node, f"cannot negate a {inner.kind} value")
            lit = -inner.literal if inner.literal is not None else None
            return Typed(f"(-{inner.sql})", inner.kind, inner.scale, lit)
        if isinstance(node, exp.Column):
            alias, column, ftype = self.scope.resolve(node)
            return Typed(column_sql(alias, column), ftype.kind, ftype.scale)
        if isinstance(node, exp.Null):
            return Typed("NULL", "null")
        if isinstance(node, exp.Boolean):
            return Typed("TRUE" if node.this else "FALSE", "boolean")
        if isinstance(node, exp.Extract) or type(node) in TIME_PART_NODES:
            unit, of = unit_of(node, self.text)
            time = self.render(of)
            return Typed(time_part_sql(unit, time.sql, time.kind, node, self.text), "bigint")
        if isinstance(node, exp.Literal):
            return self._literal(node)
        if isinstance(node, exp.Interval):
            return Typed(str(interval_ms(node, self.text)), "interval")
        if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal) and node.this.is_string:
            target = node.to.this
            try:
                if target in (exp.DataType.Type.TIMESTAMP, exp.DataType.Type.TIMESTAMPLTZ):
                    return Typed(str(timestamp_millis(node.this.name)), "timestamp")
                if target == exp.DataType.Type.DATE:
                    return Typed(str(date_days(node.this.name)), "date")
            except BadInputError as exc:
                raise self.text.error(node, str(exc)) from None
        raise self.text.unsupported(node, f"{self.text.name(node)} is outside the SQL subset converge maps "
                                          f"(columns, literals, comparisons, AND/OR/NOT, IS [NOT] NULL, "
                                          f"IS [NOT] DISTINCT FROM, BETWEEN, + - * / %, INTERVAL, typed literals)")

    def _literal(self, node: exp.Literal) -> Typed:
        if node.is_string:
            return Typed("'" + node.name.replace("'", "''") + "'", "string")
        value = self._checked_number(node)
        if "." in node.name or "e" in node.name.lower():
            # `1.` and `.5` written out in full: DuckDB regenerates them so, and the oracle's guard compares
            text = node.name if "e" in node.name.lower() else format(value, "f") + ("" if value.as_tuple().exponent
                                                                                   else ".0")
            return Typed(text, "double" if "e" in node.name.lower() else "decimal",
                         max(0, -value.as_tuple().exponent), value)  # type: ignore[operator]
        if abs(value) >= 2**63:
            raise self.text.unsupported(node, "an integer literal beyond BIGINT is a DECIMAL(p, 0) in Flink; converge "
                                              "holds integer literals up to BIGINT")
        return Typed(node.name, "bigint" if abs(value) >= 2**31 else "int", 0, value)

    def _checked_number(self, node: exp.Literal) -> decimal.Decimal:
        """A numeric literal's value, refused (before DuckDB or decimal arithmetic sees it) where Flink refuses it:
        a DOUBLE beyond its range, an exact number of more than 38 digits (Flink's largest DECIMAL)."""
        try:
            value = decimal.Decimal(node.name)
        except decimal.InvalidOperation:
            raise self.text.error(node, "is not a number") from None
        if not value.is_finite():
            raise self.text.error(node, "is not a finite number")
        if "e" in node.name.lower():
            if abs(value) > _DOUBLE_MAX:
                raise self.text.error(node, "is beyond the range of DOUBLE (about 1.8e308)")
            return value
        _, digits, exponent = value.as_tuple()
        precision = max(len(digits) + int(exponent), 0) + max(-int(exponent), 0)
        if precision > 38:
            raise self.text.error(node, f"has {precision} digits: Flink's numeric literals hold at most 38 "
                                        f"(DECIMAL(38))")
        return value

    def _rescaled(self, node: exp.Expr, t: Typed, scale: int) -> Typed:
        """A numeric value as an unscaled DECIMAL of `scale` (literals exactly, integer columns multiplied)."""
        if t.kind == "null":
            return t
        if t.literal is not None:
            scaled = t.literal.scaleb(scale)
            text = str(int(scaled)) if scaled == scaled.to_integral_value() else format(scaled, "f")
            return Typed(text, "decimal", scale, scaled)
        if t.kind == "decimal" and t.scale <= scale:
            return t if t.scale == scale else Typed(f"({t.sql} * {10 ** (scale - t.scale)})", "decimal", scale)
        if t.kind in ("int", "bigint"):
            return Typed(f"(CAST({t.sql} AS BIGINT) * {10 ** scale})", "decimal", scale)
        raise self.text.error(node, f"cannot bring a {t.kind} value to a DECIMAL of scale {scale}")

    def _same_footing(self, node: exp.Expr, a: Typed, b: Typed) -> tuple[Typed, Typed]:
        """Both operands of a comparison in one representation (Flink's implicit casts)."""
        kinds = {a.kind, b.kind} - {"null"}
        if len(kinds) <= 1 and "decimal" not in kinds:
            return a, b
        if kinds <= set(_NUMERIC):
            return a, b
        if "decimal" in kinds and kinds <= {"decimal", "int", "bigint"}:
            scale = max(t.scale for t in (a, b) if t.kind == "decimal" and t.literal is None) \
                if any(t.kind == "decimal" and t.literal is None for t in (a, b)) else 0
            if scale == 0 and all(t.literal is not None or t.kind != "decimal" for t in (a, b)):
                return a, b  # literal against literal or integer: plain numbers
            return self._rescaled(node, a, scale), self._rescaled(node, b, scale)
        if kinds == {"decimal", "double"}:
            return tuple(self._as_double(t) for t in (a, b))  # type: ignore[return-value]
        raise self.text.error(node, f"cannot compare a {a.kind} value with a {b.kind} value")

    @staticmethod
    def _as_double(t: Typed) -> Typed:
        if t.kind == "decimal" and t.literal is None:
            return Typed(f"({t.sql} / {10 ** t.scale}.0)", "double")
        return t

    def _arith(self, node: exp.Expr) -> Typed:
        a, b = self.render(node.this), self.render(node.expression)
        op = _ARITH[type(node)]
        kinds = {a.kind, b.kind}
        if "timestamp" in kinds or "interval" in kinds:
            if a.kind == "timestamp" and b.kind == "interval" and op in "+-":
                return Typed(f"({a.sql} {op} {b.sql})", "timestamp")
            if a.kind == "interval" and b.kind == "timestamp" and op == "+":
                return Typed(f"({b.sql} + {a.sql})", "timestamp")
            raise self.text.unsupported(node, "time arithmetic is limited to TIMESTAMP +/- INTERVAL")
        if "decimal" in kinds:
            if op in "+-" and kinds <= {"decimal", "int", "bigint"}:
                scale = max(a.scale, b.scale)
                x, y = self._rescaled(node, a, scale), self._rescaled(node, b, scale)
                lit = None
                if a.literal is not None and b.literal is not None:
                    lit = a.literal + b.literal if op == "+" else a.literal - b.literal
                return Typed(f"({x.sql} {op} {y.sql})", "decimal", scale, lit)
            raise self.text.unsupported(node, "DECIMAL arithmetic other than + and - is not supported (Flink's result "
                                              "precision rules would have to be modelled)")
        if not kinds <= set(_NUMERIC) | {"null"}:
            raise self.text.error(node, f"cannot apply {op} to {a.kind} and {b.kind} values")
        if "double" in kinds:
            return Typed(f"({a.sql} {op} {b.sql})", "double")
        kind = "bigint" if "bigint" in kinds else "int"
        if op == "/":
            return Typed(f"({a.sql} // {b.sql})", kind)  # Flink: INT / INT is an INT, truncated
        return Typed(f"({a.sql} {op} {b.sql})", kind)
