"""The properties a campaign leaves recorded as failing, for `converge run --last-failed` (summary.json's
`last_failed`).

pytest's `--lf` keeps a test failing until a run of it passes. A property's
pass says less: a rerun with another seed, fewer examples or another batch
size draws other cases, so its pass says nothing of the case that failed. So
each campaign's summary carries its own failures plus the entries of the
campaign before it on the same system (the newest earlier summary of the same
`system_spec` in the same reports folder, None being the embedded campaign)
that it did not clear. A property clears its entry only when its outcome is
one of CLEARING and it ran with the entry's seed, at least the entry's
examples and, on a system, the entry's batch; a property not run, not
checked, or failing again keeps it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from converge.reports.junit import status_of

__all__ = ["CLEARING", "entries_of", "pending_after", "previous_summary", "scope_matches"]

CLEARING = ("passed", "known")  # "known": a --known entry now names the divergence
SUMMARY = "summary.json"


def scope_matches(data: Mapping[str, Any], system_spec: str | None) -> bool:
    """Whether a summary's campaign ran on `system_spec` (None: the embedded campaign). A summary written before
    `system_spec` was recorded matches only as embedded, and only when it names no system."""
    if "system_spec" in data:
        return data["system_spec"] == system_spec
    return system_spec is None and "system" not in data


def previous_summary(folder: Path, run_dir: Path, system_spec: str | None) -> tuple[str, dict[str, Any]] | None:
    """The newest summary in `folder` of a run that started before `run_dir` on the same system, with its run's
    directory name (None: none)."""
    for d in sorted(folder.glob("*-run-*"), key=lambda p: p.name, reverse=True):
        if d.name >= run_dir.name or not (d / SUMMARY).is_file():
            continue
        try:
            data = json.loads((d / SUMMARY).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and scope_matches(data, system_spec):
            return d.name, data
    return None


def entries_of(data: Mapping[str, Any], run: str) -> list[dict[str, Any]]:
    """A summary's entries still recorded as failing: its `last_failed`, or for a summary written before that
    field, its failed properties (`run`: its directory's name)."""
    if isinstance(data.get("last_failed"), list):
        return [dict(e) for e in data["last_failed"]]
    return [entry(r, data.get("batch"), run) for r in data.get("properties", ())
            if status_of(r["outcome"]) in ("failure", "error")]


def entry(row: Mapping[str, Any], batch: int | None, run: str) -> dict[str, Any]:
    """A failed property's entry: what reruns it as it failed."""
    return {"property": f"{row['family']}/{row['property']}", "outcome": row["outcome"], "seed": row.get("seed"),
            "examples": row.get("examples"), "batch": batch, "run": run}


def shortfall(recorded: Mapping[str, Any], row: Mapping[str, Any], batch: int | None) -> str | None:
    """Why a passing row checks less than the failure it would clear (None: it clears it)."""
    why = []
    if recorded.get("seed") is not None and row.get("seed") != recorded["seed"]:
        why.append(f"with seed {row.get('seed')}, not the failing seed {recorded['seed']}")
    if isinstance(recorded.get("examples"), int) and (row.get("examples") or 0) < recorded["examples"]:
        why.append(f"with {row.get('examples')} examples, fewer than the {recorded['examples']} it failed with")
    if recorded.get("batch") is not None and batch != recorded["batch"]:
        why.append(f"in batches of {batch}, not the failing run's {recorded['batch']}")
    return "; ".join(why) or None


def pending_after(rows: Sequence[Mapping[str, Any]], previous: Sequence[Mapping[str, Any]], *, batch: int | None,
                  run: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The entries still failing after a campaign whose summary rows are `rows` (`previous`: the entries before
    it), and a note for each property that passed without clearing its entry."""
    pending = {e["property"]: dict(e) for e in previous}
    notes = []
    for row in rows:
        key = f"{row['family']}/{row['property']}"
        if status_of(row["outcome"]) in ("failure", "error"):
            pending[key] = entry(row, batch, run)
        elif key in pending and row["outcome"] in CLEARING:
            why = shortfall(pending[key], row, batch)
            if why is None:
                del pending[key]
            else:
                notes.append(f"{key} {row['outcome']} {why}: still recorded as failing (in {pending[key]['run']}); "
                             f"`converge run --last-failed` reruns it as it failed")
    return list(pending.values()), notes
