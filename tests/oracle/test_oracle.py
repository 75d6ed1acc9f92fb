"""oracle: input materialization, SQL rendering and the DuckDB oracle.

Unit expectations are computed by hand; only the Hypothesis properties
compare the oracle with itself (history vs final of every prefix, and the
tuned connection vs one with DuckDB's optimizer on).
"""

from __future__ import annotations

import math
from collections import Counter

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from converge.engine.model.errors import ApiMisuseError, BadInputError, OracleError
from converge.engine.model.scenario import ChangeEvent
from converge.engine.model.scenario_json import scenario_from_dict
from converge.oracle import DuckDBOracle, materialize_inputs, presence_intervals, render_join_sql
from converge.oracle.sql import render_list
from tests.conftest import examples
from tests.support.oracle_scenarios import OPTIMIZED_CON, ev, random_scenarios

N = None
ORACLE = DuckDBOracle()


OPTIMIZED = DuckDBOracle(OPTIMIZED_CON)


def inp(name: str, cols: str = "k BIGINT, x VARCHAR", mode: str = "retract", key: list[str] | None = None) -> dict:
    columns = [c.strip().split() for c in cols.split(",")]
    return {"name": name, "columns": columns, "unique_key": key, "changelog_mode": mode}


def ins(name: str, *row) -> dict:
    return ev(name, "+I", *row)


def scenario(inputs: list[dict], types: list[str], conditions: list[str], events: list[dict],
             chain: list[str] | None = None, interval: dict | None = None):
    return scenario_from_dict({
        "name": "t",
        "inputs": inputs,
        "join": {"inputs": chain or [i["name"] for i in inputs], "types": types,
                 "conditions": conditions, "interval": interval},
        "events": events,
    })


def bag(*rows) -> Counter:
    return Counter(tuple(r) for r in rows)


# ---------------------------------------------------------------- binary joins, hand-computed

A_ROWS = [(1, "a1"), (2, "a2"), (2, "a2"), (N, "an")]
B_ROWS = [(1, "b1"), (1, "b1"), (3, "b3"), (N, "bn")]


def ab(jtype: str, cond: str = "a.k = b.k"):
    events = [ins("a", *r) for r in A_ROWS] + [{"input": "a", "watermark": 5}] + [ins("b", *r) for r in B_ROWS]
    return scenario([inp("a"), inp("b", "k BIGINT, y VARCHAR")], [jtype], [cond], events)


MATCH = [(1, "a1", 1, "b1"), (1, "a1", 1, "b1")]  # b's duplicate matches twice
A_PAD = [(2, "a2", N, N), (2, "a2", N, N), (N, "an", N, N)]  # NULL = NULL never matches
B_PAD = [(N, N, 3, "b3"), (N, N, N, "bn")]

BINARY = {
    "inner": bag(*MATCH),
    "left": bag(*MATCH, *A_PAD),
    "right": bag(*MATCH, *B_PAD),
    "full": bag(*MATCH, *A_PAD, *B_PAD),
    "semi": bag((1, "a1")),  # once, however many b rows match
    "anti": bag((2, "a2"), (2, "a2"), (N, "an")),  # NOT EXISTS: the NULL-key row is emitted
}


@pytest.mark.parametrize("jtype", list(BINARY))
def test_binary_join_types(jtype: str) -> None:
    assert ORACLE.final(ab(jtype)) == BINARY[jtype]


NULL_SAFE = {
    "inner": bag(*MATCH, (N, "an", N, "bn")),
    "full": bag(*MATCH, (N, "an", N, "bn"), (2, "a2", N, N), (2, "a2", N, N), (N, N, 3, "b3")),
    "semi": bag((1, "a1"), (N, "an")),
    "anti": bag((2, "a2"), (2, "a2")),
}


@pytest.mark.parametrize("jtype", list(NULL_SAFE))
def test_is_not_distinct_from_matches_nulls(jtype: str) -> None:
    assert ORACLE.final(ab(jtype, "a.k IS NOT DISTINCT FROM b.k")) == NULL_SAFE[jtype]


def test_residual_condition_on_outer_join() -> None:
    # 'a1' <> 'b1' holds, so this is the plain left join; then a residual that never holds.
    assert ORACLE.final(ab("left", "a.k = b.k AND a.x <> b.y")) == BINARY["left"]
    assert ORACLE.final(ab("left", "a.k = b.k AND a.x = b.y")) == bag((1, "a1", N, N), *A_PAD)
    assert ORACLE.final(ab("anti", "a.k = b.k AND a.x = b.y")) == bag((1, "a1"), (2, "a2"), (2, "a2"), (N, "an"))


def test_duplicates_multiply() -> None:
    events = [ins("a", 5, "x"), ins("a", 5, "x"), ins("b", 5, "y"), ins("b", 5, "y"), ins("b", 5, "y")]
    s = scenario([inp("a"), inp("b", "k BIGINT, y VARCHAR")], ["inner"], ["a.k = b.k"], events)
    assert ORACLE.final(s) == Counter({(5, "x", 5, "y"): 6})


def test_anti_join_semantics_in_duckdb_itself() -> None:
    """DuckDB's ANTI JOIN is NOT EXISTS, not NOT IN: a NULL on either side never empties the result."""
    con = duckdb.connect(":memory:")
    rows = con.execute("SELECT * FROM (VALUES (1), (NULL), (3)) a(k) "
                       "ANTI JOIN (VALUES (1), (NULL)) b(k) ON a.k = b.k ORDER BY a.k NULLS LAST").fetchall()
    assert rows == [(3,), (None,)]


def test_empty_inputs_keep_typed_columns() -> None:
    s = scenario([inp("a"), inp("b", "k BIGINT, y VARCHAR")], ["left"], ["a.k = b.k"],
                 [ins("a", 7, "x")])
    assert ORACLE.final(s) == bag((7, "x", N, N))
    s = scenario([inp("a"), inp("b", "k BIGINT, y VARCHAR")], ["full"], ["a.k = b.k"], [])
    assert ORACLE.final(s) == Counter()
    assert ORACLE.history(s) == []
    s = scenario([inp("a"), inp("b", "k BIGINT, y VARCHAR")], ["anti"], ["a.k = b.k"],
                 [ins("a", 7, "x"), {"processing_time": 3}])
    assert ORACLE.history(s) == [bag((7, "x")), bag((7, "x"))]


# ---------------------------------------------------------------- chains

def test_chain_inner_then_left() -> None:
    events = [ins("a", 1, "a"), ins("a", 2, "a2"), ins("b", 1, "b"), ins("b", 2, "b2"), ins("c", 1, "c")]
    s = scenario([inp("a"), inp("b", "k BIGINT, y VARCHAR"), inp("c", "k BIGINT, z VARCHAR")],
                 ["inner", "left"], ["a.k = b.k", "b.k = c.k"], events)
    assert ORACLE.final(s) == bag((1, "a", 1, "b", 1, "c"), (2, "a2", 2, "b2", N, N))


def test_chain_with_semi_in_the_middle() -> None:
    events = [ins("a", 1, "a"), ins("a", 2, "a2"), ins("a", 3, "a3"),
              ins("b", 1, "b"), ins("b", 1, "b"), ins("b", 3, "b3"),
              ins("c", 1, "c"), ins("c", 2, "c2"), ins("c", 3, "c3"), ins("c", 3, "c3x")]
    s = scenario([inp("a"), inp("b", "k BIGINT, y VARCHAR"), inp("c", "k BIGINT, z VARCHAR")],
                 ["semi", "inner"], ["a.k = b.k", "a.k = c.k"], events)
    assert ORACLE.final(s) == bag((1, "a", 1, "c"), (3, "a3", 3, "c3"), (3, "a3", 3, "c3x"))
    assert s.output_width() == 4


def test_chain_semi_input_is_not_visible_later() -> None:
    s = scenario([inp("a"), inp("b", "k BIGINT, y VARCHAR"), inp("c", "k BIGINT, z VARCHAR")],
                 ["anti", "inner"], ["a.k = b.k", "b.k = c.k"], [ins("a", 1, "a")])
    with pytest.raises(BadInputError, match=r"unknown input 'b' \(this join step sees a, c\)") as info:
        ORACLE.final(s)
    assert info.value.path == "join.conditions[1]"


def test_chain_full_then_left_history() -> None:
    """After a FULL join the left position is coalesce(a, b): b-only rows must still find c."""
    events = [ins("b", 1, "b"),      # 0: b pad
              ins("c", 1, "c"),      # 1: b pad joined with c
              ins("a", 1, "a"),      # 2: a matches b, still joined with c
              ev("b", "-D", 1, "b"),  # 3: a pad; c joined to b.k = NULL -> no match
              ins("a", 2, "a2")]     # 4: another a pad
    s = scenario([inp("a"), inp("b", "k BIGINT, y VARCHAR"), inp("c", "k BIGINT, z VARCHAR")],
                 ["full", "left"], ["a.k = b.k", "b.k = c.k"], events)
    assert ORACLE.history(s) == [
        bag((N, N, 1, "b", N, N)),
        bag((N, N, 1, "b", 1, "c")),
        bag((1, "a", 1, "b", 1, "c")),
        bag((1, "a", N, N, N, N)),
        bag((1, "a", N, N, N, N), (2, "a2", N, N, N, N)),
    ]


def test_chain_left_then_right() -> None:
    events = [ins("a", 1, "a"), ins("b", 1, "b"), ins("c", 1, "c"), ins("c", 9, "c9")]
    s = scenario([inp("a"), inp("b", "k BIGINT, y VARCHAR"), inp("c", "k BIGINT, z VARCHAR")],
                 ["left", "right"], ["a.k = b.k", "a.k = c.k"], events)
    assert ORACLE.final(s) == bag((1, "a", 1, "b", 1, "c"), (N, N, N, N, 9, "c9"))


# ---------------------------------------------------------------- history, hand-computed

def test_history_left_join() -> None:
    events = [ins("a", 1, "p"), {"input": "a", "watermark": 10}, ins("b", 1, "q"), ins("b", 1, "q"),
              ev("b", "-D", 1, "q"), ev("b", "-U", 1, "q"), ev("a", "-D", 1, "p")]
    s = scenario([inp("a"), inp("b", "k BIGINT, y VARCHAR")], ["left"], ["a.k = b.k"], events)
    assert ORACLE.history(s) == [
        bag((1, "p", N, N)),
        bag((1, "p", N, N)),
        bag((1, "p", 1, "q")),
        bag((1, "p", 1, "q"), (1, "p", 1, "q")),
        bag((1, "p", 1, "q")),
        bag((1, "p", N, N)),
        Counter(),
    ]


@pytest.mark.parametrize("jtype,expected", [
    ("full", [bag((1, "p", N, N)),
              bag((1, "p", N, N), (N, N, 2, "q")),
              bag((1, "p", 1, "r"), (N, N, 2, "q")),
              bag((N, N, 2, "q"), (N, N, 1, "r"))]),
    ("right", [Counter(),
               bag((N, N, 2, "q")),
               bag((1, "p", 1, "r"), (N, N, 2, "q")),
               bag((N, N, 2, "q"), (N, N, 1, "r"))]),
])
def test_history_outer_joins(jtype: str, expected: list[Counter]) -> None:
    events = [ins("a", 1, "p"), ins("b", 2, "q"), ins("b", 1, "r"), ev("a", "-D", 1, "p")]
    s = scenario([inp("a"), inp("b", "k BIGINT, y VARCHAR")], [jtype], ["a.k = b.k"], events)
    assert ORACLE.history(s) == expected


# ---------------------------------------------------------------- materialization

UPSERT_EVENTS = [
    ins("u", 1, "a"),        # 0
    ins("u", 2, "b"),        # 1
    ev("u", "+U", 1, "c"),   # 2: replaces (1, a)
    ev("u", "-D", 2, N),     # 3: key-only delete
    ev("u", "-D", 9, N),     # 4: absent key: no-op
    {"processing_time": 4},  # 5
    ins("u", 3, "d"),        # 6
    ev("u", "+U", 3, "d"),   # 7: same image: no change
]


def upsert_scenario(events=UPSERT_EVENTS):
    return scenario([inp("u", mode="upsert", key=["k"]), inp("b", "k BIGINT, y VARCHAR")],
                    ["left"], ["u.k = b.k"], events)


def test_upsert_materialization() -> None:
    s = upsert_scenario()
    assert materialize_inputs(s) == {"u": bag((1, "c"), (3, "d")), "b": Counter()}
    assert materialize_inputs(s, upto=1) == {"u": bag((1, "a"), (2, "b")), "b": Counter()}
    assert materialize_inputs(s, upto=3)["u"] == bag((1, "c"))
    assert presence_intervals(s)["u"] == [(0, 2, (1, "a")), (1, 3, (2, "b")), (2, 8, (1, "c")), (6, 8, (3, "d"))]
    assert ORACLE.final(s) == bag((1, "c", N, N), (3, "d", N, N))
    assert [sum(c.values()) for c in ORACLE.history(s)] == [1, 2, 2, 1, 1, 1, 2, 2]


def test_bag_intervals_and_upto() -> None:
    events = [ins("a", 1, "x"), ins("a", 1, "x"), {"input": "b", "watermark": 1}, ev("a", "-D", 1, "x")]
    s = scenario([inp("a"), inp("b", "k BIGINT, y VARCHAR")], ["inner"], ["a.k = b.k"], events)
    assert presence_intervals(s) == {"a": [(0, 3, (1, "x")), (1, 4, (1, "x"))], "b": []}
    assert materialize_inputs(s, upto=0)["a"] == bag((1, "x"))
    assert materialize_inputs(s, upto=2)["a"] == Counter({(1, "x"): 2})
    assert materialize_inputs(s)["a"] == bag((1, "x"))


def test_retracting_an_absent_row_names_the_event() -> None:
    events = [ins("a", 1, "x"), {"processing_time": 1}, ev("a", "-D", 1, "y"), ins("a", 2, "z")]
    s = scenario([inp("a"), inp("b", "k BIGINT, y VARCHAR")], ["inner"], ["a.k = b.k"], events)
    for call in (lambda: materialize_inputs(s), lambda: presence_intervals(s),
                 lambda: ORACLE.final(s), lambda: ORACLE.history(s)):
        with pytest.raises(BadInputError, match="event 2") as info:
            call()
        assert info.value.event_index == 2
    assert materialize_inputs(s, upto=1)["a"] == bag((1, "x"))  # the bad event is not reached


@pytest.mark.parametrize("row,match", [([1], "1 values, expected 2"), (["1", "x"], "integer"), ([1, 2], "string"),
                                       ([2**63, "x"], "out of range")])
def test_invalid_rows_name_the_event(row: list, match: str) -> None:
    """The oracle checks rows itself: a scenario built in Python has not been through the file reader."""
    s = scenario([inp("a"), inp("b", "k BIGINT, y VARCHAR")], ["inner"], ["a.k = b.k"], [ins("a", 1, "x")])
    s = s.with_events((*s.events, ChangeEvent("a", "+I", tuple(row))))
    with pytest.raises(BadInputError, match=match) as info:
        ORACLE.history(s)
    assert info.value.event_index == 1


@pytest.mark.parametrize("row,match", [([1], "has 1 values; the input has 2 columns"),
                                       (["1", "x"], "expected BIGINT, got '1'"), ([1, 2], "expected VARCHAR, got 2"),
                                       ([2**63, "x"], "out of BIGINT range")])
def test_invalid_rows_are_refused_when_the_file_is_read(row: list, match: str) -> None:
    with pytest.raises(BadInputError, match=match) as info:
        scenario([inp("a"), inp("b", "k BIGINT, y VARCHAR")], ["inner"], ["a.k = b.k"],
                 [ins("a", 1, "x"), ev("a", "+I", *row)])
    assert info.value.event_index == 1 and info.value.path == "events[1].row"


# ---------------------------------------------------------------- values and SQL

TRICKY = ["it's", 'say "hi"', "back\\slash", "\\", '\\"', "NULL", "null", "", " padded ", "a, b", "[x]",
          "{k: 1}", "new\nline", "tab\t", "ünïcødé 😀", "''"]


def test_strings_with_quotes_round_trip_and_join() -> None:
    events = [ins("a", i, s) for i, s in enumerate(TRICKY)] + [ins("b", i, s) for i, s in enumerate(TRICKY)]
    events.append(ins("a", 99, N))
    s = scenario([inp("a"), inp("b", "k BIGINT, y VARCHAR")], ["left"], ["a.x = b.y"], events)
    assert ORACLE.final(s) == bag(*[(i, t, i, t) for i, t in enumerate(TRICKY)], (99, N, N, N))


def test_types_round_trip_exactly() -> None:
    cols = "k BIGINT, i INTEGER, d DOUBLE, f BOOLEAN, s VARCHAR"
    rows = [[2**63 - 1, -(2**31), 0.1, True, "x"], [-(2**63), 2**31 - 1, 1e308, False, "y"],
            [0, 0, -0.0, N, N], [1, N, 5e-324, True, "z"], [2, 7, 2, N, "w"]]
    s = scenario([inp("a", cols), inp("b", "k BIGINT")], ["left"], ["a.k = b.k"], [ins("a", *r) for r in rows])
    out = ORACLE.final(s)
    assert out == bag(*[tuple(r) + (N,) for r in rows])
    expected_types = (int, int, float, bool, str, int)
    for row in out:
        assert all(v is None or type(v) is t for v, t in zip(row, expected_types, strict=False)), row
    # an int given for a DOUBLE column comes back as a float
    assert any(row[0] == 2 and type(row[2]) is float for row in out)


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, 10**400])
def test_double_nan_infinities_and_overflow_are_rejected_at_load(value: float) -> None:
    """NaN = NaN is false in SQL and true for a Python tuple, so no oracle can judge it: refused, by event."""
    with pytest.raises(BadInputError, match=r"not a finite DOUBLE|out of DOUBLE range") as info:
        scenario([inp("a", "k BIGINT, d DOUBLE"), inp("b", "k BIGINT")], ["left"], ["a.k = b.k"],
                 [ins("a", 1, 1.5), ins("a", 2, value)])
    assert info.value.event_index == 1


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.one_of(st.none(), st.text()), max_size=6),
       st.lists(st.one_of(st.none(), st.floats(allow_nan=False)), max_size=6),
       st.lists(st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)), max_size=6))
def test_list_literals_round_trip(texts: list, doubles: list, ints: list) -> None:
    got = OPTIMIZED_CON.execute(f"SELECT {render_list(texts, 'VARCHAR')}, {render_list(doubles, 'DOUBLE')}, "
                      f"{render_list(ints, 'BIGINT')}").fetchall()[0]
    assert got == (texts, doubles, ints)


@pytest.mark.parametrize("texts", [["\x00"], ["a\x00b", None, "\ufffe"], ["\x00\ufffe\x00", "\ufffe\ufffe", ""]])
def test_strings_with_nul_characters_round_trip(texts: list) -> None:
    """DuckDB 1.x ends a string constant at NUL; the oracle writes NUL through a marker no value contains."""
    assert OPTIMIZED_CON.execute(f"SELECT {render_list(texts, 'VARCHAR')}").fetchone()[0] == texts


def test_history_keeps_nul_characters_in_strings() -> None:
    s = scenario([inp("a"), inp("b", "k BIGINT, y VARCHAR")], ["left"], ["a.k = b.k"],
                 [ins("a", 1, "x\x00y"), ins("b", 1, "\x00")])
    assert ORACLE.history(s) == [bag((1, "x\x00y", N, N)), bag((1, "x\x00y", 1, "\x00"))]


def test_render_join_sql_runs_on_named_tables() -> None:
    s = scenario([inp("a"), inp("b", "k BIGINT, y VARCHAR"), inp("c", "k BIGINT, z VARCHAR")],
                 ["semi", "full"], ["a.k = b.k", "a.k = c.k"], [])
    sql = render_join_sql(s)
    assert "SEMI JOIN" in sql and "FULL JOIN" in sql
    con = duckdb.connect(":memory:")
    con.execute("CREATE TABLE a AS SELECT * FROM (VALUES (1, 'a'), (2, 'a2'), (NULL, 'an')) t(k, x)")
    con.execute("CREATE TABLE b AS SELECT * FROM (VALUES (1, 'b'), (2, 'b2')) t(k, y)")
    con.execute("CREATE TABLE c AS SELECT * FROM (VALUES (1, 'c'), (5, 'c5')) t(k, z)")
    assert Counter(con.execute(sql).fetchall()) == bag((1, "a", 1, "c"), (2, "a2", N, N), (N, N, 5, "c5"))


def test_seq_column_avoids_input_columns() -> None:
    s = scenario([inp("a", "__seq BIGINT, x VARCHAR"), inp("b", "__seq BIGINT")], ["inner"],
                 ["a.__seq = b.__seq"], [ins("a", 1, "x"), ins("b", 1)])
    assert ORACLE.history(s) == [Counter(), bag((1, "x", 1))]


def test_sql_for_is_what_runs() -> None:
    s = ab("left")
    con = duckdb.connect(":memory:")
    assert Counter(con.execute(ORACLE.sql_for(s, "final")).fetchall()) == BINARY["left"]
    rows = con.execute(ORACLE.sql_for(s, "history")).fetchall()
    assert Counter(r[1:] for r in rows if r[0] == len(s.events) - 1) == BINARY["left"]
    with pytest.raises(ApiMisuseError, match="expected 'final' or 'history'"):
        ORACLE.sql_for(s, "other")  # type: ignore[arg-type]


def test_errors() -> None:
    s = scenario([inp("a", "k BIGINT, t BIGINT"), inp("b", "k BIGINT, t BIGINT")], ["inner"], ["a.k = b.k"], [],
                 interval={"left_time": "a.t", "right_time": "b.t", "lower_ms": 0, "upper_ms": 5})
    with pytest.raises(OracleError, match="interval join.s answer at every event is not a batch query"):
        ORACLE.history(s)
    bad = ab("inner", "a.k = b.nope")
    with pytest.raises(BadInputError, match="input 'b' has no column 'nope'") as info:
        ORACLE.final(bad)
    assert info.value.path == "join.conditions[0]"
    with pytest.raises(OracleError, match=r"(?s)Overflow.*-- SQL:.*SELECT"):  # valid, but fails while running
        ORACLE.final(ab("inner", "a.k * 9223372036854775807 = b.k"))


def test_condition_with_trailing_comment() -> None:
    s = scenario([inp("a"), inp("b", "k BIGINT, y VARCHAR")], ["inner"], ["a.k = b.k -- the key"],
                 [ins("a", 1, "x"), ins("b", 1, "y")])
    assert ORACLE.history(s) == [Counter(), bag((1, "x", 1, "y"))]


# ---------------------------------------------------------------- self-consistency (Hypothesis)
# (the random chains: tests/support/oracle_scenarios.py)

@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_scenarios())
def test_history_is_final_of_every_prefix(obj: dict) -> None:
    s = scenario_from_dict(obj)
    history = ORACLE.history(s)
    assert len(history) == len(s.events)
    for i, answer in enumerate(history):
        assert answer == ORACLE.final(s.with_events(s.events[: i + 1])), f"position {i}"
        assert all(len(row) == s.output_width() for row in answer)
    if s.events:
        assert history[-1] == ORACLE.final(s)
    # The tuned connection (no optimizer) agrees with DuckDB's optimizer.
    assert OPTIMIZED.history(s) == history
    # Both materializations agree at every position.
    intervals = presence_intervals(s)
    for i in range(len(s.events)):
        tables = materialize_inputs(s, upto=i)
        for name, ivs in intervals.items():
            assert tables[name] == Counter(row for start, end, row in ivs if start <= i < end)

