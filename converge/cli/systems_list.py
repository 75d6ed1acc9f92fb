"""`converge systems list`: the installed systems from what their records hold, in well under a second.

Each installation's system.json records its capabilities (at install) and the
outcome of its last check (the install's smoke check, or the last `--check`).
A plain list reads those records only: a live check starts the adapter, which
for Flink is a JVM per version (minutes on a loaded machine, issue 41 row 3).
`--check` checks each adapter now, with a heartbeat while it starts, and
records the outcome. main.py answers a plain `systems list` from here without
importing the other commands (what keeps it fast: `converge.cli.commands`
loads Hypothesis, DuckDB and sqlglot).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from converge.cli.fast_parse import parse_fast
from converge.reports.progress import StepProgress
from converge.reports.terminal import Footnotes, format_table
from converge.systems import venv_system
from converge.systems.flink import environment as flink_environment
from converge.systems.pathway import environment as pathway_environment
from converge.systems.venv_system import InstalledSystem, systems_dir

# Each system's environment module: install, find, installed, smoke_check, record_capabilities, features.
ENVIRONMENTS: dict[str, ModuleType] = {"flink": flink_environment, "pathway": pathway_environment}
NO_CHECK_NOTE = "converge: --no-check is the default now (a plain list starts no adapter); --check checks each now"


def add_list_options(parser: argparse.ArgumentParser) -> None:
    """`systems list`'s options (the full parser and the fast one below read the same)."""
    parser.add_argument("--check", action="store_true",
                        help="start each adapter now for a handshake and record the outcome (for Flink a JVM per "
                             "version: a minute or more); without it the list shows the last recorded check")
    parser.add_argument("--no-check", action="store_true",
                        help="deprecated, the default now: a plain list starts no adapter")


def fast_args(argv: Sequence[str]) -> argparse.Namespace | None:
    """The parsed command line when it is `systems list` with its own options only, else None."""
    if list(argv[:2]) != ["systems", "list"] or any(a in ("-h", "--help") for a in argv):
        return None
    args = parse_fast("converge systems list", argv[2:], add_list_options)
    if args is None:
        return None
    args.handler = list_systems
    return args


def list_systems(args: argparse.Namespace) -> int:
    """One row per installed system, its status the last recorded check; with --check, a handshake now."""
    if args.no_check:
        print(NO_CHECK_NOTE, file=sys.stderr)
    found = [(env, s) for env in ENVIRONMENTS.values() for s in env.installed()]
    if not found:
        hints = " or ".join(f"`{env.INSTALL_HINT}`" for env in ENVIRONMENTS.values())
        print(f"no system installed under {systems_dir()}; run {hints}")
        return 0
    steps = StepProgress("systems list", quiet=not args.check)
    rows = []
    notes = Footnotes()  # the lacks sentences and a broken adapter's message go under the table
    for environment, s in found:
        capabilities, check = s.capabilities, s.recorded_check()
        if args.check:
            check = _check_now(environment, s, steps)
            capabilities = capabilities or check.get("capabilities")  # an older record: what the adapter says now
        honours, lacks = environment.features(capabilities, s.version)
        rows.append((s.name, s.version, s.java, s.python, honours, lacks_cell(notes, s, capabilities, lacks),
                     str(s.folder), status(check, now=args.check)))
    steps.finish()
    print(notes.under(format_table(("system", "version", "java", "python", "honours", "lacks", "folder", "status"),
                                   rows)))
    if not args.check:
        print("status: the last recorded check (at install, or the last `converge systems list --check`); "
              "--check starts each adapter now")
    return 0


def _check_now(environment: ModuleType, s: InstalledSystem, steps: StepProgress) -> dict:
    """A handshake with the installation's adapter now, a heartbeat line every 10 s while it starts; recorded."""
    what = f"{s.name} {s.version}"
    steps.step(f"checking {what} (a handshake with its adapter{'; a JVM starts' if s.name == 'flink' else ''})")
    with steps.watch.waiting(f"systems list: still starting {what}'s adapter"):
        check = environment.smoke_check(s.command(), s.version, with_case=False)
    venv_system.record_check(s, check)
    return {**check, "at": "now"}


def status(check: dict, *, now: bool = False) -> str:
    """The status cell: what the check found, and when (a date; "now" for --check)."""
    at = "now" if now else (str(check.get("at") or "")[:10] or "never")
    if check.get("ok") is None:
        return "not checked yet (--check)"
    if check["ok"]:
        seconds = check.get("seconds")
        return f"works (checked {at}{f', handshake {seconds} s' if now and seconds is not None else ''})"
    return f"BROKEN (checked {at}): {check.get('message') or 'no message'}"


def lacks_cell(notes: Footnotes, s: Any, capabilities: dict | None, lacks: str) -> str:
    """The settings a system lacks, by name, with a footnote holding the adapter's sentences ("-": none)."""
    if lacks == "-":
        return lacks
    if not capabilities:  # recorded by an older converge: the footnote says how to record them
        return notes.mark("not recorded", lacks, f"{s.name} {s.version}")
    names = ", ".join(capabilities.get("lacks") or {}) or "not recorded"
    return notes.mark(names, lacks, f"{s.name} {s.version} lacks")
