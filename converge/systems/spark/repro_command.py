"""`converge repro CASE --system spark`: a native-join case (or a Spark campaign's failure report) as a standalone
PySpark program and a bug report (docs/repro.md). converge/cli/commands/repro.py dispatches here."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from converge.engine.model.errors import UsageError
from converge.engine.model.native_join_case import load_case
from converge.systems.flink.repro_report import Measured, run_and_print, write_program
from converge.systems.spark.repro import build
from converge.systems.spark.repro_report import write


def installed_pyspark() -> str | None:
    """The version of the pyspark converge's own interpreter imports (None: not installed)."""
    try:
        from pyspark import __version__  # lazy: pyspark is optional (the spark extra)
    except ImportError:
        return None
    return str(__version__)


def cmd_repro_spark(args: argparse.Namespace, path: Path) -> int:
    """Write repro_<slug>.py and REPORT.md into --out; run the program with this interpreter unless --no-run."""
    _, _, version = args.system.partition(":")
    if version:
        raise UsageError(f"--system {args.system}: spark takes no version (the installed pyspark is the version)")
    case = load_case(path)
    installed = installed_pyspark()
    if installed is None and not args.no_run:
        raise UsageError("--system spark: pyspark is not installed here (pip install \"converge[spark]\"); "
                         "--no-run writes the program without running it")
    repro = build(case, path.name, installed or "4.3.0")
    program = write_program(args.out, repro.slug, repro.program)
    out = program.parent
    measured: Measured | None = None
    if installed is not None and not args.no_run:
        measured = run_and_print(Path(sys.executable), program, installed, "PySpark")
    print(f"wrote {write(out, case, repro, measured)}")
    return 0
