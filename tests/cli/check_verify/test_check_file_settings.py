"""The planner options a query file SETs (state TTL, multi-join, mini-batch) are read from the file (issue 40); a
flag on the command line wins, and --plan-only says which value came from where."""

from __future__ import annotations

from pathlib import Path

import pytest

from converge.cli.check_plan import plan_only
from converge.engine.model.errors import BadInputError
from converge.engine.model.flinksql import parse_query
from converge.engine.model.flinksql.job import planner_config
from converge.properties.query_check import check_properties, skipped_properties
from converge.properties.query_plan import CheckOptions, with_file_options

TABLES = """CREATE TABLE a (k INT, x INT) WITH ('connector' = 'kafka', 'format' = 'json');
CREATE TABLE b (k INT, y INT) WITH ('connector' = 'kafka', 'format' = 'debezium-json');
"""
SELECT = "SELECT a.k, a.x, b.y FROM a LEFT JOIN b ON a.k = b.k;\n"
SETS = """SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.size' = '3';
SET 'table.exec.mini-batch.allow-latency' = '2 s';
SET 'table.exec.state.ttl' = '1 h';
SET 'table.optimizer.multi-join.enabled' = 'true';
"""


def test_the_sets_are_read_as_the_checks_options_not_as_job_options() -> None:
    q = parse_query(SETS + TABLES + SELECT, "q.sql")
    assert planner_config(q.job) == {"mini_batch_enabled": True, "mini_batch_size": 3, "mini_batch_latency_ms": 2000,
                                     "ttl_ms": 3_600_000, "multi_join": True}
    assert q.job_config() == {}  # nothing of it is a case's job option taken from the file
    options, lines = with_file_options(q, CheckOptions())
    assert (options.ttl_ms, options.multi_join, options.mini_batch_size, options.mini_batch_latency_ms) == \
        (3_600_000, "on", 3, 2000)
    assert lines == ["state TTL 3600000 ms from the file's SET 'table.exec.state.ttl' = '1 h' at q.sql:4:5",
                     "multi-join on from the file's SET 'table.optimizer.multi-join.enabled' = 'true' at q.sql:5:5",
                     "mini-batch of 3 rows or 2000 ms from the file's SET 'table.exec.mini-batch.enabled' = 'true' "
                     "at q.sql:1:5"]


def test_a_flag_wins_over_the_files_set() -> None:
    q = parse_query(SETS + TABLES + SELECT, "q.sql")
    options, lines = with_file_options(q, CheckOptions(ttl_ms=5, multi_join="off",
                                                       given=frozenset({"--ttl", "--multi-join"})))
    assert (options.ttl_ms, options.multi_join) == (5, "off")
    assert lines[:2] == ["--ttl wins over the file's SET 'table.exec.state.ttl' = '1 h' at q.sql:4:5",
                         "--multi-join wins over the file's SET 'table.optimizer.multi-join.enabled' = 'true' at "
                         "q.sql:5:5"]


def test_a_ttl_of_zero_and_a_disabled_mini_batch_change_nothing() -> None:
    q = parse_query("SET 'table.exec.state.ttl' = '0';\nSET 'table.exec.mini-batch.enabled' = 'false';\n"
                    "SET 'table.exec.mini-batch.size' = '5';\n" + TABLES + SELECT, "q.sql")
    options, lines = with_file_options(q, CheckOptions())
    assert (options.ttl_ms, options.mini_batch_size) == (None, None)
    assert lines == ["no state TTL from the file's SET 'table.exec.state.ttl' = '0' at q.sql:1:5",
                     "no mini-batch: the file's SET 'table.exec.mini-batch.enabled' = 'false' at q.sql:2:5"]


@pytest.mark.parametrize("sets, words", [
    ("SET 'table.exec.mini-batch.enabled' = 'true';\nSET 'table.exec.mini-batch.allow-latency' = '1 s';\n",
     "needs SET 'table.exec.mini-batch.size' to a value above 0"),
    ("SET 'table.exec.mini-batch.enabled' = 'true';\nSET 'table.exec.mini-batch.size' = '10';\n",
     "needs SET 'table.exec.mini-batch.allow-latency' to a value above 0"),
    ("SET 'table.exec.state.ttl' = 'an hour';\n", "expected a duration"),
    ("SET 'table.optimizer.multi-join.enabled' = 'yes';\n", "expected 'true' or 'false'"),
])
def test_a_set_flink_would_refuse_is_bad_input_at_its_position(sets: str, words: str) -> None:
    with pytest.raises(BadInputError, match=r"^q.sql:1:5: ") as info:
        parse_query(sets + TABLES + SELECT, "q.sql")
    assert words in str(info.value)


def test_plan_only_prints_where_each_option_came_from_and_plans_the_mini_batch_join(tmp_path: Path) -> None:
    path = tmp_path / "q.sql"
    path.write_text(SETS + TABLES + SELECT)
    lines: list[str] = []
    assert plan_only(str(path), CheckOptions(ttl_ms=7, given=frozenset({"--ttl"})), echo=lines.append) == 0
    text = "\n".join(lines)
    assert f"planner options: --ttl wins over the file's SET 'table.exec.state.ttl' = '1 h' at {path}:4:5" in text
    assert "  MiniBatchJoin(joinType=[LeftOuterJoin]" in text


def test_a_mini_batch_file_is_checked_at_bundle_ends() -> None:
    q = parse_query(SETS + TABLES + SELECT, "q.sql")
    options, _ = with_file_options(q, CheckOptions())
    names = [f"{s.family}/{s.name}" for s in check_properties(q, options)]
    assert names == ["check/reading_equals_query", "check/system_final_answer", "minibatch/prefix_consistency",
                     "regular/final_convergence"]
    assert ("regular/ttl_matches_model", "mini-batch: the TTL model is record by record") in \
        skipped_properties(q, options)
