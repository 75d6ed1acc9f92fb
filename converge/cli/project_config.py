"""`[tool.converge]` in the nearest pyproject.toml: a project's defaults for `converge run`.

Read with the stdlib's tomllib from the first pyproject.toml found walking up
from the current directory (the project converge runs in); a flag given on the
command line wins over the file. Paths in the file are relative to the
directory of the pyproject.toml that names them, so a CI job gets the same
files from any working directory. An unknown key or a value of the wrong type
is a UsageError naming the file and the key: a typo must not be ignored.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from converge.engine.model.errors import UsageError

__all__ = ["KEYS", "ProjectConfig", "find_pyproject", "load_project_config"]

# key -> (expected type, what it sets)
KEYS: dict[str, tuple[type, str]] = {
    "examples": (int, "--examples: examples (cases, with --system) per property"),
    "seed": (int, "--seed: the Hypothesis seed"),
    "reports-dir": (str, "--reports-dir: where reports and summaries go (\"off\": none)"),
    "known": (list, "--known: known-divergence files added to the built-in list"),
    "no-known": (bool, "--no-known: true leaves out the built-in known divergences"),
    "system": (str, "--system: the system under test (\"none\": the embedded campaign)"),
    "maxfail": (int, "--maxfail: stop after this many properties failed"),
    "junit-xml": (str, "--junit-xml: the JUnit XML file to write"),
}


@dataclass(frozen=True)
class ProjectConfig:
    """The `[tool.converge]` table of `path` (None: no pyproject.toml, or none with the table); values checked."""

    path: Path | None = None
    values: dict[str, Any] | None = None

    def get(self, key: str, default: Any = None) -> Any:
        return (self.values or {}).get(key, default)

    def path_of(self, text: str) -> Path:
        """A path the file names, relative to the file's directory."""
        assert self.path is not None
        return self.path.parent / text


def find_pyproject(start: Path | None = None) -> Path | None:
    """The nearest pyproject.toml in `start` (default: the current directory) or above it."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_project_config(start: Path | None = None) -> ProjectConfig:
    """The nearest pyproject.toml's `[tool.converge]`, each key and type checked."""
    path = find_pyproject(start)
    if path is None:
        return ProjectConfig()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: cannot read it as TOML ({exc})") from None
    table = data.get("tool", {}).get("converge") if isinstance(data.get("tool"), dict) else None
    if table is None:
        return ProjectConfig(path)
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [tool.converge] must be a table")
    for key, value in table.items():
        if key not in KEYS:
            raise UsageError(f"{path}: [tool.converge] {key}: unknown key (known: {', '.join(KEYS)})")
        expected, _ = KEYS[key]
        ok = isinstance(value, expected) and not (expected is int and isinstance(value, bool))
        if ok and expected is list:
            ok = all(isinstance(v, str) for v in value)
        if ok and key in ("examples", "maxfail"):
            ok = value >= 1
        if not ok:
            want = {"examples": "a whole number of at least 1", "maxfail": "a whole number of at least 1",
                    "known": "a list of file paths"}.get(key, {int: "a whole number", str: "a string",
                                                               bool: "true or false"}.get(expected, "?"))
            raise UsageError(f"{path}: [tool.converge] {key}: expected {want}, got {value!r}")
    return ProjectConfig(path, dict(table))
