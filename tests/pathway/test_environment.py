"""The Pathway environment's bookkeeping and `converge systems` for it, without installing anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from converge.engine.model.errors import UsageError
from converge.reports.systems.pathway import environment
from converge.reports.systems.registry import TIMED, system_kind
from converge.reports.tooling.cli import main


@pytest.fixture
def systems(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CONVERGE_SYSTEMS_DIR", str(tmp_path / "systems"))
    return tmp_path / "systems"


def test_no_installation_names_the_install_command(systems: Path) -> None:
    with pytest.raises(UsageError, match="Pathway is not installed .*converge systems install pathway`"):
        environment.adapter_command()
    kind = system_kind("pathway:0.32.0", timeout=5)
    assert isinstance(kind, TIMED) and kind.timeout == 5
    with pytest.raises(UsageError, match="converge systems install pathway --version 0.32.0"):
        kind.open()


def test_an_installation_is_found_beside_flink_and_listed(systems: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = systems / "pathway-0.33.0"
    (folder / "venv" / "bin").mkdir(parents=True)
    (systems / "flink-9.9.9").mkdir()  # an interrupted Flink install is no Pathway either
    (folder / "system.json").write_text(json.dumps({
        "name": "pathway", "version": "0.33.0", "python": "3.11.7", "java": "-", "created": "2026-11-26T00:00:00",
        "smoke": {"ok": True}, "capabilities": {"settings": [], "lacks": {"mini_batch": "no mini-batch here"}}}))
    command = environment.adapter_command()
    assert command == [str(folder / "venv" / "bin" / "python"), "-I", "-B", str(environment.ADAPTER)]
    assert main(["systems", "list", "--no-check"]) == 0
    out = capsys.readouterr().out
    assert "pathway" in out and "0.33.0" in out and "no mini-batch here" in out, out
    assert main(["systems", "install", "pathway"]) == 0  # installed already: nothing to do
    assert "Pathway 0.33.0 is already installed" in capsys.readouterr().out
    assert main(["systems", "install", "pathway", "--version", "latest"]) == 2
    assert "expected a release number" in capsys.readouterr().err
