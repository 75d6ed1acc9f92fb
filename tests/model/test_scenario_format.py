"""The strict scenario reader: every way a file can be wrong is one BadInputError naming where."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from converge.engine.model import scenario_json
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import Config, InputSpec, WatermarkEvent
from converge.engine.model.scenario_json import dump_scenario, load_scenario, parse_scenario_text, scenario_from_dict
from converge.engine.runtime.local import run_scenario
from tests.support.paths import SCENARIOS


def base(**patch: object) -> dict:
    doc: dict = {
        "inputs": [{"name": "a", "columns": [["k", "BIGINT"], ["x", "VARCHAR"]]},
                   {"name": "b", "columns": [["k", "BIGINT"], ["d", "DOUBLE"]]}],
        "join": {"inputs": ["a", "b"], "types": ["left"], "conditions": ["a.k = b.k"]},
        "events": [{"input": "a", "kind": "+I", "row": [1, "p"]}, {"input": "b", "kind": "+I", "row": [1, 2.5]}],
    }
    doc.update(patch)
    return doc


def refused(doc: object) -> str:
    with pytest.raises(BadInputError) as info:
        scenario_from_dict(doc)
    return str(info.value)


@pytest.mark.parametrize("doc, message", [
    (base(evnts=[]), "evnts: unknown key 'evnts'; did you mean 'events'?"),
    (base(config={"state_ttl": 1000}), "config.state_ttl: unknown key 'state_ttl'; did you mean 'state_ttl_ms'?"),
    (base(join={"inputs": ["a", "b"], "types": ["left"], "condition": ["a.k = b.k"]}),
     "join.condition: unknown key 'condition'; did you mean 'conditions'?"),
    (base(events=[{"input": "a", "kind": "+I", "rows": [1, "p"]}]),
     "events[0].rows: unknown key 'rows'; did you mean 'row'?"),
    (base(events=[{"input": "a", "watermark": 5, "kind": "+I"}]),
     "events[0].kind: unknown key 'kind'; this event has ['input', 'watermark']"),
    (base(events=[{"input": "a", "kind": "+I", "row": [1, "p"], "expect": {"emit": []}}]),
     "events[0].expect.emit: unknown key 'emit'; did you mean 'emits'?"),
])
def test_unknown_keys_are_refused_with_a_suggestion(doc: dict, message: str) -> None:
    assert message in refused(doc)


def test_a_misspelt_input_key_is_refused() -> None:
    doc = base()
    doc["inputs"][0]["colums"] = doc["inputs"][0].pop("columns")
    assert "inputs[0].colums: unknown key 'colums'; did you mean 'columns'?" in refused(doc)


@pytest.mark.parametrize("doc, message", [
    (base(config=[1]), "config: expected an object, got a list"),
    (base(events=3), "events: expected a list, got the number 3"),
    (base(inputs="a"), "inputs: expected a list, got a string"),
    (base(events=[{"input": "a", "kind": "+I", "row": [{"k": 1}, "p"]}]), "events[0].row: column 'k'"),
    (base(events=[{"input": "b", "kind": "+I", "row": [1, 10**400]}]), "events[0].row: column 'd'"),
    (base(events=[{"input": "a", "kind": "+I", "row": [1, "\ud800"]}]), "lone surrogate \\ud800 at offset 0"),
    (base(events=[{"processing_time": 5}, {"processing_time": 4}]),
     "events[1].processing_time: processing time goes backwards: 4 after 5"),
    (base(join={"inputs": ["a", "b"], "types": ["left"], "conditions": ["a.k = b.k\x00 OR TRUE"]}),
     "join.conditions[0]: a SQL boolean expression must not contain a NUL character"),
    (base(join={"inputs": ["a", "b"], "types": ["left"], "conditions": ["a.k = b.\udc80"]}),
     "join.conditions[0]: a SQL boolean expression holds a lone surrogate"),
    (base(expect_final=[[1, "p"]]), "expect_final[0]: expected 4 values (the join's output width), got 2"),
    (base(meta=[]), "meta: expected an object, got a list"),
])
def test_wrong_types_and_values_are_refused_by_path(doc: dict, message: str) -> None:
    assert message in refused(doc)


def test_columns_that_differ_only_in_case_are_refused() -> None:
    doc = base()
    doc["inputs"][0]["columns"] = [["k", "BIGINT"], ["K", "BIGINT"]]
    assert "inputs[0].columns[1]: columns 'k' and 'K' differ only in case" in refused(doc)


def test_inputs_that_differ_only_in_case_are_refused() -> None:
    doc = base()
    doc["inputs"][1]["name"] = "A"
    doc["join"]["inputs"] = ["a", "A"]
    doc["events"] = []
    assert "inputs[1].name: inputs 'a' and 'A' have the same name" in refused(doc)


def test_a_nul_in_a_column_name_is_refused() -> None:
    doc = base()
    doc["inputs"][0]["columns"][1][0] = "x\x00y"
    assert "inputs[0].columns[1][0]: a column name must not contain a NUL character" in refused(doc)


def test_an_event_on_an_input_outside_the_join_is_refused() -> None:
    doc = base(events=[{"input": "c", "watermark": 3}])
    doc["inputs"].append({"name": "c", "columns": [["k", "BIGINT"]]})
    assert "events[0].input: input 'c' is declared but not part of the join chain" in refused(doc)


@pytest.mark.parametrize("text, message", [
    ('{"inputs": [], "inputs": []}', "duplicate key 'inputs' in one JSON object"),
    ('{"inputs": NaN}', "NaN is not a JSON number"),
    ('{"inputs": -Infinity}', "-Infinity is not a JSON number"),
    ("[" * 100_000 + "]" * 100_000, "JSON nested too deeply"),
    ('{"inputs": [1, }', "not valid JSON: Expecting value at line 1 column 16"),
    ("[1]", "expected an object, got a list"),
])
def test_json_that_readers_disagree_on_is_refused(text: str, message: str) -> None:
    with pytest.raises(BadInputError) as info:
        parse_scenario_text(text)
    assert message in str(info.value)


def test_a_file_that_is_not_utf8_names_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    text = json.dumps(base(name="caf\u00e9"), ensure_ascii=False)
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(BadInputError) as info:
        load_scenario(path)
    offset = text.encode("latin-1").index(b"\xe9")
    assert str(info.value).startswith(f"{path}: not UTF-8 text: byte 0xe9 at offset {offset} (line 1)")


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "big.json"
    path.write_text(json.dumps(base()))
    monkeypatch.setattr(scenario_json, "MAX_FILE_BYTES", 100)
    with pytest.raises(BadInputError, match=r"big.json: \d+ bytes; scenario files are limited to 100"):
        load_scenario(path)


def test_meta_is_the_one_free_form_place_and_is_bounded() -> None:
    s = scenario_from_dict(base(meta={"notes": ["anything", {"goes": 1}]}))
    assert s.meta == {"notes": ["anything", {"goes": 1}]}
    deep: dict = {}
    node = deep
    for _ in range(40):
        node["x"] = {}
        node = node["x"]
    assert "nested deeper than 32 levels" in refused(base(meta=deep))


def test_provenance_written_before_meta_existed_is_read_into_meta(tmp_path: Path) -> None:
    legacy = base(converge_failure={"property": "prefix_consistency", "event_index": 1})
    s = scenario_from_dict(legacy)
    assert s.meta == {"converge_failure": {"property": "prefix_consistency", "event_index": 1}}
    written = json.loads(dump_scenario(s, tmp_path / "s.json").read_text())
    assert "converge_failure" not in written and written["meta"] == dict(s.meta)


@pytest.mark.parametrize("path", sorted(SCENARIOS.rglob("*.json")), ids=lambda p: p.stem)
def test_every_scenario_file_survives_a_write_and_a_read(path: Path, tmp_path: Path) -> None:
    s = load_scenario(path)
    again = load_scenario(dump_scenario(s, tmp_path / path.name))
    assert again == s


def test_typed_options_are_checked_from_python_too() -> None:
    with pytest.raises(BadInputError, match=r"^state_ttl_ms: 0 is outside \[1, "):
        Config(state_ttl_ms=0)
    with pytest.raises(BadInputError, match=r"^per_key_order: 'random' is not one of kept, disordered"):
        Config(per_key_order="random")  # type: ignore[arg-type]
    with pytest.raises(BadInputError, match=r"^flink_version: '2.4' is not one of 1.19, 1.20, 2.0, 2.1, 2.2, 2.3"):
        Config(flink_version="2.4")  # type: ignore[arg-type]
    with pytest.raises(BadInputError, match=r"columns\[1\]\[1\]: 'TEXT' is not one of"):
        InputSpec("a", (("k", "BIGINT"), ("t", "TEXT")))


def test_a_regressing_watermark_is_ignored_as_flink_ignores_it() -> None:
    """Flink keeps the highest watermark seen per input channel; a lower one changes nothing."""
    doc = {
        "inputs": [{"name": "a", "columns": [["k", "BIGINT"], ["t", "BIGINT"]], "time_column": "t",
                    "changelog_mode": "insert_only"},
                   {"name": "b", "columns": [["k", "BIGINT"], ["t", "BIGINT"]], "time_column": "t",
                    "changelog_mode": "insert_only"}],
        "join": {"inputs": ["a", "b"], "types": ["left"], "conditions": ["a.k = b.k"],
                 "interval": {"left_time": "a.t", "right_time": "b.t", "lower_ms": -5, "upper_ms": 5}},
        "events": [{"input": "a", "kind": "+I", "row": [1, 10]}, {"input": "a", "watermark": 30},
                   {"input": "b", "watermark": 30}, {"input": "a", "watermark": 12}, {"input": "b", "watermark": 40},
                   {"input": "a", "watermark": 41}],
    }
    s = scenario_from_dict(doc)
    assert isinstance(s.events[3], WatermarkEvent) and s.events[3].watermark == 12
    with_regression = run_scenario(s).per_event
    without = run_scenario(s.with_events(s.events[:3] + s.events[4:])).per_event
    assert with_regression[3] == []
    assert with_regression[:3] + with_regression[4:] == without
    # the padded row was emitted once the watermark passed 10 + 5, and the regression did not undo it
    assert any(item for items in with_regression for item in items if getattr(item, "kind", None) == "+I")


@pytest.mark.parametrize("name", ['a"b', 'x"; COPY (SELECT 1) TO \'f.csv\'; --', "it's", " spaced ", '""', "a.b",
                                  "--", "/*", "", "a\x00b", "a\ud800"])
def test_hostile_input_names_are_refused_by_the_model_itself(name: str) -> None:
    """The first line of defence; tests/oracle/test_oracle_injection.py checks the oracle's own, behind it."""
    with pytest.raises(BadInputError, match=r"^name: "):
        InputSpec(name, (("k", "BIGINT"),))


def test_a_null_event_time_is_refused_when_the_file_is_read() -> None:
    doc = {
        "inputs": [{"name": "a", "columns": [["k", "BIGINT"], ["t", "BIGINT"]], "changelog_mode": "insert_only"},
                   {"name": "b", "columns": [["k", "BIGINT"], ["t", "BIGINT"]], "changelog_mode": "insert_only"}],
        "join": {"inputs": ["a", "b"], "types": ["inner"], "conditions": ["a.k = b.k"],
                 "interval": {"left_time": "a.t", "right_time": "b.t", "lower_ms": 0, "upper_ms": 5}},
        "events": [{"input": "a", "kind": "+I", "row": [1, 3]}, {"input": "b", "kind": "+I", "row": [1, None]}],
    }
    assert "events[1].row[1]: the event-time attribute 't' is NULL" in refused(doc)
    doc["join"]["interval"] = {"time": "processing", "lower_ms": 0, "upper_ms": 5}
    assert scenario_from_dict(doc).events[1].row == (1, None)  # processing time does not read it
