"""The `converge` command: run the property campaign, replay scenario files, benchmark, explain plans."""

from __future__ import annotations

import argparse
import os
import select
import signal
import sys
import traceback
from collections.abc import Sequence

from converge import __version__
from converge.cli.interrupts import Interrupted, ending_on_signals
from converge.engine.model.errors import EXIT_INTERNAL, ConvergeError, exit_code, label

# Exit codes (engine/model/errors.py): 0 all passed, 1 a divergence, 2 bad input or usage, 3 an internal error or a
# crash. A run with several outcomes exits with the most severe one, 3 > 2 > 1 > 0: a crash means the other
# results cannot be trusted, bad input means some checks did not run at all, a divergence is a finished check.
# Each command lives in converge/cli/commands/, its parser and its handler together.


def build_parser() -> argparse.ArgumentParser:
    """The top parser; each command module adds its own subcommand and sets its `handler`."""
    p = argparse.ArgumentParser(prog="converge", description=__doc__)
    p.add_argument("--version", action="version", version=f"converge {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    from converge.cli.commands import COMMANDS  # lazy: `check --plan-only` needs none of them
    for command in COMMANDS:
        command.register(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """The exit code (see the top of this module); argparse itself exits 2 on a malformed command line."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = _fast_args(argv)
    if args is None:
        args = build_parser().parse_args(argv)
        from converge.generators.storage import keep_hypothesis_out_of_the_working_directory  # lazy: Hypothesis
        keep_hypothesis_out_of_the_working_directory()  # no ./.hypothesis from any command (generators/storage.py)
    _line_buffered_stdout()
    try:
        with ending_on_signals():
            return args.handler(args)
    except Interrupted as exc:  # SIGTERM/SIGINT: every adapter it started is already killed
        print(f"converge: interrupted by {exc}; every adapter process it started was stopped", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError as exc:
        # stdout's reader went away (`converge run | head`); another pipe breaking is a crash like any other
        return EXIT_STDOUT_CLOSED if _stdout_closed() else _crashed(exc)
    except ConvergeError as exc:  # bad input, usage, an oracle failure, an internal error: one line, no traceback
        print(f"converge: {label(exc)}: {exc}", file=sys.stderr)
        return exit_code(exc)
    except Exception as exc:  # noqa: BLE001 - a crash: the traceback is what a bug report needs
        return _crashed(exc)


def _fast_args(argv: list[str]) -> argparse.Namespace | None:
    """The commands that answer without importing the others (which load Hypothesis, DuckDB, sqlglot):
    `check QUERY --plan-only` reads and plans, `systems list` reads the installations' records."""
    if argv[:1] == ["check"]:
        from converge.cli.check_plan import fast_args  # lazy: sqlglot and the planner, for `check` alone
        return fast_args(argv)
    if argv[:2] == ["systems", "list"]:
        from converge.cli.systems_list import fast_args as list_args  # lazy: as above, for `systems list` alone
        return list_args(argv)
    return None


def _crashed(exc: BaseException) -> int:
    traceback.print_exception(exc)
    print(f"converge: crashed: {type(exc).__name__}: {exc}", file=sys.stderr)
    return EXIT_INTERNAL


EXIT_STDOUT_CLOSED = 128 + signal.SIGPIPE
"""`converge run | head`: the reader went away, so the command stopped, as a process killed by SIGPIPE exits (and
as Interrupted does for SIGTERM/SIGINT); the `with` blocks on the way out stopped every adapter it started."""


def _stdout_closed() -> bool:
    """Whether stdout's reader is gone (poll reports an error on a pipe's write end with no reader); if so,
    stdout now points at /dev/null, so the interpreter's last flush at exit cannot raise again."""
    try:
        fd = sys.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        closed = any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
        if closed:
            os.dup2(os.open(os.devnull, os.O_WRONLY), fd)
    except (AttributeError, ValueError, OSError):  # a stream without a file descriptor (a test's)
        return False
    return closed


def _line_buffered_stdout() -> None:
    """Each line a command prints reaches a CI log as it is printed: stdout into a pipe is otherwise flushed
    only every few kilobytes, and a command that prints as it goes (adapter check, bench, check) would look
    silent until its end (reports/progress.py writes its lines to stderr, which is never held back)."""
    try:
        sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):  # a stream that is not a TextIOWrapper (a test's, a wrapper's)
        pass


if __name__ == "__main__":
    sys.exit(main())
