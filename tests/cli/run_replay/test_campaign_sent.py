"""A system campaign says what it sent (issue 41 row 6): per property its shapes, the changelog modes its inputs
declared, its join types and how many cases held a retraction, so a green run that never sent a retraction says
so; summary.json keeps the same counts, and --stats works on a system campaign."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from converge.cli.commands import run as run_command
from converge.cli.main import main
from converge.engine.model.scenario import ChangeEvent
from converge.engine.model.system import CaseResult
from converge.engine.reference_system import ReferenceSystem
from converge.properties.systems.sent import Sent
from converge.systems.reference import ReferenceSystemType
from tests.support.small_scenarios import TLP


class Forgetful(ReferenceSystem):
    """A retraction bug: a case with a -U or -D in its input gets an empty answer."""

    def run_cases(self, cases: Sequence) -> list[CaseResult]:
        answers = super().run_cases(cases)
        return [CaseResult.ok(final=Counter()) if any(isinstance(e, ChangeEvent) and e.kind in ("-U", "-D")
                                                      for e in c.events) else a
                for c, a in zip(cases, answers, strict=True)]


class ForgetfulType(ReferenceSystemType):
    def open(self, **kw) -> ReferenceSystem:
        return Forgetful()


def sent_rows(out: str) -> dict[str, list[str]]:
    table = out.split("\nsent:\n", 1)[1].split("\n\n", 1)[0]
    return {f"{cells[0]}/{cells[1]}": cells for cells in (re.split(r"\s{2,}", line) for line in table.splitlines()[2:])
            if len(cells) == 6}


def test_a_green_campaign_that_sent_no_retraction_says_so(tmp_path: Path, monkeypatch, capsys) -> None:
    """Seed 3, 30 examples: regular/final_equals_oracle draws insert-only shapes only, so the retraction bug
    passes; the campaign says that none of its cases retracted anything."""
    monkeypatch.setattr(run_command, "system_type_of", lambda spec, timeout=None: ForgetfulType(spec))
    code = main(["run", "--system", "reference", "-k", "regular/final_equals_oracle or regular/upsert_equals",
                 "--examples", "30", "--seed", "3", "--reports-dir", str(tmp_path), "--quiet", "--stats"])
    out = capsys.readouterr().out
    rows = sent_rows(out)
    final = rows["regular/final_equals_oracle"]
    assert final[3] == "insert_only 30" and final[5] == "0 of 30 sent (none)", out
    assert int(final[2]) >= 1 and re.fullmatch(r"(inner|left|right|full)( \d+)(, \w+ \d+)*", final[4]), out
    assert ("NOTE regular/final_equals_oracle: none of its 30 cases sent a retraction (-U or -D): it checked "
            "inserts only") in out
    upsert = rows["regular/upsert_equals_oracle"]  # the other property sent retractions, and found the bug
    assert upsert[3].startswith("upsert ") and not upsert[5].startswith("0 of") and code == 1, out
    assert "special case (batches drawing it)" in out  # --stats on a system campaign
    summary = json.loads(next(tmp_path.glob("*-run-*/summary.json")).read_text())
    (row,) = [r for r in summary["properties"] if r["property"] == "final_equals_oracle"]
    assert row["sent"]["cases"] == 30 and row["sent"]["cases_with_retraction"] == 0
    assert row["sent"]["changelog_modes"] == {"insert_only": 30} and row["sent"]["shapes"] == int(final[2])


def test_sent_counts_cases_by_what_they_hold() -> None:
    sent = Sent()
    retracting = TLP.with_events(tuple(TLP.events) + (ChangeEvent(TLP.join.inputs[0], "-D", TLP.events[0].row),))
    sent.add([TLP, TLP])
    assert sent.no_retraction and sent.cells()[0] == 1 and sent.cells()[3] == "0 of 2 sent (none)"
    sent.add([retracting])
    assert not sent.no_retraction and sent.cells()[3] == "1 of 3 sent"
    assert sent.to_json()["cases"] == 3 and sum(sent.joins.values()) == 3
