"""`converge check` on a table read in several places: the reading (one stream, two readers), its plan, and the
query as written catching a reader that gives each use a stream of its own."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from converge.cli.main import main
from converge.engine.model.errors import MisreadQueryError
from converge.engine.model.flinksql import load_query
from converge.properties.query_check import query_strategy
from converge.properties.query_plan import CheckOptions
from converge.properties.query_reading import reading_equals_query
from tests.support.paths import EXAMPLES


def test_check_reads_and_checks_the_self_join_example(capsys, tmp_path: Path) -> None:
    code = main(["check", str(EXAMPLES / "self_join_managers.sql"), "--examples", "8", "--seed", "3",
                 "--reports-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "  e = emp [retract from kafka]: id BIGINT, boss BIGINT, name STRING\n" \
           "    one source: reads stream emp (emp, scanned once) with m\n" in out
    assert "join chain: e LEFT m ON (e.boss = m.id)" in out
    for prop in ("check/reading_equals_query", "check/system_final_answer", "regular/prefix_consistency",
                 "regular/final_convergence"):
        line = next(line for line in out.splitlines() if line.startswith(prop))
        assert line.split()[1] == "passed" and int(line.split()[3]) > 0, out


def test_generated_examples_name_only_the_stream() -> None:
    query = load_query(EXAMPLES / "self_join_managers.sql")

    @settings(max_examples=30, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(query_strategy(query, CheckOptions().config(ttl=False)))
    def check(scenario) -> None:
        assert [(s.name, s.source) for s in scenario.inputs] == [("emp", None), ("e", "emp"), ("m", "emp")]
        assert {e.input for e in scenario.events} <= {"emp"}
        reading_equals_query(query, scenario)

    check()


def test_a_reader_that_gives_each_use_its_own_stream_is_caught_by_the_query_as_written(monkeypatch) -> None:
    monkeypatch.setattr("converge.engine.model.flinksql.query.shared_streams", lambda aliases: {})
    query = load_query(EXAMPLES / "self_join_managers.sql")
    assert all(s.source is None for s in query.inputs)  # the planted misreading: e and m are two tables

    @settings(max_examples=100, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(query_strategy(query, CheckOptions().config(ttl=False)))
    def check(scenario) -> None:
        reading_equals_query(query, scenario)

    with pytest.raises(MisreadQueryError):
        check()



def test_the_stream_draws_both_readers_join_columns_from_the_key_domain() -> None:
    """e.boss and m.id are both key columns of the one stream: they draw from the small colliding key domain
    (generators/changelog.py KEY_DOMAIN, without the 3 that other BIGINT columns may take)."""
    query = load_query(EXAMPLES / "self_join_managers.sql")
    seen: set = set()

    @settings(max_examples=60, database=None, suppress_health_check=list(HealthCheck))
    @given(query_strategy(query, CheckOptions().config(ttl=False)))
    def check(scenario) -> None:
        for e in scenario.events:
            seen.update(e.row[:2])

    check()
    assert seen <= {0, 1, 2, None} and {0, 1} <= seen


def test_verify_replays_one_capture_of_a_self_joined_table_to_both_uses(capsys, tmp_path: Path) -> None:
    """The table is captured once; each record reaches e and m, so bob's boss is ann (worked by hand)."""
    (tmp_path / "emp.csv").write_text("op,id,boss,name\n+I,1,,ann\n+I,2,1,bob\n")
    (tmp_path / "good.csv").write_text("op,name,boss_name\n+I,ann,\n+I,bob,ann\n")
    (tmp_path / "bad.csv").write_text("op,name,boss_name\n+I,ann,\n+I,bob,\n")
    query = str(EXAMPLES / "self_join_managers.sql")
    base = ["verify", query, "--source", f"emp={tmp_path / 'emp.csv'}", "--format", "csv", "--quiet"]
    assert main([*base, "--output", str(tmp_path / "good.csv")]) == 0, capsys.readouterr()
    assert main([*base, "--output", str(tmp_path / "bad.csv")]) != 0
    err = capsys.readouterr().err
    assert "1 missing: (name='bob', boss_name='ann')" in err and "1 extra: (name='bob', boss_name=NULL)" in err


# the reading of docs/examples/self_interval_join.sql, written by hand from its SQL: `logins` is one stream that a
# and b read; a.login_time BETWEEN b.login_time - 2 s AND b.login_time is a.login_time - b.login_time in [-2000, 0]
SELF_INTERVAL_PLAN = """\
inputs:
  a = logins [insert_only from kafka, rowtime login_time (watermark delay 1000 ms)]: user_id BIGINT, device STRING, \
login_time TIMESTAMP(3)
    one source: reads stream logins (logins, scanned once) with b
  b = logins [insert_only from kafka, rowtime login_time (watermark delay 1000 ms)]: user_id BIGINT, device STRING, \
login_time TIMESTAMP(3)
    one source: reads stream logins (logins, scanned once) with a
join chain: a LEFT b ON (a.user_id = b.user_id) AND (a.device <> b.device)
interval join: a.login_time - b.login_time in [-2000, 0] ms (event time)
output: user_id (a.user_id), device (a.device), login_time (a.login_time), next_device (b.device), \
next_time (b.login_time)
"""
SELF_INTERVAL_OPERATOR = (
    "  IntervalJoin(joinType=[LeftOuterJoin], windowBounds=[isRowTime=true, leftLowerBound=-2000, "
    "leftUpperBound=0, leftTimeIndex=2, rightTimeIndex=2], allowedLateness=[0], minCleanUpInterval=[0], "
    "leftKeys=[user_id], rightKeys=[user_id], where=[(a.device != b.device)], semantics=[correct])\n"
    "    Source(table=[a], changelogMode=[insert_only])\n"
    "    Source(table=[b], changelogMode=[insert_only])\n")


def test_plan_only_reads_the_interval_self_join_example(capsys) -> None:
    assert main(["check", str(EXAMPLES / "self_interval_join.sql"), "--plan-only"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(SELF_INTERVAL_PLAN), out
    assert SELF_INTERVAL_OPERATOR in out, out


def test_check_checks_the_interval_self_join_example(capsys, tmp_path: Path) -> None:
    code = main(["check", str(EXAMPLES / "self_interval_join.sql"), "--examples", "8", "--seed", "3",
                 "--reports-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    for prop in ("check/reading_equals_query", "check/system_final_answer", "interval/no_late_equals_oracle",
                 "interval/late_records_bounded", "interval/matches_step_model", "interval/pairs_and_padding_once"):
        line = next(line for line in out.splitlines() if line.startswith(prop))
        assert line.split()[1] == "passed" and int(line.split()[3]) > 0, out


def test_the_interval_self_join_examples_write_records_and_watermarks_on_the_stream() -> None:
    query = load_query(EXAMPLES / "self_interval_join.sql")

    @settings(max_examples=30, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(query_strategy(query, CheckOptions().config(ttl=False)))
    def check(scenario) -> None:
        assert [(s.name, s.source) for s in scenario.inputs] == [("logins", None), ("a", "logins"),
                                                                 ("b", "logins")]
        assert {e.input for e in scenario.events if hasattr(e, "input")} <= {"logins"}
        reading_equals_query(query, scenario)

    check()


def test_an_interval_self_join_read_as_two_streams_is_caught_by_the_query_as_written(monkeypatch) -> None:
    monkeypatch.setattr("converge.engine.model.flinksql.query.shared_streams", lambda aliases: {})
    query = load_query(EXAMPLES / "self_interval_join.sql")
    assert all(s.source is None for s in query.inputs)  # the planted misreading: a and b are two tables

    @settings(max_examples=100, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(query_strategy(query, CheckOptions().config(ttl=False), late=False))
    def check(scenario) -> None:
        reading_equals_query(query, scenario)

    with pytest.raises(MisreadQueryError):
        check()


def test_the_interval_self_join_examples_put_pairs_of_the_one_stream_on_each_bound() -> None:
    """a.login_time - b.login_time in [-2000, 0]: the stream draws times 2000 and 0 apart (on the bounds) and 2001
    and 1 apart (one millisecond outside), so a bound read one off changes the answer."""
    query = load_query(EXAMPLES / "self_interval_join.sql")
    gaps: set[int] = set()

    @settings(max_examples=60, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(query_strategy(query, CheckOptions().config(ttl=False)))
    def check(scenario) -> None:
        times = [e.row[2] for e in scenario.events if hasattr(e, "row")]
        gaps.update(abs(s - t) for i, s in enumerate(times) for t in times[i + 1:])

    check()
    assert {0, 1, 2000, 2001} <= gaps, sorted(gaps)


PROCTIME_SELF_JOIN = """CREATE TABLE clicks (user_id BIGINT, page STRING, pt AS PROCTIME())
  WITH ('connector' = 'kafka', 'topic' = 'clicks', 'format' = 'json');
SELECT a.user_id, a.page, b.page AS next_page
FROM clicks a JOIN clicks b ON a.user_id = b.user_id AND a.pt BETWEEN b.pt {window};
"""


@pytest.mark.parametrize("window, exact", [("- INTERVAL '2' SECOND AND b.pt", True),
                                           ("AND b.pt + INTERVAL '2' SECOND", False)])
def test_a_processing_time_self_join_is_exact_unless_a_row_meets_itself_on_a_zero_size_side(
        window: str, exact: bool, capsys, tmp_path: Path) -> None:
    """Both copies of a row arrive at one processing time. With [-2 s, 0] the left copy is cached and the right
    one meets it: the batch answer. With [0, 2 s] the left copy is not cached (its side has size 0), so whether
    the row pairs with itself depends on which input Flink reads first: the properties that promise the batch
    answer do not run, and say why."""
    query = tmp_path / "q.sql"
    query.write_text(PROCTIME_SELF_JOIN.format(window=window))
    code = main(["check", str(query), "--examples", "20", "--seed", "2", "--reports-dir", str(tmp_path / "r")])
    out = capsys.readouterr().out
    assert code == 0, out
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines() if line.startswith(("check/", "interval/"))}
    exact_props = {"check/system_final_answer": "passed" if exact else "not",
                   "interval/no_late_equals_oracle": "passed" if exact else "not"}
    assert rows == {"check/reading_equals_query": "passed", **exact_props, "interval/late_records_bounded": "passed",
                    "interval/matches_step_model": "passed", "interval/pairs_and_padding_once": "passed"}, out
    assert exact or "depends on which input Flink reads first" in out
