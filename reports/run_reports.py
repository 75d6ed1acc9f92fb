"""What a command writes during one run: its failure reports and summary, in the run's own directory.

A report that cannot be written must not cost the user the results: the
command still runs every check and prints its table. So nothing here raises
for a file system problem; each one is kept as a one-line message in
`problems`, which the command prints on stderr and turns into exit 2 when
nothing worse happened (the user asked for reports that are not there).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from converge.engine.model.errors import EXIT_BAD_INPUT, EXIT_OK, UsageError
from converge.properties.divergence import Divergence
from converge.reports.failure import failure_reporter, write_failure_report
from converge.reports.runs import claim_run_dir
from converge.reports.summary import write_summary

__all__ = ["RunReports"]


@dataclass
class RunReports:
    """One run's reports; `run_dir` is None when reports are off or the folder cannot be written."""

    folder: Path | None
    run_dir: Path | None = None
    problems: list[str] = field(default_factory=list)

    @classmethod
    def open(cls, folder: Path | None, kind: str = "run") -> "RunReports":
        """Claim the run's directory inside `folder` (None: reports are off)."""
        reports = cls(folder)
        if folder is not None:
            try:
                reports.run_dir = claim_run_dir(folder, kind)
            except UsageError as exc:
                reports.problems.append(f"{exc}; no reports are written")
        return reports

    def _note(self, what: str, exc: OSError) -> None:
        self.problems.append(f"{what} not written to {self.run_dir}: {exc.strerror or exc}")

    def reporter(self, *, runtime: str = "local", notes: Mapping[str, Any] | None = None) -> Callable | None:
        """A run_property callback writing each failure's report here (None when there is nowhere to write)."""
        if self.run_dir is None:
            return None
        write = failure_reporter(self.run_dir, runtime=runtime, notes=notes)

        def report(result: Any) -> None:
            try:
                write(result)
            except OSError as exc:
                self._note(f"the report of {result.family}/{result.name} was", exc)

        return report

    def write_failure(self, d: Divergence, **kw: Any) -> list[str]:
        """write_failure_report into the run's directory; the paths written (none on a problem)."""
        if self.run_dir is None:
            return []
        try:
            return [str(p) for p in write_failure_report(d, self.run_dir, **kw)]
        except OSError as exc:
            self._note(f"the report of {d.property} was", exc)
            return []

    def summary(self, results: Sequence, *, system: str | None = None) -> Path | None:
        """Write summary.md/summary.json; the Markdown's path (None when not written)."""
        if self.run_dir is None:
            return None
        try:
            return write_summary(results, self.run_dir, system=system)[0]
        except OSError as exc:
            self._note("the summary was", exc)
            return None

    def settle(self, code: int) -> int:
        """Print each problem on stderr (one line each); the run's exit code with them counted.

        They make the exit code 2 only when every check passed: a divergence or
        a crash stays the run's exit code, the missing reports are a second
        problem the warning names."""
        for problem in self.problems:
            print(f"converge: warning: {problem}", file=sys.stderr)
        return EXIT_BAD_INPUT if self.problems and code == EXIT_OK else code
