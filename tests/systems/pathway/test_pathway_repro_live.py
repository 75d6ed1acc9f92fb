"""`converge repro --system pathway` scripts run on the installed Pathway, alone in an empty folder. No Pathway
divergence is known to converge (docs/systems.md, "Pathway": findings none), so the cases agree (exit 0); the same
script with a wrong expected answer exits 1, which is the exit-code contract a divergence would meet."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from converge.properties.replay import load_scenario_file
from converge.systems.pathway import environment
from converge.systems.pathway.repro import build
from tests.support.paths import SCENARIOS

pytestmark = [pytest.mark.pathway, pytest.mark.xdist_group("pathway")]


def _run(path: Path, folder: Path, *, wrong_expected: bool = False) -> tuple[int, str]:
    installed = environment.find(environment.DEFAULT_VERSION)
    program = build(load_scenario_file(path), path.name, installed.version).program
    if wrong_expected:
        program = program.replace("\nEXPECTED = [", "\nEXPECTED = [(0, 0, 0, 0),", 1)
    folder.mkdir()
    target = folder / "repro.py"
    target.write_text(program, encoding="utf-8")
    done = subprocess.run([str(installed.interpreter), target.name], cwd=folder, capture_output=True, text=True,
                          timeout=300, check=False)
    assert sorted(p.name for p in folder.iterdir()) == ["repro.py"], "the script left files behind"
    return done.returncode, done.stdout + done.stderr[-2000:]


def test_a_null_key_full_join_agrees_and_a_wrong_answer_diverges(pathway_command, tmp_path) -> None:
    path = SCENARIOS / "regular" / "null_key_never_matches.json"
    code, out = _run(path, tmp_path / "agrees")
    assert code == 0, out
    assert "final answer: [(None, 10, None, None), (None, None, None, 20)]" in out and "AGREED" in out
    code, out = _run(path, tmp_path / "wrong", wrong_expected=True)
    assert code == 1, out
    assert "DIVERGED" in out


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ret_full_outer_both_sides", "anti_left_and_right_changes",
                                  "semi_left_and_right_changes", "null_safe_key_matches", "duplicates_no_unique_key"])
def test_more_cases_agree(pathway_command, tmp_path, name) -> None:
    code, out = _run(SCENARIOS / "regular" / f"{name}.json", tmp_path / name)
    assert code == 0, out
