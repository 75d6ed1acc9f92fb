"""The `converge` command: run the property campaign, replay scenario files, benchmark, explain plans."""

from __future__ import annotations

import argparse
import glob
import sys
import traceback
from collections import Counter
from pathlib import Path
from typing import Iterable, Sequence

from converge import __version__
from converge.engine.model.errors import EXIT_INTERNAL, ConvergeError, UsageError, exit_code, label
from converge.engine.planner import plan
from converge.properties.campaign import PropertyResult, run_property
from converge.properties.coverage import coverage_rows
from converge.properties.registry import families, select
from converge.properties.replay import ReplayOutcome, Skipped, find_scenario_files, load_scenario_file, replay_file
from converge.properties.spec import PropertySpec
from converge.reports.location import reports_folder
from converge.reports.options import ORACLES, RUNTIMES, BenchConfig, RunOptions
from converge.reports.run_reports import RunReports
from converge.reports.systems.adapter.client import Timeouts
from converge.reports.systems.registry import system_kind
from converge.reports.terminal import failure_excerpt, format_table, progress
from converge.reports.tooling.adapter_check import run_adapter_check
from converge.reports.tooling.bench import results_table, run_benchmarks
from converge.reports.tooling.mutants import run_mutants
from converge.reports.tooling.query_cli import add_commands as add_query_commands
from converge.reports.tooling.systems_cli import add_parser as add_systems_parser

# Exit codes (engine/model/errors.py): 0 all passed, 1 a divergence, 2 bad input or usage, 3 an internal error or a
# crash. A run with several outcomes exits with the most severe one, 3 > 2 > 1 > 0: a crash means the other
# results cannot be trusted, bad input means some checks did not run at all, a divergence is a finished check.


def verdict_of(spec: PropertySpec, result: PropertyResult) -> str:
    """A property's verdict label: its spec's `verdict` when it holds, "NOT <verdict>" when it fails."""
    if not spec.verdict:
        return ""
    return spec.verdict if result.ok else f"NOT {spec.verdict}"


def result_error(result: PropertyResult) -> BaseException | None:
    """What a property's result stands for in engine/model/errors.py's terms (None: it held)."""
    return result.failure or result.error


def tally(labels: Iterable[str]) -> str:
    """ "4 passed, 1 diverged, 2 bad input": every label that occurred, passed first."""
    counts = Counter(labels)
    order = ["passed"] + sorted(k for k in counts if k != "passed")
    return ", ".join(f"{counts[k]} {k}" for k in order)


def run_campaign(options: RunOptions) -> int:
    """Run the selected properties, print the table, the summary's path and each failure; see the exit codes above."""
    check_oracle(options.oracle, options.runtime, options.system)
    if options.system is not None:
        if options.runtime != "local":
            raise UsageError("--runtime applies to the reference engine's own campaign; with --system, name "
                             "reference-spark to run the reference engine on Spark")
        return system_kind(options.system).run_campaign(options)
    if options.runtime != "local":
        from converge.reports.tooling.spark_campaign import run_spark_campaign  # lazy: only this starts a JVM
        return run_spark_campaign(options)
    if options.family and options.family not in families():
        raise UsageError(f"--family {options.family!r}: known families are {', '.join(families())}")
    specs = select(options.family, options.property)
    if not specs:
        raise UsageError(f"no property matches family={options.family!r} property={options.property!r}")
    reports = RunReports.open(options.reports, "run")
    reporter = reports.reporter()
    results = []
    for i, spec in enumerate(specs):
        progress(i, len(specs), f"{spec.family}/{spec.name}")
        examples = options.examples if options.examples is not None else spec.examples
        results.append(run_property(spec, max_examples=examples, seed=options.seed, on_failure=reporter))
    progress(len(specs), len(specs), "done")
    rows = [(r.family, r.name, label(result_error(r)), r.examples, r.failures, f"{r.seconds:.1f}",
             f"{r.examples_per_second:.0f}") for r in results]
    headers: tuple[str, ...] = ("family", "property", "outcome", "examples", "failures", "seconds", "examples/s")
    verdicts = [verdict_of(s, r) for s, r in zip(specs, results)]
    if any(verdicts):  # the anomalies family: "reproduced" / "fixed", or "NOT ..." when its property fails
        headers += ("verdict",)
        rows = [row + (v,) for row, v in zip(rows, verdicts)]
    print(format_table(headers, rows))
    if options.stats:
        print("\n" + coverage_table(results))
    summary = reports.summary(results)
    if summary is not None:
        print(f"summary: {summary}")
    for r in results:
        for warning in r.warnings:
            print(f"WARNING {r.family}/{r.name}: {warning}")
    failed = [r for r in results if not r.ok]
    for r in failed:
        print(f"\n{label(result_error(r)).upper()} {r.family}/{r.name} (seed {r.seed})")
        print(failure_excerpt(str(r.failure or f"{type(r.error).__name__}: {r.error}"), r.reports))
    total = sum(r.examples for r in results)
    print(f"\n{tally(label(result_error(r)) for r in results)} ({total} examples)")
    return reports.settle(max((exit_code(result_error(r)) for r in results), default=0))


def coverage_table(results: Sequence[PropertyResult]) -> str:
    """`--stats`: per family, how many examples drew each special case (properties/coverage.py)."""
    examples: dict[str, int] = {}
    drawn: dict[str, Counter] = {}
    for r in results:
        examples[r.family] = examples.get(r.family, 0) + r.examples
        drawn.setdefault(r.family, Counter()).update(r.coverage)
    headers = ("special case (examples drawing it)",) + tuple(f"{f} ({n})" for f, n in examples.items())
    return format_table(headers, coverage_rows(examples, drawn))


def cmd_run(args: argparse.Namespace) -> int:
    reports = None if args.no_reports else reports_folder(args.reports_dir)
    if args.system is None and (args.known is not None or args.batch is not None):
        raise UsageError("--known and --batch apply to a campaign against a system (--system SPEC)")
    return run_campaign(RunOptions(examples=args.examples, seed=args.seed, family=args.family,
                                   property=args.property, runtime=args.runtime, reports=reports,
                                   system=args.system, known=Path(args.known) if args.known else None,
                                   batch=args.batch or RunOptions.batch, stats=args.stats, oracle=args.oracle))


def expand_targets(targets: Sequence[str]) -> list[Path]:
    """Each target as given, or, when it does not exist and holds a wildcard, the paths it matches."""
    out: list[Path] = []
    for target in targets:
        if Path(target).exists() or not glob.has_magic(target):
            out.append(Path(target))
            continue
        matched = sorted(glob.glob(target, recursive=True))
        if not matched:
            raise UsageError(f"{target}: no file or directory matches")
        out.extend(Path(m) for m in matched)
    return out


def print_outcome(o: ReplayOutcome) -> None:
    checked = ", ".join(o.checked)
    print(f"{o.label:<14} {o.path}" + (f"  [{checked}]" if checked else ""))
    for p in o.problems:
        print("               " + p.replace("\n", "\n               "))


def check_oracle(oracle: str, runtime: str, system: str | None) -> None:
    """`--oracle spark` checks the Spark runtime's final answers; other combinations are refused, not ignored."""
    if oracle not in ORACLES:
        raise UsageError(f"--oracle {oracle!r}: expected one of {', '.join(ORACLES)}")
    if oracle != "duckdb" and (runtime != "spark" or system is not None):
        raise UsageError(f"--oracle {oracle} applies with --runtime spark (it computes the final answers the Spark "
                         "runtime is checked against); the local runtime's and the systems' properties use DuckDB")


def cmd_replay(args: argparse.Namespace) -> int:
    check_oracle(args.oracle, args.runtime, args.system)
    if args.system is not None:
        if args.runtime != "local":
            raise UsageError("--runtime and --system exclude each other (reference-spark is the reference engine on "
                             "Spark)")
        kind = system_kind(args.system)  # a bad spec is refused before any file is read
        on_system = [f for target in expand_targets(args.targets) for f in find_scenario_files(target)[0]]
        if not on_system:
            raise UsageError(f"{', '.join(args.targets)}: no scenario files found")
        return kind.replay_files(list(dict.fromkeys(on_system)))
    files: list[Path] = []
    skipped: list[Skipped] = []
    for target in expand_targets(args.targets):
        found, left = find_scenario_files(target)
        files += found
        skipped += left
    outcomes = []
    for path in dict.fromkeys(files):  # a file named twice (a folder and a wildcard) is replayed once
        outcomes.append(replay_file(path, args.runtime, oracle=args.oracle))
        print_outcome(outcomes[-1])
    for s in skipped:
        print(f"{'skipped':<14} {s.path}  ({s.reason})")
    if not outcomes:
        raise UsageError(f"{', '.join(args.targets)}: no scenario files found"
                         + (f" ({len(skipped)} other files skipped)" if skipped else ""))
    print(tally(o.label for o in outcomes) + (f"; {len(skipped)} skipped (not scenarios)" if skipped else ""))
    return max(o.exit_code for o in outcomes)


def cmd_adapter_check(args: argparse.Namespace) -> int:
    return run_adapter_check(args.command_line, timeouts=Timeouts(hello=args.hello_timeout,
                                                                  run_base=args.run_timeout))


def cmd_bench(args: argparse.Namespace) -> int:
    only = tuple(n.strip() for n in args.only.split(",")) if args.only else None
    config = BenchConfig(events=args.events, keys=args.keys, examples=args.examples, rounds=args.rounds,
                         runtime=args.runtime, only=only, out=Path(args.out), batches=args.batches,
                         buckets=args.buckets)
    if args.final_check:
        if config.runtime != "spark":
            raise UsageError("--final-check runs on Spark: add --runtime spark")
        from converge.reports.tooling.spark_final_check import run_final_check  # lazy: only this starts a JVM
        return run_final_check(config)
    if config.runtime == "spark":
        from converge.reports.tooling.spark_bench import run_spark_bench  # lazy: only this starts a JVM
        return run_spark_bench(config)
    doc = run_benchmarks(config, echo=lambda line: print(line, flush=True))
    print(results_table(doc["results"]))
    print(f"written: {config.out}")
    return 0


def cmd_mutants(args: argparse.Namespace) -> int:
    reports = reports_folder(args.reports_dir) if args.reports_dir is not None else None
    return run_mutants(only=args.only, examples=args.examples, seed=args.seed, out=Path(args.out), reports=reports)


def cmd_explain(args: argparse.Namespace) -> int:
    path = Path(args.scenario)
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    scenario = load_scenario_file(path)
    print(plan(scenario).explain())
    return 0


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


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="converge", description=__doc__)
    p.add_argument("--version", action="version", version=f"converge {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run the property campaign and print a table")
    run.add_argument("--examples", type=positive_int, default=None, help="examples per property (default: per property)")
    run.add_argument("--seed", type=int, default=None, help="Hypothesis seed, for a repeatable campaign")
    run.add_argument("--family", default=None, help="only this property family")
    run.add_argument("--property", default=None, help="only this property")
    run.add_argument("--runtime", choices=RUNTIMES, default="local")
    run.add_argument("--oracle", choices=ORACLES, default="duckdb",
                     help="who computes final answers (spark: Spark SQL, with --runtime spark)")
    run.add_argument("--reports-dir", metavar="DIR|off", default=None,
                     help="where failure reports and summaries go (default: $CONVERGE_REPORTS_DIR or "
                          "./converge-reports; off: none)")
    run.add_argument("--no-reports", action="store_true", help="write no report files (as --reports-dir off)")
    run.add_argument("--system", metavar="SPEC", default=None,
                     help="check a system under test instead: reference, reference-spark, cmd:COMMAND, "
                          "flink[:VERSION] (docs/systems.md) or spark (Spark's native joins, docs/spark.md); "
                          "--examples then counts cases per property")
    run.add_argument("--known", metavar="FILE", default=None,
                     help="known divergences of systems (JSON, docs/systems.md): reported as known, exit 0")
    run.add_argument("--batch", type=positive_int, default=None,
                     help=f"with --system: most cases per run request (default {RunOptions.batch})")
    run.add_argument("--stats", action="store_true",
                     help="also print how often each family drew each special case (properties/coverage.py)")
    run.set_defaults(func=cmd_run)

    rp = sub.add_parser("replay", help="replay scenario files; exit 1 on a divergence, 2 on bad input, 3 on a crash")
    rp.add_argument("targets", nargs="+", metavar="FILE_OR_DIR",
                    help="scenario files or folders of them (wildcards are expanded when the shell did not)")
    rp.add_argument("--runtime", choices=RUNTIMES, default="local")
    rp.add_argument("--oracle", choices=ORACLES, default="duckdb",
                    help="who computes the final answer (spark: Spark SQL, with --runtime spark)")
    rp.add_argument("--system", metavar="SPEC", default=None,
                    help="rerun each file's case on a system under test (as converge run --system)")
    rp.set_defaults(func=cmd_replay)

    ad = sub.add_parser("adapter", help="tools for adapter authors (docs/adapter-protocol.md)")
    ad_sub = ad.add_subparsers(dest="adapter_command", required=True)
    ck = ad_sub.add_parser("check", help="the conformance kit: check an adapter command against protocol v1; "
                                          "exit 0 when every check passes, 1 otherwise")
    ck.add_argument("command_line", metavar="CMD", help="the adapter command (a path, or a quoted command line)")
    ck.add_argument("--hello-timeout", type=float, default=Timeouts.hello, help="seconds for the handshake")
    ck.add_argument("--run-timeout", type=float, default=Timeouts.run_base,
                    help="seconds for a run request (plus one per case)")
    ck.set_defaults(func=cmd_adapter_check)

    defaults = BenchConfig()
    b = sub.add_parser("bench", help="measure engine events/s and property examples/s")
    b.add_argument("--events", type=positive_int, default=defaults.events)
    b.add_argument("--keys", type=positive_int, default=defaults.keys)
    b.add_argument("--examples", type=positive_int, default=defaults.examples)
    b.add_argument("--rounds", type=positive_int, default=defaults.rounds,
                   help="repeat the property benchmarks (same seed, same examples); median and best are reported")
    b.add_argument("--batches", type=positive_int, default=defaults.batches,
                   help="micro-batches of the Spark benchmark (--runtime spark); it also runs with one")
    b.add_argument("--buckets", type=positive_int, default=None,
                   help="key buckets per plan node of the Spark runtime (--runtime spark; default: the runtime's)")
    b.add_argument("--runtime", choices=RUNTIMES, default="local")
    b.add_argument("--only", default=None, help="comma-separated benchmark names")
    b.add_argument("--final-check", action="store_true",
                   help="with --runtime spark: the stream's final answer on the Spark runtime checked against "
                        "the Spark SQL oracle, on Spark (--events, --keys, --batches)")
    b.add_argument("--out", type=output_file, default=str(defaults.out), help="where the JSON results go")
    b.set_defaults(func=cmd_bench)

    m = sub.add_parser("mutants", help="seeded-bug campaign: apply each known bug, see which properties kill it")
    m.add_argument("--examples", type=positive_int, default=300, help="examples per property per mutant")
    m.add_argument("--seed", type=int, default=None)
    m.add_argument("--only", default=None, help="comma-separated mutant names")
    m.add_argument("--out", type=output_file, default="converge-mutants.json", help="where the JSON results go")
    m.add_argument("--reports-dir", metavar="DIR", default=None,
                   help="also write each kill as a failure report recording its mutant (default: none)")
    m.set_defaults(func=cmd_mutants)

    e = sub.add_parser("explain", help="print the plan chosen for a scenario")
    e.add_argument("scenario")
    e.set_defaults(func=cmd_explain)
    add_systems_parser(sub)
    add_query_commands(sub, positive_int)  # check QUERY.sql, verify QUERY.sql
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """The exit code (see the top of this module); argparse itself exits 2 on a malformed command line."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ConvergeError as exc:  # bad input, usage, an oracle failure, an internal error: one line, no traceback
        print(f"converge: {label(exc)}: {exc}", file=sys.stderr)
        return exit_code(exc)
    except Exception as exc:  # noqa: BLE001 - a crash: the traceback is what a bug report needs
        traceback.print_exc()
        print(f"converge: crashed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
