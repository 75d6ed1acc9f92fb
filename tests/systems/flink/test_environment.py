"""The Flink environment's bookkeeping and `converge systems`, without installing anything (fast, no JVM)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from converge.cli.main import main
from converge.engine.model.errors import UsageError
from converge.systems.flink import environment


@pytest.fixture
def systems(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CONVERGE_SYSTEMS_DIR", str(tmp_path / "systems"))
    return tmp_path / "systems"


def _record(root: Path, version: str, capabilities: dict | None = None) -> Path:
    """A system.json as an install writes it; without `capabilities`, as an older converge wrote it."""
    folder = root / f"flink-{version}"
    (folder / "venv" / "bin").mkdir(parents=True)
    doc = {"name": "flink", "version": version, "python": "3.11.7", "java": 'openjdk version "17.0.15"',
           "created": "2026-11-24T00:00:00+00:00", "smoke": {"ok": True, "message": "ok", "seconds": 9.0}}
    if capabilities is not None:
        doc["capabilities"] = capabilities
    (folder / "system.json").write_text(json.dumps(doc))
    return folder


OLD_FLINK = {"families": ["regular", "interval", "multiway"], "settings": ["mini_batch"],
             "lacks": {"multi_join": "Flink 1.19.0 has no multi-way join operator (FLIP-516, from 2.1)"}}


def test_the_systems_dir_follows_the_override_then_the_xdg_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CONVERGE_SYSTEMS_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere/cache")
    assert environment.systems_dir() == Path("/somewhere/cache/converge/systems")
    monkeypatch.setenv("CONVERGE_SYSTEMS_DIR", "/elsewhere")
    assert environment.systems_dir() == Path("/elsewhere")


def test_no_installation_names_the_install_command(systems: Path) -> None:
    with pytest.raises(UsageError, match="converge systems install flink"):
        environment.adapter_command()
    with pytest.raises(UsageError, match="converge systems install flink --version 1.20.0"):
        environment.adapter_command("1.20.0")


def test_the_newest_installation_is_the_default_and_half_written_folders_are_ignored(systems: Path) -> None:
    _record(systems, "2.3.0")
    _record(systems, "2.10.0")
    (systems / "flink-9.9.9").mkdir()  # no system.json: an interrupted install
    (systems / "flink-8.0.0").mkdir()
    (systems / "flink-8.0.0" / "system.json").write_text("{half")
    assert [s.version for s in environment.installed()] == ["2.3.0", "2.10.0"]
    command = environment.adapter_command()
    assert command[0] == str(systems / "flink-2.10.0" / "venv" / "bin" / "python")
    assert command[1:] == ["-I", "-B", str(environment.ADAPTER)]
    assert environment.adapter_command("2.3.0")[0].startswith(str(systems / "flink-2.3.0"))


def test_a_missing_java_is_a_usage_error_that_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(UsageError, match="no `java` was found"):
        environment.java_version()


def test_without_java_the_flink_tests_skip_with_the_reason_and_ci_fails_them(monkeypatch: pytest.MonkeyPatch,
                                                                             tmp_path: Path) -> None:
    from tests.support.shared_adapter import unavailable

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(UsageError) as missing:
        environment.java_version()
    monkeypatch.delenv("CONVERGE_REQUIRE_FLINK", raising=False)
    with pytest.raises(pytest.skip.Exception, match="Flink environment unavailable: Flink needs Java 11 or newer .*"
                                                    "no `java` was found"):
        unavailable("Flink", str(missing.value))
    monkeypatch.setenv("CONVERGE_REQUIRE_FLINK", "1")
    with pytest.raises(pytest.fail.Exception, match="CONVERGE_REQUIRE_FLINK=1 but the Flink environment is "
                                                    "unavailable: Flink needs Java"):
        unavailable("Flink", str(missing.value))


def test_an_old_java_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "java"
    fake.write_text('#!/bin/sh\necho \'java version "1.8.0_392"\' >&2\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(UsageError, match="is Java 8"):
        environment.java_version()


def test_systems_list_and_install_on_the_command_line(systems: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["systems", "list"]) == 0
    assert "no system installed" in capsys.readouterr().out
    _record(systems, "2.3.0")
    assert main(["systems", "list"]) == 0  # from the record: the install's smoke check, no handshake now
    out = capsys.readouterr().out
    assert "flink" in out and "2.3.0" in out and "17.0.15" in out and "works (checked 2026-11-24)" in out
    assert main(["systems", "list", "--check"]) == 0  # the recorded venv has no python: the check says it is broken
    assert "BROKEN (checked now): cannot start" in capsys.readouterr().out
    assert main(["systems", "install", "flink", "--version", "2.3.0"]) == 2  # an older record, and no python
    err = capsys.readouterr().err
    assert "Flink 2.3.0 in" in err and "does not answer a handshake: cannot start" in err, err
    assert main(["systems", "install", "flink", "--version", "latest"]) == 2
    assert "expected a release number" in capsys.readouterr().err


def test_what_a_version_honours_and_lacks_is_listed_from_its_record(systems: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    _record(systems, "1.19.0", OLD_FLINK)
    _record(systems, "2.3.0")  # recorded by an older converge
    assert main(["systems", "list", "--no-check"]) == 0
    out = capsys.readouterr().out  # the lacks cell names the settings; the sentences are footnotes (issue 41 row 5)
    rows = {line.split()[1]: line for line in out.splitlines()[2:] if not line.startswith("[")}
    assert "mini_batch" in rows["1.19.0"] and "  multi_join [1]  " in rows["1.19.0"]
    assert "FLIP-516" not in rows["1.19.0"]
    assert "\n[1] flink 1.19.0 lacks: Flink 1.19.0 has no multi-way join operator (FLIP-516, from 2.1)" in out
    assert "not recorded" in rows["2.3.0"] and "  not recorded [2]  " in rows["2.3.0"]
    assert "\n[2] flink 2.3.0: run `converge systems install flink --version 2.3.0` again to record them" in out
    assert environment.find("1.19.0").capabilities == OLD_FLINK
    assert main(["systems", "install", "flink", "--version", "1.19.0"]) == 0  # recorded: nothing to do
    assert "Flink 1.19.0 is already installed in" in capsys.readouterr().out


def test_an_older_record_gets_the_capabilities_its_adapter_declares(systems: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    _record(systems, "2.3.0")
    seen = []

    def handshake(command: list[str], version: str | None = None, *, with_case: bool = True) -> dict:
        seen.append((command, version, with_case))
        return {"ok": True, "message": "ok", "seconds": 1.0, "capabilities": {"settings": ["mini_batch", "multi_join"]}}

    monkeypatch.setattr(environment, "smoke_check", handshake)
    assert main(["systems", "install", "flink", "--version", "2.3.0"]) == 0
    assert "recorded its capabilities" in capsys.readouterr().out
    assert seen == [(environment.find("2.3.0").command(), "2.3.0", False)]
    record = json.loads((systems / "flink-2.3.0" / "system.json").read_text())
    assert record["capabilities"] == {"settings": ["mini_batch", "multi_join"]}
    assert record["smoke"] == {"ok": True, "message": "ok", "seconds": 9.0}  # the rest is kept
