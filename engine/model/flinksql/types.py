"""Flink column types and the exact values converge's engine and oracle compute on.

Each supported Flink type is held the way Flink itself holds it in a row, so
equality, ordering and the state's serialized-key order are Flink's:

=================  ==============  ==============================================
Flink type         model column    value
=================  ==============  ==============================================
INT, INTEGER       INTEGER         the integer
SMALLINT, TINYINT  INTEGER         the integer (range checked against the Flink type)
BIGINT             BIGINT          the integer
DOUBLE             DOUBLE          the float
BOOLEAN            BOOLEAN         the bool
STRING, VARCHAR    VARCHAR         the text (ordered by code point = UTF-8 bytes, as Flink's BinaryStringData)
DECIMAL(p, s)      BIGINT          the unscaled integer, value * 10^s (p <= 18: Flink's compact DecimalData)
TIMESTAMP(p<=3)    BIGINT          epoch milliseconds (Flink's TimestampData millisecond part)
TIMESTAMP_LTZ(3)   BIGINT          epoch milliseconds
DATE               INTEGER         days since 1970-01-01 (Flink's internal DATE)
=================  ==============  ==============================================

Captured values are read into this form with Flink's rules (a DECIMAL value
with more digits than its scale is rounded HALF_UP, as Flink's cast does);
`display` turns them back into the text a user recognises.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from converge.engine.model.errors import BadInputError, UnsupportedError
from converge.engine.model.scenario import short_repr

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DAY = dt.date(1970, 1, 1)
# the values `display` can show: Python's datetime holds the years 1 to 9999 (Flink's TIMESTAMP and DATE 0 to 9999)
_MILLIS = ((dt.datetime.min - _EPOCH) // dt.timedelta(milliseconds=1),
           (dt.datetime.max - _EPOCH) // dt.timedelta(milliseconds=1))
_DAYS = ((dt.date.min - _EPOCH_DAY).days, (dt.date.max - _EPOCH_DAY).days)
_RANGES = {"TINYINT": (-128, 127), "SMALLINT": (-32768, 32767), "INT": (-(2**31), 2**31 - 1),
           "BIGINT": (-(2**63), 2**63 - 1)}


@dataclass(frozen=True)
class FlinkType:
    """A declared column type: its Flink name, the model column type, and (DECIMAL) its scale."""

    name: str            # as Flink prints it: INT, DECIMAL(10, 2), TIMESTAMP(3) ...
    kind: str            # int, bigint, double, boolean, string, decimal, timestamp, date
    model: str           # the engine's column type
    scale: int = 0
    nullable: bool = True

    def parse(self, value: Any) -> Any:
        """A captured value (JSON value or text) as the engine holds it; BadInputError (the caller adds the
        position) when it does not fit."""
        if value is None:
            if not self.nullable:
                raise BadInputError(f"NULL in a NOT NULL {self.name} column")
            return None
        return _PARSERS[self.kind](self, value)

    def display(self, value: Any) -> str:
        """The value as Flink would print it (for findings and divergence reports)."""
        if value is None:
            return "NULL"
        if self.kind == "decimal":
            return str(decimal.Decimal(value).scaleb(-self.scale))
        if self.kind == "timestamp":
            return (_EPOCH + dt.timedelta(milliseconds=value)).isoformat(sep=" ", timespec="milliseconds")
        if self.kind == "date":
            return (_EPOCH_DAY + dt.timedelta(days=value)).isoformat()
        return repr(value) if isinstance(value, str) else str(value)


def _int(t: FlinkType, v: Any) -> int:
    if isinstance(v, bool):
        raise BadInputError(f"expected {t.name}, got {short_repr(v)}")
    if isinstance(v, str):
        try:
            v = int(v.strip())
        except ValueError as exc:  # Python's own message names the text
            raise BadInputError(str(exc)) from None
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if not isinstance(v, int):
        raise BadInputError(f"expected {t.name}, got {short_repr(v)}")
    lo, hi = _RANGES.get(t.name, _RANGES["BIGINT"])
    if not lo <= v <= hi:
        raise BadInputError(f"{v} is outside the range of {t.name}")
    return v


def _double(t: FlinkType, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise BadInputError(f"expected DOUBLE, got {short_repr(v)}")
    try:
        return float(v)
    except ValueError as exc:  # Python's own message names the text
        raise BadInputError(str(exc)) from None
    except OverflowError:  # an integer beyond DOUBLE: Flink's JsonToRowDataConverters parses its text, to +-Infinity
        return math.inf if int(v) > 0 else -math.inf


def _boolean(t: FlinkType, v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in ("true", "false"):
        return v.strip().lower() == "true"
    raise BadInputError(f"expected BOOLEAN, got {short_repr(v)}")


def _string(t: FlinkType, v: Any) -> str:
    if not isinstance(v, str):
        raise BadInputError(f"expected {t.name}, got {short_repr(v)}")
    return v


def unscaled(value: Any, scale: int, what: str = "DECIMAL") -> int:
    """value * 10^scale as an integer, rounded HALF_UP like Flink's cast to DECIMAL(p, scale)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):  # a JSON list would be read as a
        raise BadInputError(f"expected {what}, got {short_repr(value)}")      # Decimal's (sign, digits, exponent)
    try:
        d = decimal.Decimal(str(value).strip()) if isinstance(value, (str, float)) else decimal.Decimal(value)
    except (decimal.InvalidOperation, TypeError):
        raise BadInputError(f"expected {what}, got {short_repr(value)}") from None
    if not d.is_finite():
        raise BadInputError(f"expected {what}, got {short_repr(value)}")
    if d and d.adjusted() + scale > 38:  # before any arithmetic: 28 significant digits is decimal's default
        raise BadInputError(f"{short_repr(value)} does not fit {what}")
    with decimal.localcontext() as ctx:
        ctx.prec = 80  # exact for anything up to 38 integer digits and a fraction rounded away
        ctx.Emin, ctx.Emax = decimal.MIN_EMIN, decimal.MAX_EMAX
        return int(d.scaleb(scale).quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))


def _decimal(t: FlinkType, v: Any) -> int:
    out = unscaled(v, t.scale, t.name)
    precision = int(t.name.split("(")[1].split(",")[0])
    if abs(out) >= 10 ** precision:
        raise BadInputError(f"{short_repr(v)} does not fit {t.name}")
    return out


def timestamp_millis(v: Any) -> int:
    """Epoch milliseconds of '2024-01-01 10:00:00.123' / ISO text / an epoch-millisecond integer."""
    if isinstance(v, bool):
        raise BadInputError(f"expected a TIMESTAMP, got {short_repr(v)}")
    if isinstance(v, int):
        if not _MILLIS[0] <= v <= _MILLIS[1]:
            raise BadInputError(f"{short_repr(v)} is outside the range of TIMESTAMP (years 1 to 9999)")
        return v
    if isinstance(v, str):
        text = v.strip().replace("T", " ").rstrip("Z")
        try:
            moment = dt.datetime.fromisoformat(text)
            if moment.tzinfo is not None:
                moment = moment.astimezone(dt.UTC).replace(tzinfo=None)
        except ValueError:
            raise BadInputError(f"expected a TIMESTAMP like '2024-01-01 10:00:00.123', got {short_repr(v)}") from None
        except OverflowError:  # a time zone that moves the first or last day out of the years 1 to 9999
            raise BadInputError(f"{short_repr(v)} is outside the range of TIMESTAMP (years 1 to 9999)") from None
        delta = moment - _EPOCH
        return (delta.days * 86_400_000 + delta.seconds * 1000 + delta.microseconds // 1000)
    raise BadInputError(f"expected a TIMESTAMP, got {short_repr(v)}")


def date_days(v: Any) -> int:
    """Days since 1970-01-01 of '2024-01-01' (or a day number)."""
    if isinstance(v, int) and not isinstance(v, bool):
        if not _DAYS[0] <= v <= _DAYS[1]:
            raise BadInputError(f"{short_repr(v)} is outside the range of DATE (years 1 to 9999)")
        return v
    if isinstance(v, str):
        try:
            return (dt.date.fromisoformat(v.strip()) - _EPOCH_DAY).days
        except ValueError:
            pass
    raise BadInputError(f"expected a DATE like '2024-01-01', got {short_repr(v)}")


_PARSERS = {
    "int": _int, "bigint": _int, "double": _double, "boolean": _boolean, "string": _string,
    "decimal": _decimal, "timestamp": lambda t, v: timestamp_millis(v), "date": lambda t, v: date_days(v),
}

_SIMPLE = {
    exp.DataType.Type.INT: ("INT", "int", "INTEGER"),
    exp.DataType.Type.SMALLINT: ("SMALLINT", "int", "INTEGER"),
    exp.DataType.Type.TINYINT: ("TINYINT", "int", "INTEGER"),
    exp.DataType.Type.BIGINT: ("BIGINT", "bigint", "BIGINT"),
    exp.DataType.Type.DOUBLE: ("DOUBLE", "double", "DOUBLE"),
    exp.DataType.Type.BOOLEAN: ("BOOLEAN", "boolean", "BOOLEAN"),
    exp.DataType.Type.TEXT: ("STRING", "string", "VARCHAR"),
    exp.DataType.Type.VARCHAR: ("VARCHAR", "string", "VARCHAR"),
    exp.DataType.Type.DATE: ("DATE", "date", "INTEGER"),
}


_STRUCTURED = frozenset({exp.DataType.Type.STRUCT, exp.DataType.Type.ARRAY, exp.DataType.Type.MAP,
                         exp.DataType.Type.LIST})


def is_structured(node: exp.DataType) -> bool:
    """A ROW, ARRAY, MAP or MULTISET type (sqlglot's nested types)."""
    return bool(node.args.get("nested")) or node.this in _STRUCTURED


def _param(text: str, node: exp.DataType) -> int:
    """A type's precision or scale: a whole number, or BadInputError (the caller adds the position)."""
    if not text.strip().isdigit() or len(text.strip()) > 9:
        raise BadInputError(f"{short_repr(text)} in {short_repr(node.sql())} is not a precision or scale (a whole "
                            f"number of at most 9 digits)")
    return int(text)


def flink_type(node: exp.DataType, nullable: bool = True, written: str | None = None) -> FlinkType:
    """The FlinkType of a parsed column type; UnsupportedError (the caller adds the position) when converge
    does not hold that type. `written` is the type as the file spells it (a ROW is STRUCT to sqlglot)."""
    if is_structured(node):
        raise UnsupportedError(f"column type {written or node.sql()} is a structured type (ROW, ARRAY, MAP, "
                               f"MULTISET): converge does not model structured values yet (its types are INT, "
                               f"BIGINT, SMALLINT, TINYINT, DOUBLE, BOOLEAN, STRING, VARCHAR, DECIMAL(p<=18, s), "
                               f"TIMESTAMP(3), TIMESTAMP_LTZ(3), DATE); join on its fields as columns of their own")
    params = [_param(p.this.name if isinstance(p, exp.DataTypeParam) else p.name, node) for p in node.expressions]
    t = node.this
    if t in _SIMPLE:
        name, kind, model = _SIMPLE[t]
        return FlinkType(name, kind, model, nullable=nullable)
    if t == exp.DataType.Type.DECIMAL:
        precision = params[0] if params else 10
        scale = params[1] if len(params) > 1 else 0
        if not 1 <= precision <= 18 or not 0 <= scale <= precision:
            raise UnsupportedError(f"DECIMAL({precision}, {scale}): converge supports precisions up to 18 (Flink's "
                                   f"compact decimals) and 0 <= scale <= precision")
        return FlinkType(f"DECIMAL({precision}, {scale})", "decimal", "BIGINT", scale, nullable)
    if t in (exp.DataType.Type.TIMESTAMP, exp.DataType.Type.TIMESTAMPLTZ, exp.DataType.Type.DATETIME):
        precision = params[0] if params else 6
        if precision > 3:
            raise UnsupportedError(f"TIMESTAMP({precision}): converge holds timestamps as epoch milliseconds; declare "
                                   f"TIMESTAMP(3) (or less)")
        base = "TIMESTAMP_LTZ" if t == exp.DataType.Type.TIMESTAMPLTZ else "TIMESTAMP"
        return FlinkType(f"{base}({precision})", "timestamp", "BIGINT", nullable=nullable)
    raise UnsupportedError(f"column type {node.sql()} is not supported (supported: INT, BIGINT, SMALLINT, "
                           f"TINYINT, DOUBLE, BOOLEAN, STRING, VARCHAR, DECIMAL(p<=18, s), TIMESTAMP(3), "
                           f"TIMESTAMP_LTZ(3), DATE)")
