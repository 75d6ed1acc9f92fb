"""`converge run | head`: a reader that goes away stops the command quietly, never as a crash."""

from __future__ import annotations

import os
import subprocess
import sys

from converge.cli import main as cli
from converge.cli.commands import run as run_command

RUN = ["run", "--family", "regular", "--property", "final_convergence", "--examples", "3", "--no-reports"]


def test_a_closed_stdout_exits_141_without_a_traceback(tmp_path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the table is printed
    try:
        proc = subprocess.run([sys.executable, "-m", "converge.cli.main", *RUN], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, cwd=tmp_path, timeout=600)
    finally:
        os.close(write_end)
    assert proc.returncode == 141, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "crashed" not in proc.stderr
    assert "regular/final_convergence: done: 3 examples, 3 compared" in proc.stderr  # it ran, then stopped
    assert not any(tmp_path.iterdir())


def test_another_broken_pipe_is_still_a_crash(monkeypatch, capsys) -> None:
    def broken(*args, **kwargs):
        raise BrokenPipeError(32, "Broken pipe")  # e.g. writing to an adapter that died

    monkeypatch.setattr(run_command, "run_campaign", broken)
    assert cli.main(RUN) == 3
    err = capsys.readouterr().err
    assert "Traceback" in err and "converge: crashed: BrokenPipeError" in err
