"""`converge repro FILE --system flink[:VERSION]`: a divergence as a standalone program and a bug report."""

from __future__ import annotations

import argparse
from pathlib import Path

from converge.cli.arguments import Subparsers, existing_file
from converge.engine.model.errors import UsageError
from converge.properties.replay import load_scenario_file
from converge.systems.flink import environment
from converge.systems.flink.matrix import Cell, installed_versions, matrix_versions, print_matrix
from converge.systems.flink.repro import build
from converge.systems.flink.repro_report import (
    Measured,
    is_intermittent,
    known_entry,
    render,
    run_and_print,
    write_program,
)


def register(subparsers: Subparsers) -> None:
    """The `repro` parser: one failure report (its scenario file or its Markdown) or scenario file."""
    r = subparsers.add_parser("repro", help="write a standalone program and a bug report for a divergence")
    r.add_argument("source", metavar="REPORT_OR_SCENARIO",
                   help="a scenario file, or a failure report (its .json, or its .md beside the .json)")
    r.add_argument("--system", required=True, metavar="flink[:VERSION]|spark|pathway[:VERSION]",
                   help="the system the program runs on (flink, pathway; VERSION: an installed one, default the "
                        "newest; 'flink:*': run it on every installed Flink release, the version matrix in REPORT.md; "
                        "spark: a native-join case, on the installed pyspark)")
    r.add_argument("-o", "--out", default=".", metavar="DIR", help="where to write the files (default: .)")
    r.add_argument("--versions", metavar="V1,V2", default=None,
                   help="with --system flink: run the program on each of these releases (the version matrix)")
    r.add_argument("--runs", type=int, default=None, metavar="N",
                   help="how often the program runs the job, stopping at the first divergence (default: 5 for a "
                        "known divergence recorded as intermittent, else 1)")
    r.add_argument("--no-run", action="store_true",
                   help="do not run the program on the installed system (the report then has no actual changelog)")
    r.set_defaults(handler=cmd_repro)


def scenario_path(source: str) -> Path:
    """The scenario file: the file itself, or the .json of a failure report's Markdown."""
    path = existing_file(source)
    if path.suffix == ".md":
        beside = path.with_suffix(".json")
        if not beside.is_file():
            raise UsageError(f"{path}: a failure report's Markdown needs its scenario file beside it ({beside.name})")
        return beside
    return path


def cmd_repro(args: argparse.Namespace) -> int:
    """Write repro_<slug>.py and REPORT.md into --out; run the program unless --no-run; print what it printed."""
    name, _, version = args.system.partition(":")
    if name in ("spark", "pathway") and (args.versions is not None or args.runs is not None):
        raise UsageError(f"--system {args.system}: --versions and --runs are for --system flink (the version matrix and "
                         "an intermittent Flink finding)")
    if name == "spark":  # Spark's native join: a native-join case file (converge/systems/spark/repro_command.py)
        from converge.systems.spark.repro_command import cmd_repro_spark  # lazy: only `--system spark` needs it

        return cmd_repro_spark(args, scenario_path(args.source))
    if name == "pathway":  # a Pathway script (converge/systems/pathway/repro_command.py)
        from converge.systems.pathway.repro_command import cmd_repro_pathway  # lazy: only `--system pathway` needs it

        return cmd_repro_pathway(args, scenario_path(args.source))
    if name != "flink":
        raise UsageError(f"--system {args.system}: `converge repro` writes programs for flink, spark and pathway")
    path = scenario_path(args.source)
    scenario = load_scenario_file(path)
    matrix = version == "*" or args.versions is not None
    versions = matrix_versions(args.system, args.versions) if matrix else None
    newest = [v for v in versions or () if v in installed_versions()][-1:]  # the program's release in a matrix
    try:
        installed = environment.find(newest[0] if newest else None if versions else version or None)
    except UsageError:
        if not args.no_run:
            raise
        installed = None  # --no-run writes the program for the version named (default: converge's default)
    target = installed.version if installed is not None else version or environment.DEFAULT_VERSION
    runs = args.runs if args.runs is not None else 5 if is_intermittent(known_entry(path)) else 1
    if runs < 1:
        raise UsageError(f"--runs {runs}: expected 1 or more")
    repro = build(scenario, path.name, target, runs)
    program = write_program(args.out, repro.slug, repro.program)
    out = program.parent
    measured: list[Measured] = []
    if installed is not None and not args.no_run:
        have = installed_versions()
        for v in versions or [installed.version]:
            if v not in have:
                measured.append(Measured(v, None, "not installed", installed=False))
                continue
            measured.append(run_and_print(environment.find(v).interpreter, program, v, "Flink"))
    if versions:
        print_matrix([Cell(m.version, program.name, m.outcome) for m in measured])
    report = out / "REPORT.md"
    report.write_text(render(scenario, repro, path, measured), encoding="utf-8")
    print(f"wrote {report}")
    return 0
