"""Processing-time attributes as Flink's own interval-join tests declare them, `proctime AS PROCTIME()` (issue 40):
a binary join whose ON bounds `a.proctime - b.proctime` is a processing-time interval join (Flink's
ProcTimeIntervalJoin, IntervalJoinUtil's window), each row's time its arrival. Each expected reading is written by
hand from the SQL; the query as written, run in DuckDB with each row's arrival time in its PROCTIME() column,
agrees with converge's reading on generated data, and catches a window read wrong."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings

from converge.engine.model.errors import BadInputError, MisreadQueryError, UnsupportedError
from converge.engine.model.flinksql import parse_query
from converge.engine.model.scenario import ChangeEvent, IntervalSpec, ProcessingTimeEvent
from converge.generators.schema import arrival_schedule
from converge.properties.query_check import CheckOptions, query_strategy
from converge.properties.query_reading import reading_equals_query

K = "WITH ('connector' = 'kafka', 'format' = 'json')"
T = f"""CREATE TABLE T1 (a INT, b BIGINT, c STRING, proctime AS PROCTIME()) {K};
CREATE TABLE T2 (a INT, b BIGINT, c STRING, pt AS PROCTIME()) {K};
"""
WINDOW = "t1.proctime BETWEEN t2.pt - INTERVAL '5' SECOND AND t2.pt + INTERVAL '3' SECOND"

# query -> (join type, condition, (lower, upper)), written by hand: t1.proctime - t2.pt in [lower, upper]
READINGS = {
    f"SELECT t2.a, t2.c, t1.c FROM T1 AS t1 JOIN T2 AS t2 ON t1.a = t2.a AND {WINDOW} AND t1.b = t2.b":
        ("inner", "(t1.a = t2.a) AND (t1.b = t2.b)", (-5000, 3000)),
    f"SELECT t2.a, t2.c, t1.c FROM T1 AS t1 LEFT OUTER JOIN T2 AS t2 ON t1.a = t2.a AND {WINDOW}":
        ("left", "(t1.a = t2.a)", (-5000, 3000)),
    f"SELECT t2.a, t2.c, t1.c FROM T1 AS t1 RIGHT OUTER JOIN T2 AS t2 ON t1.a = t2.a AND {WINDOW}":
        ("right", "(t1.a = t2.a)", (-5000, 3000)),
    "SELECT t2.a, t2.c, t1.c FROM T1 AS t1 FULL OUTER JOIN T2 AS t2 ON t1.a = t2.a AND "
    "t1.proctime BETWEEN t2.pt - INTERVAL '5' SECOND AND t2.pt":
        ("full", "(t1.a = t2.a)", (-5000, 0)),
    # the bounds the other way round, as two comparisons; unqualified attribute names
    "SELECT t1.c, t2.c FROM T1 AS t1 JOIN T2 AS t2 ON t1.a IS NOT DISTINCT FROM t2.a "
    "AND pt >= proctime - INTERVAL '1' SECOND AND pt < proctime + INTERVAL '2' SECOND":
        ("inner", "(t1.a IS NOT DISTINCT FROM t2.a)", (-1999, 1000)),
    # bounds in WHERE: Flink pushes them into the INNER JOIN before it looks for the window
    "SELECT t1.c FROM T1 AS t1 JOIN T2 AS t2 ON t1.a = t2.a WHERE t1.proctime BETWEEN t2.pt AND t2.pt + "
    "INTERVAL '4' SECOND":
        ("inner", "(t1.a = t2.a)", (0, 4000)),
    # an equality of the two attributes: a window of one point
    "SELECT t1.c, t2.c FROM T1 AS t1 JOIN T2 AS t2 ON t1.a = t2.a AND t1.proctime = t2.pt":
        ("inner", "(t1.a = t2.a)", (0, 0)),
}


@pytest.mark.parametrize("sql", READINGS)
def test_the_reading_is_a_processing_time_interval_join_written_by_hand(sql: str) -> None:
    q = parse_query(T + sql)
    jtype, condition, (lower, upper) = READINGS[sql]
    assert (q.join.types, q.join.conditions) == ((jtype,), (condition,))
    assert q.join.interval == IntervalSpec(None, None, lower, upper, "processing", 0)
    # the attribute is no column: the inputs are the physical columns, with no time column
    assert [(s.name, [c for c, _ in s.columns], s.time_column) for s in q.inputs] == \
        [("t1", ["a", "b", "c"], None), ("t2", ["a", "b", "c"], None)]


@pytest.mark.parametrize("sql", READINGS)
def test_the_reading_agrees_with_the_query_as_written_on_generated_data(sql: str) -> None:
    query = parse_query(T + sql, "q.sql")
    arrivals: set[int] = set()

    @settings(max_examples=15, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(query_strategy(query, CheckOptions().config(ttl=False), late=False))
    def agree(scenario) -> None:
        arrivals.update(e.processing_time for e in scenario.events if isinstance(e, ProcessingTimeEvent))
        reading_equals_query(query, scenario)

    agree()
    assert len(arrivals) > 2  # the drawn streams move the clock (rows arrive at different times)


def test_the_query_as_written_catches_a_processing_window_read_wrong() -> None:
    query = parse_query(T + list(READINGS)[1], "q.sql")  # the LEFT join: an unmatched t1 row is padded
    iv = query.join.interval
    assert iv is not None
    misread = replace(query, join=replace(query.join, interval=replace(iv, lower_ms=-3000, upper_ms=5000)))

    @settings(max_examples=200, database=None, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(query_strategy(misread, CheckOptions().config(ttl=False), late=False))
    def agree(scenario) -> None:
        reading_equals_query(misread, scenario)

    with pytest.raises(MisreadQueryError, match="proctime"):
        agree()


REFUSED = [
    # the attribute's value (the wall clock) anywhere but the window: converge holds no such value
    (f"SELECT t1.proctime FROM T1 AS t1 JOIN T2 AS t2 ON t1.a = t2.a AND {WINDOW}", UnsupportedError),
    (f"SELECT * FROM T1 AS t1 JOIN T2 AS t2 ON t1.a = t2.a AND {WINDOW}", UnsupportedError),
    (f"SELECT t2.* FROM T1 AS t1 JOIN T2 AS t2 ON t1.a = t2.a AND {WINDOW}", UnsupportedError),
    (f"SELECT t1.c FROM T1 AS t1 JOIN T2 AS t2 ON t1.a = t2.a AND {WINDOW} WHERE t1.proctime IS NOT NULL",
     UnsupportedError),
    # one bound only: Flink plans a regular join over time attributes
    ("SELECT t1.c FROM T1 AS t1 JOIN T2 AS t2 ON t1.a = t2.a AND t1.proctime > t2.pt", UnsupportedError),
    # a view that computes on the attribute: Flink materializes it there (a plain TIMESTAMP_LTZ, the wall clock)
    ("CREATE TEMPORARY VIEW V1 AS SELECT a, c, proctime + INTERVAL '1' SECOND AS proctime FROM T1;\n"
     f"SELECT t1.c FROM V1 AS t1 JOIN T2 AS t2 ON t1.a = t2.a AND {WINDOW}", UnsupportedError),
    ("CREATE TEMPORARY VIEW V1 AS SELECT a, c, proctime FROM T1 WHERE proctime IS NOT NULL;\n"
     f"SELECT t1.c FROM V1 AS t1 JOIN T2 AS t2 ON t1.a = t2.a AND {WINDOW}", UnsupportedError),
    # `t1.*` of a view that forwards the attribute names it too
    (f"SELECT t1.* FROM (SELECT a, c, proctime FROM T1) AS t1 JOIN T2 AS t2 ON t1.a = t2.a AND {WINDOW}",
     UnsupportedError),
    # a rowtime against a processing-time attribute
    (f"CREATE TABLE R (a INT, rt TIMESTAMP(3), WATERMARK FOR rt AS rt) {K};\n"
     "SELECT r.a FROM R AS r JOIN T2 AS t2 ON r.a = t2.a AND r.rt BETWEEN t2.pt AND t2.pt + INTERVAL '1' SECOND",
     UnsupportedError),
    # mistakes Flink refuses too
    (f"CREATE TABLE W (a INT, p AS PROCTIME(), WATERMARK FOR p AS p) {K};\n"
     f"SELECT w.a FROM W AS w JOIN T2 AS t2 ON w.a = t2.a", BadInputError),
    (f"CREATE TABLE W (a INT, a AS PROCTIME()) {K};\nSELECT w.a FROM W AS w JOIN T2 AS t2 ON w.a = t2.a",
     BadInputError),
]


@pytest.mark.parametrize("sql, expected", REFUSED, ids=[f"{i}-{e.__name__}" for i, (_, e) in enumerate(REFUSED)])
def test_other_uses_of_a_processing_time_attribute_are_refused_by_meaning(sql: str, expected: type) -> None:
    with pytest.raises((BadInputError, UnsupportedError)) as info:
        parse_query(T + sql, "q.sql")
    assert type(info.value) is expected, str(info.value)
    assert str(info.value).startswith("q.sql:"), str(info.value)


# views and derived tables that pass the attribute on unchanged (Flink's Calc forwards a time indicator it only
# references): query -> (join type, condition, (lower, upper), each input's (project, where)), written by hand
IF_A = "(CASE WHEN (t1.a = 1) THEN CAST(NULL AS INTEGER) ELSE t1.a END)"
VIEW_READINGS = {
    # Flink's own test program (IntervalJoinITCase, processing time, a view per side)
    "CREATE TEMPORARY VIEW V1 AS SELECT IF(a = 1, CAST(NULL AS INT), a) AS a, b, c, proctime FROM T1;\n"
    f"SELECT t2.a, t2.c, t1.c FROM V1 AS t1 JOIN T2 AS t2 ON t1.a = t2.a AND {WINDOW}":
        ("inner", "(t1.a = t2.a)", (-5000, 3000),
         [(((("a", IF_A), ("b", "t1.b"), ("c", "t1.c"))), None), (None, None)]),
    # renamed, with a filter; the other side a derived table passing `*` (the attribute too)
    "CREATE VIEW V1 AS SELECT a, c, proctime AS p FROM T1 WHERE b > 0;\n"
    "SELECT t1.c, t2.c FROM V1 AS t1 LEFT JOIN (SELECT * FROM T2 WHERE a IS NOT NULL) AS t2 ON t1.a = t2.a "
    "AND t1.p BETWEEN t2.pt AND t2.pt + INTERVAL '1' SECOND":
        ("left", "(t1.a = t2.a)", (0, 1000),
         [((("a", "t1.a"), ("c", "t1.c")), "(t1.b > 0)"), (None, "(NOT (t2.a IS NULL))")]),
    # a comma join: the bounds in WHERE name the view's attribute
    "CREATE VIEW V1 AS SELECT a, c, proctime FROM T1;\n"
    "SELECT t1.c FROM V1 AS t1, T2 AS t2 WHERE t1.a = t2.a AND t1.proctime BETWEEN t2.pt - INTERVAL '2' SECOND "
    "AND t2.pt":
        ("inner", "(t1.a = t2.a)", (-2000, 0), [((("a", "t1.a"), ("c", "t1.c")), None), (None, None)]),
}


@pytest.mark.parametrize("sql", VIEW_READINGS)
def test_a_view_passing_the_attribute_on_reads_as_a_calc_in_front_of_the_join(sql: str) -> None:
    q = parse_query(T + sql)
    jtype, condition, (lower, upper), calcs = VIEW_READINGS[sql]
    assert (q.join.types, q.join.conditions) == ((jtype,), (condition,))
    assert q.join.interval == IntervalSpec(None, None, lower, upper, "processing", 0)
    assert [(s.name, [c for c, _ in s.columns], s.time_column, (s.project, s.where)) for s in q.inputs] == \
        [("t1", ["a", "b", "c"], None, calcs[0]), ("t2", ["a", "b", "c"], None, calcs[1])]


@pytest.mark.parametrize("sql", VIEW_READINGS)
def test_a_view_in_front_of_the_join_agrees_with_the_query_as_written(sql: str) -> None:
    query = parse_query(T + sql, "q.sql")

    @settings(max_examples=15, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(query_strategy(query, CheckOptions().config(ttl=False), late=False))
    def agree(scenario) -> None:
        reading_equals_query(query, scenario)

    agree()


def test_the_query_as_written_catches_a_view_left_out_of_the_reading() -> None:
    query = parse_query(T + list(VIEW_READINGS)[0], "q.sql")
    dropped = replace(query, derived=())  # the IF(a = 1, NULL, a) not applied: a = 1 rows would join

    @settings(max_examples=200, database=None, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(query_strategy(dropped, CheckOptions().config(ttl=False), late=False))
    def agree(scenario) -> None:
        reading_equals_query(dropped, scenario)

    with pytest.raises(MisreadQueryError):
        agree()


def test_an_arrival_schedule_starts_at_1_and_without_late_rows_never_ties_the_other_input() -> None:
    a, b = ChangeEvent("a", "+I", (1,)), ChangeEvent("b", "+I", (1,))
    drawn = [a, a, b, ProcessingTimeEvent(4), b, a, ProcessingTimeEvent(9), a]
    assert arrival_schedule(drawn, late=True) == [ProcessingTimeEvent(1), a, a, b, ProcessingTimeEvent(5), b, a,
                                                   ProcessingTimeEvent(10), a]
    assert arrival_schedule(drawn, late=False) == [ProcessingTimeEvent(1), a, a, ProcessingTimeEvent(2), b,
                                                    ProcessingTimeEvent(6), b, ProcessingTimeEvent(7), a,
                                                    ProcessingTimeEvent(12), a]


def test_verify_and_capture_refuse_a_processing_time_join_a_capture_cannot_time(tmp_path, capsys) -> None:
    from converge.cli.main import main
    from converge.properties.verify_capture import verify_capture

    query = parse_query(T + list(READINGS)[1], "q.sql")
    with pytest.raises(UnsupportedError, match="arrival time, which a capture does not record"):
        verify_capture(query, {"T1": tmp_path / "t1.jsonl", "T2": tmp_path / "t2.jsonl"}, tmp_path / "out.jsonl")
    path = tmp_path / "q.sql"
    path.write_text(T + list(READINGS)[1] + ";\n", encoding="utf-8")
    assert main(["capture", str(path), "--out", str(tmp_path / "cap")]) == 2
    assert "a capture does not record" in capsys.readouterr().err
    assert not (tmp_path / "cap").exists()


def test_a_table_with_computed_columns_passes_its_attribute_on_through_the_scans_calc() -> None:
    q = parse_query(f"CREATE TABLE C (a INT, b BIGINT, b2 AS b * 2, p AS PROCTIME()) {K};\n" + T
                    + "SELECT c.b2, t2.c FROM C AS c JOIN T2 AS t2 ON c.a = t2.a AND c.b2 > t2.b "
                      "AND c.p BETWEEN t2.pt - INTERVAL '1' SECOND AND t2.pt", "q.sql")
    assert q.join.conditions == ("(c.a = t2.a) AND (c.b2 > t2.b)",)
    assert q.join.interval == IntervalSpec(None, None, -1000, 0, "processing", 0)
    assert q.inputs[0].project == (("a", "c.a"), ("b", "c.b"), ("b2", "(c.b * 2)"))
