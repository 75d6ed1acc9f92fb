"""Reading DuckDB's serialized SQL AST (`json_serialize_sql`) the same way across versions.

DuckDB 1.x and 2.x write some nodes differently. The condition compiler
(engine/condition.py) and the oracle's guard (oracle/guard.py) read nodes through
these functions, so they run on DuckDB 1.5 and 2.x alike.
"""

from __future__ import annotations

import functools
from decimal import Decimal
from typing import Any

import duckdb

# json_serialize_sql writes constants, casts and function arguments differently in DuckDB 1.x
# (typed values; TRUE as CAST('t' AS BOOLEAN); DECIMAL as a scaled integer; type
# names already resolved) and 2.x (the literal's kind and text; type names as
# written; arguments wrapped with their names). These readers give the compiler one
# view of both.
_INTEGER_IDS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
                "UBIGINT", "UHUGEINT")


def literal(node: dict) -> tuple[str, str]:
    """(kind, text) of a CONSTANT node, in DuckDB 2's terms (INTEGER, NUMERIC, STRING, BOOLEAN, NULL_LITERAL)."""
    if "literal" in node:
        return node["literal"]["kind"], node["literal"]["text"]
    value = node["value"]
    tid = value["type"]["id"]
    if value.get("is_null"):
        return "NULL_LITERAL", ""
    raw = value["value"]
    if tid in _INTEGER_IDS:
        number = raw["upper"] * 2**64 + raw["lower"] if isinstance(raw, dict) else raw
        return "INTEGER", str(number)
    if tid == "DECIMAL":  # wider than 18 digits, the scaled integer is a hugeint {upper, lower}
        number = raw["upper"] * 2**64 + raw["lower"] if isinstance(raw, dict) else raw
        return "NUMERIC", str(Decimal(number).scaleb(-value["type"]["type_info"]["scale"]))
    if tid in ("DOUBLE", "FLOAT"):  # written with an exponent, as SQL writes DOUBLE literals (1e3), unlike DECIMAL
        text = repr(float(raw))
        return "NUMERIC", text if "e" in text or "n" in text else text + "e0"
    if tid == "VARCHAR":
        return "STRING", raw
    if tid == "BOOLEAN":
        return "BOOLEAN", "true" if raw else "false"
    return tid, str(raw)


def function_arguments(node: dict) -> list[dict]:
    """A FUNCTION node's argument expressions (2.x wraps each in {"name", "expression"})."""
    if "arguments" in node:
        return [a["expression"] for a in node["arguments"]]
    return list(node.get("children", []))


def function_name(node: dict) -> tuple[str, tuple[str, ...]]:
    """(name, qualifier) of a FUNCTION node: `main.lower(x)` is ("lower", ("main",)), `x + 1` is ("+", ()).

    DuckDB 2.0.1 writes the called name as a path (`qualified_name`) besides the
    1.x fields `function_name`, `schema` and `catalog`; 1.x has those fields only.
    The qualifier is every non-empty part before the name, from either form.
    """
    legacy = (str(node.get("catalog") or ""), str(node.get("schema") or ""))
    qualified = node.get("qualified_name")
    if isinstance(qualified, dict) and isinstance(qualified.get("path"), list) and qualified["path"]:
        *parts, last = (str(p) for p in qualified["path"])
        qualifier = tuple(p for p in (*parts, *legacy) if p)
        return last, tuple(dict.fromkeys(qualifier))
    return str(node.get("function_name", "")), tuple(p for p in legacy if p)


def cast_target(node: dict) -> tuple[str, bool]:
    """(type name, whether it carries modifiers or children) of a CAST node's target."""
    if "type_expr" in node:
        texpr = node["type_expr"]
        return str(texpr.get("type_name", "")), bool(texpr.get("children"))
    ctype = node["cast_type"]
    return str(ctype.get("id", "")), ctype.get("type_info") is not None


def unfold_not_in(node: Any) -> Any:
    """DuckDB 1.x parses `x NOT IN (..)` as one COMPARE_NOT_IN node; 2.x as NOT over COMPARE_IN, which we compile."""
    if isinstance(node, list):
        return [unfold_not_in(v) for v in node]
    if not isinstance(node, dict):
        return node
    node = {k: unfold_not_in(v) for k, v in node.items()}
    if node.get("type") == "COMPARE_NOT_IN":
        inner = dict(node, type="COMPARE_IN")
        return {"class": "OPERATOR", "type": "OPERATOR_NOT", "alias": "", "children": [inner]}
    return node


@functools.lru_cache(maxsize=1)
def min_mod_minus_one_overflows() -> bool:
    """Whether the installed DuckDB fails `MIN % -1` as an overflow (1.x) or answers 0 (2.0.1).

    The engine's conditions and the Spark oracle's translation follow the
    installed DuckDB, which the oracle answers with. Asked of DuckDB itself,
    once per process, rather than read from its version number.
    """
    try:
        duckdb.connect(":memory:").execute("SELECT (-9223372036854775808)::BIGINT % -1").fetchall()
    except duckdb.Error:
        return True
    return False
