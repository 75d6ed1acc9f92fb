"""What a command writes during one run: its failure reports and summary, in the run's own directory.

A report that cannot be written must not cost the user the results: the
command still runs every check and prints its table. So nothing here raises
for a file system problem; each one is kept as a one-line message in
`problems`, which the command prints on stderr and turns into exit 2 when
nothing worse happened (the user asked for reports that are not there). A
picture left out of a report (no matplotlib, a write that failed) is a
`warning`: printed the same way, it never changes the exit code.

The run's directory is claimed lazily, at its first file: a run that writes
nothing leaves nothing, and latest-run.txt only ever names a run that wrote something.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from converge.engine.model.errors import EXIT_BAD_INPUT, EXIT_OK, UsageError
from converge.properties.divergence import Divergence
from converge.reports.failure import failure_reporter, write_failure_report
from converge.reports.runs import claim_run_dir
from converge.reports.summary import write_summary

__all__ = ["RunReports"]


@dataclass
class RunReports:
    """One run's reports. The run's directory is made at the first file written into it, so a run that
    writes nothing (a green `converge check`) leaves no empty directory and never becomes the latest run.

    `run_dir` is None until then, and stays None when reports are off or the folder cannot be written."""

    folder: Path | None
    command: str = "run"
    run_dir: Path | None = None
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.time)
    _unusable: bool = field(default=False, init=False, repr=False)  # claiming failed once: never tried again

    @classmethod
    def open(cls, folder: Path | None, command: str = "run") -> RunReports:
        """The reports of a run starting now inside `folder` (None: reports are off); nothing is made yet."""
        return cls(folder, command)

    def directory(self) -> Path | None:
        """The run's own directory, claimed on the first call (None: reports are off or cannot be written)."""
        if self.run_dir is None and self.folder is not None and not self._unusable:
            try:
                self.run_dir = claim_run_dir(self.folder, self.command, started=self.started)
            except UsageError as exc:
                self._unusable = True
                self.problems.append(f"{exc}; no reports are written")
        return self.run_dir

    def _note(self, what: str, exc: OSError) -> None:
        self.problems.append(f"{what} not written: {exc.filename or self.run_dir}: {exc.strerror or exc}")

    def warn(self, message: str) -> None:
        """A warning printed when the run settles, once however often it comes (e.g. no matplotlib)."""
        if message not in self.warnings:
            self.warnings.append(message)

    def reporter(self, *, runtime: str = "local", notes: Mapping[str, Any] | None = None) -> Callable | None:
        """A run_property callback writing each failure's report here (None when reports are off)."""
        if self.folder is None:
            return None

        def report(result: Any) -> None:
            folder = self.directory()
            if folder is None:
                return
            try:
                failure_reporter(folder, runtime=runtime, notes=notes, warn=self.warn)(result)
            except OSError as exc:
                self._note(f"the report of {result.family}/{result.name} was", exc)

        return report

    def write_failure(self, d: Divergence, **kw: Any) -> list[str]:
        """write_failure_report into the run's directory; the paths written (none on a problem)."""
        folder = self.directory()
        if folder is None:
            return []
        try:
            return [str(p) for p in write_failure_report(d, folder, warn=self.warn, **kw)]
        except OSError as exc:
            self._note(f"the report of {d.property} was", exc)
            return []

    def summary(self, results: Sequence, *, system: str | None = None,
                outcomes: Mapping[tuple[str, str], str] | None = None, **more: Any) -> Path | None:
        """Write summary.md/summary.json (`more`: write_summary's counts, waited, system_spec, batch and
        last_failed); the Markdown's path (None when not written). A pass that does not clear an earlier failure
        (reports/last_failed.py) is a warning."""
        folder = self.directory()
        if folder is None:
            return None
        try:
            return write_summary(results, folder, system=system, outcomes=outcomes, notes=self.warnings, **more)[0]
        except OSError as exc:
            self._note("the summary was", exc)
            return None

    def settle(self, code: int) -> int:
        """Print each warning and problem on stderr (one line each); the run's exit code with the problems counted.

        Problems (a report or summary not written) make the exit code 2 only when every check passed: a
        divergence or a crash stays the run's exit code, the missing reports are a second problem the
        warning names. Warnings (a picture left out) never change it."""
        for line in self.warnings + self.problems:
            print(f"converge: warning: {line}", file=sys.stderr)
        return EXIT_BAD_INPUT if self.problems and code == EXIT_OK else code
