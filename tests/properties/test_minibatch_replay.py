"""`converge replay` of a mini-batch scenario without expectations (issue 40): the mini-batch properties decide it,
and every runner that folds a mini-batch run flushes the last bundle at the end of the input."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from converge.engine.materialize import clean, fold
from converge.engine.model.changelog import Change
from converge.engine.model.errors import NotCheckedError, label
from converge.engine.model.scenario_json import scenario_from_dict
from converge.engine.operators.minibatch_join import MiniBatchStreamingJoinOperator
from converge.properties.history_check import engine_outputs
from converge.properties.replay import applicable_properties, replay_scenario
from tests.support.paths import ROOT

# every mini-batch scenario file of the repository (scenario files hold "events"; others are left out)
MINI_BATCH_FILES = sorted(
    p for folder in ("tests/scenarios", "properties/systems", "converge/cli/conformance")
    for p in (ROOT / folder).rglob("*.json")
    if '"mini_batch_size"' in p.read_text() and '"events"' in p.read_text())


def _without_expectations(path: Path) -> dict:
    data = json.loads(path.read_text())
    data.pop("expect_final", None)
    data.pop("expect_changelog", None)
    data.get("meta", {}).pop("converge_failure", None)
    for event in data["events"]:
        event.pop("expect", None)
    return data


def test_the_repository_holds_mini_batch_files_of_both_semantics() -> None:
    semantics = {json.loads(p.read_text())["config"].get("semantics", "correct") for p in MINI_BATCH_FILES}
    assert len(MINI_BATCH_FILES) >= 14 and semantics == {"correct", "flink"}


@pytest.mark.parametrize("path", MINI_BATCH_FILES, ids=lambda p: p.stem)
def test_a_mini_batch_file_without_expectations_replays_under_the_mini_batch_properties(path: Path) -> None:
    data = _without_expectations(path)
    scenario = scenario_from_dict(data)
    outcome = replay_scenario(scenario, path)
    if scenario.config.semantics == "flink":
        # Flink's own folding (FLINK-34380, the suppressed padding) has no oracle: not checked, never "diverged"
        assert isinstance(outcome.error, NotCheckedError), outcome.problems
        return
    assert outcome.ok, outcome.problems
    assert "final_convergence" in outcome.checked
    assert "prefix_consistency" not in outcome.checked  # the record-by-record history does not apply
    assert label(outcome.error) == "passed"


def _one_bundle() -> dict:
    """Two matching rows in one bundle of 10: nothing is emitted before the end of the input."""
    cols = [["k", "BIGINT"], ["v", "BIGINT"]]
    return {"name": "one bundle", "inputs": [
        {"name": "a", "columns": cols, "changelog_mode": "insert_only"},
        {"name": "b", "columns": cols, "changelog_mode": "insert_only"}],
        "join": {"inputs": ["a", "b"], "types": ["inner"], "conditions": ["a.k = b.k"]},
        "config": {"mini_batch_size": 10},
        "events": [{"input": "a", "kind": "+I", "row": [1, 5]}, {"input": "b", "kind": "+I", "row": [1, 7]}]}


def test_engine_outputs_flushes_the_last_bundle_with_the_last_event() -> None:
    outputs = list(engine_outputs(scenario_from_dict(_one_bundle())))
    assert outputs[0] == []
    assert [(c.kind, c.row) for c in outputs[1] if isinstance(c, Change)] == [("+I", (1, 5, 1, 7))]
    assert clean(fold([c for items in outputs for c in items if isinstance(c, Change)])) == Counter({(1, 5, 1, 7): 1})


def test_the_mini_batch_properties_apply_and_the_record_by_record_ones_do_not() -> None:
    scenario = scenario_from_dict(_one_bundle())
    assert [name for name, _ in applicable_properties(scenario)] == [
        "minibatch_equals_off", "minibatch_prefix_consistency", "final_convergence"]
    flink = _one_bundle()
    flink["config"]["semantics"] = "flink"
    assert applicable_properties(scenario_from_dict(flink)) == []


def test_a_run_that_loses_the_last_bundle_diverges(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(MiniBatchStreamingJoinOperator, "finish", lambda self, ctx: [])
    outcome = replay_scenario(scenario_from_dict(_one_bundle()), Path("one_bundle.json"))
    assert label(outcome.error) == "diverged"
    assert any(d.property == "final_convergence" for d in outcome.divergences)
