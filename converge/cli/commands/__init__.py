"""The `converge` subcommands, one module each: its parser (`register(subparsers)`) and its handler.

cli.py registers them in COMMANDS' order, which is the order `converge --help`
lists them in. What several commands share (argument types, --seed,
--reports-dir ...) comes from converge/cli/arguments.py, never from
another command module.
"""

from __future__ import annotations

from converge.cli.commands import (
    adapter,
    bench,
    capture,
    check,
    explain,
    mutants,
    replay,
    repro,
    run,
    systems,
    verify,
)

# The order of `converge --help`.
COMMANDS = (run, replay, repro, adapter, bench, mutants, explain, systems, check, verify, capture)

__all__ = ["COMMANDS"]
