"""Campaign summaries: summary.md for people, summary.json for tools."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Sequence


def write_summary(results: Sequence, folder: Path) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [
        {"family": r.family, "property": r.name, "examples": r.examples, "failures": r.failures,
         "seconds": round(r.seconds, 3), "examples_per_second": round(r.examples_per_second, 1),
         "reports": list(r.reports),
         "error": None if r.ok else str(r.failure or f"{type(r.error).__name__}: {r.error}")}
        for r in results
    ]
    data = {"generated": time.strftime("%Y-%m-%dT%H:%M:%S"), "properties": rows,
            "passed": sum(1 for r in results if r.ok), "failed": sum(1 for r in results if not r.ok)}
    js = folder / "summary.json"
    js.write_text(json.dumps(data, indent=1) + "\n")
    lines = ["# converge campaign summary", "", f"{data['passed']} passed, {data['failed']} failed", "",
             "| family | property | examples | failures | seconds | examples/s | reports |",
             "|---|---|---:|---:|---:|---:|---|"]
    for r in rows:
        links = ", ".join(f"[{Path(p).name}]({Path(p).relative_to(folder) if Path(p).is_relative_to(folder) else p})"
                          for p in r["reports"])
        lines.append(f"| {r['family']} | {r['property']} | {r['examples']} | {r['failures']} | {r['seconds']} "
                     f"| {r['examples_per_second']} | {links} |")
    md = folder / "summary.md"
    md.write_text("\n".join(lines) + "\n")
    return md, js
