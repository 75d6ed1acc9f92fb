"""`converge run --last-failed`: the properties still recorded as failing, each as it failed.

The last campaign is the newest `converge run` directory of the reports
folder (reports/runs.py names them by start time) that holds a summary.json
(a `converge check` or an interrupted run in between does not hide it): of
any system, or of the `--system` asked for (None, "none": the embedded
campaign). Its `last_failed` (reports/last_failed.py) lists what failed and
was not cleared since: a rerun that passed with another seed, fewer examples
or another batch does not clear a failure, so `--last-failed` keeps rerunning
it, as pytest's `--lf` keeps a test until it passes. Each property reruns
with the seed and examples it failed with, on the system and batch size of
its campaign. "not checked", "known", "not applicable" and "not run" are
not failures.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from converge.engine.model.errors import UsageError
from converge.reports.last_failed import entries_of, scope_matches

__all__ = ["ANY_SYSTEM", "LastFailed", "Rerun", "last_campaign", "last_failed"]

SUMMARY = "summary.json"
ANY_SYSTEM = "*"  # last_campaign's system: the newest campaign, whichever system it ran on


@dataclass(frozen=True)
class Rerun:
    """How one property failed: its seed, its examples asked and, on a system, its batch size (None: unknown)."""

    seed: int | None
    examples: int | None
    batch: int | None


@dataclass(frozen=True)
class LastFailed:
    """What the last campaign left to rerun: its directory, its `--system` (None: the embedded campaign) and the
    properties still recorded as failing, family/property -> how it failed."""

    run_dir: Path
    system: str | None
    failed: dict[str, Rerun]

    @property
    def batch(self) -> int | None:
        """The batch size the failures were found with (the largest, should entries of two runs differ)."""
        return max((r.batch for r in self.failed.values() if r.batch is not None), default=None)


def read_summary(run: Path) -> dict[str, Any]:
    """A run's summary.json; an unreadable one is a UsageError naming the file."""
    path = run / SUMMARY
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"--last-failed: {path}: not a readable campaign summary ({type(exc).__name__}: {exc})") \
            from None
    if not isinstance(data, dict) or not isinstance(data.get("properties"), list):
        raise UsageError(f"--last-failed: {path}: not a readable campaign summary (not a JSON object with a list "
                         f"of properties)")
    return data


def last_campaign(folder: Path | None, system: str | None = ANY_SYSTEM) -> tuple[Path, dict[str, Any]]:
    """The newest `converge run` directory in `folder` with a summary of a campaign on `system`, and that summary;
    a clear UsageError when there is none."""
    if folder is None:
        raise UsageError("--last-failed reads the last campaign's summary from the reports folder, and reports are "
                         "off (--no-reports or --reports-dir off)")
    runs = sorted((d for d in Path(folder).glob("*-run-*") if (d / SUMMARY).is_file()), key=lambda d: d.name)
    for run in reversed(runs):
        data = read_summary(run)
        if system == ANY_SYSTEM or scope_matches(data, system):
            return run, data
    where = "" if system == ANY_SYSTEM else f" on {'the embedded campaign' if system is None else system}"
    raise UsageError(f"--last-failed: no earlier `converge run`{where} left a summary in {folder} (run a campaign "
                     f"first)")


def last_failed(folder: Path | None, system: str | None = ANY_SYSTEM) -> LastFailed:
    """The properties still recorded as failing after the last campaign in `folder` (on `system`), each as it
    failed; an unreadable summary is a UsageError naming the file."""
    run, data = last_campaign(folder, system)
    try:
        entries = entries_of(data, run.name)
        failed = {str(e["property"]): Rerun(whole(e.get("seed")), whole(e.get("examples")), whole(e.get("batch")))
                  for e in entries}
    except (KeyError, TypeError, AttributeError) as exc:
        raise UsageError(f"--last-failed: {run / SUMMARY}: not a readable campaign summary "
                         f"({type(exc).__name__}: {exc})") from None
    if "system_spec" in data:
        spec = data["system_spec"]
    elif "system" in data:  # written before the spec was recorded: the system's title is no --system value
        raise UsageError(f"--last-failed: {run / SUMMARY} names its system ({data['system']}) but not the --system "
                         f"that ran it; give --system")
    else:
        spec = None
    return LastFailed(run, spec if isinstance(spec, str) else None, failed)


def whole(value: object) -> int | None:
    """A whole number from the summary, else None (a bool is no count)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
