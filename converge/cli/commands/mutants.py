"""`converge mutants`: the command line of the seeded-bug campaign (converge/cli/mutants.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from converge.cli.arguments import Subparsers, add_examples, add_seed, output_file
from converge.cli.mutants import run_mutants
from converge.reports.location import reports_folder


def register(subparsers: Subparsers) -> None:
    """The `mutants` parser; unlike `run`, it writes reports only when --reports-dir names a folder."""
    m = subparsers.add_parser("mutants",
                              help="seeded-bug campaign: apply each known bug, see which properties kill it")
    add_examples(m, 300, "examples per property per mutant")
    add_seed(m)
    m.add_argument("--only", default=None, help="comma-separated mutant names")
    m.add_argument("--out", type=output_file, default="converge-mutants.json", help="where the JSON results go")
    m.add_argument("--reports-dir", metavar="DIR", default=None,
                   help="also write each kill as a failure report recording its mutant (default: none)")
    m.set_defaults(handler=cmd_mutants)


def cmd_mutants(args: argparse.Namespace) -> int:
    """Run the campaign (exit codes: converge/cli/mutants.run_mutants)."""
    reports = reports_folder(args.reports_dir) if args.reports_dir is not None else None
    return run_mutants(only=args.only, examples=args.examples, seed=args.seed, out=Path(args.out), reports=reports)
