"""Campaign summaries: summary.md for people, summary.json for tools.

Per property: its outcome, examples, what the examples exercised (cases
compared, not applicable, unsupported, skipped: a property that compared
nothing is "not checked", never "passed"), failures, time, examples/s, the
Hypothesis seed and links to its failure reports; per family: the same totals.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Mapping, Sequence

import hypothesis

from converge.engine.model.errors import label
from converge.engine.model.files import write_text_whole
from converge.reports.terminal import shrink_note


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
        f = out.setdefault(r["family"], {"family": r["family"], "properties": 0, "examples": 0, "compared": 0,
                                         "failures": 0, "seconds": 0.0})
        f["properties"] += 1
        f["examples"] += r["examples"]
        f["compared"] += r["exercised"]["compared"]
        f["failures"] += r["failures"]
        f["seconds"] += r["seconds"]
    for f in out.values():
        f["seconds"] = round(f["seconds"], 3)
        f["examples_per_second"] = round(f["examples"] / f["seconds"], 1) if f["seconds"] > 0 else 0.0
    return list(out.values())


def write_summary(results: Sequence, folder: Path, *, system: str | None = None,
                  outcomes: Mapping[tuple[str, str], str] | None = None) -> tuple[Path, Path]:
    """Write summary.md and summary.json for a list of PropertyResult into `folder` (`system`: the system
    under test, `name version`, of a `converge run --system` campaign; `outcomes`: per (family, property) an
    outcome the campaign decided beyond the result's own, such as "known" for a property whose only divergences
    matched known entries)."""
    decided = dict(outcomes or {})
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rows = [
        {"family": r.family, "property": r.name, "outcome": decided.get((r.family, r.name)) or label(r.failure or r.error), "examples": r.examples,
         "exercised": r.exercised.to_json(), "failures": r.failures,
         "seconds": round(r.seconds, 3), "examples_per_second": round(r.examples_per_second, 1),
         "seed": getattr(r, "seed", None), "reports": list(r.reports),
         "shrink_stopped_after_s": getattr(r, "shrink_stopped", None),  # None: shrinking finished (or no failure)
         "error": None if r.ok else str(r.failure or f"{type(r.error).__name__}: {r.error}")}
        for r in results
    ]
    families = _families(rows)
    data = {"generated": time.strftime("%Y-%m-%dT%H:%M:%S"), "hypothesis_version": hypothesis.__version__,
            "passed": sum(1 for r in results if r.ok and (r.family, r.name) not in decided),
            "known": sum(1 for o in decided.values() if o == "known"),
            "not_checked": sum(1 for r in results if r.not_checked and (r.family, r.name) not in decided),
            "failed": sum(1 for r in results if not r.ok and not r.not_checked and (r.family, r.name) not in decided),
            "examples": sum(r["examples"] for r in rows), "seconds": round(sum(r["seconds"] for r in rows), 3),
            "families": families, "properties": rows}
    if system is not None:
        data["system"] = system
    js = folder / "summary.json"
    write_text_whole(js, json.dumps(data, indent=1) + "\n")
    lines = ["# converge campaign summary", "",
             f"{data['passed']} passed, " + (f"{data['known']} known, " if data["known"] else "")
             + f"{data['not_checked']} not checked, {data['failed']} failed; "
             f"{data['examples']} examples in "
             f"{data['seconds']:.1f} s (Hypothesis {hypothesis.__version__})", "",
             *([f"System under test: {system}", ""] if system is not None else []),
             "## Families", "", "| family | properties | examples | compared | failures | seconds | examples/s |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {f['family']} | {f['properties']} | {f['examples']} | {f['compared']} | {f['failures']} "
              f"| {f['seconds']} | {f['examples_per_second']} |" for f in families]
    lines += ["", "## Properties", "",
              "| family | property | outcome | examples | compared | not compared | failures | seconds | examples/s "
              "| seed | reports |",
              "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        links = " ".join(_link(p, folder) for p in r["reports"])
        seen = r["exercised"]
        other = seen["not_applicable"] + seen["unsupported"] + seen["skipped"]
        outcome = r["outcome"] + shrink_note(r["shrink_stopped_after_s"])
        lines.append(f"| {r['family']} | {r['property']} | {outcome} | {r['examples']} | {seen['compared']} "
                     f"| {other} | {r['failures']} | {r['seconds']} "
                     f"| {r['examples_per_second']} | {r['seed'] if r['seed'] is not None else ''} | {links} |")
    failed = [r for r in rows if r["error"]]
    if failed:
        lines += ["", "## Failures and properties not checked", ""]
        for r in failed:
            first = r["error"].splitlines()[0] if r["error"] else ""
            lines.append(f"* **{r['family']}/{r['property']}**: {first}")
    md = folder / "summary.md"
    write_text_whole(md, "\n".join(lines) + "\n")
    return md, js
