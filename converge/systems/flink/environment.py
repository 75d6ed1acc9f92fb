"""The Flink environment: a virtualenv with PyFlink, apart from converge's own, and the command that starts the adapter.

PyFlink pins protobuf 5 and py4j 0.10.9.7, which clash with converge's Spark extra (protobuf 6,
py4j 0.10.9.9), so Flink lives in its own venv under the user's cache, one folder per version
(`flink-2.3.0/`), as every system in its own venv does (converge/systems/venv_system.py). The adapter
program itself stays in converge's package (adapter.py next to this file), so a newer converge never
runs a stale copy.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

from converge.engine.model.errors import UsageError
from converge.systems import venv_system
from converge.systems.venv_system import InstalledSystem, systems_dir

__all__ = ["InstalledSystem", "systems_dir"]

DEFAULT_VERSION = "2.3.0"
MIN_JAVA = 11  # Flink 2.x runs on Java 11, 17 and 21
PROGRAM = Path(__file__).resolve().parent / "program"  # package data: the adapter program, never a converge module
ADAPTER = PROGRAM / "adapter.py"
INSTALL_HINT = "converge systems install flink"


def java_version() -> tuple[int, str]:
    """(major version, the first line of `java -version`); UsageError when Java is missing or too old."""
    java = shutil.which("java", path=os.environ.get("PATH"))
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        java = str(Path(home) / "bin" / "java")
    if java is None:
        raise UsageError(f"Flink needs Java {MIN_JAVA} or newer (17 recommended), and no `java` was found on PATH "
                         "or in JAVA_HOME; install a JDK (e.g. `apt-get install openjdk-17-jre-headless`)")
    try:
        done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        raise UsageError(f"`{java} -version` failed: {exc}") from None
    text = (done.stderr or done.stdout).strip()
    match = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if done.returncode != 0 or match is None:
        raise UsageError(f"cannot read the Java version from `{java} -version`: {text[:200]!r}")
    major = int(match.group(1))
    if major == 1 and match.group(2):  # "1.8.0_x" is Java 8
        major = int(match.group(2))
    if major < MIN_JAVA:
        raise UsageError(f"Flink needs Java {MIN_JAVA} or newer (17 recommended); `{java}` is Java {major}")
    return major, text.splitlines()[0]


def installed() -> list[InstalledSystem]:
    """Every Flink environment with a readable system.json, oldest version first."""
    return venv_system.installed(SYSTEM)


def find(version: str | None = None) -> InstalledSystem:
    """The installed environment of `version` (None: the newest); UsageError naming the install command if none."""
    return venv_system.find(SYSTEM, version)


def adapter_command(version: str | None = None) -> list[str]:
    """The argv that starts the Flink adapter of an installed environment (newest when `version` is None)."""
    return find(version).command()


def install(version: str = DEFAULT_VERSION, *, python: str | None = None, echo=lambda line: None) -> Path:
    """Create the Flink environment of `version` (idempotent: an installed one is returned as it is)."""
    target = systems_dir() / f"flink-{version}"
    if (target / "system.json").is_file():
        return target
    java_line = java_version()[1] if re.fullmatch(r"\d+(\.\d+){1,3}", version) else ""  # build() refuses a bad one
    return venv_system.build(SYSTEM, version, smoke=lambda command, v: smoke_check(command, v),
                             extra={"java": java_line}, python=python, echo=echo)


SMOKE_CASE = {
    "id": "smoke",
    "scenario": {"name": "smoke", "inputs": [
        {"name": "a", "columns": [["k", "BIGINT"], ["x", "VARCHAR"]], "unique_key": None, "changelog_mode": "retract"},
        {"name": "b", "columns": [["k", "BIGINT"], ["y", "VARCHAR"]], "unique_key": None, "changelog_mode": "retract"}],
        "join": {"inputs": ["a", "b"], "types": ["left"], "conditions": ["a.k = b.k"]}, "config": {}, "events": []},
    "changelogs": {"a": [["+I", 1, "a1"], ["+I", 2, "a2"]], "b": [["+I", 1, "b1"], ["-D", 1, "b1"], ["+I", 1, "b2"]]},
}
SMOKE_FINAL = [[1, "a1", 1, "b2"], [2, "a2", None, None]]


SYSTEM = venv_system.VenvSystem(
    name="flink", title="Flink", default_version=DEFAULT_VERSION, requirement=lambda v: f"apache-flink=={v}",
    size="about 850 MB; a few minutes on a first download", adapter=ADAPTER, hello_versions=(1,),
    smoke_case=SMOKE_CASE, smoke_final=tuple(map(tuple, SMOKE_FINAL)))


def smoke_check(command: list[str], version: str | None = None, *, with_case: bool = True,
                timeout: float = 180.0) -> dict:
    """Start the adapter, handshake, run one LEFT join (when `with_case`), shut down: {"ok", "message", "seconds",
    "capabilities"} (the hello's capabilities, None without a hello)."""
    return venv_system.smoke_check(SYSTEM, command, version, with_case=with_case, timeout=timeout)


def record_capabilities(system: InstalledSystem) -> InstalledSystem:
    """An installation recorded by an older converge, given the capabilities its adapter declares now (a handshake
    only); system.json is rewritten with them. UsageError when the handshake fails."""
    return venv_system.record_capabilities(SYSTEM, system, lambda command, v: smoke_check(command, v, with_case=False))


def features(capabilities: dict | None, version: str) -> tuple[str, str]:
    """(what the installation honours, what it lacks) as `converge systems list` shows them."""
    return venv_system.features(SYSTEM, capabilities, version)


def program_module(name: str) -> ModuleType:
    """A module of the adapter program (`case_plan`, `condition_sql`), for converge's own checks of it."""
    return venv_system.program_module(PROGRAM, name)
