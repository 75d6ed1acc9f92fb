"""The Flink environment's bookkeeping and `converge systems`, without installing anything (fast, no JVM)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from converge.engine.model.errors import UsageError
from converge.reports.systems.flink import environment
from converge.reports.tooling.cli import main


@pytest.fixture
def systems(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CONVERGE_SYSTEMS_DIR", str(tmp_path / "systems"))
    return tmp_path / "systems"


def _record(root: Path, version: str) -> Path:
    folder = root / f"flink-{version}"
    (folder / "venv" / "bin").mkdir(parents=True)
    (folder / "system.json").write_text(json.dumps({
        "name": "flink", "version": version, "python": "3.11.7", "java": 'openjdk version "17.0.15"',
        "created": "2026-11-24T00:00:00+00:00", "smoke": {"ok": True, "message": "ok", "seconds": 9.0}}))
    return folder


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
    from tests.flink.conftest import _unavailable

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(UsageError) as missing:
        environment.java_version()
    monkeypatch.delenv("CONVERGE_REQUIRE_FLINK", raising=False)
    with pytest.raises(pytest.skip.Exception, match="Flink environment unavailable: Flink needs Java 11 or newer .*"
                                                    "no `java` was found"):
        _unavailable(str(missing.value))
    monkeypatch.setenv("CONVERGE_REQUIRE_FLINK", "1")
    with pytest.raises(pytest.fail.Exception, match="CONVERGE_REQUIRE_FLINK=1 but the Flink environment is "
                                                    "unavailable: Flink needs Java"):
        _unavailable(str(missing.value))


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
    assert main(["systems", "list", "--no-check"]) == 0
    out = capsys.readouterr().out
    assert "flink" in out and "2.3.0" in out and "17.0.15" in out and "not checked" in out
    assert main(["systems", "list"]) == 0  # the recorded venv has no python: the check says it is broken
    assert "BROKEN" in capsys.readouterr().out
    assert main(["systems", "install", "flink", "--version", "2.3.0"]) == 0
    assert "already installed" in capsys.readouterr().out
    assert main(["systems", "install", "flink", "--version", "latest"]) == 2
    assert "expected a release number" in capsys.readouterr().err
