"""`converge run --last-failed`: the properties that failed in the last campaign, each with the seed it failed with.

The last campaign is the newest `converge run` directory of the reports folder
(reports/runs.py names them by start time) that holds a summary.json: a
`converge check` or an interrupted run in between does not hide it. A
property failed when its outcome was a divergence or an error (JUnit's
failure or error, reports/junit.py); "not checked", "known", "not
applicable" and "not run" are not failures.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from converge.engine.model.errors import UsageError
from converge.reports.junit import status_of

__all__ = ["LastFailed", "last_campaign", "last_failed"]

SUMMARY = "summary.json"


@dataclass(frozen=True)
class LastFailed:
    """What the last campaign left to rerun: its directory, its system (None: the embedded campaign) and the
    failed properties, family/property -> seed (None when the summary has none)."""

    run_dir: Path
    system: str | None
    failed: dict[str, int | None]


def last_campaign(folder: Path | None) -> Path:
    """The newest `converge run` directory in `folder` with a summary; a clear UsageError when there is none."""
    if folder is None:
        raise UsageError("--last-failed reads the last campaign's summary from the reports folder, and reports are "
                         "off (--no-reports or --reports-dir off)")
    runs = sorted((d for d in Path(folder).glob("*-run-*") if (d / SUMMARY).is_file()), key=lambda d: d.name)
    if not runs:
        raise UsageError(f"--last-failed: no earlier `converge run` left a summary in {folder} (run a campaign first)")
    return runs[-1]


def last_failed(folder: Path | None) -> LastFailed:
    """The properties that failed in the last campaign in `folder`, with their seeds; an unreadable summary is a
    UsageError naming the file."""
    run = last_campaign(folder)
    path = run / SUMMARY
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = data["properties"]
        failed = {f"{r['family']}/{r['property']}": r.get("seed") for r in rows
                  if status_of(r["outcome"]) in ("failure", "error")}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"--last-failed: {path}: not a readable campaign summary ({type(exc).__name__}: {exc})") \
            from None
    system = data.get("system")
    return LastFailed(run, system if isinstance(system, str) else None, failed)
