"""Every built-in known divergence links its standalone repro: its `repro` field is the `converge repro` command of
its own case file, and that command generates a program (--no-run: no Flink needed). A wrong field is bad input."""

from __future__ import annotations

import shlex

import pytest

from converge.cli.main import main
from converge.engine.model.errors import BadInputError
from converge.properties.systems.known import builtin_known, parse_known
from tests.support.paths import ROOT

ENTRIES = builtin_known()


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_each_entrys_repro_command_generates_a_program_of_its_case(entry, tmp_path) -> None:
    assert entry.case is not None and entry.repro is not None
    argv = shlex.split(entry.repro)
    assert argv[:2] == ["converge", "repro"]
    assert (ROOT / argv[2]).resolve() == entry.case.resolve()  # the command names the entry's own case file
    assert main([*argv[1:], "--no-run", "-o", str(tmp_path)]) == 0  # a later -o wins: the files go to tmp_path
    programs = list(tmp_path.glob("repro_*.py"))
    assert [p.name for p in programs] == [f"repro_{entry.case.stem}.py"]
    compile(programs[0].read_text(encoding="utf-8"), str(programs[0]), "exec")
    assert (tmp_path / "REPORT.md").is_file()


def test_a_repro_field_that_names_another_file_is_bad_input() -> None:
    entry = {"id": "x", "system": "flink", "matcher": "m", "reason": "r", "link": "l",
             "case": "cases/flink_minibatch_suppressed_padding.json",
             "repro": "converge repro cases/flink_exists_correlated_null_semi.json --system flink"}
    folder = ENTRIES[0].case.parent.parent  # type: ignore[union-attr]
    with pytest.raises(BadInputError, match="repro: expected the `converge repro FILE"):
        parse_known({"known": [entry]}, folder=folder)
