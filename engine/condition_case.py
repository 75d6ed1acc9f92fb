"""CASE and IF in a view's expressions (a projection or a SELECT list), compiled as the rest of a condition.

Flink's `IF(c, a, b)` and `CASE WHEN ... THEN ... ELSE ... END` both become one
conditional: the first WHEN that is TRUE (not FALSE, not NULL) picks its THEN,
otherwise the ELSE (NULL when absent). Branches are evaluated lazily, as in
DuckDB and Flink's generated code, so an error in a branch not taken does not
fire. The result type is the common type of the branches (numbers widen to the
widest; mixed families are a type error, engine/condition_compiler.py `common`).
Join conditions do not take them: the oracle's guard and the adapters' plan
tree read conditions without CASE (engine/condition_tree.py).
"""

from __future__ import annotations

from typing import Any

from converge.engine.model.duckdb_ast import function_arguments

__all__ = ["case_of_if", "case_parts"]


def case_of_if(node: dict) -> dict:
    """IF(c, a, b) as the CASE node DuckDB itself binds it to."""
    args = function_arguments(node)
    if len(args) != 3:
        return {"class": "CASE", "type": "CASE_EXPR", "alias": "", "case_checks": None, "_arity": len(args)}
    cond, then, other = args
    return {"class": "CASE", "type": "CASE_EXPR", "alias": "", "query_location": node.get("query_location"),
            "case_checks": [{"when_expr": cond, "then_expr": then}], "else_expr": other}


def case_parts(comp: Any, node: dict, not_constant: object) -> tuple[str, str, list[Any]]:
    """(Python source, SQL type, the branches' compiled values) of a CASE node, for the compiler
    (engine/condition_compiler.py) `comp`; `not_constant` is its marker of a value known only at run time."""
    checks = node.get("case_checks")
    if not isinstance(checks, list) or not checks:
        raise comp.error(f"type error: IF takes 3 arguments, got {node.get('_arity', '?')}", node)
    for check in checks:
        comp.need_boolean(comp.value(check["when_expr"]), check["when_expr"])
    thens = [comp.value(check["then_expr"]) for check in checks]
    other = node.get("else_expr")
    last = comp.value(other) if other is not None else comp.const(None, "NULL")
    branches = [*thens, last]
    rtype = comp.common(branches, node, "CASE")
    body = _as(comp, last, rtype, not_constant)
    for check, then in zip(reversed(checks), reversed(thens), strict=True):
        body = f"({_as(comp, then, rtype, not_constant)} if {comp.truth(check['when_expr'], True)} else {body})"
    return body, rtype, branches


def _as(comp: Any, v: Any, rtype: str, not_constant: object) -> str:
    """A branch's value in the CASE's type (an integer branch of a DOUBLE CASE is a float)."""
    if rtype != "DOUBLE" or v.type not in ("INTEGER", "BIGINT"):
        return v.src
    if v.const is not not_constant:
        return "None" if v.const is None else comp.lit(float(v.const))
    t = comp.tmp()
    return f"(None if ({t} := {v.src}) is None else float({t}))"
