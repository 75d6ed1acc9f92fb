"""Campaigns write the Flink repro beside each failure report (converge/systems/flink/campaign_repro.py), without
Flink: the generator on a report's scenario file, a case it cannot express named in the report instead, and the
campaign's hook (a system type whose write_repros is Flink's) with and without --no-repro."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from converge.engine.model.scenario_json import dump_scenario
from converge.engine.model.system import CaseResult, System
from converge.engine.reference_system import ReferenceSystem
from converge.properties.replay import load_scenario_file
from converge.properties.systems.known import BUILTIN
from converge.reports.options import RunOptions
from converge.systems.campaign import run_system_campaign
from converge.systems.flink.campaign_repro import HEADING, write_beside
from converge.systems.reference import ReferenceSystemType

PADDING = BUILTIN / "cases" / "flink_minibatch_suppressed_padding.json"


def _report(folder: Path, name: str, scenario=None) -> Path:
    path = folder / f"{name}.json"
    dump_scenario(scenario or load_scenario_file(PADDING), path)
    path.with_suffix(".md").write_text("# a failure report\n", encoding="utf-8")
    return path


def test_the_repro_goes_beside_the_report_and_the_report_names_it(tmp_path) -> None:
    path = _report(tmp_path, "final-equals-oracle-1")
    written = write_beside([str(path), str(path.with_suffix(".md"))], "2.3.0")
    folder = tmp_path / "final-equals-oracle-1.repro"
    program = folder / "repro_final_equals_oracle_1.py"
    assert written == [str(program), str(folder / "REPORT.md")]
    compile(program.read_text(encoding="utf-8"), str(program), "exec")
    assert "SELECT *\nFROM orders\n  LEFT JOIN vouchers ON" in program.read_text(encoding="utf-8")
    md = path.with_suffix(".md").read_text(encoding="utf-8")
    assert md.startswith("# a failure report\n")
    assert HEADING in md
    assert "`cd final-equals-oracle-1.repro && python repro_final_equals_oracle_1.py`" in md
    assert "`converge repro final-equals-oracle-1.json --system flink:2.3.0 -o final-equals-oracle-1.repro`" in md


def test_a_case_the_generator_cannot_express_is_named_in_the_report_and_nothing_fails(tmp_path) -> None:
    scenario = load_scenario_file(PADDING)
    ttl = dataclasses.replace(scenario, config=dataclasses.replace(scenario.config, state_ttl_ms=10))
    path = _report(tmp_path, "ttl", ttl)
    assert write_beside([str(path)], "2.3.0") == []
    assert not (tmp_path / "ttl.repro").exists()
    md = path.with_suffix(".md").read_text(encoding="utf-8")
    assert md.endswith(f"{HEADING}\n\nNot generated: ttl.json: no Flink repro for this case: state TTL runs on "
                       "Flink's wall clock; no standalone program can drive it event by event\n")


class _Empty(ReferenceSystem):
    """Answers every case with nothing: every case with output diverges."""

    def __init__(self) -> None:
        super().__init__()
        self.name, self.version = "empty", "0"

    def run_cases(self, cases: Sequence) -> list[CaseResult]:
        return [CaseResult.ok(final=Counter()) for _ in cases]


class _EmptyWithFlinkRepros(ReferenceSystemType):
    def open(self, **kw) -> System:
        return _Empty()

    def write_repros(self, reports: Sequence[str]) -> list[str]:
        return write_beside(reports, "2.3.0")


def _campaign(tmp_path: Path, repro: bool) -> list[Path]:
    options = RunOptions(examples=60, seed=2, family="regular", property="final_equals_oracle", system="reference",
                         reports=tmp_path, shrink_budget=0, batch=20, repro=repro, quiet=True)
    assert run_system_campaign(options, _EmptyWithFlinkRepros("reference")) == 1
    return sorted((tmp_path / "latest").glob("*.md"))


def test_a_campaign_writes_the_repro_beside_its_failure_report(tmp_path, capsys) -> None:
    reports = [p for p in _campaign(tmp_path, repro=True) if p.name != "summary.md"]
    assert len(reports) == 1
    assert HEADING in reports[0].read_text(encoding="utf-8")
    programs = list((tmp_path / "latest").glob("*.repro/repro_*.py"))
    out = capsys.readouterr().out
    assert len(programs) == 1
    assert f"{programs[0].parent.name}/{programs[0].name}" in out  # the closing note lists it with the report


def test_no_repro_writes_none(tmp_path) -> None:
    reports = [p for p in _campaign(tmp_path, repro=False) if p.name != "summary.md"]
    assert len(reports) == 1
    assert HEADING not in reports[0].read_text(encoding="utf-8")
    assert not list((tmp_path / "latest").glob("*.repro"))
