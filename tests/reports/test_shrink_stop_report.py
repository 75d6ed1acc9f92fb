"""A system campaign whose shrink stops at its budget says so everywhere its failure is shown."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from converge.engine.model.system import CaseResult, System
from converge.engine.reference_system import ReferenceSystem
from converge.reports.options import RunOptions
from converge.systems.campaign import run_system_campaign
from converge.systems.reference import ReferenceSystemType


class _Empty(ReferenceSystem):
    """Answers every case with nothing: every case with output diverges."""

    def __init__(self) -> None:
        super().__init__()
        self.name, self.version = "empty", "0"

    def run_cases(self, cases: Sequence) -> list[CaseResult]:
        return [CaseResult.ok(final=Counter()) for _ in cases]


class _EmptySystemType(ReferenceSystemType):
    def open(self, **kw) -> System:
        return _Empty()


def test_a_stopped_shrink_is_named_in_the_closing_note_and_the_summary_markdown(tmp_path, capsys) -> None:
    options = RunOptions(examples=60, seed=2, family="regular", property="final_equals_oracle", system="reference",
                         reports=tmp_path, shrink_budget=0, batch=20)
    assert run_system_campaign(options, _EmptySystemType("reference")) == 1
    out = capsys.readouterr().out
    block = out[out.index("\nDIVERGED regular/final_equals_oracle on empty 0"):]
    assert block.splitlines()[2] == ("  shrinking stopped at its budget (0 s, --shrink-budget): the case below is "
                                     "the smallest found by then")
    summary = (tmp_path / "latest" / "summary.md").read_text()
    row = next(line for line in summary.splitlines() if "| final_equals_oracle |" in line)
    assert "(shrink stopped after 0 s)" in row
