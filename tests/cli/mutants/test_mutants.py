"""The seeded-bug campaign: the catalog applies cleanly and reverts, cheap mutants are killed, the CLI reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from converge.cli.main import main
from converge.cli.mutant_catalog import ACTIVE, CATALOG, Mutant, Patch, applied, by_name
from converge.cli.mutants import run_campaign, run_mutant
from converge.engine.model.scenario_json import load_scenario, scenario_from_dict
from converge.engine.runtime.local import run_scenario
from converge.properties.registry import select
from converge.properties.replay import replay_path
from tests.support.paths import SCENARIOS

# A NULL key under '=' never matches (Flink's filterNulls): this inner join emits nothing.
NULL_KEYS = scenario_from_dict({
    "inputs": [{"name": "a", "columns": [["k", "BIGINT"], ["x", "BIGINT"]], "changelog_mode": "insert_only"},
               {"name": "b", "columns": [["k", "BIGINT"], ["y", "BIGINT"]], "changelog_mode": "insert_only"}],
    "join": {"inputs": ["a", "b"], "types": ["inner"], "conditions": ["a.k = b.k"]},
    "events": [{"input": "a", "kind": "+I", "row": [None, 1]}, {"input": "b", "kind": "+I", "row": [None, 2]}],
})


def _engine_functions() -> dict:
    """Every function a mutant patches, as installed right now."""
    from converge.cli.mutant_catalog import _resolve

    out = {}
    for m in CATALOG:
        for p in m.patches:
            _, owner, name = _resolve(p.target)
            out[p.target] = owner.__dict__[name]
    return out


def test_catalog_has_at_least_twelve_distinct_named_bugs() -> None:
    names = [m.name for m in CATALOG]
    assert len(names) >= 12 and len(set(names)) == len(names)
    assert all(m.bug and m.patches for m in CATALOG)


def test_every_mutant_applies_and_the_engine_is_restored_exactly() -> None:
    before = _engine_functions()
    for m in CATALOG:
        with applied(m):
            during = _engine_functions()
            assert ACTIVE == [m.name]
            changed = {t for t in before if during[t] is not before[t]}
            assert changed == {p.target for p in m.patches}, m.name
    assert _engine_functions() == before and ACTIVE == []


def test_a_mutant_changes_behaviour_only_while_applied() -> None:
    assert run_scenario(NULL_KEYS).changes == []
    with applied(by_name("null_keys_match")[0]):
        assert [c.row for c in run_scenario(NULL_KEYS).changes] == [(None, 1, None, 2)]
    assert run_scenario(NULL_KEYS).changes == []


def test_a_patch_that_no_longer_matches_is_stale_not_skipped() -> None:
    ghost = Mutant("ghost", "a snippet that is not in the engine", "regular",
                   (Patch("converge.engine.operators.regular_join:StreamingJoinOperator._retract", "no such line", "pass"),))
    outcome = run_mutant(ghost, examples=5, seed=1)
    assert outcome.status == "stale" and "no such line" in outcome.message


def test_unknown_mutant_names_are_bad_input(capsys) -> None:
    assert main(["mutants", "--only", "no_such_bug", "--out", "unused.json"]) == 2
    assert "unknown mutant" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["padding_not_retracted_on_first_match", "null_keys_match",
                                  "unmatched_outer_retraction_keeps_padding", "mapstate_arrival_order_in_rocksdb"])
def test_cheap_mutants_are_killed(name: str) -> None:
    outcome = run_mutant(by_name(name)[0], examples=150, seed=1, shrink=False)
    assert outcome.status == "killed", outcome
    assert outcome.killed_by and outcome.examples >= 1 and outcome.seconds_to_kill is not None


def test_the_command_writes_a_table_json_and_markdown(tmp_path: Path, capsys) -> None:
    out = tmp_path / "mutants.json"
    name = "unmatched_outer_retraction_keeps_padding"  # prefix_consistency catches it in ~1 example of 6
    assert main(["mutants", "--only", name, "--examples", "200", "--seed", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert name in printed and "killed" in printed and "shrunk events" in printed
    data = json.loads(out.read_text())
    (m,) = data["mutants"]
    assert data["killed"] == 1 and data["seed"] == 1 and m["status"] == "killed"
    assert m["killed_by"] == "prefix_consistency" and 1 <= m["shrunk_events"] <= 6
    assert m["seconds_to_kill"] <= m["seconds"]
    assert scenario_from_dict(m["counterexample"]).events  # the evidence is a loadable scenario
    assert f"| {name} | killed | prefix_consistency |" in out.with_suffix(".md").read_text()


def test_the_command_prints_a_line_per_mutant_and_its_properties_in_a_log(tmp_path: Path, capsys) -> None:
    """A mutant that survives runs its whole family (52 s silent before issue 41 row 4): stderr, not a terminal
    here, gets a line as each mutant starts and as each of its properties ends."""
    name = "unmatched_outer_retraction_keeps_padding"
    assert main(["mutants", "--only", name, "--examples", "200", "--seed", "1", "--out", str(tmp_path / "m.json")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"mutants: [1/1] {name} (regular)", err
    assert any(line.startswith("regular/prefix_consistency: done: ") for line in err[1:]), err


def test_a_kill_written_as_a_report_records_its_mutant_and_replays(tmp_path: Path, capsys) -> None:
    name = "unmatched_outer_retraction_keeps_padding"
    assert main(["mutants", "--only", name, "--examples", "200", "--seed", "1", "--out", str(tmp_path / "m.json"),
                 "--reports-dir", str(tmp_path / "reports")]) == 0
    (report,) = (tmp_path / "reports").glob("*-mutants-*/*.json")  # the run's own directory
    assert f"reports: {report.parent}" in capsys.readouterr().out
    info = load_scenario(report).meta["converge_failure"]
    assert info["mutants"] == [name] and info["property"] == "prefix_consistency"
    with applied(by_name(name)[0]):
        (broken,) = replay_path(report)
    assert not broken.ok and broken.divergences[0].event_index == info["event_index"]
    (fixed,) = replay_path(report)
    assert fixed.ok, fixed.problems


def test_properties_of_a_mutant_start_with_its_hints() -> None:
    from converge.cli.mutants import properties_for

    (m,) = by_name("ttl_off_by_one")
    names = [s.name for s in properties_for(m)]
    assert names[:2] == ["ttl_fine_clock", "ttl_matches_model"]
    assert sorted(names) == sorted(s.name for s in select("regular"))


@pytest.mark.slow
def test_full_campaign_kills_every_available_mutant() -> None:
    outcomes = run_campaign(CATALOG, examples=300, seed=1)
    survivors = [o.name for o in outcomes if o.status in ("survived", "stale")]
    assert not survivors, survivors
    assert sum(o.status == "killed" for o in outcomes) >= 12


REGRESSIONS = sorted((SCENARIOS / "regressions").glob("*.json"))


def test_there_are_promoted_regression_fixtures() -> None:
    assert len(REGRESSIONS) >= 10


@pytest.mark.parametrize("path", REGRESSIONS, ids=[p.stem for p in REGRESSIONS])
def test_a_promoted_failure_still_catches_its_bug(path: Path) -> None:
    from converge.engine.model.scenario_json import load_scenario
    from converge.properties.replay import replay_path

    info = load_scenario(path).meta["converge_failure"]
    (name,) = info["mutants"]
    with applied(by_name(name)[0]):
        (broken,) = replay_path(path)
    assert not broken.ok and broken.divergences, f"{path.name} no longer shows {name}"
    assert broken.divergences[0].event_index == info["event_index"]
    (fixed,) = replay_path(path)
    assert fixed.ok, fixed.problems
