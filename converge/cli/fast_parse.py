"""A command line read before the full parser: main.py answers `check --plan-only` and `systems list` without
importing the other commands (what keeps them fast: `converge.cli.commands` loads Hypothesis, DuckDB, sqlglot)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any


class _NotFast(Exception):
    """Not the command's own options: the full parser reads the command line (and names any mistake)."""


class _FastParser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # noqa: D102 - never exits: the full parser reports the mistake
        raise _NotFast(message)


def parse_fast(prog: str, argv: Sequence[str], add_options: Callable[[argparse.ArgumentParser], None]
               ) -> argparse.Namespace | None:
    """`argv` read by a parser that `add_options` fills; None where it holds anything else."""
    parser = _FastParser(prog=prog, add_help=False)
    add_options(parser)
    try:
        return parser.parse_args(list(argv))
    except _NotFast:
        return None
