"""A scenario's join as data: the `plan` object of adapter protocol version 2 (docs/adapter-protocol.md).

An adapter that received only SQL text had to parse DuckDB's dialect and
re-implement its three-valued logic, and nobody could tell its parser's
mistakes from its engine's. Here converge does the parsing once, with the
same code its own engine uses: keys and residual come from
engine/condition.py `split_condition`, and every node's `type` is the type
engine/condition_compiler.py infers, so the tree and converge's engine can
never disagree about what a condition means.

Constant subexpressions arrive folded to one literal (the value converge's
engine computes for them, DuckDB's own for casts of literals), except
non-finite DOUBLE constants, which JSON cannot hold: they arrive as a cast of
the text 'nan', 'inf' or '-inf' to DOUBLE.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from typing import Any

from converge.engine.condition import split_condition
from converge.engine.condition_compiler import _NC, Compiler, parse
from converge.engine.model.duckdb_ast import function_arguments
from converge.engine.model.errors import InternalError
from converge.engine.model.scenario import InputSpec, JoinSpec, Scenario, time_index

__all__ = ["CALL_OPS", "condition_plan", "expression_tree"]

_COMPARE = {"COMPARE_EQUAL": "=", "COMPARE_NOTEQUAL": "<>", "COMPARE_LESSTHAN": "<",
            "COMPARE_GREATERTHAN": ">", "COMPARE_LESSTHANOREQUALTO": "<=",
            "COMPARE_GREATERTHANOREQUALTO": ">=", "COMPARE_NOT_DISTINCT_FROM": "is_not_distinct_from",
            "COMPARE_DISTINCT_FROM": "is_distinct_from"}
_FUNCTIONS = {"+": "+", "-": "-", "*": "*", "/": "/", "//": "//", "%": "%", "abs": "abs", "||": "||",
              "length": "length", "lower": "lower", "upper": "upper"}

# The closed set of call ops (docs/adapter-protocol.md, "Expression trees"); a test checks the docs list them.
CALL_OPS = ("and", "or", "not", "=", "<>", "<", "<=", ">", ">=", "is_not_distinct_from", "is_distinct_from",
            "is_null", "is_not_null", "+", "-", "neg", "*", "/", "//", "%", "abs", "||", "length", "lower",
            "upper", "coalesce", "cast")


def _call(op: str, args: list[dict], type_: str) -> dict:
    return {"node": "call", "op": op, "args": args, "type": type_}


def _literal(value: Any, type_: str) -> dict:
    """A literal node; a non-finite DOUBLE (not JSON) as the cast of its text."""
    if value is None:
        return {"node": "literal", "value": None, "type": type_}
    if type_ == "DOUBLE":
        value = float(value)
        if not math.isfinite(value):
            text = "nan" if value != value else "inf" if value > 0 else "-inf"
            return _call("cast", [{"node": "literal", "value": text, "type": "VARCHAR"}], "DOUBLE")
    elif type_ in ("INTEGER", "BIGINT"):
        value = int(value)
    elif type_ == "BOOLEAN":
        value = bool(value)
    elif type_ == "VARCHAR":
        value = str(value)
    else:
        raise InternalError(f"a non-NULL constant of type {type_}: {value!r}")
    return {"node": "literal", "value": value, "type": type_}


class _Translator:
    """DuckDB AST -> expression tree, asking the condition compiler for every node's type and constness."""

    def __init__(self, sql: str, layout: Sequence[Sequence[InputSpec]]) -> None:
        self.sql = sql
        self.doc, self.root = parse(sql)
        self.comp = Compiler(sql, self.doc, layout)

    def unsupported(self, node: dict) -> InternalError:
        return InternalError(f"condition {self.sql!r}: the compiler accepts a {node.get('class')}/{node.get('type')} "
                             f"node the expression tree cannot express")

    def tree(self, node: dict) -> dict:
        v = self.comp.value(node)
        if v.const is not _NC:
            return _literal(v.const, v.type)
        cls, typ = node.get("class"), node.get("type")
        if cls == "COLUMN_REF":
            _, _, ctype, ref = self.comp.scope.resolve(node["column_names"])
            return {"node": "column", "input": ref.input, "column": ref.column, "type": ctype}
        if cls == "CONJUNCTION" and typ in ("CONJUNCTION_AND", "CONJUNCTION_OR"):
            return _call("and" if typ == "CONJUNCTION_AND" else "or", [self.tree(c) for c in node["children"]],
                         v.type)
        if typ == "OPERATOR_NOT":
            return _call("not", [self.tree(node["children"][0])], v.type)
        if typ in ("OPERATOR_IS_NULL", "OPERATOR_IS_NOT_NULL"):
            return _call("is_null" if typ == "OPERATOR_IS_NULL" else "is_not_null",
                         [self.tree(node["children"][0])], v.type)
        if cls == "COMPARISON" and typ in _COMPARE:
            return _call(_COMPARE[typ], [self.tree(node["left"]), self.tree(node["right"])], v.type)
        if cls == "BETWEEN" or typ == "COMPARE_IN":
            rewritten = Compiler.rewrite(node)
            if len(rewritten["children"]) == 1:  # x IN (a) is x = a
                return self.tree(rewritten["children"][0])
            return self.tree(rewritten)
        if typ == "OPERATOR_COALESCE":
            return _call("coalesce", [self.tree(c) for c in node["children"]], v.type)
        if cls == "CAST":
            child = self.tree(node["child"])
            if child["type"] == v.type:  # a cast to the type it has: nothing to do
                return child
            return _call("cast", [child], v.type)
        if cls == "FUNCTION":
            name = str(node.get("function_name", "")).lower()
            args = [self.tree(a) for a in function_arguments(node)]
            if name == "+" and len(args) == 1:
                return args[0]
            if name == "-" and len(args) == 1:
                return _call("neg", args, v.type)
            if name in _FUNCTIONS:
                return _call(_FUNCTIONS[name], args, v.type)
        raise self.unsupported(node)


@functools.lru_cache(maxsize=4096)
def _tree_text(sql: str, left_inputs: tuple[InputSpec, ...], right_input: InputSpec) -> str:
    translator = _Translator(sql, [left_inputs, (right_input,)])
    return json.dumps(translator.tree(translator.root), allow_nan=False)


def expression_tree(sql: str, left_inputs: Sequence[InputSpec], right_input: InputSpec) -> dict:
    """The expression tree of a boolean condition over left_inputs and right_input (a fresh copy)."""
    return json.loads(_tree_text(sql, tuple(InputSpec(s.name, s.columns) for s in left_inputs),
                                 InputSpec(right_input.name, right_input.columns)))


def _time_ref(spec: InputSpec, ref: str | None, where: str) -> dict:
    """An event-time attribute (`t`, `a.t` or the input's time_column) as {input, column}."""
    return {"input": spec.name, "column": spec.column_names[time_index(spec, ref, where)]}


@functools.lru_cache(maxsize=4096)
def _plan_text(join: JoinSpec, chain: tuple[InputSpec, ...]) -> str:
    left: list[InputSpec] = [chain[0]]
    steps = []
    for right, jtype, cond in zip(chain[1:], join.types, join.conditions, strict=False):
        split = split_condition(cond, left, right)
        keys = [{"left": {"input": k.left.input, "column": k.left.column},
                 "right": {"input": k.right.input, "column": k.right.column}, "null_safe": k.null_safe}
                for k in split.equi_keys]
        residual = None if split.residual_sql is None else expression_tree(split.residual_sql, left, right)
        steps.append({"input": right.name, "type": jtype, "keys": keys, "residual": residual})
        if jtype not in ("semi", "anti"):  # a SEMI/ANTI join's right input does not reach its result
            left.append(right)
    interval = None
    if (iv := join.interval) is not None:
        event = iv.time == "event"  # processing time joins on arrival: no time column
        interval = {"left_time": _time_ref(chain[0], iv.left_time, "join.interval.left_time") if event else None,
                    "right_time": _time_ref(chain[1], iv.right_time, "join.interval.right_time") if event else None,
                    "lower_ms": iv.lower_ms, "upper_ms": iv.upper_ms, "time": iv.time,
                    "allowed_lateness_ms": iv.allowed_lateness_ms}
    return json.dumps({"first": chain[0].name, "steps": steps, "interval": interval}, allow_nan=False)


def condition_plan(scenario: Scenario) -> dict:
    """The v2 `plan` of a scenario's join (a fresh copy; cached by the join's shape, not its events)."""
    chain = tuple(InputSpec(s.name, s.columns, time_column=s.time_column) for s in scenario.chain)
    return json.loads(_plan_text(scenario.join, chain))
