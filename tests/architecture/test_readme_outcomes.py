"""The README defines every outcome label a table can show, with its exit code (issue 41 row 7: "not applicable"
and "not run" were used in tables and defined nowhere a user reads first)."""

from __future__ import annotations

import re

from converge.cli.commands.run import NOT_RUN as RUN_NOT_RUN
from converge.systems.campaign import KNOWN, NOT_APPLICABLE, NOT_RUN
from tests.support.paths import ROOT


def _exit_codes_section() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("Exit codes (every command):")
    return " ".join(text[start:text.index("### Reading the table", start)].split())


def test_every_label_that_runs_nothing_is_defined_with_its_exit_code() -> None:
    section = _exit_codes_section()
    assert RUN_NOT_RUN == NOT_RUN
    for label in (NOT_APPLICABLE, NOT_RUN, KNOWN):
        assert f"`{label}` (" in section, label  # defined: the label, then what it means
    assert re.search(r"no failure and add nothing to the exit code \(a run of only these exits 0\)", section)
    assert "`not checked` (exit 2)" in section
