"""The version matrix: one finding on several Flink releases, each outcome in a row (issue 42).

`converge replay --system 'flink:*' FILE` (every installed release) or `--system flink --versions V1,V2` (the
releases named) replays each file on each release through its own adapter; `converge repro --system 'flink:*'`
runs the generated program on each. A release that is not installed is a row of its own, "not installed", and
never counts as agreeing: the matrix says which releases were measured, not which were assumed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from converge.engine.model.errors import ConvergeError, UsageError, exit_code
from converge.properties.systems.replay import replay_on_system
from converge.reports.terminal import print_replay_outcomes
from converge.systems.flink import environment
from converge.systems.registry import system_type_of
from converge.systems.venv_system import version_key

NOT_INSTALLED = "not installed"
_OUTCOMES = {"passed": "agrees", "diverged": "diverges", "system error": "fails"}


@dataclass(frozen=True)
class Cell:
    """One file on one release: diverges, agrees, fails, not installed (or another replay label, as it is)."""

    version: str
    file: str
    outcome: str
    detail: str = ""


def is_matrix(spec: str | None, versions: str | None) -> bool:
    """Whether a --system (and --versions) asks for the matrix rather than one system."""
    return spec is not None and (spec.endswith(":*") or versions is not None)


def matrix_versions(spec: str, versions: str | None) -> list[str]:
    """The releases a matrix covers, oldest first: every installed one (`flink:*`) or those --versions names."""
    name, _, version = spec.partition(":")
    if name != "flink":
        raise UsageError(f"--system {spec}: the version matrix is for flink only so far")
    if versions is not None:
        if version not in ("", "*"):
            raise UsageError(f"--versions names the releases; give --system flink, not --system {spec}")
        named = [v.strip() for v in versions.split(",") if v.strip()]
        if not named:
            raise UsageError("--versions: expected releases such as 1.20.1,2.3.0")
        return sorted(dict.fromkeys(named), key=version_key)
    found = [s.version for s in environment.installed()]
    if not found:
        raise UsageError(f"--system {spec}: no Flink release is installed; `{environment.INSTALL_HINT} --version V`")
    return found


def installed_versions() -> set[str]:
    return {s.version for s in environment.installed()}


def outcome_of(label: str) -> str:
    """A replay label as a matrix outcome."""
    return _OUTCOMES.get(label, label)


def replay_matrix(files: Sequence[Path], versions: Sequence[str], timeout: float | None = None) -> int:
    """Replay every file on every release (each its own adapter), print each release's outcomes, then the
    matrix; the worst exit code of the releases measured (2 when none of them is installed)."""
    have = installed_versions()
    cells: list[Cell] = []
    worst = 0
    for version in versions:
        if version not in have:
            cells += [Cell(version, str(f), NOT_INSTALLED, f"{environment.INSTALL_HINT} --version {version}")
                      for f in files]
            continue
        print(f"== flink {version}")
        got, code = _replay_one(files, version, timeout)
        cells += got
        worst = max(worst, code)
    print_matrix(cells)
    if not any(c.outcome != NOT_INSTALLED for c in cells):
        raise UsageError(f"none of the releases {', '.join(versions)} is installed")
    return worst


def _replay_one(files: Sequence[Path], version: str, timeout: float | None) -> tuple[list[Cell], int]:
    system_type = system_type_of(f"flink:{version}", timeout=timeout)
    try:
        with system_type.open() as system:
            outcomes = [replay_on_system(path, system, system_type.spec) for path in dict.fromkeys(files)]
    except ConvergeError as exc:  # the release did not start: every file fails on it, the next release still runs
        print(f"flink {version} did not start: {exc}")
        return [Cell(version, str(f), "fails", _first_line(str(exc))) for f in files], exit_code(exc)
    code = print_replay_outcomes(outcomes, lambda o: list(o.problems))
    return [Cell(version, str(o.path), outcome_of(o.label), _first_line(o.problems[0]) if o.problems else "")
            for o in outcomes], code


def _first_line(text: str, width: int = 100) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[:width - 3] + "..."


def print_matrix(cells: Sequence[Cell], echo: Callable[[str], None] = print) -> None:
    """The matrix, file by file: one row per release."""
    files = list(dict.fromkeys(c.file for c in cells))
    for file in files:
        echo(f"version matrix of {file}:")
        for c in (c for c in cells if c.file == file):
            echo(f"  flink {c.version:<10} {c.outcome:<14} {c.detail}".rstrip())
