"""`converge verify --capture-format`: the captures' format, named apart from `check --format` (the format converge
prints in); `--format` and `--output-format`, the spellings before, still work and say they are deprecated
(issue 41 row 7)."""

from __future__ import annotations

from pathlib import Path

import pytest

from converge.cli.main import main
from tests.support.captures import LEFT_JOIN, left_join_capture


def _verify(tmp_path: Path, *options: str) -> int:
    orders, payments, out, _ = left_join_capture(tmp_path)
    return main(["verify", str(LEFT_JOIN), "--source", f"orders={orders}", "--source", f"payments={payments}",
                 "--output", str(out), "--quiet", *options])


def test_capture_format_is_read_and_says_nothing_more(tmp_path: Path, capsys) -> None:
    assert _verify(tmp_path, "--capture-format", "jsonl", "--output-capture-format", "jsonl") == 0
    assert capsys.readouterr().err == ""


def test_capture_format_is_what_the_readers_use(tmp_path: Path, capsys) -> None:
    """A JSON-lines output read as Flink's print format is refused: the option reaches the reader."""
    assert _verify(tmp_path, "--output-capture-format", "print") == 2
    assert "expected Flink's print format" in capsys.readouterr().err


@pytest.mark.parametrize("old, new", [("--format", "--capture-format"),
                                      ("--output-format", "--output-capture-format")])
def test_the_old_spellings_still_work_and_say_they_are_deprecated(tmp_path: Path, capsys, old: str, new: str) -> None:
    assert _verify(tmp_path, old, "jsonl") == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"converge: verify {old} is deprecated (it names the captures' format, unlike check --format, "
                   f"the printed one): use {new}"]
