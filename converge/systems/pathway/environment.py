"""The Pathway environment: a virtualenv with `pathway` from PyPI, apart from converge's own, under the user's cache
(`pathway-0.33.0/`), as every system in its own venv (converge/systems/venv_system.py).

Pathway pins its own pandas, pyarrow, OpenTelemetry and more (about 1.6 GB installed), none of which converge needs.
The adapter program stays in converge's package (program/adapter.py), run by the venv's interpreter.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from converge.systems import venv_system
from converge.systems.venv_system import InstalledSystem

DEFAULT_VERSION = "0.33.0"
PROGRAM = Path(__file__).resolve().parent / "program"  # package data: the adapter program, never a converge module
ADAPTER = PROGRAM / "adapter.py"
INSTALL_HINT = "converge systems install pathway"

_KEY = [{"left": {"input": "a", "column": "k"}, "right": {"input": "b", "column": "k"}, "null_safe": False}]
# A LEFT join with a NULL key on each side (which must not match), a duplicate and a retraction, in protocol v2.
SMOKE_CASE = {
    "id": "smoke",
    "scenario": {"name": "smoke", "inputs": [
        {"name": "a", "columns": [["k", "BIGINT"], ["x", "VARCHAR"]], "unique_key": None, "changelog_mode": "retract"},
        {"name": "b", "columns": [["k", "BIGINT"], ["y", "VARCHAR"]], "unique_key": None, "changelog_mode": "retract"}],
        "join": {"inputs": ["a", "b"], "types": ["left"], "conditions": ["a.k = b.k"], "interval": None},
        "config": {}, "events": [
            {"input": "a", "kind": "+I", "row": [1, "a1"]}, {"input": "a", "kind": "+I", "row": [None, "a2"]},
            {"input": "b", "kind": "+I", "row": [1, "b1"]}, {"input": "b", "kind": "+I", "row": [1, "b1"]},
            {"input": "b", "kind": "-D", "row": [1, "b1"]}, {"input": "b", "kind": "+I", "row": [None, "b2"]}]},
    "plan": {"first": "a", "steps": [{"input": "b", "type": "left", "keys": _KEY, "residual": None}],
             "interval": None},
}
SMOKE_FINAL = ((1, "a1", 1, "b1"), (None, "a2", None, None))

SYSTEM = venv_system.VenvSystem(
    name="pathway", title="Pathway", default_version=DEFAULT_VERSION, requirement=lambda v: f"pathway=={v}",
    size="about 1.6 GB installed, with its pandas, pyarrow and OpenTelemetry; a few minutes",
    adapter=ADAPTER, hello_versions=(1, 2), smoke_case=SMOKE_CASE, smoke_final=SMOKE_FINAL)


def installed() -> list[InstalledSystem]:
    """Every Pathway environment with a readable system.json, oldest version first."""
    return venv_system.installed(SYSTEM)


def find(version: str | None = None) -> InstalledSystem:
    """The installed environment of `version` (None: the newest); UsageError naming the install command if none."""
    return venv_system.find(SYSTEM, version)


def adapter_command(version: str | None = None) -> list[str]:
    """The argv that starts the Pathway adapter of an installed environment (newest when `version` is None)."""
    return find(version).command()


def install(version: str = DEFAULT_VERSION, *, python: str | None = None, echo=lambda line: None) -> Path:
    """Create the Pathway environment of `version` (idempotent: an installed one is returned as it is)."""
    return venv_system.build(SYSTEM, version, smoke=lambda command, v: smoke_check(command, v), extra={"java": "-"},
                             python=python, echo=echo)


def smoke_check(command: list[str], version: str | None = None, *, with_case: bool = True,
                timeout: float = 180.0) -> dict:
    """Start the adapter, handshake, run the smoke LEFT join (when `with_case`), shut down."""
    return venv_system.smoke_check(SYSTEM, command, version, with_case=with_case, timeout=timeout)


def record_capabilities(system: InstalledSystem) -> InstalledSystem:
    """An installation recorded by an older converge, given the capabilities its adapter declares now (a handshake
    only); system.json is rewritten with them. UsageError when the handshake fails."""
    return venv_system.record_capabilities(SYSTEM, system, lambda command, v: smoke_check(command, v, with_case=False))


def features(capabilities: dict | None, version: str) -> tuple[str, str]:
    """(what the installation honours, what it lacks) as `converge systems list` shows them."""
    return venv_system.features(SYSTEM, capabilities, version)


def program_module(name: str) -> ModuleType:
    """A module of the adapter program (`expression`, `keys`, `feed`) for converge's own tests of it (they import
    only the standard library, except graph.py and adapter.py)."""
    return venv_system.program_module(PROGRAM, name)
