"""`converge repro --system pathway` without Pathway: the generated script stands alone (no converge import, it
compiles, ruff passes it), holds the case's rows as the adapter feeds them and the hand-worked answer, refuses what it
does not generate yet, and the command writes it and REPORT.md (--no-run). The script run on Pathway:
tests/systems/pathway/test_pathway_repro_live.py."""

from __future__ import annotations

import dataclasses
import shutil

import pytest

from converge.cli.main import main
from converge.engine.model.errors import UsageError
from converge.properties.replay import load_scenario_file
from converge.systems.pathway.repro import build
from tests.support.paths import ROOT, SCENARIOS
from tests.support.repro_programs import imported_packages, literals, ruff_on_its_own

NULL_KEYS = SCENARIOS / "regular" / "null_key_never_matches.json"
RETRACT = SCENARIOS / "regular" / "ret_full_outer_both_sides.json"
ANTI = SCENARIOS / "regular" / "anti_left_and_right_changes.json"
RESIDUAL = SCENARIOS / "regular" / "residual_three_valued.json"


def _program(path=NULL_KEYS) -> str:
    return build(load_scenario_file(path), path.name, "0.33.0").program




@pytest.mark.parametrize("path", [NULL_KEYS, RETRACT, ANTI], ids=["null-keys", "retract", "anti"])
def test_the_script_imports_no_converge_and_compiles(path) -> None:
    program = _program(path)
    compile(program, "repro.py", "exec")
    assert imported_packages(program) == {"json", "math", "sys", "collections", "pathway"}


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not on PATH")
@pytest.mark.parametrize("rules", [["--config", str(ROOT / "pyproject.toml")], ["--isolated"]],
                         ids=["project", "defaults"])
def test_ruff_passes_the_script_on_its_own(tmp_path, rules) -> None:
    done = ruff_on_its_own(_program(ANTI), tmp_path, rules)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_script_holds_the_rows_the_chain_and_the_hand_worked_answer() -> None:
    found = literals(_program())
    # SQL: NULL = NULL is not true, so a FULL join pads both rows (worked by hand)
    assert sorted(found["EXPECTED"], key=repr) == [(None, 10, None, None), (None, None, None, 20)]
    assert found["FIRST"] == "a"
    assert found["STEPS"] == [("b", "full", [(("a", "k"), ("b", "k"), False)])]
    # one change per Pathway time, 2 and 4, in the case's order, as JSON text
    assert found["ROWS"] == {"a": [(1, "[null,10]", 2, 1)], "b": [(2, "[null,20]", 4, 1)]}


def test_a_retraction_retracts_the_live_copy_at_a_later_time() -> None:
    scenario = load_scenario_file(RETRACT)
    found = literals(_program(RETRACT))
    retracted = [(name, rid, time) for name, rows in found["ROWS"].items() for rid, _, time, diff in rows if diff == -1]
    kinds = [e.kind for e in scenario.events]
    assert len(retracted) == kinds.count("-D") + kinds.count("-U")
    for name, rid, time in retracted:  # the same row id was inserted before, at an earlier time
        (inserted,) = [t for r, _, t, d in found["ROWS"][name] if r == rid and d == 1]
        assert inserted < time


def test_what_is_not_generated_yet_is_refused() -> None:
    with pytest.raises(UsageError, match="non-equi part"):
        _program(RESIDUAL)
    scenario = load_scenario_file(NULL_KEYS)
    with pytest.raises(UsageError, match="job options"):
        build(dataclasses.replace(scenario, config=dataclasses.replace(scenario.config, mini_batch_size=2)),
              "x.json", "0.33.0")


def test_the_command_writes_the_script_and_the_report_without_running(tmp_path) -> None:
    assert main(["repro", str(NULL_KEYS), "--system", "pathway", "-o", str(tmp_path), "--no-run"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["REPORT.md", "repro_null_key_never_matches.py"]
    report = (tmp_path / "REPORT.md").read_text(encoding="utf-8")
    for part in ("## To Reproduce", "## Expected behavior", "## Actual behavior", "## Version",
                 "| 1 | +I | NULL | 10 |", "(NULL, 10, NULL, NULL)", "`python repro_null_key_never_matches.py`"):
        assert part in report, part
