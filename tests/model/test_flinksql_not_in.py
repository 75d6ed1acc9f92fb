"""`x NOT IN (SELECT y ...)` (also written `NOT x IN (...)`) read as Flink plans it (issue 40): a null-aware ANTI
join (FlinkSubQueryRemoveRule: each operand's `x = y OR (x = y) IS NULL`, with the subquery's WHERE), so a left
row survives iff the subquery is empty or `x <> y` is TRUE for every row of it: a NULL on either side drops it.
Each expected reading is written by hand; the query as written, run by DuckDB's own NOT IN, agrees with the
reading on generated data holding NULLs, and catches the plain equality an anti join without the null test
would use."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings

from converge.engine.model.errors import BadInputError, MisreadQueryError, UnsupportedError
from converge.engine.model.flinksql import parse_query
from converge.engine.model.scenario import ChangeEvent
from converge.properties.query_check import CheckOptions, query_strategy
from converge.properties.query_reading import reading_equals_query

K = "WITH ('connector' = 'kafka', 'format' = 'json')"
T = f"""CREATE TABLE ds1 (pk INT, a INT) {K};
CREATE TABLE l (x INT, y INT, s STRING) {K};
CREATE TABLE r (x INT, y INT, t STRING) {K};
"""


def null_aware(left: str, right: str) -> str:
    return f"((({left} = {right})) OR ((({left} = {right})) IS NULL))"


# query -> (join inputs, the anti join's condition, output columns), written by hand from the SQL
READINGS = {
    # Flink's own test program (SemiAntiJoinStreamITCase): one table in both places, no equality at all
    "SELECT pk FROM ds1 WHERE NOT pk IN (SELECT pk FROM ds1 WHERE pk > 3)":
        (("ds1", "ds1_1"), f"{null_aware('ds1.pk', 'ds1_1.pk')} AND (ds1_1.pk > 3)", ("pk",)),
    "SELECT l.s FROM l WHERE l.x NOT IN (SELECT r.y FROM r)":
        (("l", "r"), null_aware("l.x", "r.y"), ("s",)),
    # correlated: the subquery's WHERE joins the null-aware equality; the value an expression
    "SELECT s FROM l WHERE x + 1 NOT IN (SELECT x FROM r WHERE r.y = l.y)":
        (("l", "r"), f"{null_aware('(l.x + 1)', 'r.x')} AND (r.y = l.y)", ("s",)),
    # a row value: one null-aware equality per column
    "SELECT l.s FROM l WHERE (l.x, l.y) NOT IN (SELECT r.x, r.y FROM r WHERE r.t <> 'void')":
        (("l", "r"), f"{null_aware('l.x', 'r.x')} AND {null_aware('l.y', 'r.y')} AND (r.t <> 'void')", ("s",)),
}


@pytest.mark.parametrize("sql", READINGS)
def test_not_in_reads_as_a_null_aware_anti_join(sql: str) -> None:
    q = parse_query(T + sql)
    inputs, condition, names = READINGS[sql]
    assert (q.join.inputs, q.join.types, q.join.conditions) == (inputs, ("anti",), (condition,))
    assert tuple(o.name for o in q.output) == names


def test_one_table_in_both_places_is_one_stream() -> None:
    q = parse_query(T + list(READINGS)[0])
    assert [(s.name, s.source) for s in q.inputs] == [("ds1_2", None), ("ds1", "ds1_2"), ("ds1_1", "ds1_2")]


@pytest.mark.parametrize("sql", READINGS)
def test_the_reading_agrees_with_duckdbs_not_in_on_data_with_nulls(sql: str) -> None:
    query = parse_query(T + sql, "q.sql")
    nulls = []

    @settings(max_examples=40, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(query_strategy(query, CheckOptions().config(ttl=False)))
    def agree(scenario) -> None:
        nulls.extend(e for e in scenario.events if isinstance(e, ChangeEvent) and None in e.row)
        reading_equals_query(query, scenario)

    agree()
    assert nulls  # the drawn streams put NULLs where NOT IN's answer depends on them


def test_the_query_as_written_catches_an_anti_join_that_ignores_nulls() -> None:
    query = parse_query(T + list(READINGS)[1], "q.sql")
    plain = replace(query, join=replace(query.join, conditions=("(l.x = r.y)",)))  # NOT EXISTS's reading

    @settings(max_examples=300, database=None, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(query_strategy(plain, CheckOptions().config(ttl=False)))
    def agree(scenario) -> None:
        reading_equals_query(plain, scenario)

    with pytest.raises(MisreadQueryError):
        agree()


REFUSED = [
    # as many columns as the row compared: Calcite refuses the query
    ("SELECT l.s FROM l WHERE (l.x, l.y) NOT IN (SELECT r.x FROM r)", BadInputError),
    ("SELECT l.s FROM l WHERE l.x NOT IN (SELECT r.x, r.y FROM r)", BadInputError),
    # under OR: FlinkSubQueryRemoveRule plans subqueries only as conjuncts (hasUnsupportedSubQuery)
    ("SELECT l.s FROM l WHERE l.y > 0 OR l.x NOT IN (SELECT r.x FROM r)", UnsupportedError),
]


@pytest.mark.parametrize("sql, expected", REFUSED, ids=[f"{i}-{e.__name__}" for i, (_, e) in enumerate(REFUSED)])
def test_not_in_forms_flink_does_not_plan_are_refused_by_meaning(sql: str, expected: type) -> None:
    with pytest.raises((BadInputError, UnsupportedError)) as info:
        parse_query(T + sql, "q.sql")
    assert type(info.value) is expected, str(info.value)


def test_a_subquery_under_or_names_the_subquery_and_flinks_aggregate_plan() -> None:
    """Flink's SemiAntiJoinStreamITCase writes `NOT (c LIKE 'abc' OR NOT EXISTS (SELECT d FROM r))`: the refusal
    points at the subquery and says why (an aggregate in Flink's plan), never "the query joins nothing"."""
    with pytest.raises(UnsupportedError) as info:
        parse_query(T + "SELECT l.s FROM l WHERE l.y > 10 AND NOT (l.x = 1 OR NOT EXISTS (SELECT r.t FROM r))", "q.sql")
    message = str(info.value)
    assert message.startswith("q.sql:4:") and "`EXISTS(SELECT r.t FROM r)` a subquery under OR or NOT" in message
    assert "aggregate" in message and "joins nothing" not in message
