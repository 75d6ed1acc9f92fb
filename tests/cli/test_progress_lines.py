"""Every long command prints a line at least every HEARTBEAT_SECONDS (issue 41 row 4: `systems install flink` was
silent 12 min inside pip, `check --system flink` 55 s while Flink started). Each test slows a fake step until it
has seen a heartbeat line, so it asserts that a line appeared, never how soon."""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path

import pytest

from converge.cli.commands import check as check_command
from converge.cli.main import main
from converge.engine.model.errors import UsageError
from converge.reports import progress
from converge.systems import venv_system
from tests.support.paths import EXAMPLES, FAKE_ADAPTERS

WAIT_FOR_MARK = ("import os, sys, time\n"
                 "print('Collecting apache-flink==2.3.0', flush=True)\n"
                 "deadline = time.monotonic() + 60\n"
                 "while not os.path.exists(sys.argv[1]) and time.monotonic() < deadline:\n"
                 "    time.sleep(0.02)\n"
                 "print('Successfully installed apache-flink-2.3.0', flush=True)\n"
                 "sys.exit(int(sys.argv[2]))\n")


class _Marking(io.StringIO):
    """stderr that creates `mark` once a line holding `seen` is written (the fake waits for it)."""

    def __init__(self, mark: Path, seen: str) -> None:
        super().__init__()
        self.mark, self.seen = mark, seen

    def write(self, text: str) -> int:
        if self.seen in text:
            self.mark.touch()
        return super().write(text)

    def isatty(self) -> bool:
        return False


@pytest.fixture(autouse=True)
def quick_heartbeat(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "HEARTBEAT_SECONDS", 0.05)


def _step(tmp_path: Path, code: int) -> tuple[list[str], list[str], Path]:
    """(the lines echoed, the argv of a fake pip that waits until a heartbeat was echoed, its mark file)."""
    script = tmp_path / "pip.py"
    script.write_text(WAIT_FOR_MARK)
    mark = tmp_path / "mark"
    return [], [sys.executable, str(script), str(mark), str(code)], mark


def test_an_install_step_passes_its_lines_on_and_beats_while_silent(tmp_path: Path) -> None:
    lines, argv, mark = _step(tmp_path, 0)

    def echo(line: str) -> None:
        lines.append(line)
        if "still running" in line and "  Collecting apache-flink==2.3.0" in lines:
            mark.touch()  # a heartbeat after pip's first line: the fake pip goes on

    out = venv_system.run_step(argv, "pip install apache-flink==2.3.0", echo=echo)
    first = lines.index("  Collecting apache-flink==2.3.0")
    assert any(line.startswith("pip install apache-flink==2.3.0: still running (") for line in lines[first:]), lines
    assert lines[-1] == "  Successfully installed apache-flink-2.3.0", lines
    assert out.splitlines() == ["Collecting apache-flink==2.3.0", "Successfully installed apache-flink-2.3.0"]


def test_a_failed_install_step_names_its_exit_and_last_lines(tmp_path: Path) -> None:
    lines, argv, mark = _step(tmp_path, 3)
    mark.touch()  # no wait: the step ends at once, with exit 3
    with pytest.raises(UsageError, match=r"pip install x failed \(exit 3\):\nCollecting apache-flink==2.3.0\n"
                                         r"Successfully installed"):
        venv_system.run_step(argv, "pip install x", echo=lines.append)


def test_the_smoke_check_phase_beats_while_it_waits(tmp_path: Path) -> None:
    heard: list[str] = []
    with venv_system.heartbeat("smoke check", heard.append):
        deadline = time.monotonic() + 60
        while not heard and time.monotonic() < deadline:
            time.sleep(0.01)
    assert heard and heard[0].startswith("smoke check: still running ("), heard


def test_check_beats_while_the_system_under_test_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys) -> None:
    mark = tmp_path / "mark"
    err = _Marking(mark, "check: still starting cmd:")
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(check_command, "_run_check", lambda *args: 0)  # the start is what is tested, not the run
    command = f"cmd:{sys.executable} {FAKE_ADAPTERS / 'fake.py'} slow-hello {mark}"
    code = main(["check", str(EXAMPLES / "left_join_residual.sql"), "--examples", "3", "--seed", "1",
                 "--no-reports", "--system", command])
    text = err.getvalue()
    assert f"check: starting {command} (" in text and f"check: still starting {command} (" in text, text
    assert mark.exists() and code == 0, (code, text)
