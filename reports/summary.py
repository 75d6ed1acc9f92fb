"""Campaign summaries: summary.md for people, summary.json for tools.

Per property: its outcome, examples, batches and cases (reports/counts.py
says what each counts, in the same words as the terminal's table), what the
cases exercised (compared, not applicable, unsupported, skipped: a property
that compared nothing is "not checked", never "passed"), failures, time,
cases/s, on a system the seconds spent waiting for it, the Hypothesis seed and
links to its failure reports; per family: the same totals.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import hypothesis

from converge.engine.model.errors import label
from converge.engine.model.files import write_text_whole
from converge.reports.counts import Counts, default_counts
from converge.reports.last_failed import entries_of, pending_after, previous_summary
from converge.reports.terminal import shrink_note

Key = tuple[str, str]   # (family, property)


def _link(path: str, folder: Path) -> str:
    p = Path(path)
    try:
        rel = os.path.relpath(p.resolve(), folder.resolve())
    except ValueError:  # another drive
        rel = str(p)
    return f"[{p.suffix.lstrip('.') or p.name}]({rel})"


def _families(rows: list[dict]) -> list[dict]:
    out: dict[str, dict] = {}
    for r in rows:
        f = out.setdefault(r["family"], {"family": r["family"], "properties": 0, "examples": 0, "batches": None,
                                         "cases": 0, "compared": 0, "failures": 0, "seconds": 0.0})
        f["properties"] += 1
        f["examples"] += r["examples"]
        if r["batches"] is not None:
            f["batches"] = (f["batches"] or 0) + r["batches"]
        f["cases"] += r["cases"]
        f["compared"] += r["exercised"]["compared"]
        f["failures"] += r["failures"]
        f["seconds"] += r["seconds"]
    for f in out.values():
        f["seconds"] = round(f["seconds"], 3)
        f["cases_per_second"] = _rate(f["cases"], f["seconds"])
    return list(out.values())


def _rate(cases: int, seconds: float) -> float:
    return round(cases / seconds, 1) if seconds > 0 else 0.0


def _cell(value: int | None) -> str:
    return "—" if value is None else str(value)


def write_summary(results: Sequence, folder: Path, *, system: str | None = None,
                  outcomes: Mapping[Key, str] | None = None, counts: Mapping[Key, Counts] | None = None,
                  waited: Mapping[Key, float] | None = None, system_spec: str | None = None,
                  batch: int | None = None, notes: list[str] | None = None,
                  sent: Mapping[Key, dict[str, Any]] | None = None,
                  last_failed: bool = True) -> tuple[Path, Path]:
    """Write summary.md and summary.json for a list of PropertyResult into `folder` (`system`: the system
    under test, `name version`, of a `converge run --system` campaign; `outcomes`: per (family, property) an
    outcome the campaign decided beyond the result's own, such as "known" for a property whose only divergences
    matched known entries; `counts`: per (family, property) its examples, batches and cases (reports/counts.py;
    a result without them counts its examples run as both examples and cases); `waited`: per (family,
    property) the seconds spent waiting for the system's answers, the rest of its seconds being converge's own
    work (generation, oracle, checks); `system_spec` and `batch`: the `--system` and `--batch` a rerun needs;
    `sent`: per (family, property) of a system campaign, what its cases held (properties/systems/sent.py);
    `last_failed`: record what `--last-failed` reruns (reports/last_failed.py), each pass that does not clear
    an earlier failure noted in `notes`)."""
    decided = dict(outcomes or {})
    given = dict(counts or {})
    waits = dict(waited or {})

    def counted(r: Any) -> Counts:
        return given.get((r.family, r.name)) or default_counts(r)

    def timing(r: Any) -> dict[str, Any]:
        wait = waits.get((r.family, r.name))
        if wait is None:
            return {}
        return {"system_seconds": round(wait, 3), "converge_seconds": round(max(0.0, r.seconds - wait), 3)}

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rows = [
        {"family": r.family, "property": r.name, "outcome": decided.get((r.family, r.name)) or label(r.failure or r.error),
         **counted(r).to_json(),
         "exercised": r.exercised.to_json(), "failures": r.failures,
         "seconds": round(r.seconds, 3), **timing(r), "cases_per_second": _rate(counted(r).cases, r.seconds),
         "seed": getattr(r, "seed", None), "reports": list(r.reports),
         "shrink_stopped_after_s": getattr(r, "shrink_stopped", None),  # None: shrinking finished (or no failure)
         "error": None if r.ok else str(r.failure or f"{type(r.error).__name__}: {r.error}"),
         **({"sent": (sent or {})[(r.family, r.name)]} if (r.family, r.name) in (sent or {}) else {})}
        for r in results
    ]
    families = _families(rows)
    data = {"generated": time.strftime("%Y-%m-%dT%H:%M:%S"), "hypothesis_version": hypothesis.__version__,
            "passed": sum(1 for r in results if r.ok and (r.family, r.name) not in decided),
            "known": sum(1 for o in decided.values() if o == "known"),
            "not_run": sum(1 for o in decided.values() if o == "not run"),  # left by --maxfail
            "not_checked": sum(1 for r in results if r.not_checked and (r.family, r.name) not in decided),
            "failed": sum(1 for r in results if not r.ok and not r.not_checked and (r.family, r.name) not in decided),
            "examples": sum(r["examples"] for r in rows),
            "batches": None if all(r["batches"] is None for r in rows) else sum(r["batches"] or 0 for r in rows),
            "cases": sum(r["cases"] for r in rows), "seconds": round(sum(r["seconds"] for r in rows), 3),
            "families": families, "properties": rows}
    if system is not None:
        data["system"] = system
    if last_failed:
        data["system_spec"], data["batch"] = system_spec, batch
        before = previous_summary(folder.parent, folder, system_spec)
        earlier = [] if before is None else entries_of(before[1], before[0])
        data["last_failed"], kept = pending_after(rows, earlier, batch=batch, run=folder.name)
        if notes is not None:
            notes.extend(kept)
    js = folder / "summary.json"
    write_text_whole(js, json.dumps(data, indent=1) + "\n")
    lines = ["# converge campaign summary", "",
             f"{data['passed']} passed, " + (f"{data['known']} known, " if data["known"] else "")
             + f"{data['not_checked']} not checked, {data['failed']} failed"
             + (f", {data['not_run']} not run" if data["not_run"] else "") + "; "
             f"{data['examples']} examples, {_cell(data['batches'])} batches, {data['cases']} cases in "
             f"{data['seconds']:.1f} s (Hypothesis {hypothesis.__version__})", "",
             *([f"System under test: {system}", ""] if system is not None else []),
             "## Families", "", "| family | properties | examples | batches | cases | compared | failures | seconds "
             "| cases/s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {f['family']} | {f['properties']} | {f['examples']} | {_cell(f['batches'])} | {f['cases']} "
              f"| {f['compared']} | {f['failures']} | {f['seconds']} | {f['cases_per_second']} |" for f in families]
    lines += ["", "## Properties", "",
              "| family | property | outcome | examples | batches | cases | compared | not compared | failures "
              "| seconds | cases/s | seed | reports |",
              "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        links = " ".join(_link(p, folder) for p in r["reports"])
        seen = r["exercised"]
        other = seen["not_applicable"] + seen["unsupported"] + seen["skipped"]
        outcome = r["outcome"] + shrink_note(r["shrink_stopped_after_s"])
        lines.append(f"| {r['family']} | {r['property']} | {outcome} | {r['examples']} | {_cell(r['batches'])} "
                     f"| {r['cases']} | {seen['compared']} | {other} | {r['failures']} | {r['seconds']} "
                     f"| {r['cases_per_second']} | {r['seed'] if r['seed'] is not None else ''} | {links} |")
    failed = [r for r in rows if r["error"]]
    if failed:
        lines += ["", "## Failures and properties not checked", ""]
        for r in failed:
            first = r["error"].splitlines()[0] if r["error"] else ""
            lines.append(f"* **{r['family']}/{r['property']}**: {first}")
    md = folder / "summary.md"
    write_text_whole(md, "\n".join(lines) + "\n")
    return md, js
