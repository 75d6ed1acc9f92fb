"""`converge repro --system flink` programs run on the installed Flink, alone in an empty folder: each exits 1 on its
finding (docs/flink-findings.md; 2 for #8, where Flink cannot plan the query) and 0 on the same case with the bug's
trigger removed. Default suite: finding #2 (mini-batch on, then off); the other findings behind --run-slow. A JVM
per run (about 30 s each)."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest

from converge.cli.main import main
from converge.engine.model.scenario import ChangeEvent, Scenario
from converge.properties.replay import load_scenario_file
from converge.properties.systems.known import BUILTIN
from converge.systems.flink import environment
from converge.systems.flink.repro import build
from converge.systems.venv_system import version_key
from tests.support.paths import SCENARIOS

# No xdist_group: each program runs its own PyFlink job in a process of its own and shares nothing with the suite's
# Flink session, so it runs beside the "flink" worker instead of lengthening it.
pytestmark = [pytest.mark.flink]
CASES = BUILTIN / "cases"


def _mini_batch_off(scenario: Scenario) -> Scenario:
    return dataclasses.replace(scenario, config=dataclasses.replace(scenario.config, mini_batch_size=None))


def _no_nulls(scenario: Scenario) -> Scenario:
    """Finding #1's trigger is the NULL in the outer row's correlated column: 0 in its place."""
    events = tuple(dataclasses.replace(e, row=tuple(0 if v is None else v for v in e.row))
                   if isinstance(e, ChangeEvent) else e for e in scenario.events)
    return dataclasses.replace(scenario, events=events)


def _retract_sink(scenario: Scenario) -> Scenario:
    """Findings #10 and #11 need the upsert sink: the same join collected as its changelog (a retract sink)."""
    return dataclasses.replace(scenario, config=dataclasses.replace(scenario.config, sink="retract", sink_key=(),
                                                                    upsert_materialize="auto"))


def _insert_only(scenario: Scenario) -> Scenario:
    """Finding #8 needs an upsert input with a rowtime: the same input insert-only (its events are all +I)."""
    inputs = tuple(dataclasses.replace(s, changelog_mode="insert_only") if s.changelog_mode == "upsert" else s
                   for s in scenario.inputs)
    return dataclasses.replace(scenario, inputs=inputs)


def _run(scenario: Scenario, folder: Path) -> tuple[int, str]:
    version = environment.find().version
    repro = build(scenario, "case.json", version)
    folder.mkdir()
    program = folder / f"repro_{repro.slug}.py"
    program.write_text(repro.program, encoding="utf-8")
    done = subprocess.run([str(environment.find(version).interpreter), program.name], cwd=folder,
                          capture_output=True, text=True, timeout=600, check=False)
    return done.returncode, done.stdout + done.stderr[-2000:]


def _check(path: Path, without_trigger, tmp_path: Path, *, code_on_finding: int = 1,
           says: str = "DIVERGED") -> None:
    scenario = load_scenario_file(path)
    code, out = _run(scenario, tmp_path / "finding")
    assert code == code_on_finding, out
    assert says in out
    code, out = _run(without_trigger(scenario), tmp_path / "without_trigger")
    assert code == 0, out
    assert "AGREED" in out


def test_finding_2_diverges_with_mini_batch_and_agrees_without(flink_command, tmp_path) -> None:
    _check(CASES / "flink_minibatch_suppressed_padding.json", _mini_batch_off, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize(("path", "without_trigger"), [
    (CASES / "flink_exists_correlated_null_semi.json", _no_nulls),
    (CASES / "flink_exists_correlated_null_anti.json", _no_nulls),
    (CASES / "flink_minibatch_first_row_update_after.json", _mini_batch_off),
    (SCENARIOS / "systems" / "flink_minibatch_padding_swapped.json", _mini_batch_off),
], ids=["1-semi", "1-anti", "minibatch-update-after-first", "2-swapped"])
def test_the_other_findings_diverge_and_agree_without_their_trigger(flink_command, path, without_trigger,
                                                                     tmp_path) -> None:
    _check(path, without_trigger, tmp_path)


@pytest.mark.slow
def test_finding_8_upsert_rowtime_is_not_planned_and_an_insert_only_input_is(flink_command, tmp_path) -> None:
    _check(CASES / "flink_upsert_rowtime_plan_fails.json", _insert_only, tmp_path, code_on_finding=2,
           says="Flink could not plan the query: java.lang.IndexOutOfBoundsException: 0")


@pytest.mark.slow
@pytest.mark.parametrize("path", [CASES / "flink_upsert_sink_left_padding_lost.json",
                                  CASES / "flink_upsert_sink_right_key_only_delete.json"], ids=["10", "11"])
def test_findings_10_11_upsert_sink_diverges_and_the_retract_sink_agrees(flink_command, path, tmp_path) -> None:
    _check(path, _retract_sink, tmp_path, says="DIVERGED: the sink's table differs from the expected one")


@pytest.mark.slow
def test_the_version_matrix_of_finding_8_on_every_installed_release(flink_command, capsys) -> None:
    """docs/flink-findings.md #8: 2.1.0 to 2.3.0 cannot plan the case, earlier releases run it; a release that is
    not installed (0.0.1) is its own row, never one that agrees."""
    releases = [s.version for s in environment.installed()]
    path = CASES / "flink_upsert_rowtime_plan_fails.json"
    code = main(["replay", "--system", "flink", "--versions", ",".join([*releases, "0.0.1"]), str(path)])
    out = capsys.readouterr().out
    rows = dict(line.split()[1:3] for line in out[out.index("version matrix of"):].splitlines()[1:])
    assert rows.pop("0.0.1") == "not"  # "not installed"
    assert set(rows) == set(releases)
    for release, outcome in rows.items():
        if version_key(release) <= (2, 3, 0):
            assert outcome == ("diverges" if version_key(release) >= (2, 1, 0) else "agrees"), out
    assert code == (1 if "diverges" in rows.values() else 0)
