"""Which files `converge replay` replays: scenario files, found in the paths given, and the files it skips.

A reports folder holds more than scenarios (summary.json, Markdown, pictures,
the latest-run.txt pointer), and users point replay at it. A file is replayed when it
may be a scenario: a ``.json`` file whose top level is a JSON object with at
least one of the scenario's own keys (``inputs``, ``join``, ``events``), or
a ``.json`` file that cannot be read as JSON at all (a damaged scenario must
show up as bad input, never vanish). Everything else is skipped, and each
skipped file is listed with the reason.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from converge.engine.model.errors import BadInputError

__all__ = ["SCENARIO_KEYS", "Skipped", "find_scenario_files"]

SCENARIO_KEYS = frozenset({"inputs", "join", "events"})


@dataclass(frozen=True)
class Skipped:
    """A file replay did not run, and why."""

    path: Path
    reason: str


def _skip_reason(path: Path) -> str | None:
    """None when `path` may be a scenario file; otherwise why it is not one."""
    if path.suffix.lower() != ".json":
        return "not a .json file"
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None  # replayed, so that loading it reports the problem as this file's bad input
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return None  # likewise: a damaged scenario is bad input, not something to skip
    if not isinstance(doc, dict):
        return f"JSON {type(doc).__name__}, not a scenario object"
    if not SCENARIO_KEYS & doc.keys():
        return "JSON without any of the scenario keys inputs, join, events"
    return None


def find_scenario_files(target: str | Path) -> tuple[list[Path], list[Skipped]]:
    """The scenario files at `target` (a file, or a folder searched recursively, in name order) and the rest.

    Links to folders are not followed (a reports folder's `latest` names a run
    directory that is walked anyway). A target that does not exist is bad input."""
    target = Path(target)
    if not target.exists():
        raise BadInputError(f"{target}: no such file or directory")
    if not target.is_dir():
        paths = [target]
    else:
        paths = []
        for root, dirs, files in os.walk(target):
            dirs.sort()
            here = Path(root)
            paths += [here / d for d in dirs if (here / d).is_symlink()]
            paths += [here / f for f in sorted(files)]
        paths.sort()
    found: list[Path] = []
    skipped: list[Skipped] = []
    for path in paths:
        if path.is_dir():
            skipped.append(Skipped(path, "a link to a folder (not followed)"))
            continue
        reason = _skip_reason(path)
        if reason is None:
            found.append(path)
        else:
            skipped.append(Skipped(path, reason))
    return found, skipped
