"""The command line's shared vocabulary: argument types, the options several commands share, and their checks.

Every command module (converge/cli/commands/) takes what it shares with
another command from here, and nothing from cli.py or from another command:
no command needs a function handed to it to stay clear of an import cycle,
and an option several commands take is spelled (and checked) once.
"""

from __future__ import annotations

import argparse
import glob
from collections.abc import Sequence
from pathlib import Path

from converge.engine.model.errors import UsageError
from converge.engine.model.paths import not_a_file
from converge.properties.budget import DEFAULT_SHRINK_BUDGET, MAX_SHRINK_BUDGET
from converge.reports.location import reports_folder
from converge.reports.options import ORACLES, RUNTIMES

__all__ = ["Subparsers", "adapter_log_of", "add_adapter_log", "add_examples", "add_oracle", "add_quiet",
           "add_reports_options", "add_runtime", "add_seed",
           "add_shrink_budget", "add_system", "check_oracle", "existing_file", "existing_path", "expand_targets",
           "output_file", "positive_int", "reports_of", "system_timeout_of"]

# What each command's `register(subparsers)` receives: the top parser's `add_subparsers()`.
Subparsers = argparse._SubParsersAction


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (a count of examples, events, rounds ...)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value


def output_file(text: str) -> str:
    """An argparse type: a file converge may create or replace (not a folder, not inside a file)."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder, not a file")
    parent = next((p for p in path.absolute().parents if p.exists()), None)
    if parent is not None and not parent.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: {parent} is a file, not a folder")
    return text


def existing_path(path: str | Path, flag: str = "", *, missing: str = "no such file or directory") -> Path:
    """A path the command line names, checked here: a missing one is the command line's mistake (usage), where
    the layers below, called from Python, call it bad input."""
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{flag + ' ' if flag else ''}{p}: {missing}")
    return p


def existing_file(path: str | Path, flag: str = "") -> Path:
    """As existing_path, for a file to read (a query, a capture, a known-divergences list)."""
    p = Path(path)
    problem = not_a_file(p)  # a folder, FIFO or device is named as what it is (a FIFO is never opened)
    if problem is not None:
        raise UsageError(f"{flag + ' ' if flag else ''}{p}: {problem}")
    return p


def expand_targets(targets: Sequence[str]) -> list[Path]:
    """Each target as given, or, when it does not exist and holds a wildcard, the paths it matches.

    A shell that found no match passes the pattern on unexpanded (and Windows shells never expand)."""
    out: list[Path] = []
    for target in targets:
        if Path(target).exists() or not glob.has_magic(target):
            out.append(existing_path(target))
            continue
        matched = sorted(glob.glob(target, recursive=True))
        if not matched:
            raise UsageError(f"{target}: no file or directory matches")
        out.extend(Path(m) for m in matched)
    return out


def shrink_seconds(text: str) -> float:
    """An argparse type: seconds of shrinking, from 0 (report the first failing case as found) to MAX_SHRINK_BUDGET."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 <= value <= MAX_SHRINK_BUDGET:  # also refuses nan and inf
        raise argparse.ArgumentTypeError(f"{text} is not from 0 to {MAX_SHRINK_BUDGET:.0f} seconds (Hypothesis "
                                         "itself stops shrinking after 300 s)")
    return value


def add_quiet(parser: argparse.ArgumentParser) -> None:
    """`-q/--quiet`: no progress lines on stderr (reports/progress.py); the command's output is unchanged."""
    parser.add_argument("-q", "--quiet", action="store_true", help="print no progress lines on stderr")


def add_shrink_budget(parser: argparse.ArgumentParser) -> None:
    """`--shrink-budget SECONDS`: how long a property's failure is shrunk before its best case so far is reported."""
    parser.add_argument("--shrink-budget", metavar="SECONDS", type=shrink_seconds, default=None,
                        help=f"stop shrinking a failure after this many seconds and report the smallest failing "
                             f"case found by then (default {DEFAULT_SHRINK_BUDGET:.0f}; at most "
                             f"{MAX_SHRINK_BUDGET:.0f})")


def add_examples(parser: argparse.ArgumentParser, default: int | None, help: str | None = None) -> None:
    """`--examples N`: how many examples (or cases) a command draws; at least 1."""
    parser.add_argument("--examples", type=positive_int, default=default, help=help)


def add_seed(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    """`--seed N`: the Hypothesis seed (default: a fresh one)."""
    parser.add_argument("--seed", type=int, default=None, help=help)


def add_runtime(parser: argparse.ArgumentParser) -> None:
    """`--runtime local|spark`: which runtime executes the reference engine."""
    parser.add_argument("--runtime", choices=RUNTIMES, default="local")


def add_oracle(parser: argparse.ArgumentParser, help: str) -> None:
    """`--oracle duckdb|spark`: who computes the final answers; check_oracle refuses the combinations that
    would ignore it."""
    parser.add_argument("--oracle", choices=ORACLES, default="duckdb", help=help)


def add_system(parser: argparse.ArgumentParser, help: str) -> None:
    """`--system SPEC`: a system under test (converge/systems/registry.py reads the spec); with it
    `--system-timeout SECONDS`, the base of each run request's time limit (system_timeout_of reads it)."""
    parser.add_argument("--system", metavar="SPEC", default=None, help=help)
    parser.add_argument("--system-timeout", metavar="SECONDS", type=_seconds, default=None,
                        help="with an adapter system: seconds each run request gets besides 1 s per case and 0.01 s "
                             "per event (default: $CONVERGE_SYSTEM_TIMEOUT, else 30; docs/adapter-protocol.md)")
    add_adapter_log(parser, "with an adapter system (cmd:..., flink): ")


def add_adapter_log(parser: argparse.ArgumentParser, when: str = "") -> None:
    """`--adapter-log FILE`: every message to and from the adapter, and its stderr, one JSON object a line
    (converge/systems/adapter/log.py; adapter_log_of reads it)."""
    parser.add_argument("--adapter-log", metavar="FILE", type=Path, default=None,
                        help=f"{when}write every message sent to the adapter and every line it answers or writes "
                             "to stderr into FILE, one JSON object a line with timestamps, request numbers and "
                             "timings (docs/adapter-protocol.md, \"Debugging an adapter\"; messages are whole: "
                             "the file is as large as the conversation)")


def adapter_log_of(args: argparse.Namespace, *, needs_system: bool = True) -> Path | None:
    """`--adapter-log` as given (None: not given); refused without `--system` where the command needs one."""
    path = getattr(args, "adapter_log", None)
    if path is not None and needs_system and getattr(args, "system", None) is None:
        raise UsageError("--adapter-log applies to a system under test (--system SPEC)")
    return path


def _seconds(text: str) -> float:
    from converge.systems.adapter.client import timeout_seconds  # lazy: the client starts processes

    try:
        return timeout_seconds(text, "--system-timeout")
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix(f"--system-timeout {text!r}: ")) from None


def system_timeout_of(args: argparse.Namespace) -> float | None:
    """`--system-timeout` as given (None: not given); refused without `--system`, which it would not change."""
    if args.system_timeout is not None and args.system is None:
        raise UsageError("--system-timeout applies to a system under test (--system SPEC)")
    return args.system_timeout


def add_reports_options(parser: argparse.ArgumentParser, dir_help: str, off_help: str) -> None:
    """`--reports-dir DIR|off` and `--no-reports`; reports_of reads them."""
    parser.add_argument("--reports-dir", metavar="DIR|off", default=None, help=dir_help)
    parser.add_argument("--no-reports", action="store_true", help=off_help)


def reports_of(args: argparse.Namespace) -> Path | None:
    """Where add_reports_options' reports go (None: off); reports/location.py decides the default."""
    return None if args.no_reports else reports_folder(args.reports_dir)


def check_oracle(oracle: str, runtime: str, system: str | None) -> None:
    """`--oracle spark` checks the Spark runtime's final answers; other combinations are refused, not ignored."""
    if oracle not in ORACLES:
        raise UsageError(f"--oracle {oracle!r}: expected one of {', '.join(ORACLES)}")
    if oracle != "duckdb" and (runtime != "spark" or system is not None):
        raise UsageError(f"--oracle {oracle} applies with --runtime spark (it computes the final answers the Spark "
                         "runtime is checked against); the local runtime's and the systems' properties use DuckDB")
