"""`converge repro FILE --system flink[:VERSION]`: a divergence as a standalone program and a bug report."""

from __future__ import annotations

import argparse
from pathlib import Path

from converge.cli.arguments import Subparsers, existing_file
from converge.engine.model.errors import UsageError
from converge.properties.replay import load_scenario_file
from converge.systems.flink import environment
from converge.systems.flink.repro import build
from converge.systems.flink.repro_report import Measured, render, run_program


def register(subparsers: Subparsers) -> None:
    """The `repro` parser: one failure report (its scenario file or its Markdown) or scenario file."""
    r = subparsers.add_parser("repro", help="write a standalone program and a bug report for a divergence")
    r.add_argument("source", metavar="REPORT_OR_SCENARIO",
                   help="a scenario file, or a failure report (its .json, or its .md beside the .json)")
    r.add_argument("--system", required=True, metavar="flink[:VERSION]|spark|pathway[:VERSION]",
                   help="the system the program runs on (flink, pathway; VERSION: an installed one, default the "
                        "newest; spark: a native-join case, on the installed pyspark)")
    r.add_argument("-o", "--out", default=".", metavar="DIR", help="where to write the files (default: .)")
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
    try:
        installed = environment.find(version or None)
    except UsageError:
        if not args.no_run:
            raise
        installed = None  # --no-run writes the program for the version named (default: converge's default)
    target = installed.version if installed is not None else version or environment.DEFAULT_VERSION
    repro = build(scenario, path.name, target)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    program = out / f"repro_{repro.slug}.py"
    program.write_text(repro.program, encoding="utf-8")
    print(f"wrote {program}")
    measured: Measured | None = None
    if installed is not None and not args.no_run:
        print(f"running it on Flink {installed.version} ({installed.interpreter}) ...", flush=True)
        measured = run_program(installed.interpreter, program.resolve(), installed.version)
        print(measured.output)
        print(f"exit code {measured.exit_code}")
    report = out / "REPORT.md"
    report.write_text(render(scenario, repro, path, measured), encoding="utf-8")
    print(f"wrote {report}")
    return 0
