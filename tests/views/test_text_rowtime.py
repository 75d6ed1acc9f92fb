"""A time attribute parsed from text in front of an interval join (issue 40): `epoch_ms(CAST(s AS TIMESTAMP))` as
the input's projected time column. A hand-worked case for the engine and the oracle, the engine's parse of the
canonical text against values worked out by hand, its refusals, the generators' texts, and engine vs oracle on
generated data of the documented example (docs/examples/text_rowtime.sql)."""

from __future__ import annotations

import copy
import re
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings

from converge.engine.materialize import clean, fold
from converge.engine.model.errors import BadInputError, UnsupportedError
from converge.engine.model.flinksql import load_query, parse_query
from converge.engine.model.scenario import ChangeEvent, WatermarkEvent
from converge.engine.model.scenario_json import scenario_from_dict
from converge.engine.model.time_text import seconds_time_sql, text_time_column, time_text
from converge.engine.runtime.local import run_scenario
from converge.engine.text_time import text_time_ms
from converge.oracle.projected import projected_scenario
from converge.properties import interval
from converge.properties.projected_calc import calc_equals_lowered
from converge.properties.query_check import CheckOptions, query_strategy, system_final_answer
from converge.properties.query_reading import oracle_final, reading_equals_query
from tests.support.paths import EXAMPLES


def side(name: str) -> dict:
    return {"name": name, "columns": [["k", "INTEGER"], ["s", "VARCHAR"]], "changelog_mode": "insert_only",
            "project": [["k", f"{name}.k"], ["s", f"{name}.s"], ["ts", f"epoch_ms(CAST({name}.s AS TIMESTAMP))"]],
            "time_column": "ts"}


# a.ts BETWEEN b.ts - 2 s AND b.ts, a LEFT join: b at 00:00:05.000 pairs with a at 03.500 and 05.000; 02.999 is
# 1 ms too early and 05.001 1 ms too late, so both are padded; key 2 has no partner (padded)
DOC = {
    "inputs": [side("a"), side("b")],
    "join": {"inputs": ["a", "b"], "types": ["left"], "conditions": ["a.k = b.k"],
             "interval": {"left_time": "a.ts", "right_time": "b.ts", "lower_ms": -2000, "upper_ms": 0}},
    "events": [
        {"input": "b", "kind": "+I", "row": [1, "2024-01-01 00:00:05"]},
        {"input": "a", "kind": "+I", "row": [1, "2024-01-01 00:00:03.5"]},
        {"input": "a", "kind": "+I", "row": [1, "2024-01-01 00:00:02.999"]},
        {"input": "a", "kind": "+I", "row": [1, "2024-01-01 00:00:05"]},
        {"input": "a", "kind": "+I", "row": [1, "2024-01-01 00:00:05.001"]},
        {"input": "a", "kind": "+I", "row": [2, "2024-01-01 00:00:04"]},
    ],
}
B5 = (1, "2024-01-01 00:00:05", 1_704_067_205_000)
HAND = Counter({
    (1, "2024-01-01 00:00:03.5", 1_704_067_203_500) + B5: 1,
    (1, "2024-01-01 00:00:05", 1_704_067_205_000) + B5: 1,
    (1, "2024-01-01 00:00:02.999", 1_704_067_202_999, None, None, None): 1,
    (1, "2024-01-01 00:00:05.001", 1_704_067_205_001, None, None, None): 1,
    (2, "2024-01-01 00:00:04", 1_704_067_204_000, None, None, None): 1,
})


def test_the_hand_worked_case_in_the_engine_and_the_oracle() -> None:
    scenario = interval.with_final(scenario_from_dict(copy.deepcopy(DOC)))
    assert clean(fold(run_scenario(scenario).changes)) == HAND
    assert oracle_final(scenario) == HAND


@pytest.mark.parametrize("text, ms", [
    ("1970-01-01 00:00:00", 0), ("1970-01-01 00:00:00.001", 1), ("1970-01-01 00:00:01.5", 1500),
    ("1970-01-01 00:00:01.25", 1250), ("1969-12-31 23:59:59.999", -1), ("2024-02-29 12:00:00", 1_709_208_000_000),
    ("2024-01-01 00:00:05.001", 1_704_067_205_001),
])
def test_the_engine_parses_the_canonical_text_to_the_milliseconds_worked_out_by_hand(text: str, ms: int) -> None:
    assert text_time_ms(text) == ms


@pytest.mark.parametrize("text", ["2024-1-1 00:00:01", "2024-01-01", "2024-01-01T00:00:01", " 2024-01-01 00:00:01",
                                  "2024-01-01 00:00:01.1239", "2024-02-30 00:00:00", "2024-01-01 24:00:00", "garbage"])
def test_text_flink_reads_by_rules_converge_does_not_model_is_unsupported_in_the_engine(text: str) -> None:
    document = copy.deepcopy(DOC)
    document["events"] = [{"input": "a", "kind": "+I", "row": [1, text]}]
    with pytest.raises(UnsupportedError, match="not in the form converge computes"):
        run_scenario(scenario_from_dict(document))


def test_a_null_text_is_a_null_rowtime_which_flink_refuses() -> None:
    document = copy.deepcopy(DOC)
    document["events"] = [{"input": "a", "kind": "+I", "row": [1, None]}]
    with pytest.raises(BadInputError, match="NULL time"):
        run_scenario(scenario_from_dict(document))


def test_a_filter_in_front_of_an_event_time_interval_join_is_still_unsupported() -> None:
    document = copy.deepcopy(DOC)
    document["inputs"][0]["where"] = "a.k > 0"
    with pytest.raises(UnsupportedError, match="a filter in front of an event-time interval join"):
        scenario_from_dict(document)


def test_time_text_writes_the_canonical_form() -> None:
    assert [time_text(ms) for ms in (1, 1500, -1, 1_704_067_205_001)] == [
        "1970-01-01 00:00:00.001", "1970-01-01 00:00:01.500", "1969-12-31 23:59:59.999", "2024-01-01 00:00:05.001"]


QUERY = load_query(EXAMPLES / "text_rowtime.sql")
CANONICAL = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}")


@settings(max_examples=40, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(query_strategy(QUERY, CheckOptions().config(ttl=False)))
def test_generated_texts_are_canonical_and_each_watermark_is_a_drawn_time_less_the_delay(scenario) -> None:
    delays = {"c": 1000, "p": 2000}
    texts = {spec.name: spec.index_of(text_time_column(spec) or "") for spec in scenario.inputs}
    latest: dict[str, int] = {}
    for event in scenario.events:
        if isinstance(event, ChangeEvent):
            text = event.row[texts[event.input]]
            assert CANONICAL.fullmatch(text), text
            t = text_time_ms(text)
            latest[event.input] = max(latest.get(event.input, t), t)
        elif isinstance(event, WatermarkEvent):
            assert event.watermark == latest[event.input] - delays[event.input]


@settings(max_examples=40, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(query_strategy(QUERY, CheckOptions().config(ttl=False), late=False))
def test_the_engine_and_the_oracle_agree_on_generated_streams_of_the_example(scenario) -> None:
    system_final_answer(scenario)


def test_duckdb_lowers_the_projection_for_the_interval_properties() -> None:
    """oracle/projected.py: the rows the join sees, computed by DuckDB (never the engine's Calc), worked by hand."""
    lowered = projected_scenario(scenario_from_dict(copy.deepcopy(DOC)))
    assert [s.columns for s in lowered.chain] == [(("k", "INTEGER"), ("s", "VARCHAR"), ("ts", "BIGINT"))] * 2
    assert [s.time_column for s in lowered.chain] == ["ts", "ts"]
    assert not lowered.has_views()
    assert [e.row for e in lowered.events] == [
        B5, (1, "2024-01-01 00:00:03.5", 1_704_067_203_500), (1, "2024-01-01 00:00:02.999", 1_704_067_202_999),
        (1, "2024-01-01 00:00:05", 1_704_067_205_000), (1, "2024-01-01 00:00:05.001", 1_704_067_205_001),
        (2, "2024-01-01 00:00:04", 1_704_067_204_000)]


def seconds_side(name: str) -> dict:
    return {"name": name, "columns": [["k", "INTEGER"], ["n", "BIGINT"]], "changelog_mode": "insert_only",
            "project": [["k", f"{name}.k"], ["ts", seconds_time_sql(f"{name}.n")]], "time_column": "ts"}


def test_a_rowtime_from_epoch_seconds_by_hand() -> None:
    """TO_TIMESTAMP_LTZ(n, 0) on one side, text on the other: b at 00:00:05 takes a's seconds 3, 4 and 5 (a.ts in
    [b.ts - 2 s, b.ts]); 2 and 6 are padded. 1704067203 s is 2024-01-01 00:00:03 UTC."""
    document = copy.deepcopy(DOC)
    document["inputs"][0] = seconds_side("a")
    document["events"] = [{"input": "b", "kind": "+I", "row": [1, "2024-01-01 00:00:05"]}] + [
        {"input": "a", "kind": "+I", "row": [1, 1_704_067_200 + s]} for s in (2, 3, 4, 5, 6)]
    scenario = interval.with_final(scenario_from_dict(document))
    want = Counter({(1, (1_704_067_200 + s) * 1000) + (B5 if s in (3, 4, 5) else (None, None, None)): 1
                    for s in (2, 3, 4, 5, 6)})
    assert clean(fold(run_scenario(scenario).changes)) == want
    assert oracle_final(scenario) == want


@pytest.mark.parametrize("seconds", [-62_167_219_201, 253_402_300_800])
def test_seconds_outside_flinks_range_are_a_null_rowtime(seconds: int) -> None:
    """DateTimeUtils.toTimestampData(n, 0) gives NULL beyond years 0000-9999; a NULL rowtime fails Flink's job."""
    document = copy.deepcopy(DOC)
    document["inputs"][0] = seconds_side("a")
    document["events"] = [{"input": "a", "kind": "+I", "row": [1, seconds]}]
    with pytest.raises(BadInputError, match="NULL time"):
        run_scenario(scenario_from_dict(document))


SECONDS = load_query(EXAMPLES / "seconds_rowtime.sql")


@settings(max_examples=30, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(query_strategy(SECONDS, CheckOptions().config(ttl=False)))
def test_generated_seconds_are_whole_and_watermarks_follow_them(scenario) -> None:
    latest: dict[str, int] = {}
    for event in scenario.events:
        if isinstance(event, ChangeEvent) and event.input == "r":
            latest["r"] = max(latest.get("r", event.row[2] * 1000), event.row[2] * 1000)
        elif isinstance(event, WatermarkEvent) and event.input == "r":
            assert event.watermark == latest["r"] - 1000
    calc_equals_lowered(scenario)


REGULAR = parse_query(
    "CREATE TABLE a (k INT, s STRING, ts AS TO_TIMESTAMP(s), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) "
    "WITH ('connector' = 'kafka', 'format' = 'json');\n"
    "CREATE TABLE b (k INT, n BIGINT, ts AS TO_TIMESTAMP_LTZ(n, 0), WATERMARK FOR ts AS ts) "
    "WITH ('connector' = 'kafka', 'format' = 'json');\n"
    "SELECT a.k, a.ts, b.ts FROM a LEFT JOIN b ON a.k = b.k AND b.n > 1", "regular.sql")


@settings(max_examples=30, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(query_strategy(REGULAR, CheckOptions().config(ttl=False)))
def test_a_regular_join_carries_computed_rowtimes_through_engine_and_oracle_alike(scenario) -> None:
    reading_equals_query(REGULAR, scenario)
    system_final_answer(scenario)
