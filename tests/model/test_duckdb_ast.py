"""Reading json_serialize_sql nodes of DuckDB 1.x and 2.x the same way.

A test run has one DuckDB installed (1.5 or 2.x), so the other version's shapes
are written out here by hand, as DuckDB 1.5.6 and 2.0.0 printed them; the
live test reads whatever the installed DuckDB prints.
"""

from __future__ import annotations

import json
import math

import duckdb
import pytest

from converge.engine.condition import compile_expression3
from converge.engine.model.duckdb_ast import (
    cast_target,
    function_arguments,
    literal,
    min_mod_minus_one_overflows,
    unfold_not_in,
)
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import InputSpec

C = InputSpec("c", (("k", "BIGINT"), ("y", "INTEGER"), ("name", "VARCHAR")))


def _v1_constant(type_id: str, value, type_info=None, is_null: bool = False) -> dict:
    body = {"type": {"id": type_id, "type_info": type_info}, "is_null": is_null}
    if not is_null:
        body["value"] = value
    return {"class": "CONSTANT", "type": "VALUE_CONSTANT", "value": body}


def _v2_constant(kind: str, text: str) -> dict:
    return {"class": "CONSTANT", "type": "VALUE_CONSTANT", "literal": {"kind": kind, "text": text}}


COLUMN = {"class": "COLUMN_REF", "type": "COLUMN_REF", "column_names": ["x"]}


@pytest.mark.parametrize(("node", "expected"), [
    (_v1_constant("INTEGER", -5), ("INTEGER", "-5")),
    (_v1_constant("BIGINT", 2**40), ("INTEGER", str(2**40))),
    (_v1_constant("HUGEINT", {"upper": 5, "lower": 7766279631452241919}), ("INTEGER", "99999999999999999999")),
    (_v1_constant("DECIMAL", 15, {"type": "DECIMAL_TYPE_INFO", "width": 2, "scale": 1}), ("NUMERIC", "1.5")),
    (_v1_constant("DECIMAL", -250, {"type": "DECIMAL_TYPE_INFO", "width": 3, "scale": 2}), ("NUMERIC", "-2.50")),
    (_v1_constant("DOUBLE", 1000.0), ("NUMERIC", "1000.0e0")),
    (_v1_constant("DOUBLE", 1e300), ("NUMERIC", "1e+300")),
    (_v1_constant("VARCHAR", "it's"), ("STRING", "it's")),
    (_v1_constant("BOOLEAN", True), ("BOOLEAN", "true")),
    (_v1_constant("NULL", None, is_null=True), ("NULL_LITERAL", "")),
    (_v2_constant("NUMERIC", "1.5"), ("NUMERIC", "1.5")),
    (_v2_constant("NULL_LITERAL", ""), ("NULL_LITERAL", "")),
])
def test_constants_of_both_versions_read_alike(node: dict, expected: tuple[str, str]) -> None:
    assert literal(node) == expected


def test_function_arguments_of_both_versions() -> None:
    one = _v1_constant("INTEGER", 1)
    v1 = {"class": "FUNCTION", "function_name": "+", "children": [COLUMN, one]}
    v2 = {"class": "FUNCTION", "function_name": "+",
          "arguments": [{"name": "", "expression": COLUMN}, {"name": "", "expression": one}]}
    assert function_arguments(v1) == function_arguments(v2) == [COLUMN, one]


@pytest.mark.parametrize(("node", "expected"), [
    ({"class": "CAST", "child": COLUMN, "cast_type": {"id": "BIGINT", "type_info": None}}, ("BIGINT", False)),
    ({"class": "CAST", "child": COLUMN,
      "cast_type": {"id": "DECIMAL", "type_info": {"type": "DECIMAL_TYPE_INFO", "width": 10, "scale": 2}}},
     ("DECIMAL", True)),
    ({"class": "CAST", "child": COLUMN, "type_expr": {"type_name": "int8"}}, ("int8", False)),
    ({"class": "CAST", "child": COLUMN, "type_expr": {"type_name": "VARCHAR", "children": [{"x": 1}]}},
     ("VARCHAR", True)),
])
def test_cast_targets_of_both_versions(node: dict, expected: tuple[str, bool]) -> None:
    assert cast_target(node) == expected


def test_not_in_becomes_not_over_in_at_any_depth() -> None:
    not_in = {"class": "OPERATOR", "type": "COMPARE_NOT_IN", "children": [COLUMN, _v2_constant("INTEGER", "1")]}
    tree = {"class": "CONJUNCTION", "type": "CONJUNCTION_AND", "children": [not_in, COLUMN]}
    out = unfold_not_in(tree)
    negated = out["children"][0]
    assert negated["type"] == "OPERATOR_NOT"
    assert negated["children"][0]["type"] == "COMPARE_IN"
    assert negated["children"][0]["children"] == not_in["children"]
    assert tree["children"][0]["type"] == "COMPARE_NOT_IN"  # the input is not modified


@pytest.mark.parametrize(("sql", "expected"), [
    ("42", ("INTEGER", "42")),
    ("'a''b'", ("STRING", "a'b")),
    ("NULL", ("NULL_LITERAL", "")),
])
def test_the_installed_duckdb_reads_through(sql: str, expected: tuple[str, str]) -> None:
    doc = json.loads(duckdb.connect().execute("SELECT json_serialize_sql(?)", [f"SELECT {sql}"]).fetchone()[0])
    assert literal(doc["statements"][0]["node"]["select_list"][0]) == expected


# What DuckDB itself answers for MIN % -1, by version (checked by hand on 1.5.6 and 2.0.1).
MIN_MOD_OVERFLOWS = {"1.5": True, "2.0": False}


def test_min_mod_minus_one_is_asked_of_the_installed_duckdb() -> None:
    series = ".".join(duckdb.__version__.split(".")[:2])
    assert series in MIN_MOD_OVERFLOWS, f"DuckDB {duckdb.__version__}: add what it answers for MIN % -1 here"
    assert min_mod_minus_one_overflows() is MIN_MOD_OVERFLOWS[series]


@pytest.mark.parametrize("sql", ["c.k % -1", "c.y % -1"])
def test_the_engine_computes_min_mod_minus_one_as_the_installed_duckdb(sql: str) -> None:
    row = (-(2**63), -(2**31), "")
    query = f"SELECT {sql} FROM (SELECT ?::BIGINT AS k, ?::INTEGER AS y, ?::VARCHAR AS \"name\") c"
    if MIN_MOD_OVERFLOWS[".".join(duckdb.__version__.split(".")[:2])]:
        with pytest.raises(duckdb.Error):
            duckdb.connect().execute(query, list(row)).fetchall()
        with pytest.raises(BadInputError, match="overflow"):
            compile_expression3(sql, [[C]])(row)
    else:
        assert duckdb.connect().execute(query, list(row)).fetchone()[0] == 0
        assert compile_expression3(sql, [[C]])(row) == 0


def test_the_oracle_divides_by_zero_as_duckdb_1x_on_every_version() -> None:
    """DuckDB 2.0.1 fails `5 // 0`; the oracle's connection turns that off, so 1.x's NULL holds on both."""
    from converge.oracle.query import run_query

    (row,) = run_query("SELECT x // 0, x % 0, d // 0, d % 0 FROM (SELECT 5::BIGINT AS x, 5.0::DOUBLE AS d)")
    assert row[:3] == (None, None, None) and math.isnan(row[3])
