"""The public API for writing properties: the names `converge` exports and RunResult's accessors (issue 28)."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import pytest

import converge
from converge import run_scenario, scenario_from_dict
from converge.engine.model.scenario_json import load_scenario
from tests.support.paths import ROOT

FOR_PROPERTIES = {"fail": "converge.properties.divergence", "require": "converge.properties.divergence",
                  "Divergence": "converge.properties.divergence", "bag_diff": "converge.properties.divergence",
                  "PropertyFailure": "converge.properties.divergence",
                  "check_expectations": "converge.properties.expectations"}


@pytest.mark.parametrize("name", sorted(FOR_PROPERTIES))
def test_what_a_custom_property_uses_is_exported(name: str) -> None:
    module = __import__(FOR_PROPERTIES[name], fromlist=[name])
    assert name in converge.__all__ and name in dir(converge)
    assert getattr(converge, name) is getattr(module, name)


def test_import_converge_and_its_property_helpers_load_neither_duckdb_nor_hypothesis() -> None:
    code = ("import sys, converge; converge.fail, converge.Divergence, converge.bag_diff, converge.require; "
            "print(sorted(m for m in ('duckdb', 'hypothesis', 'matplotlib') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def _one_key(events: list[dict]) -> converge.Scenario:
    return scenario_from_dict({
        "name": "one key",
        "inputs": [{"name": "a", "columns": [["k", "BIGINT"]], "changelog_mode": "retract"},
                   {"name": "b", "columns": [["k", "BIGINT"]], "changelog_mode": "insert_only"}],
        "join": {"inputs": ["a", "b"], "types": ["inner"], "conditions": ["a.k = b.k"]},
        "events": events})


def test_answers_and_final_are_the_output_table_after_each_event_and_at_the_end() -> None:
    result = run_scenario(_one_key([{"input": "a", "kind": "+I", "row": [1]}, {"input": "b", "kind": "+I", "row": [1]},
                                    {"input": "b", "kind": "+I", "row": [1]}, {"input": "a", "kind": "-D", "row": [1]}]))
    assert result.answers == [Counter(), Counter({(1, 1): 1}), Counter({(1, 1): 2}), Counter()]
    assert result.final == Counter() and result.watermarks == []


def test_watermarks_are_the_output_watermarks_with_their_event() -> None:
    # the file's own expectations: WM 7 at event 2, WM 11 at event 5
    result = run_scenario(load_scenario(ROOT / "tests/scenarios/interval/allowed_lateness_keeps_rows.json"))
    assert result.watermarks == [(2, 7), (5, 11)]
    assert result.final == Counter({(1, 10, 1, 10): 1})
