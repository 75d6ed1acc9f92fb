"""`converge verify QUERY.sql`: changelogs captured from a real job, checked against the batch answer.

docs/check-your-query.md walks through it; properties/verify_capture.py does the checking.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from converge.cli.arguments import Subparsers, add_quiet, existing_file
from converge.engine.model.errors import UsageError
from converge.reports.progress import StepProgress

FORMATS = ("auto", "jsonl", "debezium", "print", "csv")


def register(subparsers: Subparsers) -> None:
    """The `verify` parser: the query, one capture per source table, the output's capture."""
    v = subparsers.add_parser("verify", help="check changelogs captured from a real job against the batch answer")
    v.add_argument("query", metavar="QUERY.sql")
    v.add_argument("--source", action="append", type=source_capture, metavar="NAME=FILE",
                   help="the capture of one source table (repeat for each)")
    v.add_argument("--output", required=True, metavar="FILE", help="the capture of the job's output")
    # --capture-format, not --format: `check --format` is the format converge prints in (issue 41 row 7)
    v.add_argument("--capture-format", "--format", default="auto", choices=FORMATS, dest="capture_format",
                   action=_OldSpelling, help="the captures' format (default: from each file; --format: deprecated)")
    v.add_argument("--output-capture-format", "--output-format", default=None, choices=FORMATS,
                   dest="output_capture_format", action=_OldSpelling,
                   help="the output capture's format, when it differs from --capture-format (--output-format: "
                        "deprecated)")
    add_quiet(v)
    v.set_defaults(handler=cmd_verify)


class _OldSpelling(argparse.Action):
    """Stores the value; given by its old spelling (the second option string), says so on stderr."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        if option_string is not None and option_string == self.option_strings[-1]:
            print(f"converge: verify {option_string} is deprecated (it names the captures' format, unlike check "
                  f"--format, the printed one): use {self.option_strings[0]}", file=sys.stderr)
        setattr(namespace, self.dest, values)


def source_capture(text: str) -> tuple[str, Path]:
    """An argparse type: NAME=FILE, a source table and the file its changelog was captured in."""
    name, eq, path = text.partition("=")
    if not eq or not name or not path:
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=FILE")
    return name, Path(path)


def cmd_verify(args: argparse.Namespace) -> int:
    """0 when the captures agree with the batch answer; verify_capture raises on a divergence or bad input."""
    from converge.engine.model.flinksql import load_query  # lazy: sqlglot loads only for check/verify
    from converge.properties.query_guard import guard_query  # lazy: as above
    from converge.properties.verify_capture import source_problem, verify_capture  # lazy: as above
    steps = StepProgress("verify", quiet=args.quiet)
    steps.step(f"reading {args.query}")
    query = load_query(existing_file(args.query))
    guard_query(query)  # what the oracle would refuse later, refused now at file:line:col
    sources = dict(args.source or [])
    if len(sources) != len(args.source or []):
        raise UsageError("a table is named twice in --source")
    problem = source_problem(query, sources, source="--source")
    if problem is not None:
        raise UsageError(problem)
    for path in (*sources.values(), args.output):
        existing_file(path)
    steps.step(f"reading the captures and checking {args.output} against the batch answer")
    result = verify_capture(query, sources, Path(args.output), args.capture_format, args.output_capture_format)
    steps.finish()
    what = ("the output equals the answer after every input record" if result.mode == "prefix"
            else "the final output equals the batch answer")
    print(f"passed: {what} ({result.input_events} input records, {result.output_records} output records, "
          f"{result.checkpoints} checkpoints, {result.seconds:.1f} s)")
    for note in result.notes:
        print(f"note: {note}")
    return 0
