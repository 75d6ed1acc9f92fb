""".ci/oldest-constraints.txt pins every dependency at the lower bound pyproject.toml declares, and no upper pin
stops short of today's releases of duckdb (docs/ci.md)."""

from __future__ import annotations

import tomllib

from packaging.requirements import Requirement
from packaging.version import Version

from tests.support.paths import ROOT

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# Pins of packages converge does not require itself, each for a reason written beside it in the file.
INDIRECT = {"numpy"}


def _declared() -> dict[str, Requirement]:
    lines = list(PROJECT["dependencies"])
    for extra in PROJECT["optional-dependencies"].values():
        lines += [line for line in extra if not line.startswith("converge[")]
    return {(r := Requirement(line)).name.lower(): r for line in lines}


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / ".ci" / "oldest-constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep, f"{line!r} is not name==version"
            pins[name.strip().lower()] = version.strip()
    return pins


def test_every_dependency_is_pinned_at_its_lower_bound() -> None:
    declared, pins = _declared(), _pins()
    assert set(pins) - INDIRECT == set(declared)
    for name, requirement in declared.items():
        lower = [s.version for s in requirement.specifier if s.operator == ">="]
        assert len(lower) == 1, f"{name}: no single lower bound in {requirement}"
        assert Version(pins[name]) == Version(lower[0]), (name, pins[name], lower[0])  # 30.0.0 is 30
        assert requirement.specifier.contains(pins[name]), (name, pins[name], str(requirement.specifier))


def test_duckdb_2_is_allowed() -> None:
    duckdb = _declared()["duckdb"]
    assert duckdb.specifier.contains("1.5.0") and duckdb.specifier.contains("2.0.1")
