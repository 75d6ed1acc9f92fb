"""`converge systems list` answers from the installations' records and checks live only with --check (issue 41
row 3: a plain list took 4 min 51 s, a JVM handshake per installed Flink version, with no output)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from converge.cli.main import main
from converge.cli.systems_list import fast_args
from converge.reports import progress
from converge.systems.flink import environment as flink
from converge.systems.pathway import environment as pathway
from tests.support.paths import ROOT

CAPABILITIES = {"settings": ["mini_batch"], "lacks": {"restart": "no restart here"}}


@pytest.fixture
def systems(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CONVERGE_SYSTEMS_DIR", str(tmp_path / "systems"))
    for name, version in (("flink", "2.3.0"), ("flink", "1.20.0"), ("pathway", "0.33.0")):
        folder = tmp_path / "systems" / f"{name}-{version}"
        (folder / "venv" / "bin").mkdir(parents=True)
        (folder / "system.json").write_text(json.dumps({
            "name": name, "version": version, "python": "3.11.7", "java": "-", "created": "2026-11-24T00:00:00+00:00",
            "smoke": {"ok": True, "message": "ok", "seconds": 9.0}, "capabilities": CAPABILITIES}))
    return tmp_path / "systems"


def _no_handshake(*args, **kwargs) -> dict:
    raise AssertionError("a plain `systems list` started an adapter")


def _rows(out: str) -> dict[str, str]:
    return {" ".join(line.split()[:2]): line for line in out.splitlines()[2:] if line.split()[:1] in (["flink"],
                                                                                                   ["pathway"])}


def test_a_plain_list_starts_no_adapter_and_shows_the_recorded_check(systems: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(flink, "smoke_check", _no_handshake)
    monkeypatch.setattr(pathway, "smoke_check", _no_handshake)
    assert main(["systems", "list"]) == 0
    captured = capsys.readouterr()
    rows = _rows(captured.out)
    assert sorted(rows) == ["flink 1.20.0", "flink 2.3.0", "pathway 0.33.0"]
    assert all("works (checked 2026-11-24)" in row and "restart [" in row for row in rows.values()), rows
    notes = [line for line in captured.out.splitlines() if line.startswith("[")]  # the lacks sentences (row 5)
    assert any("no restart here" in note for note in notes), captured.out
    assert "--check starts each adapter now" in captured.out and captured.err == ""


def test_no_check_is_still_accepted_and_says_it_is_the_default(systems: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(flink, "smoke_check", _no_handshake)
    monkeypatch.setattr(pathway, "smoke_check", _no_handshake)
    assert main(["systems", "list", "--no-check"]) == 0
    captured = capsys.readouterr()
    assert "--no-check is the default now" in captured.err and "works (checked 2026-11-24)" in captured.out


def test_check_handshakes_now_records_the_outcome_and_the_next_list_shows_it(systems: Path, monkeypatch,
                                                                            capsys) -> None:
    seen: list[tuple[str, bool]] = []

    def handshake(answer: dict):
        def check(command: list[str], version: str | None = None, *, with_case: bool = True) -> dict:
            seen.append((str(version), with_case))
            return {**answer, "capabilities": CAPABILITIES}
        return check

    monkeypatch.setattr(flink, "smoke_check", handshake({"ok": False, "message": "no hello (exit 1)", "seconds": 2.0}))
    monkeypatch.setattr(pathway, "smoke_check", handshake({"ok": True, "message": "ok", "seconds": 1.5}))
    assert main(["systems", "list", "--check"]) == 0
    captured = capsys.readouterr()
    rows = _rows(captured.out)
    assert sorted(seen) == [("0.33.0", False), ("1.20.0", False), ("2.3.0", False)]
    assert "BROKEN (checked now): no hello (exit 1)" in rows["flink 2.3.0"]
    assert "works (checked now, handshake 1.5 s)" in rows["pathway 0.33.0"]
    assert "systems list: checking flink 2.3.0 (a handshake with its adapter; a JVM starts)" in captured.err
    record = json.loads((systems / "flink-2.3.0" / "system.json").read_text())
    assert record["last_check"]["ok"] is False and record["last_check"]["message"] == "no hello (exit 1)"
    assert record["smoke"] == {"ok": True, "message": "ok", "seconds": 9.0}  # the rest of the record is kept
    monkeypatch.setattr(flink, "smoke_check", _no_handshake)
    monkeypatch.setattr(pathway, "smoke_check", _no_handshake)
    assert main(["systems", "list"]) == 0
    rows = _rows(capsys.readouterr().out)
    today = record["last_check"]["at"][:10]
    assert f"BROKEN (checked {today}): no hello (exit 1)" in rows["flink 1.20.0"]
    assert f"works (checked {today})" in rows["pathway 0.33.0"]


def test_check_prints_a_heartbeat_while_an_adapter_is_slow_to_answer(systems: Path, monkeypatch, capsys) -> None:
    """A slowed fake handshake (a JVM starting): a "still starting" line appears while it waits (issue 41 row 4)."""
    monkeypatch.setattr(progress, "HEARTBEAT_SECONDS", 0.05)
    heard = []

    def slow(command: list[str], version: str | None = None, *, with_case: bool = True) -> dict:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "still starting" not in sys.stderr.getvalue():  # type: ignore[attr-defined]
            time.sleep(0.02)
        heard.append(version)
        return {"ok": True, "message": "ok", "seconds": 0.3, "capabilities": CAPABILITIES}

    monkeypatch.setattr(flink, "smoke_check", slow)
    monkeypatch.setattr(pathway, "smoke_check", slow)
    assert main(["systems", "list", "--check"]) == 0
    err = capsys.readouterr().err
    assert "systems list: still starting flink 1.20.0's adapter (" in err, err
    assert len(heard) == 3


@pytest.mark.parametrize("argv, fast", [
    (["systems", "list"], True), (["systems", "list", "--check"], True), (["systems", "list", "--no-check"], True),
    (["systems", "list", "--help"], False), (["systems", "list", "--chek"], False), (["systems", "install"], False),
])
def test_only_a_plain_list_takes_the_fast_path(argv: list[str], fast: bool) -> None:
    assert (fast_args(argv) is not None) is fast


def test_a_plain_list_imports_no_other_command(systems: Path) -> None:
    """What keeps it under a second (measured in the report, never timed here): Hypothesis, DuckDB and sqlglot
    (the other commands' imports) stay unloaded."""
    code = ("import sys; from converge.cli.main import main; code = main(['systems', 'list']); "
            "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'hypothesis', 'duckdb', 'sqlglot', 'pandas'}); "
            "print(code, heavy, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "CONVERGE_SYSTEMS_DIR": str(systems)})
    assert done.stderr.strip().splitlines()[-1] == "0 []", done.stderr
    assert "flink    2.3.0" in done.stdout
