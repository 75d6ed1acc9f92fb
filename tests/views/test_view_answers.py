"""Hand-worked answers of the engine and of the DuckDB oracle for each view form.

Every expected value below is written by hand from Flink's rules (a Calc handles each change alone and keeps
its row kind; the join takes a +U as an addition and a -U as a retraction; an inner join between two inner
sides emits the joined row with the input change's own kind, as Flink's StreamingJoinOperator), not computed by
converge.
"""

from __future__ import annotations

from collections import Counter

from converge.engine.model.changelog import Change
from converge.engine.model.scenario_json import scenario_from_dict
from converge.engine.runtime.local import run_scenario
from converge.oracle.duckdb_oracle import DuckDBOracle

A = {"name": "a", "columns": [["k", "BIGINT"], ["x", "INTEGER"]]}
B = {"name": "b", "columns": [["k", "BIGINT"], ["s", "VARCHAR"]], "changelog_mode": "insert_only"}


def scenario(a: dict, join: dict, events: list[list]) -> object:
    base_join = {"inputs": ["a", "b"], "types": ["inner"], "conditions": ["a.k = b.k"]}
    return scenario_from_dict({
        "inputs": [{**A, **a}, B], "join": {**base_join, **join},
        "events": [{"input": name, "kind": kind, "row": row} for name, kind, row in events]})


def emitted(s: object) -> list[list[Change]]:
    return [[item for item in items if isinstance(item, Change)] for items in run_scenario(s).per_event]


# a's filter flips between the old and the new image of an update: the -U whose image passes reaches the
# join, the +U whose image fails does not, and the other way round (Flink's Calc keeps each change's kind).
FILTER_FLIPS = scenario(
    {"project": [["k", "k"], ["y", "x * 10"]], "where": "x > 0"}, {},
    [["a", "+I", [1, 1]],     # 0: passes as (1, 10); b is empty
     ["b", "+I", [1, "p"]],   # 1: joins (1, 10)
     ["a", "-U", [1, 1]],     # 2: passes: retracts (1, 10)
     ["a", "+U", [1, -1]],    # 3: fails: nothing reaches the join
     ["a", "-U", [1, -1]],    # 4: fails: nothing reaches the join
     ["a", "+U", [1, 2]]])    # 5: a lone +U: the join adds (1, 20)


def test_a_filter_that_flips_inside_an_update_drops_each_change_alone() -> None:
    assert emitted(FILTER_FLIPS) == [
        [], [Change("+I", (1, 10, 1, "p"))], [Change("-U", (1, 10, 1, "p"))], [], [],
        [Change("+U", (1, 20, 1, "p"))]]
    want = [Counter(), Counter({(1, 10, 1, "p"): 1}), Counter(), Counter(), Counter(), Counter({(1, 20, 1, "p"): 1})]
    assert run_scenario(FILTER_FLIPS).answers == want
    assert DuckDBOracle().history(FILTER_FLIPS) == want


# CASE and IF in a projection, a key column computed (k % 2), the columns in another order than the source's
COMPUTED = scenario(
    {"project": [["label", "CASE WHEN x IS NULL THEN 'none' WHEN x > 1 THEN 'big' ELSE 'small' END"],
                 ["k", "k % 2"], ["half", "IF(x > 0, CAST(x AS DOUBLE) / 2, NULL)"]]},
    {"conditions": ["a.k = b.k"]},
    [["b", "+I", [1, "odd"]], ["b", "+I", [0, "even"]],
     ["a", "+I", [3, 3]],       # k 3 -> 1: joins 'odd'
     ["a", "+I", [4, None]],    # k 4 -> 0: joins 'even'
     ["a", "+I", [2, -2]]])     # k 2 -> 0: joins 'even'


def test_computed_columns_in_another_order_join_on_the_computed_key() -> None:
    want = Counter({("big", 1, 1.5, 1, "odd"): 1, ("none", 0, None, 0, "even"): 1,
                    ("small", 0, None, 0, "even"): 1})
    assert run_scenario(COMPUTED).final == want
    assert DuckDBOracle().final(COMPUTED) == want


# a LEFT join with WHERE b.k IS NULL after it (rows of a without a match, as users write an anti join) and a
# SELECT list: the padded row passes the WHERE, its replacement by the joined row does not
LEFT_WHERE = scenario(
    {}, {"types": ["left"], "select": [["k", "a.k"], ["x1", "a.x + 1"]], "where": "b.k IS NULL"},
    [["a", "+I", [1, 10]],      # 0: padded (1, 10, NULL, NULL) passes: (1, 11)
     ["a", "+I", [2, 20]],      # 1: padded: (2, 21)
     ["b", "+I", [1, "p"]],     # 2: the padded row of 1 is retracted (passes: -D (1, 11)); the joined row fails
     ["a", "-D", [2, 20]]])     # 3: (2, 21) retracted


def test_a_where_after_an_outer_join_filters_the_padded_rows_and_their_retractions() -> None:
    assert emitted(LEFT_WHERE) == [[Change("+I", (1, 11))], [Change("+I", (2, 21))], [Change("-D", (1, 11))],
                                   [Change("-D", (2, 21))]]
    want = [Counter({(1, 11): 1}), Counter({(1, 11): 1, (2, 21): 1}), Counter({(2, 21): 1}), Counter()]
    assert DuckDBOracle().history(LEFT_WHERE) == want


# a SEMI join: the SELECT list sees a's columns only
SEMI_SELECT = scenario(
    {"where": "x IS NOT NULL"}, {"types": ["semi"], "select": [["twice", "a.x * 2"]]},
    [["a", "+I", [1, 5]], ["a", "+I", [1, None]], ["b", "+I", [1, "p"]], ["b", "+I", [1, "q"]]])


def test_a_select_list_over_a_semi_join() -> None:
    assert run_scenario(SEMI_SELECT).final == Counter({(10,): 1})
    assert DuckDBOracle().final(SEMI_SELECT) == Counter({(10,): 1})
    assert DuckDBOracle().history(SEMI_SELECT) == [Counter(), Counter(), Counter({(10,): 1}), Counter({(10,): 1})]


def test_the_oracle_sql_holds_the_views() -> None:
    sql = DuckDBOracle().sql_for(LEFT_WHERE, "final")
    assert "WHERE (\n(b.k IS NULL)\n)" in sql
    assert "(a.x + 1)" in sql


# a view in front of a processing-time LEFT interval join (a.t - b.t in [-1000, 1000] ms, each row's time its
# arrival): the filter drops a's row x = -1 whatever its time; the projection makes y = x * 10; a kept row that
# never meets a b row in its window is padded once processing time passes it
PROC_VIEW = scenario_from_dict({
    "inputs": [{**A, "changelog_mode": "insert_only", "project": [["k", "k"], ["y", "x * 10"]], "where": "x > 0"}, B],
    "join": {"inputs": ["a", "b"], "types": ["left"], "conditions": ["a.k = b.k"],
             "interval": {"lower_ms": -1000, "upper_ms": 1000, "time": "processing"}},
    "events": [{"processing_time": 1},
               {"input": "a", "kind": "+I", "row": [1, 1]},      # (1, 10) at 1
               {"input": "a", "kind": "+I", "row": [1, -1]},     # dropped by the view
               {"processing_time": 500},
               {"input": "b", "kind": "+I", "row": [1, "p"]},    # at 500: joins (1, 10) (1 - 500 in the window)
               {"processing_time": 3000},
               {"input": "b", "kind": "+I", "row": [1, "q"]},    # at 3000: (1, 10) is 2999 ms before it: no pair
               {"input": "a", "kind": "+I", "row": [1, 2]},      # (1, 20) at 3000: joins q, not p (2500 ms apart)
               {"input": "a", "kind": "+I", "row": [2, 3]},      # (2, 30) at 3000: no b row of key 2
               {"processing_time": 10_000}]})                     # (2, 30)'s window has passed: padded


def test_a_view_in_front_of_a_processing_time_interval_join() -> None:
    want = Counter({(1, 10, 1, "p"): 1, (1, 20, 1, "q"): 1, (2, 30, None, None): 1})
    run = run_scenario(PROC_VIEW)
    assert Counter(c.row for c in run.changes) == want
    assert {c.kind for c in run.changes} == {"+I"}
    assert DuckDBOracle().final(PROC_VIEW) == want


# a projection naming its columns with any text, as Flink's quoted identifiers do (`1-_./Ü`, `x"y`): the join's
# condition and WHERE name them quoted, DuckDB-style; the answer is the same as under plain names
QUOTED = scenario(
    {"project": [["x\"y", "k + 1"], ["1-_./Ü", "x"]]},
    {"conditions": ['a."x""y" = b.k'], "where": 'a."1-_./Ü" > 1'},
    [["b", "+I", [2, "two"]], ["b", "+I", [3, "three"]],
     ["a", "+I", [1, 5]],       # x"y = 2: joins 'two', 1-_./Ü = 5 passes
     ["a", "+I", [2, 1]],       # x"y = 3: joins 'three', fails the WHERE (1 > 1 is false)
     ["a", "+I", [5, 9]]])      # x"y = 6: no b row


def test_projected_columns_named_with_any_text() -> None:
    want = Counter({(2, 5, 2, "two"): 1})
    assert run_scenario(QUOTED).final == want
    assert DuckDBOracle().final(QUOTED) == want
