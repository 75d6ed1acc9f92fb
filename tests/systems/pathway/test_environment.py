"""The Pathway environment's bookkeeping and `converge systems` for it, without installing anything."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from converge.cli.main import main
from converge.engine.model.errors import UsageError
from converge.systems.pathway import environment
from converge.systems.registry import TIMED, system_type_of


@pytest.fixture
def systems(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CONVERGE_SYSTEMS_DIR", str(tmp_path / "systems"))
    return tmp_path / "systems"


def test_no_installation_names_the_install_command(systems: Path) -> None:
    with pytest.raises(UsageError, match="Pathway is not installed .*converge systems install pathway`"):
        environment.adapter_command()
    kind = system_type_of("pathway:0.32.0", timeout=5)
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


FAKE = '''import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "hello", "protocol": "converge-adapter", "version": 2,
                          "system": {"name": "pathway", "version": "0.33.0"}, "capabilities": {}}), flush=True)
    elif m["type"] == "run":
        print(json.dumps({"type": "results", "request": 1, "results": [dict(id="smoke", status="ok", **ANSWER)]}),
              flush=True)
    else:
        break
'''


@pytest.mark.parametrize("answer, ok", [
    ({"final": [[1, "a1", 1, "b1"], [None, "a2", None, None]]}, True),
    # an `output: changelog` adapter (Flink's) answers no final: its changelog is folded
    ({"changelog": [["+I", 1, "a1", 1, "b1"], ["+I", 1, "a1", 1, "b1"], ["-D", 1, "a1", 1, "b1"],
                    ["+I", None, "a2", None, None]]}, True),
    ({"changelog": [["+I", 1, "a1", 1, "b1"], ["+I", None, "a2", None, None], ["-D", None, "a2", None, None]]},
     False),
    ({"final": [[1, "a1", 1, "b1"], [None, "a2", None, "b2"]]}, False),  # a NULL key that matched
])
def test_the_smoke_check_compares_the_final_table_or_the_folded_changelog(tmp_path: Path, answer: dict,
                                                                           ok: bool) -> None:
    script = tmp_path / "fake.py"
    script.write_text(f"ANSWER = {answer!r}\n" + FAKE)
    check = environment.smoke_check([sys.executable, str(script)], "0.33.0", timeout=60)
    assert check["ok"] is ok, check
