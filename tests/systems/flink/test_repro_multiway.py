"""The multi-way findings fixed by 2.3.0 (docs/flink-findings.md #3, #5, #6, #9, #13), through `converge repro`: the
generated program of each case shows, on the release it was found on, what the hand-written plain-PyFlink script
shows (docs/examples/flink_multiway_*.py, tests/systems/flink/test_findings_plain_pyflink.py; #9 and #13 have no
script):
the job fails (exit 2, with the same exception) or pads a row (exit 1); with the multi-way operator off, and on
2.3.0, it exits 0. Slow (a JVM per run); a release that is not installed is a visible skip naming its install
command."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest

from converge.properties.replay import load_scenario_file
from converge.properties.systems.known import BUILTIN
from converge.systems.flink.repro import build
from tests.support.flink_versions import installed
from tests.support.paths import SCENARIOS

pytestmark = [pytest.mark.flink, pytest.mark.slow, pytest.mark.xdist_group("flink")]
SYSTEMS = SCENARIOS / "systems"
FOUND = [  # (case, release it was found on, exit code there, what the program prints there)
    (SYSTEMS / "flink_2_1_multiway_classcast.json", "2.1.0", 2,
     "Flink failed the job: Caused by: java.lang.ClassCastException: class "
     "org.apache.flink.table.data.binary.BinaryStringData cannot be cast to class java.lang.Long"),
    (SYSTEMS / "flink_2_2_multiway_duplicate_field.json", "2.2.0", 2, "Found duplicates"),
    (SYSTEMS / "flink_2_1_multiway_or_null_loses_match.json", "2.1.0", 1,
     "final answer: [(1, None, None, 'a', None, None, None, None, None, None, None, None)]"),
    (SYSTEMS / "flink_2_1_multiway_or_null_loses_match.json", "2.2.0", 1,
     "final answer: [(1, None, None, 'a', None, None, None, None, None, None, None, None)]"),
    (SYSTEMS / "flink_2_1_multiway_update_after_stays_joined.json", "2.1.0", 1,
     "final answer: [(1, 11, 1, 21, 1, 30)]"),
    (BUILTIN / "cases" / "flink_2_1_multiway_rowtime_condition.json", "2.1.0", 2,
     'Flink could not plan the query: java.lang.NullPointerException: Cannot invoke '
     '"org.apache.calcite.rel.RelNode.getInputs()" because "targetInput" is null'),
]


def _run(path: Path, version: str, folder: Path, *, multi_join: str = "on") -> tuple[int, str]:
    release = installed(version)
    scenario = load_scenario_file(path)
    scenario = dataclasses.replace(scenario, config=dataclasses.replace(scenario.config, multi_join=multi_join))
    repro = build(scenario, path.name, release.version)
    folder.mkdir()
    program = folder / f"repro_{repro.slug}.py"
    program.write_text(repro.program, encoding="utf-8")
    done = subprocess.run([str(release.interpreter), program.name], cwd=folder, capture_output=True, text=True,
                          timeout=600, check=False)
    return done.returncode, done.stdout + done.stderr[-2000:]


@pytest.mark.parametrize(("path", "version", "code", "says"), FOUND,
                         ids=["3-2.1.0", "5-2.2.0", "6-2.1.0", "6-2.2.0", "13-2.1.0", "9-2.1.0"])
def test_the_finding_shows_on_its_release_and_not_without_the_multiway_operator(path, version, code, says,
                                                                                tmp_path) -> None:
    got, out = _run(path, version, tmp_path / "on")
    assert got == code, out
    assert says in out
    got, out = _run(path, version, tmp_path / "off", multi_join="off")
    assert got == 0, out
    assert "AGREED" in out


@pytest.mark.parametrize("path", sorted({f[0] for f in FOUND}), ids=lambda p: p.stem)
def test_2_3_0_runs_each_case_and_agrees(path, tmp_path) -> None:
    got, out = _run(path, "2.3.0", tmp_path / "on")
    assert got == 0, out
    assert "AGREED" in out
