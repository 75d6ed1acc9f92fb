"""One directory per run inside the reports folder, and a stable pointer to the latest one.

Two runs must never write over each other's summary or reports, not even when
they run at the same time (two terminals, two CI jobs on one cache). So every
run claims a directory of its own, named by its UTC start time (names sort by
time) plus its process id, created with an exclusive ``mkdir``: a name that
is taken is never reused. The reports folder then holds

* ``<run>/``: the run's failure reports and its ``summary.md``/``summary.json``;
* ``latest-run.txt``: a one-line text file naming the latest run's directory,
  replaced atomically (written aside, then renamed over the old one);
* ``latest``: a symbolic link to that directory, where the file system allows
  links (replaced atomically the same way).

Up to converge 0.3.0 the text file was ``LATEST``: on a case-insensitive file system
(macOS, Windows) ``LATEST`` and ``latest`` are one name, so each write of the
link replaced the file (issue 41 row 7). A folder written by an older converge
is still read (its ``LATEST``), and the next run removes that stale file.

"Latest" is the run that started last: a run that started earlier but
claims its directory later never moves the pointer back.
"""

from __future__ import annotations

import os
from pathlib import Path

from converge.engine.model.errors import UsageError
from converge.reports.location import new_run_name

__all__ = ["LATEST_FILE", "LATEST_LINK", "claim_run_dir", "ensure_run_dir", "latest_run", "new_run_name",
           "point_latest"]

LATEST_FILE = "latest-run.txt"
LATEST_LINK = "latest"
OLD_LATEST_FILE = "LATEST"  # up to 0.3.0: read when LATEST_FILE is missing, removed at the next run's pointer


def _unusable(folder: Path, exc: OSError) -> UsageError:
    reason = exc.strerror or type(exc).__name__
    return UsageError(f"reports folder {folder}: cannot write there ({reason}: {exc.filename or folder})")


def claim_run_dir(folder: Path, command: str = "run", *, started: float | None = None) -> Path:
    """Create this run's own directory inside `folder` and point latest-run.txt at it.

    `started` (a time.time() value, default now) is when the run started: a run
    that makes its directory at its first report (converge.reports.run_reports)
    is still named, and ordered for latest-run.txt, by its start. Raises UsageError (one
    line) when the folder cannot be written: it is a file, read-only, or on a
    path that cannot be created."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        while True:
            run = folder / new_run_name(command, started)
            try:
                run.mkdir()  # exclusive: a directory another run made is never shared
                break
            except FileExistsError:
                continue
    except OSError as exc:
        raise _unusable(folder, exc) from None
    point_latest(folder, run)
    return run


def ensure_run_dir(folder: Path, name: str) -> Path:
    """The run directory `name` (chosen once per run, e.g. by pytest's controller), created on first use.

    Several processes of one run (pytest-xdist workers) share it; the name
    holds the run's process id and a random part, so no other run has it."""
    run = Path(folder) / name
    if run.is_dir():
        return run
    try:
        run.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _unusable(Path(folder), exc) from None
    point_latest(Path(folder), run)
    return run


def latest_run(folder: Path) -> Path | None:
    """The run directory the pointer names (None: no run has written here yet); an older converge's LATEST
    file is read when there is no latest-run.txt."""
    for pointer in (LATEST_FILE, OLD_LATEST_FILE):
        try:
            name = (Path(folder) / pointer).read_text(encoding="utf-8").strip()
        except OSError:  # missing, or (case-insensitive file system) LATEST is the `latest` link's directory
            continue
        return Path(folder) / name if name else None
    return None


def _remove_old_pointer(folder: Path) -> None:
    """An older converge's LATEST file, removed once latest-run.txt names the run (never the `latest` link,
    which LATEST is on a case-insensitive file system)."""
    old = folder / OLD_LATEST_FILE
    try:
        if old.is_file() and not old.is_symlink() and not os.path.samefile(old, folder / LATEST_FILE):
            old.unlink()
    except OSError:
        pass


def point_latest(folder: Path, run: Path) -> None:
    """Make LATEST (and the `latest` link) name `run`, unless a run that started later already holds it.

    Best effort: the run's own directory is what matters, so a pointer that
    cannot be written is left as it was."""
    current = latest_run(folder)
    if current is not None and current.name > run.name and current.is_dir():
        return
    aside = f".{run.name}.tmp"
    try:
        (folder / aside).write_text(run.name + "\n", encoding="utf-8")
        os.replace(folder / aside, folder / LATEST_FILE)
    except OSError:
        return
    _remove_old_pointer(folder)
    try:
        os.symlink(run.name, folder / aside, target_is_directory=True)
        os.replace(folder / aside, folder / LATEST_LINK)
    except (OSError, NotImplementedError):  # no links on this file system (or no right to make them)
        try:
            (folder / aside).unlink()
        except OSError:
            pass
