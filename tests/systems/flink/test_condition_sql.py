"""The condition translator and the case planner, without Flink: the Flink SQL they write, and what they refuse."""

from __future__ import annotations

import pytest

from converge.systems.flink.environment import program_module
from tests.support.flink_client import bigint_input, case

CaseError, plan = program_module("case_plan").CaseError, program_module("case_plan").plan
Column, Untranslatable, translate = (getattr(program_module("condition_sql"), n)
                                     for n in ("Column", "Untranslatable", "translate"))

COLUMNS = [Column("a", "k", "t0c0", "BIGINT"), Column("a", "x", "t0c1", "INTEGER"), Column("a", "s", "t0c2", "VARCHAR"),
           Column("a", "d", "t0c3", "DOUBLE"), Column("b", "k", "t1c0", "BIGINT"), Column("b", "y", "t1c1", "BIGINT"),
           Column("b", "s", "t1c2", "VARCHAR")]


@pytest.mark.parametrize(("condition", "flink"), [
    ("a.k = b.k AND a.x > b.y", "((t0c0 = t1c0) AND (t0c1 > t1c1))"),
    ("a.k IS NOT DISTINCT FROM b.k", "(t0c0 IS NOT DISTINCT FROM t1c0)"),
    ('"A"."K" = b.k', "(t0c0 = t1c0)"),
    ("a.x / b.y > 1", "((CAST(t0c1 AS DOUBLE) / CAST(t1c1 AS DOUBLE)) > 1)"),
    ("a.x // b.y = 1", "((t0c1 / t1c1) = 1)"),
    ("a.x % 3 <> 0", "(MOD(t0c1, 3) <> 0)"),
    ("a.x != 1 OR a.x == 2", "((t0c1 <> 1) OR (t0c1 = 2))"),
    ("a.x IN (1, NULL)", "(t0c1 = 1 OR t0c1 = CAST(NULL AS INT))"),
    ("NOT a.x BETWEEN 1 AND 2", "(NOT (t0c1 >= 1 AND t0c1 <= 2))"),
    ("a.x NOT IN (1, 2)", "(NOT (t0c1 = 1 OR t0c1 = 2))"),
    ("a.s || 'x' = b.s", "((t0c2 || 'x') = t1c2)"),
    ("upper(a.s) = 'O''K' AND length(b.s) > 2", "((UPPER(t0c2) = 'O''K') AND (CHAR_LENGTH(t1c2) > 2))"),
    ("COALESCE(a.x, b.y, 0) = -1", "(COALESCE(t0c1, t1c1, 0) = (- 1))"),
    ("CAST(a.s AS BIGINT) = b.k AND a.x::VARCHAR = b.s",
     "((CAST(t0c2 AS BIGINT) = t1c0) AND (CAST(t0c1 AS STRING) = t1c2))"),
    ("a.d > 1.5e0 AND a.d < 2.5", "((t0c3 > CAST(1.5e0 AS DOUBLE)) AND (t0c3 < 2.5))"),
    ("b.y IS NULL OR NULL", "((t1c1 IS NULL) OR CAST(NULL AS BOOLEAN))"),
    ("d > 0", "(t0c3 > 0)"),
])
def test_conditions_become_flink_sql(condition: str, flink: str) -> None:
    assert translate(condition, COLUMNS) == flink


@pytest.mark.parametrize(("condition", "reason"), [
    ("a.d % 2 = 0", "DOUBLE %"),
    ("CAST(a.d AS BIGINT) = 1", "CAST(DOUBLE AS BIGINT)"),
    ("CAST(a.d AS VARCHAR) = '1.0'", "CAST(DOUBLE AS VARCHAR)"),
    ("TRY_CAST(a.s AS BIGINT) = 1", "TRY_CAST"),
    ("a.s LIKE 'a%'", "unexpected 'LIKE'"),
    ("a.k = c.k", "unknown column 'c.k'"),
    ("k = 1", "ambiguous column 'k'"),
    ("a.s = 1", "mixes"),
    ("a.k + 1", "not BOOLEAN"),
    ("a.k = 99999999999999999999", "out of BIGINT"),
    ("a.k = b.k ;", "cannot read"),
])
def test_what_cannot_be_translated_is_refused_with_a_reason(condition: str, reason: str) -> None:
    with pytest.raises(Untranslatable, match=reason.replace("(", r"\(").replace(")", r"\)")):
        translate(condition, COLUMNS)


A = [bigint_input("a", ["k", "x"]), bigint_input("b", ["k", "y"])]


def test_cases_of_one_shape_share_a_job_and_other_data_does_not_change_the_shape() -> None:
    one = plan(case("1", A, ["left"], ["a.k = b.k"], {"a": [["+I", 1, 2]], "b": []}))
    two = plan(case("2", A, ["left"], ["a.k = b.k"], {"a": [], "b": [["+I", 1, 3], ["-D", 1, 3]]}))
    other = plan(case("3", A, ["left"], ["a.k = b.k AND a.x > b.y"], {"a": [], "b": []}))
    assert one.shape.key == two.shape.key != other.shape.key
    assert two.rows == [[], [["+I", 1, 3], ["-D", 1, 3]]]
    assert one.shape.select == ("SELECT JSON_ARRAY(t0cid, t0c0, t0c1, t1c0, t1c1 NULL ON NULL) "
                                "FROM {v0} LEFT JOIN {v1} ON t0cid = t1cid AND (t0c0 = t1c0)")


def test_after_a_full_join_the_case_id_is_the_first_one_not_null() -> None:
    three = A + [bigint_input("c", ["k", "z"])]
    planned = plan(case("x", three, ["full", "semi"], ["a.k = b.k", "c.k = b.k"], {}))
    assert planned.shape.select == (
        "SELECT JSON_ARRAY(COALESCE(t0cid, t1cid), t0c0, t0c1, t1c0, t1c1 NULL ON NULL) FROM "
        "(SELECT * FROM {v0} FULL JOIN {v1} ON t0cid = t1cid AND (t0c0 = t1c0) WHERE EXISTS "
        "(SELECT 1 FROM {v2} WHERE COALESCE(t0cid, t1cid) = t2cid AND (t2c0 = t1c0))) AS s2")


@pytest.mark.parametrize(("change", "reason"), [
    ({"config": {"state_ttl_ms": {"a": 1000}}}, "state TTL per input"),  # one TTL for the join is driven
    ({"config": {"future_option": 1}}, "unknown key 'future_option'"),
    ({"join": {"inputs": ["a", "b"], "types": ["inner"], "conditions": ["a.k = b.k"],
               "interval": {"left_time": "a.k", "right_time": "b.k", "lower_ms": 0, "upper_ms": 1,
                            "time": "processing"}}}, "processing-time"),
])
def test_what_flink_cannot_drive_is_unsupported(change: dict, reason: str) -> None:
    c = case("x", A, ["inner"], ["a.k = b.k"], {"a": [], "b": []})
    c["scenario"].update(change)
    with pytest.raises(Untranslatable, match=reason):
        plan(c)


def test_an_interval_case_with_a_late_row_is_unsupported() -> None:
    inputs = [bigint_input("a", ["k", "t"], mode="insert_only", time_column="t"),
              bigint_input("b", ["k", "t"], mode="insert_only", time_column="t")]
    interval = {"left_time": "a.t", "right_time": "b.t", "lower_ms": 0, "upper_ms": 5, "time": "event"}
    events = [{"input": "a", "kind": "+I", "row": [1, 10]}, {"input": "b", "watermark": 8},
              {"input": "b", "kind": "+I", "row": [1, 7]}]
    c = case("x", inputs, ["inner"], ["a.k = b.k"], {"a": [["+I", 1, 10]], "b": [["+I", 1, 7]]},
             interval=interval, events=events)
    with pytest.raises(Untranslatable, match=r"events\[2\] is a late row"):
        plan(c)
    events[1]["watermark"] = 6
    assert plan(c).times == [10, 7]


def test_a_malformed_case_is_a_case_error() -> None:
    with pytest.raises(CaseError, match=r"changelogs.a\[0\]"):
        plan(case("x", A, ["inner"], ["a.k = b.k"], {"a": [["-X", 1, 2]]}))
    with pytest.raises(CaseError, match="not a BIGINT"):
        plan(case("x", A, ["inner"], ["a.k = b.k"], {"a": [["+I", 1, "two"]]}))


@pytest.mark.parametrize(("version", "settings"), [
    ("1.19.0", ["mini_batch", "state_backend", "restart", "upsert_sink", "parallelism"]), ("1.20.1", ["mini_batch", "state_backend", "restart", "upsert_sink", "parallelism"]),
    ("2.0.0", ["mini_batch", "state_backend", "restart", "upsert_sink", "parallelism"]),
    ("2.1.0", ["mini_batch", "multi_join", "state_backend", "restart", "upsert_sink", "parallelism"]),
    ("2.3.0", ["mini_batch", "multi_join", "state_backend", "restart", "upsert_sink", "parallelism"]),
    ("2.4-SNAPSHOT", ["mini_batch", "multi_join", "state_backend", "restart", "upsert_sink", "parallelism"])])
def test_the_adapter_declares_the_multi_way_operator_from_flink_2_1_on(version: str, settings: list[str]) -> None:
    assert program_module("adapter").honoured_settings(version) == settings
