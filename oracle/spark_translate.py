"""The DuckDB oracle's SQL in Spark SQL: the same query, with every condition translated by its types.

sqlglot parses the query that oracle/sql.py (or oracle/interval.py) renders
for DuckDB and writes the join skeleton in Spark's dialect. The conditions
are not left to a generic transpiler: where the two engines give the same
text different meanings, the translation says what DuckDB means, in terms
Spark evaluates identically (Spark runs with ANSI mode on, so integer
overflow and failing casts are errors, as in DuckDB):

* ``a / b``: DuckDB divides as doubles with IEEE results (``1/0`` is
  ``inf``, ``0/0`` NaN); Spark returns NULL or fails, so a zero divisor is
  written out as a signed infinity times the dividend.
* ``a // b`` and ``a % b``: NULL for a zero divisor (doubles: ``//`` divides,
  ``%`` of zero is NaN); integers truncate; ``MIN // -1`` and ``MIN % -1``
  are overflow errors in DuckDB 1.x, so they raise in Spark too (DuckDB 2.0.1
  answers 0 for ``MIN % -1``, and so does the translation there).
* ``IS [NOT] DISTINCT FROM`` becomes ``<=>``; ``abs`` and unary minus of
  the smallest integer raise, as in DuckDB.
* ``CAST(double AS BIGINT/INTEGER)`` rounds half to even in DuckDB, Spark
  truncates: written as ``CAST(rint(x) AS ...)``.
* ``lower``/``upper`` map non-ASCII letters differently (DuckDB: simple
  Unicode case mapping; Java: full mapping, ``upper('ß')`` is ``SS``): they
  run on ASCII text only, and a non-ASCII value stops the query with an
  error instead of giving a different answer.

Refused with an OracleError naming the construct (no faithful translation):
comparisons, ``IN``, ``BETWEEN``, ``COALESCE`` and arithmetic across type
groups (numbers, text, booleans: the engines cast implicitly in different
ways), casts from text to anything but text, casts of doubles to text or
boolean (number formatting differs), arithmetic with DECIMAL literals
(precision rules differ) and integer literals outside BIGINT.
"""

from __future__ import annotations

from collections.abc import Mapping

import sqlglot
from sqlglot import expressions as exp

from converge.engine.model.duckdb_ast import min_mod_minus_one_overflows
from converge.engine.model.errors import OracleError

__all__ = ["SPARK_TYPES", "ColumnTypes", "spark_ident", "spark_string", "translate_condition", "translate_expression",
           "translate_query"]

ColumnTypes = Mapping[tuple[str, str], str]
"""(input alias, column) -> its DuckDB type."""

_INTS = {"INTEGER": 32, "BIGINT": 64}
_NUMERIC = {"INTEGER", "BIGINT", "HUGEINT", "DOUBLE", "DECIMAL"}
SPARK_TYPES = {"INTEGER": "INT", "BIGINT": "BIGINT", "DOUBLE": "DOUBLE", "VARCHAR": "STRING", "BOOLEAN": "BOOLEAN",
               "HUGEINT": "DECIMAL(38,0)"}
"""A DuckDB type's Spark SQL name (the column types of scenarios, and HUGEINT arithmetic results)."""
_CAST_NAMES = {"INT": "INTEGER", "INTEGER": "INTEGER", "BIGINT": "BIGINT", "DOUBLE": "DOUBLE", "VARCHAR": "VARCHAR",
               "TEXT": "VARCHAR", "BOOLEAN": "BOOLEAN", "INT128": "HUGEINT", "HUGEINT": "HUGEINT"}
_MIN = {"INTEGER": str(-(2**31)), "BIGINT": f"({-(2**63) + 1} - 1)"}
_COMPARISONS = {exp.EQ: "=", exp.NEQ: "<>", exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<="}
_ARITH = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*"}

BAD_ASCII = "converge: lower/upper of a non-ASCII value (DuckDB and Spark map its case differently)"
OVERFLOW = "converge: integer overflow (DuckDB raises it)"
_NON_ASCII = "'[^\\\\x00-\\\\x7F]'"   # a Spark string literal holding the regex [^\x00-\x7F]


def spark_ident(name: str) -> str:
    """A Spark identifier naming exactly ``name`` (backticks doubled)."""
    return "`" + name.replace("`", "``") + "`"


def spark_string(text: str) -> str:
    """A Spark string literal holding exactly ``text`` (Spark unescapes backslashes in literals)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _refuse(what: str) -> OracleError:
    return OracleError(f"the Spark SQL oracle refuses {what}: no faithful translation of DuckDB's meaning")


def _type_group(t: str) -> str:
    return "numeric" if t in _NUMERIC else t


def _wider(a: str, b: str) -> str:
    if a == "NULL":
        return b
    if b == "NULL":
        return a
    for t in ("DOUBLE", "DECIMAL", "HUGEINT", "BIGINT"):
        if t in (a, b):
            return t
    return "INTEGER"


def _same_type_group(what: str, *types: str) -> None:
    groups = {_type_group(t) for t in types if t != "NULL"}
    if len(groups) > 1:
        raise _refuse(f"{what} across types {', '.join(sorted(set(types)))} (implicit casts differ)")


class _Translator:
    def __init__(self, types: ColumnTypes) -> None:
        self.types = {(a.lower(), c): t for (a, c), t in types.items()}

    def emit(self, node: exp.Expr) -> tuple[str, str]:
        """(Spark SQL, DuckDB type) of one expression."""
        if isinstance(node, exp.Paren):
            text, t = self.emit(node.this)
            return f"({text})", t
        if isinstance(node, exp.Column):
            return self.column(node)
        if isinstance(node, exp.Literal):
            return self.literal(node)
        if isinstance(node, exp.Null):
            return "NULL", "NULL"
        if isinstance(node, exp.Boolean):
            return ("TRUE" if node.this else "FALSE"), "BOOLEAN"
        if isinstance(node, (exp.And, exp.Or)):
            (lt, ltype), (rt, rtype) = self.emit(node.left), self.emit(node.right)
            self.boolean("AND/OR", ltype, rtype)
            return f"({lt} {'AND' if isinstance(node, exp.And) else 'OR'} {rt})", "BOOLEAN"
        if isinstance(node, exp.Not):
            text, t = self.emit(node.this)
            self.boolean("NOT", t)
            return f"(NOT {text})", "BOOLEAN"
        if isinstance(node, exp.Is):
            text, _ = self.emit(node.this)
            if not isinstance(node.expression, exp.Null):
                raise _refuse(f"IS {node.expression.sql('duckdb')}")
            return f"({text} IS NULL)", "BOOLEAN"
        for cls, op in _COMPARISONS.items():
            if isinstance(node, cls):
                return self.compare(node, op)
        if isinstance(node, (exp.NullSafeEQ, exp.NullSafeNEQ)):
            (lt, ltype), (rt, rtype) = self.emit(node.left), self.emit(node.right)
            _same_type_group("IS [NOT] DISTINCT FROM", ltype, rtype)
            text = f"({lt} <=> {rt})"
            return (text if isinstance(node, exp.NullSafeEQ) else f"(NOT {text})"), "BOOLEAN"
        if isinstance(node, exp.Between):
            parts = [self.emit(node.this), self.emit(node.args["low"]), self.emit(node.args["high"])]
            _same_type_group("BETWEEN", *(t for _, t in parts))
            return f"({parts[0][0]} BETWEEN {parts[1][0]} AND {parts[2][0]})", "BOOLEAN"
        if isinstance(node, exp.In):
            if node.args.get("query") or node.args.get("unnest") or node.args.get("field"):
                raise _refuse("IN over a subquery")
            value = self.emit(node.this)
            items = [self.emit(e) for e in node.expressions]
            _same_type_group("IN", value[1], *(t for _, t in items))
            return f"({value[0]} IN ({', '.join(text for text, _ in items)}))", "BOOLEAN"
        if isinstance(node, exp.Coalesce):
            items = [self.emit(e) for e in [node.this, *node.expressions]]
            _same_type_group("COALESCE", *(t for _, t in items))
            result = "NULL"
            for _, t in items:
                result = _wider(result, t)
            return f"coalesce({', '.join(text for text, _ in items)})", result
        if isinstance(node, exp.Cast):
            return self.cast(node)
        for cls, op in _ARITH.items():
            if isinstance(node, cls):
                return self.arithmetic(node, op)
        if isinstance(node, (exp.Div, exp.IntDiv, exp.Mod)):
            return self.division(node)
        if isinstance(node, exp.Neg):
            return self.negate(node)
        if isinstance(node, exp.Abs):
            text, t = self.emit(node.this)
            self.numeric("abs", t)
            if t in _INTS:
                return f"(CASE WHEN {text} = {_MIN[t]} THEN raise_error({spark_string(OVERFLOW)}) " \
                       f"ELSE abs({text}) END)", t
            return f"abs({text})", t
        if isinstance(node, exp.DPipe):
            (lt, ltype), (rt, rtype) = self.emit(node.left), self.emit(node.right)
            if {ltype, rtype} - {"VARCHAR", "NULL"}:
                raise _refuse(f"|| of {ltype} and {rtype} (number to text formatting differs)")
            return f"({lt} || {rt})", "VARCHAR"
        if isinstance(node, exp.Length):
            text, t = self.emit(node.this)
            if t not in ("VARCHAR", "NULL"):
                raise _refuse(f"length of {t}")
            return f"CAST(char_length({text}) AS BIGINT)", "BIGINT"
        if isinstance(node, (exp.Lower, exp.Upper)):
            text, t = self.emit(node.this)
            if t not in ("VARCHAR", "NULL"):
                raise _refuse(f"lower/upper of {t}")
            fn = "lower" if isinstance(node, exp.Lower) else "upper"
            return (f"(CASE WHEN {text} RLIKE {_NON_ASCII} THEN "
                    f"raise_error({spark_string(BAD_ASCII)}) ELSE {fn}({text}) END)"), "VARCHAR"
        raise _refuse(f"the expression {node.sql('duckdb')!r} ({type(node).__name__})")

    # ------------------------------------------------------------ pieces

    def column(self, node: exp.Column) -> tuple[str, str]:
        table, name = node.table, node.name
        t = self.types.get((table.lower(), name))
        if t is None:
            raise OracleError(f"the Spark SQL oracle has no type for column {table}.{name}")
        return f"{spark_ident(table)}.{spark_ident(name)}", t

    def literal(self, node: exp.Literal) -> tuple[str, str]:
        if node.is_string:
            return spark_string(node.this), "VARCHAR"
        text = node.this
        if text.isdigit():
            value = int(text)
            if value < 2**31:
                return text, "INTEGER"
            if value < 2**63:
                return text, "BIGINT"
            raise _refuse(f"the integer literal {text} (outside BIGINT)")
        try:
            float(text)
        except ValueError:
            raise _refuse(f"the literal {text!r}") from None
        return text, "DECIMAL"

    def boolean(self, what: str, *types: str) -> None:
        bad = [t for t in types if t not in ("BOOLEAN", "NULL")]
        if bad:
            raise _refuse(f"{what} of {bad[0]} (DuckDB casts it to BOOLEAN)")

    def numeric(self, what: str, *types: str) -> None:
        bad = [t for t in types if t not in _NUMERIC and t != "NULL"]
        if bad:
            raise _refuse(f"{what} of {bad[0]}")
        if "DECIMAL" in types:
            raise _refuse(f"{what} with a DECIMAL literal (DuckDB's and Spark's decimal precision rules differ); "
                          "write it as a DOUBLE or an integer")

    def compare(self, node: exp.Binary, op: str) -> tuple[str, str]:
        (lt, ltype), (rt, rtype) = self.emit(node.left), self.emit(node.right)
        _same_type_group(f"the comparison {op}", ltype, rtype)
        return f"({lt} {op} {rt})", "BOOLEAN"

    def arithmetic(self, node: exp.Binary, op: str) -> tuple[str, str]:
        (lt, ltype), (rt, rtype) = self.emit(node.left), self.emit(node.right)
        self.numeric(op, ltype, rtype)
        return f"({lt} {op} {rt})", _wider(ltype, rtype)

    def negate(self, node: exp.Neg) -> tuple[str, str]:
        inner = node.this
        if isinstance(inner, exp.Literal) and not inner.is_string:
            if inner.this.isdigit() and int(inner.this) == 2**63:
                return _MIN["BIGINT"], "BIGINT"
            text, t = self.literal(inner)
            return f"(-{text})", t
        text, t = self.emit(inner)
        self.numeric("unary minus", t)
        if t in _INTS:
            return f"(CASE WHEN {text} = {_MIN[t]} THEN raise_error({spark_string(OVERFLOW)}) ELSE (-{text}) END)", t
        return f"(-{text})", t

    def division(self, node: exp.Binary) -> tuple[str, str]:
        (lt, ltype), (rt, rtype) = self.emit(node.left), self.emit(node.right)
        op = {exp.Div: "/", exp.IntDiv: "//", exp.Mod: "%"}[type(node)]
        self.numeric(op, ltype, rtype)
        if "HUGEINT" in (ltype, rtype):
            raise _refuse(f"{op} of HUGEINT")
        result = _wider(ltype, rtype)
        integer = result in _INTS
        if op == "/" or (op == "//" and not integer):
            ld, rd = f"CAST({lt} AS DOUBLE)", f"CAST({rt} AS DOUBLE)"
            if op == "//":   # DuckDB: a double // 0 is NULL, otherwise plain division
                return f"(CASE WHEN {rd} = 0 THEN NULL ELSE {ld} / {rd} END)", "DOUBLE"
            inf = "CAST('Infinity' AS DOUBLE)"
            signed = f"(CASE WHEN atan2({rd}, -1.0D) < 0 THEN -{inf} ELSE {inf} END)"
            return f"(CASE WHEN {rd} = 0 THEN {ld} * {signed} ELSE {ld} / {rd} END)", "DOUBLE"
        if not integer:      # double % : fmod, NaN for a zero divisor
            ld, rd = f"CAST({lt} AS DOUBLE)", f"CAST({rt} AS DOUBLE)"
            return f"(CASE WHEN {rd} = 0 THEN CAST('NaN' AS DOUBLE) ELSE {ld} % {rd} END)", "DOUBLE"
        stype = SPARK_TYPES[result]
        ld, rd = f"CAST({lt} AS {stype})", f"CAST({rt} AS {stype})"
        body = f"CAST({ld} DIV {rd} AS {stype})" if op == "//" else f"({ld} % {rd})"
        if op == "%" and not min_mod_minus_one_overflows():  # DuckDB 2.0.1: MIN % -1 is 0
            return f"(CASE WHEN {rd} = 0 THEN NULL WHEN {rd} = -1 THEN CAST(0 AS {stype}) ELSE {body} END)", result
        return (f"(CASE WHEN {rd} = 0 THEN NULL WHEN {rd} = -1 AND {ld} = {_MIN[result]} "
                f"THEN raise_error({spark_string(OVERFLOW)}) ELSE {body} END)"), result

    def cast(self, node: exp.Cast) -> tuple[str, str]:
        target_name = node.to.sql("duckdb").upper()
        target = _CAST_NAMES.get(target_name)
        if target is None:
            raise _refuse(f"a cast to {target_name}")
        child = node.this
        if isinstance(child, exp.Literal) and child.is_string and target in ("DOUBLE", "BOOLEAN"):
            return self.typed_text(child.this, target)
        text, source = self.emit(child)
        stype = SPARK_TYPES[target]
        if source in (target, "NULL"):
            return f"CAST({text} AS {stype})", target
        if source == "VARCHAR":
            raise _refuse(f"a cast of text to {target} (the engines parse text differently)")
        if source == "DECIMAL":
            raise _refuse(f"a cast of a DECIMAL literal to {target}")
        if source == "DOUBLE" and target in _INTS:
            return f"CAST(rint({text}) AS {stype})", target   # DuckDB rounds half to even
        if source == "DOUBLE" and target in ("VARCHAR", "BOOLEAN"):
            raise _refuse(f"a cast of DOUBLE to {target} (the engines format doubles differently)")
        return f"CAST({text} AS {stype})", target

    def typed_text(self, text: str, target: str) -> tuple[str, str]:
        """DuckDB's regenerated DOUBLE and BOOLEAN constants: CAST('<text>' AS DOUBLE/BOOLEAN)."""
        if target == "BOOLEAN":
            if text.lower() in ("t", "true"):
                return "TRUE", "BOOLEAN"
            if text.lower() in ("f", "false"):
                return "FALSE", "BOOLEAN"
            raise _refuse(f"the BOOLEAN constant {text!r}")
        try:
            value = float(text)
        except ValueError:
            raise _refuse(f"the DOUBLE constant {text!r}") from None
        if value != value:
            return "CAST('NaN' AS DOUBLE)", "DOUBLE"
        if value in (float("inf"), float("-inf")):
            return f"CAST('{'-' if value < 0 else ''}Infinity' AS DOUBLE)", "DOUBLE"
        return f"CAST({spark_string(repr(value))} AS DOUBLE)", "DOUBLE"


def translate_expression(duckdb_sql: str, types: ColumnTypes) -> str:
    """Any allowed expression (not only a condition) as Spark SQL; OracleError if refused."""
    try:
        tree = sqlglot.parse_one(duckdb_sql, read="duckdb")
    except sqlglot.errors.ParseError as exc:
        raise OracleError(f"sqlglot cannot parse {duckdb_sql!r}: {exc}") from None
    return _Translator(types).emit(tree)[0]


def translate_condition(duckdb_sql: str, types: ColumnTypes) -> str:
    """One DuckDB condition (as oracle/guard.py regenerates it) as Spark SQL; OracleError if refused."""
    try:
        tree = sqlglot.parse_one(duckdb_sql, read="duckdb")
    except sqlglot.errors.ParseError as exc:
        raise OracleError(f"sqlglot cannot parse the condition {duckdb_sql!r}: {exc}") from None
    text, t = _Translator(types).emit(tree)
    if t not in ("BOOLEAN", "NULL"):
        raise _refuse(f"a condition of type {t} (DuckDB casts it to BOOLEAN)")
    return text


_JOINS = {("", ""): "INNER", ("LEFT", ""): "LEFT OUTER", ("RIGHT", ""): "RIGHT OUTER", ("FULL", ""): "FULL OUTER",
          ("", "INNER"): "INNER", ("LEFT", "OUTER"): "LEFT OUTER", ("RIGHT", "OUTER"): "RIGHT OUTER",
          ("FULL", "OUTER"): "FULL OUTER", ("", "SEMI"): "LEFT SEMI", ("", "ANTI"): "LEFT ANTI",
          ("LEFT", "SEMI"): "LEFT SEMI", ("LEFT", "ANTI"): "LEFT ANTI"}


def translate_query(duckdb_sql: str, types: ColumnTypes) -> str:
    """A query of render_join_sql / interval_final_sql form (SELECT columns FROM t AS x JOIN ... ON ...) in Spark SQL.

    FROM items must be table names (Spark views); the SELECT list and every ON
    clause go through the typed translation."""
    try:
        tree = sqlglot.parse_one(duckdb_sql, read="duckdb")
    except sqlglot.errors.ParseError as exc:
        raise OracleError(f"sqlglot cannot parse the oracle query: {exc}") from None
    if not isinstance(tree, exp.Select) or tree.args.get("where") or tree.args.get("group"):
        raise OracleError("the Spark SQL oracle translates only SELECT ... FROM ... JOIN ... ON ... queries")
    translator = _Translator(types)

    def table(item: exp.Expr) -> str:
        if not isinstance(item, exp.Table) or not item.alias:
            raise OracleError(f"the Spark SQL oracle needs views as FROM items, got {item.sql('duckdb')[:80]!r}")
        return f"{spark_ident(item.name)} AS {spark_ident(item.alias)}"

    select = ", ".join(translator.emit(e)[0] for e in tree.expressions)
    lines = [f"SELECT {select}", f"FROM {table(tree.args['from_'].this)}"]
    for join in tree.args.get("joins") or []:
        key = ((join.side or "").upper(), (join.kind or "").upper())
        kind = _JOINS.get(key)
        if kind is None:
            raise _refuse(f"the join {' '.join(key)}")
        on = join.args.get("on")
        if on is None:
            raise OracleError("the Spark SQL oracle needs an ON clause on every join")
        lines.append(f"{kind} JOIN {table(join.this)} ON {translate_condition_tree(translator, on)}")
    return "\n".join(lines)


def translate_condition_tree(translator: _Translator, tree: exp.Expr) -> str:
    text, t = translator.emit(tree)
    if t not in ("BOOLEAN", "NULL"):
        raise _refuse(f"a condition of type {t} (DuckDB casts it to BOOLEAN)")
    return text
