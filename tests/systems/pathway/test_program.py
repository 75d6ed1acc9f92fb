"""The Pathway adapter's pure-Python parts, without Pathway: the residual evaluator (SQL three-valued logic),
the key texts (NULL never matches under `=`), and the feed (a retraction takes back one copy; an upsert delete
by key). Loaded from the very files the Pathway environment runs. Expected values are worked out by hand from
the rules of docs/adapter-protocol.md."""

from __future__ import annotations

import math

import pytest

from converge.systems.pathway.environment import program_module

expression = program_module("expression")
keys = program_module("keys")
feed = program_module("feed")

COLUMNS = {"a": ["k", "x", "s"], "b": ["k", "y", "d"]}


def col(input_: str, column: str, type_: str = "BIGINT") -> dict:
    return {"node": "column", "input": input_, "column": column, "type": type_}


def lit(value, type_: str = "INTEGER") -> dict:
    return {"node": "literal", "value": value, "type": type_}


def call(op: str, *args: dict, type_: str = "BOOLEAN") -> dict:
    return {"node": "call", "op": op, "args": list(args), "type": type_}


def value(tree: dict, a: list, b: list):
    return expression.compile_tree(expression.bind_columns(tree, COLUMNS))({"a": a, "b": b})


A = [1, 5, "Ab"]
B = [1, None, 2.5]


@pytest.mark.parametrize("tree, expected", [
    (call("and", call(">", col("a", "x"), lit(3)), call("=", col("b", "y"), lit(1))), None),  # TRUE AND NULL
    (call("and", call("<", col("a", "x"), lit(3)), call("=", col("b", "y"), lit(1))), False),  # FALSE AND NULL
    (call("or", call(">", col("a", "x"), lit(3)), call("=", col("b", "y"), lit(1))), True),   # TRUE OR NULL
    (call("or", call("<", col("a", "x"), lit(3)), call("=", col("b", "y"), lit(1))), None),   # FALSE OR NULL
    (call("not", call("=", col("b", "y"), lit(1))), None),
    (call("is_null", col("b", "y")), True),
    (call("is_not_distinct_from", col("b", "y"), lit(None, "NULL")), True),
    (call("is_distinct_from", col("b", "y"), lit(None, "NULL")), False),
    (call("<", col("a", "x"), col("b", "d", "DOUBLE")), False),  # 5 < 2.5
    (call("=", call("/", col("a", "x"), lit(2), type_="DOUBLE"), lit(2.5, "DOUBLE")), True),  # / is DOUBLE
    (call("=", call("//", col("a", "x"), lit(-2), type_="INTEGER"), lit(-2)), True),  # truncates toward zero
    (call("=", call("%", lit(-5), lit(3), type_="INTEGER"), lit(-2)), True),  # sign of the dividend
    (call("=", call("lower", col("a", "s", "VARCHAR"), type_="VARCHAR"), lit("ab", "VARCHAR")), True),
    (call(">", call("length", call("||", col("a", "s", "VARCHAR"), lit("c", "VARCHAR"), type_="VARCHAR"),
                    type_="BIGINT"), lit(2)), True),
    (call("=", call("coalesce", col("b", "y"), lit(7), type_="BIGINT"), lit(7)), True),
])
def test_the_residual_follows_sql(tree: dict, expected) -> None:
    assert value(tree, A, B) is expected


def test_division_by_zero_and_nan_follow_ieee_and_duckdb() -> None:
    assert value(call("/", lit(1), lit(0), type_="DOUBLE"), A, B) == math.inf
    assert value(call("/", lit(-1), lit(0), type_="DOUBLE"), A, B) == -math.inf
    nan = call("cast", lit("nan", "VARCHAR"), type_="DOUBLE")
    assert math.isnan(value(call("/", lit(0), lit(0), type_="DOUBLE"), A, B))
    assert value(call("=", nan, nan), A, B) is True  # NaN equals NaN in DuckDB
    assert value(call(">", nan, lit(1e308, "DOUBLE")), A, B) is True  # and sorts above every number
    assert value(call("=", call("cast", lit(2.5, "DOUBLE"), type_="BIGINT"), lit(2)), A, B) is True  # half to even


def test_an_equals_key_with_null_has_no_key_and_a_null_safe_one_matches_null() -> None:
    assert keys.key_text(0, [None], [False], [False]) is None
    assert keys.key_text(0, [None], [True], [False]) == keys.key_text(0, [None], [True], [False]) is not None
    assert keys.key_text(0, [1], [False], [True]) == keys.key_text(0, [1.0], [False], [True])  # BIGINT = DOUBLE
    assert keys.key_text(0, [-0.0], [False], [True]) == keys.key_text(0, [0.0], [False], [True])
    assert keys.key_text(0, [1], [False], [False]) != keys.key_text(1, [1], [False], [False])  # cases never meet


def test_a_retraction_takes_back_one_copy_and_an_upsert_delete_goes_by_key() -> None:
    inputs = [{"name": "a", "columns": [["k", "BIGINT"], ["v", "VARCHAR"]], "unique_key": None,
               "changelog_mode": "retract"},
              {"name": "u", "columns": [["k", "BIGINT"], ["v", "VARCHAR"]], "unique_key": ["k"],
               "changelog_mode": "upsert"}]
    fed = feed.Feed(inputs)
    fed.add_case(0, [{"input": "a", "kind": "+I", "row": [1, "x"]}, {"input": "a", "kind": "+I", "row": [1, "x"]},
                     {"input": "a", "watermark": 3}, {"input": "a", "kind": "-D", "row": [1, "x"]},
                     {"input": "u", "kind": "+I", "row": [2, "p"]}, {"input": "u", "kind": "+U", "row": [2, "q"]},
                     {"input": "u", "kind": "-D", "row": [2, None]}, {"input": "u", "kind": "-D", "row": [9, None]}])
    # (row id, case, values, time, diff): two copies with their own ids, the second retracted at event 4's time
    assert fed.rows["a"] == [(1, 0, '[1,"x"]', 2, 1), (2, 0, '[1,"x"]', 4, 1), (2, 0, '[1,"x"]', 8, -1)]
    # the update retracts the held row; the key-only delete retracts the row held for key 2; key 9 was never held
    assert fed.rows["u"] == [(3, 0, '[2,"p"]', 10, 1), (3, 0, '[2,"p"]', 12, -1), (4, 0, '[2,"q"]', 12, 1),
                             (4, 0, '[2,"q"]', 14, -1)]


support = program_module("support")


def test_a_case_outside_what_the_adapter_maps_is_unsupported_with_the_reason() -> None:
    plan = {"first": "a", "steps": [], "interval": None}
    scenario = {"inputs": [{"name": "a", "changelog_mode": "retract"}], "config": {}}
    assert support.unsupported({"scenario": scenario, "plan": plan}) is None
    assert "no plan" in support.unsupported({"scenario": scenario})  # a v1 case
    assert "processing-time" in support.unsupported(
        {"scenario": scenario, "plan": {**plan, "interval": {"time": "processing"}}})
    assert "state_ttl_ms" in support.unsupported({"scenario": {**scenario, "config": {"state_ttl_ms": 10}},
                                                  "plan": plan})
    assert "raw changelog" in support.unsupported(
        {"scenario": {**scenario, "inputs": [{"name": "a", "changelog_mode": "all"}]}, "plan": plan})
    # the defaults a case file writes out are no reason
    defaults = {"map_state_order": "rocksdb", "semantics": "correct", "min_cleanup_interval_ms": 0,
                "dedupe_before_join": {}, "unique_key_lost": []}
    assert support.unsupported({"scenario": {**scenario, "config": defaults}, "plan": plan}) is None
    # no setting is declared, and each one lacks a sentence (shown as the reason a property is not applicable)
    caps = support.capabilities()
    assert caps["settings"] == [] and set(caps["lacks"]) == {"multi_join", "mini_batch", "state_backend",
                                                             "parallelism", "upsert_sink", "restart"}


@pytest.mark.parametrize("op, text, expected", [
    ("upper", "aß", "Aẞ"), ("lower", "İI", "ii"), ("upper", "ᾳ", "ᾼ"), ("upper", "ﬀ", "ﬀ"), ("lower", "ÀB", "àb")])
def test_case_mapping_is_duckdbs_one_to_one_mapping(op: str, text: str, expected: str) -> None:
    # the protocol's examples (docs/adapter-protocol.md): Python's full mappings would give 'ASS', 'i̇i', 'ΑΙ', 'FF'
    tree = call("=", call(op, lit(text, "VARCHAR"), type_="VARCHAR"), lit(expected, "VARCHAR"))
    assert value(tree, A, B) is True
