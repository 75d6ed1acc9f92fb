"""Compiling a join condition to Python: DuckDB's own parse of it, static types, generated source.

engine/condition.py is the interface (split a condition into equi keys and a
residual, compile a predicate); this module is how. Semantics and the known
gap are in that module's docstring.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import duckdb

from converge.engine.condition_case import case_of_if, case_parts
from converge.engine.condition_dates import DATE_PARTS, MAX_MS, date_part
from converge.engine.model.duckdb_ast import (
    cast_target,
    function_arguments,
    literal,
    min_mod_minus_one_overflows,
    unfold_not_in,
)
from converge.engine.model.duckdb_params import inlined
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import InputSpec
from converge.engine.text_time import text_time_ms

_PREFIX = "SELECT 1 WHERE "
_NUMERIC = {"INTEGER": 0, "BIGINT": 1, "DOUBLE": 2}
_RANGE = {"INTEGER": (-(2**31), 2**31 - 1), "BIGINT": (-(2**63), 2**63 - 1)}
_TYPE_ALIASES = {
    **dict.fromkeys(("INTEGER", "INT", "INT4", "INT32", "SIGNED"), "INTEGER"),
    **dict.fromkeys(("BIGINT", "INT8", "INT64", "LONG"), "BIGINT"),
    **dict.fromkeys(("DOUBLE", "FLOAT8"), "DOUBLE"),
    **dict.fromkeys(("VARCHAR", "TEXT", "STRING", "CHAR", "BPCHAR"), "VARCHAR"),
    **dict.fromkeys(("BOOLEAN", "BOOL", "LOGICAL"), "BOOLEAN"),
}
_CMP = {"COMPARE_EQUAL": "=", "COMPARE_NOTEQUAL": "<>", "COMPARE_LESSTHAN": "<",
        "COMPARE_GREATERTHAN": ">", "COMPARE_LESSTHANOREQUALTO": "<=",
        "COMPARE_GREATERTHANOREQUALTO": ">="}
_NC = object()  # "not a compile-time constant"



@dataclass(frozen=True)
class ColumnRef:
    input: str
    column: str

# ---------------------------------------------------------------- DuckDB access

_lock = threading.Lock()
_con: duckdb.DuckDBPyConnection | None = None


def _duck_all(sql: str, params: Sequence[Any] = ()) -> list[tuple]:
    """One shared connection, serialized: DuckDB is used at compile time only (results cached)."""
    global _con
    with _lock:
        if _con is None:
            _con = duckdb.connect()
        sql, bound = inlined(sql, params)  # no bound parameter: binding one imports pandas
        return _con.execute(sql, bound).fetchall()


def _duck(sql: str, params: Sequence[Any] = ()) -> Any:
    return _duck_all(sql, params)[0][0]


def _strip_locations(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_locations(v) for k, v in node.items()
                if k not in ("query_location", "query_location_length", "where_clause")}
    if isinstance(node, list):
        return [_strip_locations(v) for v in node]
    return node


@functools.lru_cache(maxsize=4096)
def _parse_text(sql: str) -> str:
    doc = json.loads(_duck("SELECT json_serialize_sql(?)", [_PREFIX + sql]))
    if doc.get("error"):
        raise BadInputError(f"cannot parse condition {sql!r}: {doc.get('error_message', doc)}")
    stmts = doc["statements"]
    node = stmts[0]["node"] if len(stmts) == 1 else {}
    if len(stmts) != 1 or _strip_locations(node) != _reference_node() or node.get("where_clause") is None:
        raise BadInputError(f"condition {sql!r} is not a single boolean expression")
    return json.dumps(doc)


@functools.lru_cache(maxsize=1)
def _reference_node() -> Any:
    doc = json.loads(_duck("SELECT json_serialize_sql(?)", [_PREFIX + "TRUE"]))
    return _strip_locations(doc["statements"][0]["node"])


def parse(sql: str) -> tuple[dict, dict]:
    """(whole document, where_clause) — a fresh copy the caller may edit."""
    doc = json.loads(_parse_text(sql))
    node = doc["statements"][0]["node"]
    node["where_clause"] = unfold_not_in(node["where_clause"])
    return doc, node["where_clause"]


def render(doc: dict, node: dict) -> str:
    """SQL text of one AST node, via json_deserialize_sql on a copy of doc."""
    doc = copy.deepcopy(doc)
    doc["statements"][0]["node"]["where_clause"] = node
    text = _duck("SELECT json_deserialize_sql(?::JSON)", [json.dumps(doc)])
    return text[len(_PREFIX):] if text.startswith(_PREFIX) else text


# ---------------------------------------------------------------- column resolution


class Scope:
    """Maps input/column names to (argument index, tuple offset, type) for one layout."""

    def __init__(self, layout: Sequence[Sequence[InputSpec]], sql: str) -> None:
        self.sql = sql
        self.inputs: dict[str, tuple[int, int, InputSpec]] = {}
        for arg, group in enumerate(layout):
            offset = 0
            for spec in group:
                self.inputs[spec.name] = (arg, offset, spec)
                offset += len(spec.columns)

    @staticmethod
    def _pick(name: str, names: Sequence[str]) -> str | None:
        if name in names:
            return name
        folded = [n for n in names if n.casefold() == name.casefold()]
        return folded[0] if len(folded) == 1 else None

    def resolve(self, parts: list[str]) -> tuple[int, int, str, ColumnRef]:
        """(arg, offset, type, ref) of a column; DuckDB identifiers are case-insensitive."""
        if len(parts) == 1:
            col = parts[0]
            hits = [n for n, (_, _, s) in self.inputs.items() if self._pick(col, s.column_names)]
            if len(hits) != 1:
                what = "ambiguous" if hits else "unknown"
                raise BadInputError(f"{what} column {col!r} in condition {self.sql!r}"
                                    + (f" (in inputs {', '.join(hits)})" if hits else ""))
            name = hits[0]
        elif len(parts) == 2:
            name = self._pick(parts[0], list(self.inputs))
            if name is None:
                raise BadInputError(f"unknown input {parts[0]!r} in condition {self.sql!r} "
                                    f"(inputs: {', '.join(self.inputs)})")
            col = parts[1]
        else:
            raise BadInputError(f"unsupported column reference {'.'.join(parts)!r} in condition {self.sql!r}")
        arg, offset, spec = self.inputs[name]
        real = self._pick(col, spec.column_names)
        if real is None:
            raise BadInputError(f"input {name!r} has no column {col!r} (condition {self.sql!r})")
        i = spec.column_names.index(real)
        return arg, offset + i, spec.column_types[i], ColumnRef(name, real)


# ---------------------------------------------------------------- code generation


@dataclass(frozen=True)
class _V:
    """A compiled value: Python expression text, static SQL type, whether it may be None."""
    src: str
    type: str  # BIGINT INTEGER DOUBLE VARCHAR BOOLEAN, or NULL for an untyped NULL
    nullable: bool = True
    const: Any = _NC
    decimal: bool = False  # a DOUBLE here that DuckDB types DECIMAL (a decimal literal and arithmetic on it)


def _decimal_result(vals: Sequence[_V]) -> bool:
    """DuckDB keeps DECIMAL when every operand is DECIMAL, an integer or an untyped NULL (and one is DECIMAL)."""
    return any(v.decimal for v in vals) and all(v.decimal or v.type in ("INTEGER", "BIGINT", "NULL") for v in vals)


def _div0(x: float, y: float) -> float:
    """IEEE x/0 as DuckDB returns it (Python raises instead)."""
    return math.nan if x == 0 or x != x else math.copysign(math.inf, x) * math.copysign(1.0, y)


def _d2i(x: float, lo: int, hi: int) -> int | None:
    """DOUBLE -> integer cast: round half to even like DuckDB; None when out of range."""
    return r if math.isfinite(x) and lo <= (r := round(x)) <= hi else None


def _dstr(x: float) -> str:
    """DOUBLE -> VARCHAR: DuckDB prints the shortest round-trip form, like repr (and -nan)."""
    x = float(x)
    return repr(x) if x == x else "-nan" if math.copysign(1.0, x) < 0 else "nan"


@functools.lru_cache(maxsize=1)
def _case_tables() -> tuple[dict[int, str], dict[int, str]]:
    """DuckDB's own case mapping (context-free, 1:1, unlike Python's) for non-ASCII text."""
    rows = _duck_all(
        "SELECT i, upper(chr(i::INTEGER)), lower(chr(i::INTEGER)) FROM range(0, 1114112) r(i) "
        "WHERE (i < 55296 OR i > 57343) AND (upper(chr(i::INTEGER)) <> chr(i::INTEGER) "
        "OR lower(chr(i::INTEGER)) <> chr(i::INTEGER))")
    return ({i: u for i, u, _ in rows if u != chr(i)}, {i: lo for i, _, lo in rows if lo != chr(i)})


_IS_NULL_OPS = ("OPERATOR_IS_NULL", "OPERATOR_IS_NOT_NULL", "COMPARE_NOT_DISTINCT_FROM", "COMPARE_DISTINCT_FROM")


class Compiler:
    """Turns one AST into Python source text; temporaries are walrus-bound locals.

    value() gives the three-valued form; truth(node, want) gives an expression that is truthy
    iff the SQL value is `want`, which lets AND/OR/NOT compile to plain Python and/or/not.
    """

    def __init__(self, sql: str, doc: dict, layout: Sequence[Sequence[InputSpec]], *, views: bool = False) -> None:
        self.sql, self.doc = sql, doc
        self.views = views  # a view's expression: CASE and IF allowed (engine/condition_case.py)
        self.scope = Scope(layout, sql)
        self.failures: list[tuple[str, dict]] = []
        self.ns: dict[str, Any] = {"_fail": self._raise, "_div0": _div0, "_d2i": _d2i, "_dstr": _dstr,
                                   "_upper": lambda s: s.translate(_case_tables()[0]), "_fmod": math.fmod,
                                   "_lower": lambda s: s.translate(_case_tables()[1]), "_nan": math.nan,
                                   "_datepart": date_part}
        self.n = 0

    # -- helpers
    def tmp(self) -> str:
        self.n += 1
        return f"_{self.n}"

    def lit(self, value: Any) -> str:
        if isinstance(value, float) and not math.isfinite(value):
            self.ns[name := f"_k{len(self.ns)}"] = value
            return name
        return repr(value)

    def const(self, value: Any, type_: str) -> _V:
        return _V(self.lit(value), type_, value is None, value)

    def text(self, node: dict) -> str:
        try:
            return render(self.doc, node)
        except Exception:  # noqa: BLE001 - only used for messages
            return str(node.get("class", "?"))

    def error(self, message: str, node: dict) -> BadInputError:
        return BadInputError(f"{message}: {self.text(node)} (in condition {self.sql!r})")

    def fail(self, message: str, node: dict) -> str:
        """Code raising a runtime error; the message is rendered only if it happens."""
        self.failures.append((message, node))
        return f"_fail({len(self.failures) - 1})"

    def _raise(self, i: int) -> Any:
        raise self.error(*self.failures[i])

    def fold(self, v: _V, parts: Sequence[_V]) -> _V:
        """Evaluate now when every input is constant (so -5 stays a literal)."""
        if v.const is not _NC or any(p.const is _NC for p in parts):
            return v
        try:
            return replace(self.const(eval(v.src, self.ns), v.type), decimal=v.decimal)  # noqa: S307
        except BadInputError:
            return v  # keep it a runtime error

    def common(self, vals: Sequence[_V], node: dict, what: str) -> str:
        types = {v.type for v in vals} - {"NULL"}
        if not types:
            return "NULL"
        if types <= _NUMERIC.keys():
            return max(types, key=_NUMERIC.__getitem__)
        if len(types) == 1:
            return types.pop()
        raise self.error(f"type error: cannot {what} {' with '.join(sorted(types))}", node)

    def bind(self, v: _V) -> tuple[str, str | None]:
        """(name to use, walrus binding to test against None first) for a value used repeatedly."""
        if v.const is not _NC:
            return v.src, None
        t = self.tmp()
        return t, f"({t} := {v.src})"

    def guarded(self, binds: Sequence[str | None], body: str) -> str:
        fails = [f"{b} is None" for b in binds if b]
        # parenthesized either way: a bare `x == y` inside `... is None` would chain (x == y and y is None)
        return f"(None if {' or '.join(fails)} else {body})" if fails else f"({body})"

    def need_boolean(self, v: _V, node: dict) -> None:
        if v.type not in ("BOOLEAN", "NULL"):
            raise self.error(f"type error: expected a BOOLEAN, got {v.type}", node)

    # -- values
    def value(self, node: dict) -> _V:
        cls, typ = node.get("class"), node.get("type")
        if cls == "COLUMN_REF":
            arg, off, ctype, _ = self.scope.resolve(node["column_names"])
            return _V(f"a{arg}[{off}]", ctype)
        if cls == "CONSTANT":
            return self.constant(node)
        if cls == "CAST":
            return self.cast(node)
        if typ == "OPERATOR_COALESCE":
            return self.coalesce(node)
        if self.views and (cls == "CASE" or (cls == "FUNCTION" and str(node.get("function_name")).lower() == "if")):
            body, rtype, branches = case_parts(self, node if cls == "CASE" else case_of_if(node), _NC)
            return _V(body, rtype, True, decimal=_decimal_result(branches))
        if self.views and cls == "FUNCTION" and str(node.get("function_name")).lower() == "epoch_ms":
            return self.text_time(node)
        if cls == "FUNCTION":
            return self.function(node)
        if cls in ("COMPARISON", "CONJUNCTION", "BETWEEN") or typ in ("OPERATOR_NOT", "COMPARE_IN", *_IS_NULL_OPS):
            return self.boolean_value(node)
        raise self.error(f"unsupported {str(cls).lower()} expression", node)

    def constant(self, node: dict) -> _V:
        kind, text = literal(node)
        if kind == "INTEGER":
            value = int(text)
            if not _RANGE["BIGINT"][0] <= value <= _RANGE["BIGINT"][1]:
                raise self.error("unsupported integer literal outside BIGINT", node)
            return self.const(value, "INTEGER" if -(2**31) <= value < 2**31 else "BIGINT")
        if kind == "NUMERIC":  # DECIMAL or DOUBLE in DuckDB; DOUBLE here
            return replace(self.const(float(text), "DOUBLE"), decimal="e" not in text.lower())
        if kind in ("STRING", "BOOLEAN", "NULL_LITERAL"):
            value = text if kind == "STRING" else None if kind == "NULL_LITERAL" else text.lower() == "true"
            return self.const(value, {"STRING": "VARCHAR", "BOOLEAN": "BOOLEAN"}.get(kind, "NULL"))
        raise self.error(f"unsupported {kind} literal", node)

    def cast(self, node: dict) -> _V:
        name, modified = cast_target(node)
        target = _TYPE_ALIASES.get(name.upper())
        if node.get("try_cast") or target is None or (modified and target != "VARCHAR"):
            raise self.error("unsupported cast", node)
        v = self.value(node["child"])
        if v.type in (target, "NULL") or (v.type, target) == ("INTEGER", "BIGINT"):
            return _V(v.src, target, v.nullable, v.const)
        if v.const is not _NC:  # let DuckDB cast literals: exact DECIMAL and string parsing rules
            try:
                return self.const(_duck(f"SELECT {self.text(node)}", []), target)
            except duckdb.Error as exc:
                raise self.error(f"cannot cast ({str(exc).splitlines()[0]})", node) from None
        if v.type == "VARCHAR":
            raise self.error("unsupported cast of a VARCHAR expression (only of literals)", node)
        a, b = self.bind(v)
        if target == "VARCHAR":
            body = {"BOOLEAN": f"('true' if {a} else 'false')", "DOUBLE": f"_dstr({a})"}.get(v.type, f"str({a})")
        elif target == "DOUBLE":
            body = f"float({a})"
        elif target == "BOOLEAN":
            body = f"({a} != 0)"
        elif v.type == "BOOLEAN":
            body = f"(1 if {a} else 0)"
        elif v.type == "DOUBLE":
            r = self.tmp()
            body = f"({r} if ({r} := _d2i({a}, {_RANGE[target][0]}, {_RANGE[target][1]})) is not None " \
                   f"else {self.fail('value out of range', node)})"
        else:  # BIGINT -> INTEGER
            body = self.checked(a, target, node, "cast")
        return _V(self.guarded([b], body), target, v.nullable)

    def checked(self, expr: str, type_: str, node: dict, what: str) -> str:
        """Integer result with DuckDB's overflow error (Python ints never overflow)."""
        lo, hi = _RANGE[type_]
        r = self.tmp()
        return f"({r} if {lo} <= ({r} := {expr}) <= {hi} else {self.fail(f'{what} overflow', node)})"

    def text_time(self, node: dict) -> _V:
        """`epoch_ms(CAST(x AS TIMESTAMP))` of a VARCHAR x: a time attribute Flink parses from text
        (engine/model/time_text.py), in epoch milliseconds; only the canonical text is computed."""
        args = function_arguments(node)
        cast = args[0] if len(args) == 1 else {}
        if node.get("distinct") or node.get("filter") or (node.get("order_bys") or {}).get("orders") \
                or cast.get("class") != "CAST" or cast.get("try_cast") or cast_target(cast) != ("TIMESTAMP", False):
            raise self.error("unsupported function 'epoch_ms' (a view reads epoch_ms(CAST(text AS TIMESTAMP)))", node)
        v = self.value(cast["child"])
        if v.type not in ("VARCHAR", "NULL"):
            raise self.error(f"type error: epoch_ms(CAST(... AS TIMESTAMP)) of a {v.type} value", node)
        if v.const is None:
            return self.const(None, "BIGINT")
        self.ns["_text_ms"] = text_time_ms
        a, b = self.bind(v)
        return _V(self.guarded([b], f"_text_ms({a})"), "BIGINT", v.nullable)

    def coalesce(self, node: dict) -> _V:
        vals = [self.value(c) for c in node["children"]]
        rtype = self.common(vals, node, "COALESCE")
        decimal = _decimal_result(vals)
        for v in vals:  # decided at compile time when a non-NULL constant comes before any column
            if v.const is _NC:
                break
            if v.const is not None:
                conv = rtype == "DOUBLE" and v.type in ("INTEGER", "BIGINT")
                return replace(self.const(float(v.const) if conv else v.const, rtype), decimal=decimal)
        body = "None"
        for v in reversed(vals):
            conv = rtype == "DOUBLE" and v.type in ("INTEGER", "BIGINT")
            if v.const is not _NC:
                body = body if v.const is None else self.lit(float(v.const) if conv else v.const)
                continue
            t = self.tmp()
            body = f"({f'float({t})' if conv else t} if ({t} := {v.src}) is not None else {body})"
        return self.fold(_V(body, rtype, all(v.nullable for v in vals), decimal=decimal), vals)

    def function(self, node: dict) -> _V:
        name = str(node.get("function_name", "")).lower()
        if name in DATE_PARTS:
            return self.date_part(name, node)
        if node.get("distinct") or node.get("filter") or (node.get("order_bys") or {}).get("orders") \
                or node.get("schema") or node.get("catalog") or name not in FUNCTIONS:
            raise self.error(f"unsupported function {name!r}", node)
        vals = [self.value(a) for a in function_arguments(node)]
        types = [v.type for v in vals]
        arity, kinds = FUNCTIONS[name]
        if len(vals) not in arity or not all(t == "NULL" or t in kinds for t in types):
            raise self.error(f"type error: {name} is not defined for ({', '.join(types)})", node)
        if name == "+" and len(vals) == 1:
            return vals[0]
        # DuckDB's DECIMAL + - * % stay DECIMAL with integers, and give an untyped NULL with an untyped NULL
        decimal = name in ("+", "-", "*", "%") and _decimal_result(vals)
        if decimal and any(v.type == "NULL" for v in vals):
            return self.const(None, "NULL")
        if kinds == ("VARCHAR",):
            rtype = "BIGINT" if name == "length" else "VARCHAR"
        elif name == "/" or "DOUBLE" in types:
            rtype = "DOUBLE"
        else:
            rtype = "BIGINT" if "BIGINT" in types else "INTEGER"
        if any(v.const is None for v in vals):
            return self.const(None, rtype)
        (a, ga), (b, gb) = [self.bind(v) for v in vals] + [("", None)] * (2 - len(vals))
        int_ = rtype in _RANGE
        if len(vals) == 1:
            body = {"length": f"len({a})", "lower": f"({a}.lower() if {a}.isascii() else _lower({a}))",
                    "upper": f"({a}.upper() if {a}.isascii() else _upper({a}))",
                    "-": f"-{a}", "abs": f"abs({a})"}[name]
            body = self.checked(body, rtype, node, name) if int_ and name in ("-", "abs") else body
        elif name in ("+", "-", "*", "||"):
            body = self.checked(f"{a} {name} {b}", rtype, node, name) if int_ else f"{a} {'+' if name == '||' else name} {b}"
        elif name == "/":
            body = f"({f'float({a})' if all(t in _RANGE for t in types) else a} / {b} if {b} else _div0({a}, {b}))"
        elif name == "//" and not int_:  # DOUBLE // is plain division, but zero is an error
            body = f"({self.fail('division by zero', node)} if {b} == 0 else {a} / {b})"
        elif name == "//":  # truncating, as C
            q = f"(-(-{a} // {b}) if ({a} < 0) != ({b} < 0) else {a} // {b})"
            body = f"({self.fail('division by zero', node)} if {b} == 0 else {self.checked(q, rtype, node, '//')})"
        elif not int_:  # DOUBLE %: C fmod, NaN for a zero divisor or an infinite dividend
            body = f"(_fmod({a}, {b}) if {b} and {a} - {a} == 0 else _nan)"
        else:  # integer %: truncating remainder; MIN % -1 overflows in DuckDB 1.x (0 in 2.0.1)
            remainder = f"(abs({a}) % abs({b}) if {a} >= 0 else -(abs({a}) % abs({b})))"
            if min_mod_minus_one_overflows():
                remainder = (f"({self.fail('% overflow', node)} if {b} == -1 and {a} == {_RANGE[rtype][0]} "
                             f"else {remainder})")
            body = f"({self.fail('division by zero', node)} if {b} == 0 else {remainder})"
        return self.fold(_V(self.guarded([ga, gb], body), rtype, any(v.nullable for v in vals), decimal=decimal), vals)

    def date_part(self, name: str, node: dict) -> _V:
        """`year | quarter | month | day(epoch_ms(<integer>))`: a TIMESTAMP(3)'s calendar field (condition_dates)."""
        args = function_arguments(node)
        inner = args[0] if len(args) == 1 and args[0].get("class") == "FUNCTION" else {}
        if str(inner.get("function_name", "")).lower() != "epoch_ms" or len(function_arguments(inner)) != 1 \
                or node.get("distinct") or node.get("schema") or node.get("catalog"):
            raise self.error(f"unsupported function {name!r}: a date part is taken of epoch_ms(<integer>) only", node)
        v = self.value(function_arguments(inner)[0])
        if v.type not in ("INTEGER", "BIGINT", "NULL"):
            raise self.error(f"type error: epoch_ms is not defined for ({v.type})", inner)
        if v.const is None:
            return self.const(None, "BIGINT")
        a, g = self.bind(v)
        body = f"(_datepart({name!r}, {a}) if -{MAX_MS} <= {a} <= {MAX_MS} else {self.fail('timestamp out of range', inner)})"
        return self.fold(_V(self.guarded([g], body), "BIGINT", v.nullable), [v])

    # -- predicates
    def comparison(self, op: str, left: dict, right: dict, node: dict) -> tuple[list[str], str] | None:
        """(walrus bindings to check for None, test on the bound values); None if an operand is NULL."""
        vals = [self.value(left), self.value(right)]
        ctype = self.common(vals, node, "compare")
        if any(v.const is None for v in vals):
            return None
        names, binds, nan = [], [], []
        for v in vals:
            name, b = self.bind(v)
            if ctype == "DOUBLE" and v.type != "DOUBLE":  # DuckDB compares BIGINT with DOUBLE as DOUBLE
                name = self.lit(float(v.const)) if b is None else f"float({name})"
            names.append(name)
            binds += [b] if b else []
            nan.append(v.type == "DOUBLE" and not (b is None and v.const == v.const))
        (x, y), (nx, ny) = names, nan
        py = {"=": "==", "<>": "!="}.get(op, op)
        extra = {"=": f" or ({x} != {x} and {y} != {y})" if nx and ny else "",  # NaN = NaN
                 "<>": f" and ({x} == {x} or {y} == {y})" if nx and ny else "",
                 "<": (f" or ({y} != {y} and {x} == {x})" if nx else f" or {y} != {y}") if ny else "",
                 "<=": f" or {y} != {y}" if ny else "",  # NaN sorts above everything
                 ">": (f" or ({x} != {x} and {y} == {y})" if ny else f" or {x} != {x}") if nx else "",
                 ">=": f" or {x} != {x}" if nx else ""}[op]
        return binds, f"({x} {py} {y}{extra})" if extra else f"{x} {py} {y}"

    def not_distinct(self, node: dict) -> str:
        """Python bool expression for IS NOT DISTINCT FROM (never NULL)."""
        vals = [self.value(node["left"]), self.value(node["right"])]
        self.common(vals, node, "compare")
        if vals[0].const is None or vals[1].const is None:
            other = vals[1] if vals[0].const is None else vals[0]
            return repr(other.const is None) if other.const is not _NC else f"({other.src} is None)"
        binds, test = self.comparison("=", node["left"], node["right"], node)  # type: ignore[misc]
        if len(binds) < 2:
            return f"({' and '.join([*(f'{b} is not None' for b in binds), test])})"
        bx, by = binds
        return f"({by} is None if {bx} is None else ({by} is not None and {test}))"

    def in_list(self, node: dict) -> tuple[str, str, str] | None:
        """Fast path for `x IN (constants)`: (value, is_true, is_false), or None if not applicable."""
        x, *items = node["children"]
        xv, iv = self.value(x), [self.value(c) for c in items]
        ctype = self.common([xv, *iv], node, "compare")
        consts = [v.const for v in iv if v.const is not None]
        if any(v.const is _NC for v in iv) or xv.const is not _NC or not consts:
            return None
        if ctype == "DOUBLE":
            if xv.type != "DOUBLE" or any(c != c for c in consts):
                return None
            consts = [float(c) for c in consts]
        lits = ", ".join(dict.fromkeys(self.lit(c) for c in consts))
        coll = f"({lits},)" if len(consts) < 4 else f"{{{lits}}}"
        t = self.tmp()
        if len(consts) < len(iv):  # a NULL in the list: never FALSE
            return f"(None if ({t} := {xv.src}) is None else (True if {t} in {coll} else None))", \
                f"({xv.src} in {coll})", "False"
        return f"(None if ({t} := {xv.src}) is None else {t} in {coll})", f"({xv.src} in {coll})", \
            f"(({t} := {xv.src}) is not None and {t} not in {coll})"

    @staticmethod
    def rewrite(node: dict) -> dict:
        """BETWEEN as (x >= lo AND x <= hi), IN as an OR of equalities — DuckDB's NULL rules."""
        def cmp(kind: str, left: dict, right: dict) -> dict:
            return {"class": "COMPARISON", "type": kind, "alias": "", "left": left, "right": right}
        if node.get("class") == "BETWEEN":
            return {"class": "CONJUNCTION", "type": "CONJUNCTION_AND", "alias": "", "children": [
                cmp("COMPARE_GREATERTHANOREQUALTO", node["input"], node["lower"]),
                cmp("COMPARE_LESSTHANOREQUALTO", node["input"], node["upper"])]}
        x, *items = node["children"]
        return {"class": "CONJUNCTION", "type": "CONJUNCTION_OR", "alias": "",
                "children": [cmp("COMPARE_EQUAL", x, i) for i in items]}

    def truth(self, node: dict, want: bool) -> str:
        """Python expression that is truthy iff the SQL value of node is `want` (not NULL)."""
        cls, typ = node.get("class"), node.get("type")
        if cls == "CONJUNCTION" and typ in ("CONJUNCTION_AND", "CONJUNCTION_OR"):
            joiner = " and " if (typ == "CONJUNCTION_AND") == want else " or "
            return f"({joiner.join(self.truth(c, want) for c in node['children'])})"
        if typ == "OPERATOR_NOT":
            return self.truth(node["children"][0], not want)
        if cls == "BETWEEN":
            return self.truth(self.rewrite(node), want)
        if cls == "COMPARISON" and typ in _CMP:
            got = self.comparison(_CMP[typ], node["left"], node["right"], node)
            if got is None:
                return "False"
            binds, test = got
            if not binds and want:
                return test
            return f"({' and '.join([*(f'{b} is not None' for b in binds), test if want else f'not {test}'])})"
        if typ in ("COMPARE_NOT_DISTINCT_FROM", "COMPARE_DISTINCT_FROM"):
            expr = self.not_distinct(node)
            return expr if want == (typ == "COMPARE_NOT_DISTINCT_FROM") else f"(not {expr})"
        if typ in ("OPERATOR_IS_NULL", "OPERATOR_IS_NOT_NULL"):
            v, null = self.value(node["children"][0]), want == (typ == "OPERATOR_IS_NULL")
            return repr((v.const is None) == null) if v.const is not _NC else f"({v.src} is {'' if null else 'not '}None)"
        if typ == "COMPARE_IN":
            fast = self.in_list(node)
            return self.truth(self.rewrite(node), want) if fast is None else fast[1] if want else fast[2]
        v = self.value(node)
        self.need_boolean(v, node)
        return repr(v.const is want) if v.const is not _NC else f"({v.src} == {want})"

    def boolean_value(self, node: dict) -> _V:
        """Three-valued form of a predicate node (True/False/None)."""
        cls, typ = node.get("class"), node.get("type")
        if cls == "CONJUNCTION" and typ in ("CONJUNCTION_AND", "CONJUNCTION_OR"):
            decisive = typ == "CONJUNCTION_OR"  # the value that decides: TRUE for OR, FALSE for AND
            tests, nulls = [], []
            for c in node["children"]:
                v = self.value(c)
                self.need_boolean(v, c)
                if v.const is not _NC:
                    if v.const is decisive:
                        return self.const(decisive, "BOOLEAN")
                    nulls += ["True"] if v.const is None else []
                    continue
                t = self.tmp()
                tests.append(f"({t} := {v.src}) == {decisive}")
                nulls += [f"{t} is None"] if v.nullable else []
            if not tests:
                return self.const(None if nulls else not decisive, "BOOLEAN")
            rest = f"(None if {' or '.join(nulls)} else {not decisive})" if nulls else str(not decisive)
            return _V(f"({decisive} if {' or '.join(tests)} else {rest})", "BOOLEAN", bool(nulls))
        if typ == "OPERATOR_NOT":
            v = self.value(node["children"][0])
            self.need_boolean(v, node["children"][0])
            t = self.tmp()
            return self.fold(_V(f"(None if ({t} := {v.src}) is None else not {t})", "BOOLEAN", v.nullable), [v])
        if cls == "BETWEEN":
            return self.value(self.rewrite(node))
        if cls == "COMPARISON" and typ in _CMP:
            got = self.comparison(_CMP[typ], node["left"], node["right"], node)
            if got is None:
                return self.const(None, "BOOLEAN")
            return _V(self.guarded(got[0], got[1]), "BOOLEAN", bool(got[0]))
        if typ == "COMPARE_IN":
            fast = self.in_list(node)
            return _V(fast[0], "BOOLEAN") if fast else self.value(self.rewrite(node))
        if typ in _IS_NULL_OPS:  # never NULL: the truth form is already the value
            return _V(self.truth(node, True), "BOOLEAN", False)
        raise self.error(f"unsupported {str(typ).lower()} expression", node)


_NUMS = ("INTEGER", "BIGINT", "DOUBLE")
FUNCTIONS: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "+": ((1, 2), _NUMS), "-": ((1, 2), _NUMS), "*": ((2,), _NUMS), "/": ((2,), _NUMS),
    "//": ((2,), _NUMS), "%": ((2,), _NUMS), "abs": ((1,), _NUMS), "||": ((2,), ("VARCHAR",)),
    "length": ((1,), ("VARCHAR",)), "lower": ((1,), ("VARCHAR",)), "upper": ((1,), ("VARCHAR",)),
}

