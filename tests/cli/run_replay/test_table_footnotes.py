"""A system campaign's table fits a terminal (issue 41 row 5): the outcome cell holds a short outcome, and why a
property was not applicable, not run or not checked is a numbered footnote under the table, one per reason."""

from __future__ import annotations

import re
import sys

from converge.cli.main import main
from converge.reports.terminal import Footnotes
from tests.support.paths import FAKE_ADAPTERS

FAKE = FAKE_ADAPTERS / "fake.py"
SHORT = re.compile(r"(passed|diverged|known|not (applicable|run|checked) \[\d+\])$")


def test_outcome_cells_are_short_and_the_reasons_are_footnotes(capsys) -> None:
    main(["run", "--system", f"cmd:{sys.executable} {FAKE} good", "--examples", "2", "--seed", "1",
          "--no-reports", "--quiet"])
    out = capsys.readouterr().out
    rows = [re.split(r"\s{2,}", line) for line in out.splitlines() if line.startswith("fake 0 ")]
    assert len(rows) > 10
    assert all(SHORT.match(row[3]) for row in rows), out
    notes = dict(re.findall(r"^\[(\d+)\] (.*)$", out, re.MULTILINE))
    marks = {row[2] + row[1]: re.findall(r"\[(\d+)\]", row[3]) for row in rows}
    assert {m for found in marks.values() for m in found} == set(notes) and len(notes) >= 5  # one note a reason
    assert notes[marks["semi_anti_equals_oracleregular"][0]] == "not applicable: fake runs neither SEMI nor ANTI joins"
    both = [row[3] for row in rows if row[2] == "changelog_rowkinds"]  # two properties lacking different things
    assert len(set(both)) == 2


def test_footnotes_number_each_reason_once() -> None:
    notes = Footnotes()
    assert [notes.mark("not run", "x"), notes.mark("not run", "y"), notes.mark("not run", "x"),
            notes.mark("passed", None)] == ["not run [1]", "not run [2]", "not run [1]", "passed"]
    assert notes.mark("multi_join", "it has none", "flink 1.19.0 lacks") == "multi_join [3]"
    assert notes.under("TABLE") == "TABLE\n[1] not run: x\n[2] not run: y\n[3] flink 1.19.0 lacks: it has none"
    assert Footnotes().under("TABLE") == "TABLE"
