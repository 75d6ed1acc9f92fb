"""A campaign's failure reports, each given its standalone Flink repro (`converge run --system flink`).

Beside a failure report's scenario file (`<name>.json`, with `<name>.md`) the campaign writes `<name>.repro/`:
the program and REPORT.md that `converge repro <name>.json --system flink --no-run` writes (not run: a campaign
does not start a second Flink per failure), and a section at the end of `<name>.md` naming them and the command
that runs the program. A case the generator cannot express gets the reason in that section instead: the
campaign's verdict never depends on it (`--no-repro` skips it all).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from converge.engine.model.errors import ConvergeError
from converge.properties.replay import load_scenario_file
from converge.systems.flink.repro import build
from converge.systems.flink.repro_report import render

HEADING = "## Standalone reproduction (`converge repro`)"


def write_beside(reports: Sequence[str], version: str) -> list[str]:
    """For each scenario file among a failure's report paths, its repro folder and a section in its Markdown;
    the paths written. Nothing here raises for a case or a file system problem: the section says why."""
    written: list[str] = []
    for path in map(Path, reports):
        md = path.with_suffix(".md")
        if path.suffix != ".json" or not md.is_file():
            continue
        try:
            program, report = _write(path, version)
            written += [str(program), str(report)]
            folder = program.parent.name
            section = (f"`{folder}/{program.name}`, a PyFlink program that needs no converge, and "
                       f"`{folder}/REPORT.md`, its bug report. Run it with apache-flink {version}: "
                       f"`cd {folder} && python {program.name}` (exit 1: Flink diverges, 2: Flink fails the job, "
                       f"0: it agrees). Regenerate it and run it on Flink: `converge repro {path.name} --system "
                       f"flink:{version} -o {folder}`.")
        except ConvergeError as exc:  # a case the generator cannot express: say why, keep the campaign's verdict
            section = f"Not generated: {exc}"
        except OSError as exc:
            section = f"Not written: {exc.filename or path}: {exc.strerror or exc}"
        try:
            with md.open("a", encoding="utf-8") as handle:
                handle.write(f"\n{HEADING}\n\n{section}\n")
        except OSError:
            continue  # the report itself cannot be written to: the repro folder (if any) is still there
    return written


def _write(path: Path, version: str) -> tuple[Path, Path]:
    scenario = load_scenario_file(path)
    repro = build(scenario, path.name, version)
    folder = path.with_name(path.stem + ".repro")
    folder.mkdir(exist_ok=True)
    program = folder / f"repro_{repro.slug}.py"
    program.write_text(repro.program, encoding="utf-8")
    report = folder / "REPORT.md"
    report.write_text(render(scenario, repro, path, []), encoding="utf-8")
    return program, report
