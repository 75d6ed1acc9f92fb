"""The `converge` command: run the property campaign, replay scenario files, benchmark, explain plans."""

from __future__ import annotations

import argparse
import glob
import sys
from pathlib import Path
from typing import Sequence

from converge import __version__
from converge.engine.errors import BadInputError, ConvergeError
from converge.engine.planner import plan
from converge.engine.scenario_json import load_scenario
from converge.properties.campaign import PropertyResult, run_property
from converge.properties.registry import families, select
from converge.properties.replay import replay_path
from converge.properties.spec import PropertySpec
from converge.reports.failure import failure_reporter
from converge.reports.location import reports_folder
from converge.reports.summary import write_summary
from converge.reports.tooling.bench import results_table, run_benchmarks
from converge.reports.tooling.mutants import run_mutants
from converge.reports.tooling.options import RUNTIMES, BenchConfig, RunOptions
from converge.reports.tooling.terminal import format_table, progress


def verdict_of(spec: PropertySpec, result: PropertyResult) -> str:
    """A property's verdict label: its spec's `verdict` when it holds, "NOT <verdict>" when it fails."""
    if not spec.verdict:
        return ""
    return spec.verdict if result.ok else f"NOT {spec.verdict}"


def run_campaign(options: RunOptions) -> int:
    """Run the selected properties, print the table, the summary's path and each failure; 1 on any failure."""
    if options.runtime != "local":
        from converge.reports.tooling.spark_campaign import run_spark_campaign  # lazy: only this starts a JVM
        return run_spark_campaign(options)
    if options.family and options.family not in families():
        raise BadInputError(f"--family {options.family!r}: known families are {', '.join(families())}")
    specs = select(options.family, options.property)
    if not specs:
        raise BadInputError(f"no property matches family={options.family!r} property={options.property!r}")
    reporter = failure_reporter(options.reports) if options.reports is not None else None
    results = []
    for i, spec in enumerate(specs):
        progress(i, len(specs), f"{spec.family}/{spec.name}")
        examples = options.examples if options.examples is not None else spec.examples
        results.append(run_property(spec, max_examples=examples, seed=options.seed, on_failure=reporter))
    progress(len(specs), len(specs), "done")
    rows = [(r.family, r.name, r.examples, r.failures, f"{r.seconds:.1f}", f"{r.examples_per_second:.0f}")
            for r in results]
    headers: tuple[str, ...] = ("family", "property", "examples", "failures", "seconds", "examples/s")
    verdicts = [verdict_of(s, r) for s, r in zip(specs, results)]
    if any(verdicts):  # the anomalies family: "reproduced" / "fixed", or "NOT ..." when its property fails
        headers += ("verdict",)
        rows = [row + (v,) for row, v in zip(rows, verdicts)]
    print(format_table(headers, rows))
    failed = [r for r in results if not r.ok]
    if options.reports is not None:
        paths = write_summary(results, options.reports)
        print(f"summary: {paths[0]}")
    for r in failed:
        print(f"\nFAILED {r.family}/{r.name} (seed {r.seed})")
        text = str(r.failure or f"{type(r.error).__name__}: {r.error}").splitlines()
        more = f"\n  ... ({len(text) - 12} more lines in the report)" if len(text) > 12 else ""
        print("\n".join(text[:12]) + more)
        for path in r.reports:
            print(f"  report: {path}")
    total = sum(r.examples for r in results)
    print(f"\n{len(results) - len(failed)} passed, {len(failed)} failed ({total} examples)")
    return 1 if failed else 0


def cmd_run(args: argparse.Namespace) -> int:
    reports = None if args.no_reports else reports_folder(args.reports_dir)
    return run_campaign(RunOptions(examples=args.examples, seed=args.seed, family=args.family,
                                   property=args.property, runtime=args.runtime, reports=reports))


def expand_targets(targets: Sequence[str]) -> list[Path]:
    """Each target as given, or, when it does not exist and holds a wildcard, the paths it matches."""
    out: list[Path] = []
    for target in targets:
        if Path(target).exists() or not glob.has_magic(target):
            out.append(Path(target))
            continue
        matched = sorted(glob.glob(target, recursive=True))
        if not matched:
            raise BadInputError(f"{target}: no file or directory matches")
        out.extend(Path(m) for m in matched)
    return out


def cmd_replay(args: argparse.Namespace) -> int:
    outcomes = [o for target in expand_targets(args.targets) for o in replay_path(target, args.runtime)]
    if not outcomes:
        raise BadInputError(f"{', '.join(args.targets)}: no scenario files (*.json) found")
    bad = 0
    for o in outcomes:
        status = "ok  " if o.ok else "FAIL"
        checked = ", ".join(o.checked)
        print(f"{status} {o.path}" + (f"  [{checked}]" if checked else ""))
        for p in o.problems:
            print("     " + p.replace("\n", "\n     "))
        bad += not o.ok
    print(f"{len(outcomes) - bad} passed, {bad} failed")
    return 1 if bad else 0


def cmd_bench(args: argparse.Namespace) -> int:
    only = tuple(n.strip() for n in args.only.split(",")) if args.only else None
    config = BenchConfig(events=args.events, keys=args.keys, examples=args.examples, rounds=args.rounds,
                         runtime=args.runtime, only=only, out=Path(args.out), batches=args.batches)
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
    scenario = load_scenario(args.scenario)
    print(plan(scenario).explain())
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="converge", description=__doc__)
    p.add_argument("--version", action="version", version=f"converge {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run the property campaign and print a table")
    run.add_argument("--examples", type=int, default=None, help="examples per property (default: per property)")
    run.add_argument("--seed", type=int, default=None, help="Hypothesis seed, for a repeatable campaign")
    run.add_argument("--family", default=None, help="only this property family")
    run.add_argument("--property", default=None, help="only this property")
    run.add_argument("--runtime", choices=RUNTIMES, default="local")
    run.add_argument("--reports-dir", metavar="DIR|off", default=None,
                     help="where failure reports and summaries go (default: $CONVERGE_REPORTS_DIR or "
                          "./converge-reports; off: none)")
    run.add_argument("--no-reports", action="store_true", help="write no report files (as --reports-dir off)")
    run.set_defaults(func=cmd_run)

    rp = sub.add_parser("replay", help="replay scenario files; exit 1 on any difference")
    rp.add_argument("targets", nargs="+", metavar="FILE_OR_DIR",
                    help="scenario files or folders of them (wildcards are expanded when the shell did not)")
    rp.add_argument("--runtime", choices=RUNTIMES, default="local")
    rp.set_defaults(func=cmd_replay)

    defaults = BenchConfig()
    b = sub.add_parser("bench", help="measure engine events/s and property examples/s")
    b.add_argument("--events", type=int, default=defaults.events)
    b.add_argument("--keys", type=int, default=defaults.keys)
    b.add_argument("--examples", type=int, default=defaults.examples)
    b.add_argument("--rounds", type=int, default=defaults.rounds,
                   help="repeat the property benchmarks (same seed, same examples); median and best are reported")
    b.add_argument("--batches", type=int, default=defaults.batches,
                   help="micro-batches of the Spark benchmark (--runtime spark)")
    b.add_argument("--runtime", choices=RUNTIMES, default="local")
    b.add_argument("--only", default=None, help="comma-separated benchmark names")
    b.add_argument("--out", default=str(defaults.out), help="where the JSON results go")
    b.set_defaults(func=cmd_bench)

    m = sub.add_parser("mutants", help="seeded-bug campaign: apply each known bug, see which properties kill it")
    m.add_argument("--examples", type=int, default=300, help="examples per property per mutant")
    m.add_argument("--seed", type=int, default=None)
    m.add_argument("--only", default=None, help="comma-separated mutant names")
    m.add_argument("--out", default="converge-mutants.json", help="where the JSON results go")
    m.add_argument("--reports-dir", metavar="DIR", default=None,
                   help="also write each kill as a failure report recording its mutant (default: none)")
    m.set_defaults(func=cmd_mutants)

    e = sub.add_parser("explain", help="print the plan chosen for a scenario")
    e.add_argument("scenario")
    e.set_defaults(func=cmd_explain)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ConvergeError as exc:
        print(f"converge: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
