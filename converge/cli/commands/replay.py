"""`converge replay`: rerun scenario files on the reference engine, or each file's case on a system under test."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from converge.cli.arguments import (
    Subparsers,
    adapter_log_of,
    add_oracle,
    add_quiet,
    add_runtime,
    add_system,
    check_oracle,
    expand_targets,
    system_timeout_of,
)
from converge.engine.model.errors import UsageError
from converge.properties.replay import ReplayOutcome, Skipped, find_scenario_files, replay_file
from converge.reports.progress import StepProgress
from converge.reports.terminal import tally
from converge.systems.adapter.log import adapter_log
from converge.systems.flink.matrix import is_matrix, matrix_versions, replay_matrix
from converge.systems.registry import system_type_of


def register(subparsers: Subparsers) -> None:
    """The `replay` parser: files, folders or wildcards, and where to replay them."""
    rp = subparsers.add_parser("replay",
                               help="replay scenario files; exit 1 on a divergence, 2 on bad input, 3 on a crash")
    rp.add_argument("targets", nargs="+", metavar="FILE_OR_DIR",
                    help="scenario files or folders of them (wildcards are expanded when the shell did not)")
    add_runtime(rp)
    add_oracle(rp, "who computes the final answer (spark: Spark SQL, with --runtime spark)")
    add_system(rp, "rerun each file's case on a system under test (as converge run --system); 'flink:*': on every "
                   "installed Flink release, then the version matrix")
    rp.add_argument("--versions", metavar="V1,V2", default=None,
                    help="with --system flink: replay on each of these Flink releases and print the version matrix "
                         "(a release not installed is reported as such)")
    add_quiet(rp)
    rp.set_defaults(handler=cmd_replay)


def scenario_files(targets: Sequence[str]) -> tuple[list[Path], list[Skipped]]:
    """The scenario files the targets name (wildcards expanded, folders searched) and the other files found."""
    files: list[Path] = []
    skipped: list[Skipped] = []
    for target in expand_targets(targets):
        found, left = find_scenario_files(target)
        files += found
        skipped += left
    return files, skipped


def cmd_replay(args: argparse.Namespace) -> int:
    """Each file's outcome, the skipped files, the tally; the most severe exit code."""
    check_oracle(args.oracle, args.runtime, args.system)
    timeout = system_timeout_of(args)
    if args.versions is not None and args.system is None:
        raise UsageError("--versions needs --system flink")
    if args.system is not None:
        if args.runtime != "local":
            raise UsageError("--runtime and --system exclude each other (reference-spark is the reference engine on "
                             "Spark)")
        files = scenario_files(args.targets)[0]
        if not files:
            raise UsageError(f"{', '.join(args.targets)}: no scenario files found")
        with adapter_log(adapter_log_of(args)):
            if is_matrix(args.system, args.versions):
                return replay_matrix(files, matrix_versions(args.system, args.versions), timeout)
            return replay_on_system(files, args.system, timeout)
    files, skipped = scenario_files(args.targets)
    outcomes = []
    steps = StepProgress("replay", quiet=args.quiet)
    unique = list(dict.fromkeys(files))  # a file named twice (a folder and a wildcard) is replayed once
    for i, path in enumerate(unique):
        steps.step(f"[{i + 1}/{len(unique)}] {path}")
        outcomes.append(replay_file(path, args.runtime, oracle=args.oracle))
        steps.finish()
        print_outcome(outcomes[-1])
    for s in skipped:
        print(f"{'skipped':<14} {s.path}  ({s.reason})")
    if not outcomes:
        raise UsageError(f"{', '.join(args.targets)}: no scenario files found"
                         + (f" ({len(skipped)} other files skipped)" if skipped else ""))
    print(tally(o.label for o in outcomes) + (f"; {len(skipped)} skipped (not scenarios)" if skipped else ""))
    return max(o.exit_code for o in outcomes)


def replay_on_system(files: list[Path], spec: str, timeout: float | None = None) -> int:
    """`replay --system SPEC`: the one place the command hands scenario files to a system under test (`timeout`:
    `--system-timeout`)."""
    return system_type_of(spec, timeout=timeout).replay_files(files)


def print_outcome(o: ReplayOutcome) -> None:
    """One replayed file: its label, its path, what was checked, then its problems indented."""
    checked = ", ".join(o.checked)
    print(f"{o.label:<14} {o.path}" + (f"  [{checked}]" if checked else ""))
    for p in o.problems:
        print("               " + p.replace("\n", "\n               "))
