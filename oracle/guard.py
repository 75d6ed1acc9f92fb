"""What of a scenario may reach the oracle's SQL text: join conditions, names and values, each checked here.

The oracle pastes a scenario's join conditions into its queries, and the
scenario can come from anyone (a file, a generator, a Python caller who
skipped the engine). So the oracle does not rely on the engine's condition
compiler: every condition is parsed by DuckDB's own parser
(``json_serialize_sql``, so there is no second parser that could read the text
differently), the tree is walked against the allow-lists below, every column
reference is rewritten to the exact, qualified name of a column of an input
of that join step, and the query receives the SQL that DuckDB regenerates from
the checked tree (``json_deserialize_sql``), never the caller's text. The
regenerated text is parsed once more, in the parenthesized form it takes in
the query, and must give back exactly the checked tree: a comment, quote or
bracket that escaped would change that tree, so it is rejected, not run.

Anything rejected is a BadInputError naming the key path
(``join.conditions[1]``, ``inputs[0].columns[2]``). docs/oracle.md lists what
is allowed and why.
"""

from __future__ import annotations

import copy
import functools
import json
import math
from collections.abc import Sequence
from typing import Any

from converge.engine.model.duckdb_ast import cast_target, function_arguments, function_name, literal
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import InputSpec, JoinSpec, Scenario
from converge.oracle.query import run_query

__all__ = [
    "CAST_TYPES",
    "COMPARISONS",
    "FUNCTIONS",
    "MAX_CONDITION_CHARS",
    "MAX_DEPTH",
    "OPERATORS",
    "check_inputs",
    "check_name",
    "safe_condition",
    "safe_conditions",
    "safe_view_expression",
]

# ---------------------------------------------------------------- the allow-lists

FUNCTIONS = frozenset({"+", "-", "*", "/", "//", "%", "abs", "||", "length", "lower", "upper"})
"""Scalar functions and arithmetic/string operators (DuckDB writes operators as functions)."""
DATE_PARTS = ("year", "quarter", "month", "day")
"""Calendar fields, each allowed only of `epoch_ms(<integer>)` (a TIMESTAMP(3) as epoch milliseconds): the one
date-part shape the engine compiles (engine/condition_dates.py)."""

COMPARISONS = frozenset({"COMPARE_EQUAL", "COMPARE_NOTEQUAL", "COMPARE_LESSTHAN", "COMPARE_GREATERTHAN",
                         "COMPARE_LESSTHANOREQUALTO", "COMPARE_GREATERTHANOREQUALTO",
                         "COMPARE_DISTINCT_FROM", "COMPARE_NOT_DISTINCT_FROM"})

OPERATORS = frozenset({"OPERATOR_NOT", "OPERATOR_IS_NULL", "OPERATOR_IS_NOT_NULL", "OPERATOR_COALESCE",
                       "COMPARE_IN", "COMPARE_NOT_IN"})
"""NOT, IS [NOT] NULL, COALESCE, [NOT] IN (list). Not ARRAY_EXTRACT, not struct access."""

CONJUNCTIONS = frozenset({"CONJUNCTION_AND", "CONJUNCTION_OR"})

CAST_TYPES = {
    **dict.fromkeys(("INTEGER", "INT", "INT4", "INT32", "SIGNED"), "INTEGER"),
    **dict.fromkeys(("BIGINT", "INT8", "INT64", "LONG"), "BIGINT"),
    **dict.fromkeys(("DOUBLE", "FLOAT8"), "DOUBLE"),
    **dict.fromkeys(("VARCHAR", "TEXT", "STRING", "CHAR", "BPCHAR"), "VARCHAR"),
    **dict.fromkeys(("BOOLEAN", "BOOL", "LOGICAL"), "BOOLEAN"),
}
"""CAST target type names (as DuckDB 2 writes them; 1.x resolves aliases itself)."""

_CONSTANT_KINDS = frozenset({"INTEGER", "NUMERIC", "STRING", "BOOLEAN", "NULL_LITERAL"})
_CONSTANT_TYPE_IDS = frozenset({"INTEGER", "BIGINT", "HUGEINT", "UBIGINT", "UHUGEINT", "DECIMAL", "DOUBLE", "FLOAT",
                                "VARCHAR", "BOOLEAN", "NULL"})
"""What DuckDB 1.x's parser makes of literals (2.x: _CONSTANT_KINDS)."""

MAX_CONDITION_CHARS = 10_000
MAX_DEPTH = 100
"""Nesting limit of a condition's tree; DuckDB's own limit (1000) is deeper than Python's json reader can go."""

# The keys each expression class may carry (1.x and 2.x serializations); any other key is rejected.
_COMMON = frozenset({"class", "type", "alias", "query_location"})
_KEYS = {
    "COLUMN_REF": {"column_names"},
    "CONSTANT": {"value", "literal"},
    "CAST": {"child", "cast_type", "type_expr", "try_cast"},
    "COMPARISON": {"left", "right"},
    "CONJUNCTION": {"children"},
    "OPERATOR": {"children"},
    "BETWEEN": {"input", "lower", "upper"},
    "FUNCTION": {"function_name", "schema", "catalog", "children", "arguments", "filter", "order_bys", "distinct",
                 "is_operator", "export_state", "qualified_name", "is_legacy_function_call"},
}
_CASE_KEYS = frozenset({"case_checks", "else_expr"})  # in a view's expression only (safe_view_expression)
_LOCATIONS = ("query_location", "query_location_length")


# ---------------------------------------------------------------- names and values


def check_name(name: object, path: str | None = None) -> str:
    """An input or column name that can be quoted as a DuckDB identifier without changing it."""
    if not isinstance(name, str) or not name:
        raise BadInputError(f"a name must be a non-empty string, got {name!r}", path=path)
    if "\0" in name:
        raise BadInputError(f"name {name!r} holds a NUL character", path=path)
    if len(name) > 1000:
        raise BadInputError(f"name of {len(name)} characters (at most 1000)", path=path)
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise BadInputError(f"name {name!r} is not valid Unicode", path=path) from None
    return name


_COLUMN_TYPES = frozenset({"BIGINT", "INTEGER", "DOUBLE", "VARCHAR", "BOOLEAN"})


def check_inputs(scenario: Scenario) -> None:
    """Every name and column type of the joined inputs, before any of them is written into SQL."""
    index = {spec.name: i for i, spec in enumerate(scenario.inputs)}
    for spec in scenario.chain:
        where = f"inputs[{index.get(spec.name, '?')}]"
        try:
            hash(spec)
        except TypeError:  # a spec built around the model's checks may hold lists
            _check_spec.__wrapped__(spec, where)
        else:
            _check_spec(spec, where)


@functools.lru_cache(maxsize=1024)
def _check_spec(spec: InputSpec, where: str) -> None:
    """One input's names and types (cached: property runs check the same few specs once per example)."""
    check_name(spec.name, f"{where}.name")
    for j, column in enumerate(spec.columns):
        if not isinstance(column, tuple) or len(column) != 2:
            raise BadInputError(f"a column is a (name, type) pair, got {column!r}", path=f"{where}.columns[{j}]")
        check_name(column[0], f"{where}.columns[{j}]")
        if column[1] not in _COLUMN_TYPES:
            raise BadInputError(f"type {column[1]!r} is not supported by the oracle "
                                f"({', '.join(sorted(_COLUMN_TYPES))})", path=f"{where}.columns[{j}]")


# ---------------------------------------------------------------- conditions


def safe_conditions(scenario: Scenario) -> list[str]:
    """Each join step's condition, checked and regenerated.

    Step i sees its right input and the inputs before it, except those joined
    by SEMI/ANTI (their columns are not part of the join's output).
    """
    key: tuple[tuple[InputSpec, ...], JoinSpec] | None  # None: not cached
    key = (scenario.inputs, scenario.join)
    try:
        cached = _CHECKED_JOINS.get(key)
    except TypeError:  # unhashable parts (a model built around its own checks): no cache
        key, cached = None, None
    if cached is not None:
        return list(cached)
    check_inputs(scenario)
    chain, conditions, types = scenario.chain, scenario.join.conditions, scenario.join.types
    if not isinstance(conditions, (tuple, list)) or len(conditions) != len(chain) - 1:
        raise BadInputError(f"{len(chain) - 1} join steps need as many conditions", path="join.conditions")
    out, visible = [], [chain[0]]
    for i, (right, cond) in enumerate(zip(chain[1:], conditions, strict=False)):
        out.append(safe_condition(cond, (*visible, right), f"join.conditions[{i}]"))
        if i < len(types) and types[i] not in ("semi", "anti"):
            visible.append(right)
    if key is not None:
        if len(_CHECKED_JOINS) > 1024:
            _CHECKED_JOINS.clear()
        _CHECKED_JOINS[key] = tuple(out)
    return out


# (inputs, join) -> the regenerated conditions: an oracle query checks the same join several times
_CHECKED_JOINS: dict[tuple, tuple[str, ...]] = {}


def safe_condition(sql: object, scope: Sequence[InputSpec], path: str) -> str:
    """The condition as DuckDB regenerates it from its checked tree, for ``ON (...)``; BadInputError if rejected.

    ``scope`` is the inputs the join step sees (the chain up to and including
    its right input); only their columns may be referenced.
    """
    if not isinstance(sql, str):
        raise BadInputError(f"a condition must be a string, got {type(sql).__name__}", path=path)
    key = tuple((spec.name, spec.column_names) for spec in scope)
    try:
        return _safe_condition(sql, key)
    except BadInputError as exc:
        raise BadInputError(exc.detail, path=path) from None


def safe_view_expression(sql: object, scope: Sequence[InputSpec], path: str) -> str:
    """A view's expression (a projection, a filter, a SELECT item, a WHERE) checked and regenerated as a
    condition is, with CASE and IF also allowed; BadInputError naming `path` if rejected."""
    if not isinstance(sql, str):
        raise BadInputError(f"an expression must be a string, got {type(sql).__name__}", path=path)
    key = tuple((spec.name, spec.column_names) for spec in scope)
    try:
        return _safe_condition(sql, key, views=True)
    except BadInputError as exc:
        raise BadInputError(exc.detail, path=path) from None


def _reject(message: str) -> BadInputError:
    return BadInputError(message)


@functools.lru_cache(maxsize=4096)
def _safe_condition(sql: str, scope: tuple[tuple[str, tuple[str, ...]], ...], views: bool = False) -> str:
    if len(sql) > MAX_CONDITION_CHARS:
        raise _reject(f"condition of {len(sql)} characters (at most {MAX_CONDITION_CHARS})")
    if "\0" in sql:
        raise _reject("condition holds a NUL character (DuckDB would read only the text before it)")
    try:
        sql.encode("utf-8")
    except UnicodeEncodeError:
        raise _reject("condition is not valid Unicode (a lone surrogate)") from None
    statement = _parse_select(sql, what=f"condition {_short(sql)}")
    (expr,) = statement["node"]["select_list"]
    checked = _Checker(scope, views=views).check(expr, 0)
    return _regenerate(statement, checked)


def _short(sql: str) -> str:
    return repr(sql if len(sql) <= 200 else sql[:200] + "…")


def _parse_select(sql: str, what: str, width: int = 1) -> dict:
    """The one statement of ``SELECT <sql>``; it must be a plain SELECT of ``width`` expressions and nothing else."""
    text = run_query("SELECT json_serialize_sql(?)", params=["SELECT " + sql])[0][0]
    try:
        doc = json.loads(text)
    except RecursionError:
        raise _reject(f"{what} is nested too deeply") from None
    if doc.get("error"):
        message = str(doc.get("error_message", "")).splitlines()[0] if doc.get("error_message") else "error"
        raise _reject(f"{what} does not parse: {message}")
    statements = doc.get("statements") or []
    if len(statements) != 1:
        raise _reject(f"{what} is not one expression (it holds {len(statements)} statements)")
    statement = statements[0]
    node = statement.get("node", {})
    if _strip({**statement, "node": {**node, "select_list": None}}) != _reference_statement() \
            or len(node.get("select_list") or ()) != width:
        raise _reject(f"{what} is not one expression (FROM, WHERE, a set operation, a parameter, an alias or a second "
                      "expression)")
    return statement


@functools.lru_cache(maxsize=1)
def _reference_statement() -> Any:
    doc = json.loads(run_query("SELECT json_serialize_sql('SELECT NULL')")[0][0])
    statement = doc["statements"][0]
    return _strip({**statement, "node": {**statement["node"], "select_list": None}})


def _strip(node: Any) -> Any:
    """The tree without source positions (they differ between the raw and the regenerated text)."""
    if isinstance(node, dict):
        return {k: _strip(v) for k, v in node.items() if k not in _LOCATIONS}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def _regenerate(statement: dict, expr: dict) -> str:
    """DuckDB's SQL for the checked tree; parsed back in its place in the query, it must be the same tree."""
    doc = {"error": False, "statements": [{**statement, "node": {**statement["node"], "select_list": [expr]}}]}
    text = run_query("SELECT json_deserialize_sql(?::JSON)", params=[json.dumps(doc)])[0][0]
    if not isinstance(text, str) or not text.startswith("SELECT "):
        raise _reject(f"condition could not be regenerated ({text!r})")
    regenerated = text[len("SELECT "):]
    # In the query it stands as ON (\n...\n) followed by more SQL: parse it so, with an expression after it.
    again = _parse_select(f"(\n{regenerated}\n), NULL", what="the regenerated condition", width=2)
    first, second = again["node"]["select_list"]
    if _strip(first) != _strip(expr) or _strip(second) != _strip(_reference_null()):
        raise _reject(f"condition does not survive regeneration unchanged ({regenerated!r})")
    return regenerated


@functools.lru_cache(maxsize=1)
def _reference_null() -> Any:
    doc = json.loads(run_query("SELECT json_serialize_sql('SELECT NULL')")[0][0])
    return doc["statements"][0]["node"]["select_list"][0]


class _Checker:
    """Walks one condition's tree against the allow-lists; returns a copy with column references resolved."""

    def __init__(self, scope: tuple[tuple[str, tuple[str, ...]], ...], *, views: bool = False) -> None:
        self.scope = dict(scope)
        self.views = views  # a view's expression: CASE and IF allowed too
        self._epoch_arg = False  # the next function is a date part's argument: epoch_ms is allowed there

    def check(self, node: Any, depth: int) -> dict:
        if depth > MAX_DEPTH:
            raise _reject(f"condition is nested deeper than {MAX_DEPTH} levels")
        if not isinstance(node, dict):
            raise _reject("condition has an unexpected shape")
        cls, typ = node.get("class"), node.get("type")
        allowed = _KEYS.get(str(cls)) if cls != "CASE" or not self.views else _CASE_KEYS
        if allowed is None:
            raise _reject(f"{_describe(cls, typ)} is not allowed in a condition")
        extra = set(node) - _COMMON - allowed - {"query_location_length"}
        if extra:
            raise _reject(f"{_describe(cls, typ)} with {', '.join(sorted(extra))} is not allowed in a condition")
        if node.get("alias"):
            raise _reject(f"an alias ({node['alias']!r}) is not allowed in a condition")
        out = copy.copy(node)
        depth += 1
        if cls == "COLUMN_REF":
            out["column_names"] = list(self.column(node.get("column_names")))
        elif cls == "CONSTANT":
            out = self.constant(node)
        elif cls == "CAST":
            name, modified = cast_target(node)
            target = CAST_TYPES.get(name.upper())
            if node.get("try_cast") or target is None or (modified and target != "VARCHAR"):
                raise _reject(f"a cast to {name or '?'} is not allowed in a condition "
                              f"(allowed: {', '.join(sorted(set(CAST_TYPES.values())))})")
            out["child"] = self.check(node.get("child"), depth)
        elif cls == "COMPARISON":
            if typ not in COMPARISONS:
                raise _reject(f"comparison {typ} is not allowed in a condition")
            out["left"], out["right"] = self.check(node.get("left"), depth), self.check(node.get("right"), depth)
        elif cls in ("CONJUNCTION", "OPERATOR"):
            if typ not in (CONJUNCTIONS if cls == "CONJUNCTION" else OPERATORS):
                raise _reject(f"{_describe(cls, typ)} is not allowed in a condition")
            out["children"] = self.children(node.get("children"), depth)
        elif cls == "BETWEEN":
            for part in ("input", "lower", "upper"):
                out[part] = self.check(node.get(part), depth)
        elif cls == "CASE":
            checks = node.get("case_checks")
            if not isinstance(checks, list) or not checks or not all(
                    isinstance(c, dict) and set(c) == {"when_expr", "then_expr"} for c in checks):
                raise _reject("CASE has an unexpected shape")
            out["case_checks"] = [{part: self.check(c[part], depth) for part in ("when_expr", "then_expr")}
                                  for c in checks]
            out["else_expr"] = self.check(node.get("else_expr"), depth)
        else:
            out = self.function(node, depth)
        return out

    def children(self, nodes: Any, depth: int) -> list[dict]:
        if not isinstance(nodes, list) or not nodes:
            raise _reject("condition has an operator without operands")
        return [self.check(c, depth) for c in nodes]

    def column(self, parts: Any) -> tuple[str, str]:
        """(input, column) as declared; DuckDB matches identifiers case-insensitively, so do we."""
        if not isinstance(parts, list) or not all(isinstance(p, str) for p in parts) or not 1 <= len(parts) <= 2:
            raise _reject(f"column reference {parts!r} is not input.column or column")
        if len(parts) == 2:
            name = _pick(parts[0], list(self.scope))
            if name is None:
                raise _reject(f"unknown input {parts[0]!r} (this join step sees {', '.join(self.scope)})")
            column = _pick(parts[1], self.scope[name])
            if column is None:
                raise _reject(f"input {name!r} has no column {parts[1]!r}")
            return name, column
        hits = [(n, c) for n, cols in self.scope.items() if (c := _pick(parts[0], cols)) is not None]
        if len(hits) != 1:
            raise _reject(f"{'ambiguous' if hits else 'unknown'} column {parts[0]!r} "
                          f"(this join step sees {', '.join(self.scope)})")
        return hits[0]

    def constant(self, node: dict) -> dict:
        value = node.get("value")
        if isinstance(value, dict):  # DuckDB 1.x: a typed value (read here, not by engine.duckdb_ast)
            type_id = str((value.get("type") or {}).get("id"))
            if type_id not in _CONSTANT_TYPE_IDS:
                raise _reject(f"a {type_id} constant is not allowed in a condition")
            text = value.get("value") if type_id == "VARCHAR" else ""
        else:  # DuckDB 2.x: the literal's kind and text
            kind, text = literal(node)
            if kind not in _CONSTANT_KINDS:
                raise _reject(f"a {kind} constant is not allowed in a condition")
        if isinstance(text, str) and "\0" in text:
            raise _reject("a string constant holding a NUL character is not allowed in a condition")
        if isinstance(value, dict) and value.get("type", {}).get("id") == "BOOLEAN" and not value.get("is_null"):
            # DuckDB 1.x writes a BOOLEAN constant back as true/false, which it parses as CAST('t' AS BOOLEAN):
            # write it in that form from the start.
            return _cast_of_text("t" if value["value"] else "f", "BOOLEAN")
        if isinstance(value, dict) and value.get("type", {}).get("id") in ("DOUBLE", "FLOAT"):
            # DuckDB 1.x writes a DOUBLE literal back without its exponent (1e3 as 1000.0, a DECIMAL):
            # write it as CAST('<shortest repr>' AS DOUBLE), which is the same DOUBLE value.
            number = float(value["value"])
            text = repr(number) if not math.isnan(number) else "nan"
            return _cast_of_text(text, "DOUBLE")
        return copy.copy(node)

    def function(self, node: dict, depth: int) -> dict:
        if "qualified_name" in node:  # DuckDB 2.0.1: the called name as a path, besides function_name
            qualified = node["qualified_name"]
            path = qualified.get("path") if isinstance(qualified, dict) and set(qualified) == {"path"} else None
            if not isinstance(path, list) or not path or not all(isinstance(p, str) for p in path):
                raise _reject(f"a function call named {qualified!r} has an unexpected shape")
            if path[-1].lower() != str(node.get("function_name", "")).lower():
                raise _reject(f"a function call names {path[-1]!r} and {node.get('function_name')!r}")
        name, qualifier = function_name(node)
        name = name.lower()
        orders = (node.get("order_bys") or {}).get("orders") if isinstance(node.get("order_bys"), dict) \
            else node.get("order_bys")
        epoch_arg, self._epoch_arg = self._epoch_arg, False
        # a time attribute parsed from text (model/time_text.py): epoch_ms in a view, not as a date part's argument
        text_time = self.views and name == "epoch_ms" and not epoch_arg
        if name == "epoch_ms" and not epoch_arg and not text_time:
            raise _reject("epoch_ms is allowed only as the argument of year, quarter, month or day in a condition, "
                          "or as a projected time attribute")
        if name in DATE_PARTS:  # `quarter(epoch_ms(<integer>))`: the engine's one date-part shape (condition_dates)
            args = function_arguments(node)
            if len(args) != 1 or args[0].get("class") != "FUNCTION" or function_name(args[0])[0].lower() != "epoch_ms" \
                    or len(function_arguments(args[0])) != 1:
                raise _reject(f"{name} is allowed in a condition only of epoch_ms(<integer>)")
            self._epoch_arg = True
        elif name not in FUNCTIONS and name != "epoch_ms" and not (self.views and name == "if"):
            raise _reject(f"function {name!r} is not allowed in a condition (allowed: {', '.join(sorted(FUNCTIONS))}, "
                          f"and {', '.join(DATE_PARTS)} of epoch_ms)")
        if node.get("is_legacy_function_call"):
            raise _reject(f"function {name!r} called in DuckDB's legacy form is not allowed in a condition")
        if qualifier or node.get("distinct") or node.get("filter") is not None \
                or orders or node.get("export_state"):
            raise _reject(f"function {name!r} with a schema, DISTINCT, FILTER, ORDER BY or EXPORT_STATE "
                          "is not allowed in a condition")
        out = copy.copy(node)
        args = function_arguments(node)
        if text_time:
            cast = args[0] if len(args) == 1 and isinstance(args[0], dict) else {}
            if cast.get("class") != "CAST" or cast.get("try_cast") or cast_target(cast) != ("TIMESTAMP", False) \
                    or set(cast) - _COMMON - _KEYS["CAST"] - {"query_location_length"} or cast.get("alias"):
                raise _reject("epoch_ms is allowed in a view as epoch_ms(CAST(text AS TIMESTAMP)) only")
            checked = [{**copy.copy(cast), "child": self.check(cast.get("child"), depth + 1)}]
        else:
            checked = self.children(args, depth)
        if "arguments" in node:
            out["arguments"] = [{**a, "expression": c} for a, c in zip(node["arguments"], checked, strict=False)]
            if any(a.get("name") for a in node["arguments"]):
                raise _reject(f"named arguments are not allowed in a condition ({name})")
        else:
            out["children"] = checked
        return out


def _cast_of_text(text: str, type_id: str) -> dict:
    """The tree of CAST('<text>' AS <type_id>) in DuckDB 1.x's serialization."""
    return {"class": "CAST", "type": "OPERATOR_CAST", "alias": "",
            "child": {"class": "CONSTANT", "type": "VALUE_CONSTANT", "alias": "",
                      "value": {"type": {"id": "VARCHAR", "type_info": None}, "is_null": False, "value": text}},
            "cast_type": {"id": type_id, "type_info": None}, "try_cast": False}


def _pick(name: str, names: Sequence[str]) -> str | None:
    if name in names:
        return name
    folded = [n for n in names if n.casefold() == name.casefold()]
    return folded[0] if len(folded) == 1 else None


def _describe(cls: object, typ: object) -> str:
    kinds = {"SUBQUERY": "a subquery", "WINDOW": "a window function", "PARAMETER": "a parameter",
             "STAR": "a star expression", "LAMBDA": "a lambda", "CASE": "CASE",
             "POSITIONAL_REFERENCE": "a positional reference", "COLLATE": "COLLATE"}
    return kinds.get(str(cls), f"expression {cls}/{typ}")
