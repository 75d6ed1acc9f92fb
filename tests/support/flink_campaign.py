"""`converge run --system flink` from the Flink tests: its exit code, output and summary, and the summary table's
rows by family and property."""

from __future__ import annotations

import json
from pathlib import Path

from converge.cli.main import main


def run_campaign(args: list[str], tmp_path: Path, capsys) -> tuple[int, str, dict]:
    code = main(["run", "--system", "flink", "--reports-dir", str(tmp_path), *args])
    out = capsys.readouterr().out
    summary = json.loads((tmp_path / "latest" / "summary.json").read_text())
    return code, out, summary


def summary_rows(out: str) -> dict[str, list[str]]:
    """The summary table's rows by "family property", cells split on runs of spaces."""
    rows = {}
    for line in out.splitlines():
        cells = line.split()
        if len(cells) > 4 and cells[:2] == ["flink", "2.3.0"]:
            rows[f"{cells[2]} {cells[3]}"] = cells
    return rows
