"""The scenario format's views: an input's projection and filter, the join's SELECT list and WHERE.

Read strictly (unknown keys, wrong shapes and empty text refused with their key path), written back
unchanged, and the forms converge does not run refused as unsupported, never as bad input.
"""

from __future__ import annotations

import copy

import pytest

from converge.engine.model.errors import BadInputError, UnsupportedError
from converge.engine.model.scenario_json import scenario_from_dict, scenario_to_dict
from converge.engine.runtime.local import run_scenario
from converge.oracle.duckdb_oracle import DuckDBOracle


def doc(**join_patch: object) -> dict:
    out: dict = {
        "inputs": [{"name": "a", "columns": [["k", "BIGINT"], ["x", "INTEGER"]],
                    "project": [["k", "k"], ["y", "IF(x > 0, x * 10, NULL)"]], "where": "x <> 5"},
                   {"name": "b", "columns": [["k", "BIGINT"], ["s", "VARCHAR"]]}],
        "join": {"inputs": ["a", "b"], "types": ["left"], "conditions": ["a.k = b.k"],
                 "select": [["k", "a.k"], ["label", "coalesce(b.s, 'none')"]], "where": "a.y > 10"},
        "events": [{"input": "a", "kind": "+I", "row": [1, 2]}],
    }
    out["join"].update(join_patch)
    return out


def refused(document: dict, error: type[Exception] = BadInputError) -> str:
    with pytest.raises(error) as info:
        scenario_from_dict(document)
    return str(info.value)


def test_views_round_trip_through_the_json_form() -> None:
    scenario = scenario_from_dict(doc())
    assert scenario.inputs[0].project == (("k", "k"), ("y", "IF(x > 0, x * 10, NULL)"))
    assert scenario.inputs[0].where == "x <> 5"
    assert scenario.join.select == (("k", "a.k"), ("label", "coalesce(b.s, 'none')"))
    assert scenario.join.where == "a.y > 10"
    written = scenario_to_dict(scenario)
    assert written["inputs"][0]["project"] == [["k", "k"], ["y", "IF(x > 0, x * 10, NULL)"]]
    assert written["join"]["where"] == "a.y > 10"
    assert scenario_from_dict(written) == scenario
    # an input or a join without views writes no view keys (older readers read the file as before)
    assert "project" not in written["inputs"][1] and "where" not in written["inputs"][1]


def test_expected_rows_have_the_width_of_the_select_list() -> None:
    good = doc()
    good["expect_final"] = [[1, "none"]]
    assert scenario_from_dict(good).expect_final == ((1, "none"),)
    bad = doc()
    bad["expect_final"] = [[1, 10, None, None]]
    assert "expect_final[0]" in refused(bad)


def test_without_a_select_list_rows_have_the_projected_width() -> None:
    plain = doc(select=None)
    plain["expect_final"] = [[1, 20, None, None]]  # a.k, a.y, b.k, b.s: the projection's two columns, not x
    assert scenario_from_dict(plain).output_width() == 4


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d["inputs"][0].update(projection=[]), "inputs[0].projection: unknown key 'projection'; did you mean "
                                                     "'project'?"),
    (lambda d: d["join"].update(selct=[]), "join.selct: unknown key 'selct'; did you mean 'select'?"),
    (lambda d: d["inputs"][0].update(project=[["k"]]), "inputs[0].project[0]: expected [name, expression], got a list"),
    (lambda d: d["inputs"][0].update(project=[]), "inputs[0].project: expected a non-empty list"),
    (lambda d: d["inputs"][0].update(project="k"), "inputs[0].project: expected a list, got a string"),
    (lambda d: d["inputs"][0].update(project=[["k", "k"], ["K", "x"]]),
     "inputs[0].project[1][0]: column 'K' is named twice"),
    (lambda d: d["inputs"][0].update(project=[[" ", "k"]]), "inputs[0].project[0][0]: expected a column name, got "
                                                             "an empty string"),
    (lambda d: d["inputs"][0].update(where=""), "inputs[0].where: expected a SQL boolean expression, got an empty"),
    (lambda d: d["join"].update(where=3), "join.where: expected a SQL boolean expression, got 3"),
    (lambda d: d["join"].update(select=[["k", ""]]), "join.select[0][1]: expected a SQL expression, got an empty"),
])
def test_malformed_views_are_refused_with_their_path(mutate, message: str) -> None:
    document = doc()
    mutate(document)
    assert message in refused(document)


@pytest.mark.parametrize("mutate, path", [
    (lambda d: d["inputs"][0].update(project=[["k", "k"], ["y", "a.nope + 1"]]), "inputs[0].project[1][1]"),
    (lambda d: d["inputs"][0].update(where="x > 'text' AND"), "inputs[0].where"),
    (lambda d: d["join"].update(select=[["k", "a.x"]]), "join.select[0][1]"),  # x is not a column the join sees
    (lambda d: d["join"].update(where="b.nope"), "join.where"),
])
def test_a_wrong_expression_is_bad_input_in_the_engine_and_the_oracle(mutate, path: str) -> None:
    document = doc()
    mutate(document)
    scenario = scenario_from_dict(document)
    for run in (run_scenario, DuckDBOracle().final):
        with pytest.raises(BadInputError) as info:
            run(scenario)
        assert info.value.path == path, (run, str(info.value))


def test_an_untyped_null_column_is_refused() -> None:
    document = doc()
    document["inputs"][0]["project"] = [["k", "k"], ["y", "NULL"]]
    with pytest.raises(BadInputError, match="untyped NULL"):
        run_scenario(scenario_from_dict(document))


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d["inputs"][0].update(changelog_mode="upsert", unique_key=["k"]), "ChangelogNormalize"),
    (lambda d: d.update(config={"dedupe_before_join": {"a": ["k"]}}), "dedupe_before_join"),
    (lambda d: d.update(config={"sink": "upsert", "sink_key": ["a.k"]}), "upsert sink"),
    (lambda d: d["join"].update(interval={"left_time": "a.k", "right_time": "b.k", "lower_ms": 0, "upper_ms": 1}),
     "interval join"),
])
def test_forms_converge_does_not_run_are_unsupported_not_bad_input(mutate, message: str) -> None:
    document = copy.deepcopy(doc())
    if "upsert" in message or "ChangelogNormalize" in message:
        document["events"] = []
    mutate(document)
    assert message in refused(document, UnsupportedError)


def test_case_is_not_taken_in_a_join_condition() -> None:
    document = doc(conditions=["a.k = CASE WHEN b.k > 0 THEN b.k END"], select=None, where=None)
    scenario = scenario_from_dict(document)
    with pytest.raises(BadInputError, match="(?i)case"):
        run_scenario(scenario)
    with pytest.raises(BadInputError, match="(?i)case"):
        DuckDBOracle().final(scenario)
