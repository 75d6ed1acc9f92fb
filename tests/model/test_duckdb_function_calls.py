"""DuckDB 1.5 and 2.0 serialize function calls differently; the guard reads both with one allow-list.

The fixtures below are json_serialize_sql's output for ``SELECT <expression>``
(its select_list[0]), copied verbatim from DuckDB 1.5.6 and 2.0.1, so the
suite checks both readers whichever DuckDB is installed; the last test checks
the installed DuckDB's own output.
"""

from __future__ import annotations

import json

import duckdb
import pytest

from converge.engine.model.duckdb_ast import function_name
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import InputSpec
from converge.oracle import guard

V1_5_6 = {
    'a.x + 1':
        '{"class":"FUNCTION","type":"FUNCTION","alias":"","query_location":11,"function_name":"+","schema":"","children":[{"class":"COLUMN_REF","type":"COLUMN_REF","alias":"","query_location":7,"column_names":["a","x"]},{"class":"CONSTANT","type":"VALUE_CONSTANT","alias":"","query_location":13,"value":{"type":{"id":"INTEGER","type_info":null},"is_null":false,"value":1}}],"filter":null,"order_bys":{"type":"ORDER_MODIFIER","orders":[]},"distinct":false,"is_operator":true,"export_state":false,"catalog":""}',
    'lower(a.s)':
        '{"class":"FUNCTION","type":"FUNCTION","alias":"","query_location":7,"function_name":"lower","schema":"","children":[{"class":"COLUMN_REF","type":"COLUMN_REF","alias":"","query_location":13,"column_names":["a","s"]}],"filter":null,"order_bys":{"type":"ORDER_MODIFIER","orders":[]},"distinct":false,"is_operator":false,"export_state":false,"catalog":""}',
    'main.lower(a.s)':
        '{"class":"FUNCTION","type":"FUNCTION","alias":"","query_location":7,"function_name":"lower","schema":"main","children":[{"class":"COLUMN_REF","type":"COLUMN_REF","alias":"","query_location":18,"column_names":["a","s"]}],"filter":null,"order_bys":{"type":"ORDER_MODIFIER","orders":[]},"distinct":false,"is_operator":false,"export_state":false,"catalog":""}',
    'repeat(a.s, 2)':
        '{"class":"FUNCTION","type":"FUNCTION","alias":"","query_location":7,"function_name":"repeat","schema":"","children":[{"class":"COLUMN_REF","type":"COLUMN_REF","alias":"","query_location":14,"column_names":["a","s"]},{"class":"CONSTANT","type":"VALUE_CONSTANT","alias":"","query_location":19,"value":{"type":{"id":"INTEGER","type_info":null},"is_null":false,"value":2}}],"filter":null,"order_bys":{"type":"ORDER_MODIFIER","orders":[]},"distinct":false,"is_operator":false,"export_state":false,"catalog":""}',
}

V2_0_1 = {
    'a.x + 1':
        '{"class":"FUNCTION","type":"FUNCTION","alias":"","query_location":11,"query_location_length":0,"function_name":"+","schema":"","filter":null,"order_bys":{"type":"ORDER_MODIFIER","orders":[]},"distinct":false,"is_operator":true,"export_state":false,"catalog":"","arguments":[{"name":"","expression":{"class":"COLUMN_REF","type":"COLUMN_REF","alias":"","query_location":7,"query_location_length":3,"column_names":["a","x"]}},{"name":"","expression":{"class":"CONSTANT","type":"VALUE_CONSTANT","alias":"","query_location":13,"query_location_length":1,"literal":{"kind":"INTEGER","text":"1"}}}],"qualified_name":{"path":["+"]},"is_legacy_function_call":false}',
    'lower(a.s)':
        '{"class":"FUNCTION","type":"FUNCTION","alias":"","query_location":7,"query_location_length":10,"function_name":"lower","schema":"","filter":null,"order_bys":{"type":"ORDER_MODIFIER","orders":[]},"distinct":false,"is_operator":false,"export_state":false,"catalog":"","arguments":[{"name":"","expression":{"class":"COLUMN_REF","type":"COLUMN_REF","alias":"","query_location":13,"query_location_length":3,"column_names":["a","s"]}}],"qualified_name":{"path":["lower"]},"is_legacy_function_call":false}',
    'main.lower(a.s)':
        '{"class":"FUNCTION","type":"FUNCTION","alias":"","query_location":7,"query_location_length":15,"function_name":"lower","schema":"main","filter":null,"order_bys":{"type":"ORDER_MODIFIER","orders":[]},"distinct":false,"is_operator":false,"export_state":false,"catalog":"","arguments":[{"name":"","expression":{"class":"COLUMN_REF","type":"COLUMN_REF","alias":"","query_location":18,"query_location_length":3,"column_names":["a","s"]}}],"qualified_name":{"path":["main","lower"]},"is_legacy_function_call":false}',
    'repeat(a.s, 2)':
        '{"class":"FUNCTION","type":"FUNCTION","alias":"","query_location":7,"query_location_length":14,"function_name":"repeat","schema":"","filter":null,"order_bys":{"type":"ORDER_MODIFIER","orders":[]},"distinct":false,"is_operator":false,"export_state":false,"catalog":"","arguments":[{"name":"","expression":{"class":"COLUMN_REF","type":"COLUMN_REF","alias":"","query_location":14,"query_location_length":3,"column_names":["a","s"]}},{"name":"","expression":{"class":"CONSTANT","type":"VALUE_CONSTANT","alias":"","query_location":19,"query_location_length":1,"literal":{"kind":"INTEGER","text":"2"}}}],"qualified_name":{"path":["repeat"]},"is_legacy_function_call":false}',
}

SERIALIZED = {"1.5.6": V1_5_6, "2.0.1": V2_0_1}
SCOPE = (("a", ("x", "s")),)

# (name, qualifier) as the SQL text says, and whether the guard lets the call into a condition
EXPECTED = {
    "a.x + 1": (("+", ()), None),
    "lower(a.s)": (("lower", ()), None),
    "main.lower(a.s)": (("lower", ("main",)), "with a schema"),
    "repeat(a.s, 2)": (("repeat", ()), "function 'repeat' is not allowed"),
}
CASES = [(version, sql) for version in SERIALIZED for sql in EXPECTED]


def _node(version: str, sql: str) -> dict:
    return json.loads(SERIALIZED[version][sql])


@pytest.mark.parametrize(("version", "sql"), CASES)
def test_function_name_reads_both_versions(version: str, sql: str) -> None:
    assert function_name(_node(version, sql)) == EXPECTED[sql][0]


@pytest.mark.parametrize(("version", "sql"), CASES)
def test_the_guard_applies_one_allow_list_to_both_versions(version: str, sql: str) -> None:
    refusal = EXPECTED[sql][1]
    if refusal is None:
        checked = guard._Checker(SCOPE).check(_node(version, sql), 0)
        assert checked["class"] == "FUNCTION"
    else:
        with pytest.raises(BadInputError, match=refusal):
            guard._Checker(SCOPE).check(_node(version, sql), 0)


@pytest.mark.parametrize(("change", "refusal"), [
    ({"qualified_name": {"path": ["repeat"]}}, "names 'repeat' and 'lower'"),
    ({"qualified_name": {"path": ["system", "main", "lower"]}}, "with a schema"),
    ({"qualified_name": {"path": []}}, "unexpected shape"),
    ({"qualified_name": {"path": ["lower"], "more": 1}}, "unexpected shape"),
    ({"is_legacy_function_call": True}, "legacy form"),
])
def test_a_2x_call_whose_parts_disagree_is_refused(change: dict, refusal: str) -> None:
    node = {**_node("2.0.1", "lower(a.s)"), **change}
    with pytest.raises(BadInputError, match=refusal):
        guard._Checker(SCOPE).check(node, 0)


@pytest.mark.parametrize("sql", list(EXPECTED))
def test_the_installed_duckdb(sql: str) -> None:
    doc = json.loads(duckdb.connect().execute("SELECT json_serialize_sql(?)", [f"SELECT {sql}"]).fetchone()[0])
    node = doc["statements"][0]["node"]["select_list"][0]
    assert function_name(node) == EXPECTED[sql][0]
    if duckdb.__version__ in SERIALIZED:
        assert node == _node(duckdb.__version__, sql)
    refusal = EXPECTED[sql][1]
    scope = (InputSpec("a", (("x", "BIGINT"), ("s", "VARCHAR"))), InputSpec("b", (("y", "BIGINT"),)))
    condition = f"({sql}) IS NOT NULL AND b.y = a.x"  # DuckDB parses the text; the guard checks its tree
    if refusal is None:
        assert "b.y" in guard.safe_condition(condition, scope, "join.conditions[0]")
    else:
        with pytest.raises(BadInputError, match=refusal):
            guard.safe_condition(condition, scope, "join.conditions[0]")
