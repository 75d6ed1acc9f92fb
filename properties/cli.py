"""The `converge` command: run the property campaign, replay scenario files, benchmark, explain plans."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence

from engine.errors import BadInputError, ConvergeError


def _progress(done: int, total: int, label: str, stream=sys.stderr) -> None:
    if not stream.isatty():
        return
    width = 28
    filled = int(width * done / max(total, 1))
    stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {label:<40.40}")
    stream.flush()
    if done == total:
        stream.write("\r" + " " * (width + 60) + "\r")


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for n, r in enumerate(cells):
        lines.append("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def verdict_of(spec, result) -> str:
    """A property's verdict label: its spec's `verdict` when it holds, "NOT <verdict>" when it fails."""
    if not spec.verdict:
        return ""
    return spec.verdict if result.ok else f"NOT {spec.verdict}"


def cmd_run(args: argparse.Namespace) -> int:
    from properties.campaign import run_property
    from properties.registry import families, select

    if args.runtime != "local":
        from properties.spark_campaign import run_spark_campaign  # lazy: only this starts a JVM
        return run_spark_campaign(args)
    if args.family and args.family not in families():
        raise BadInputError(f"--family {args.family!r}: known families are {', '.join(families())}")
    specs = select(args.family, args.property)
    if not specs:
        raise BadInputError(f"no property matches family={args.family!r} property={args.property!r}")
    reporter = None
    if args.reports_dir == "off":  # CONVERGE_REPORTS_DIR=off
        args.no_reports = True
    if not args.no_reports:
        from reports import failure_reporter
        reporter = failure_reporter(Path(args.reports_dir))
    results = []
    for i, spec in enumerate(specs):
        _progress(i, len(specs), f"{spec.family}/{spec.name}")
        examples = args.examples if args.examples is not None else spec.examples
        results.append(run_property(spec, max_examples=examples, seed=args.seed, on_failure=reporter))
    _progress(len(specs), len(specs), "done")
    rows = [(r.family, r.name, r.examples, r.failures, f"{r.seconds:.1f}", f"{r.examples_per_second:.0f}")
            for r in results]
    headers: tuple[str, ...] = ("family", "property", "examples", "failures", "seconds", "examples/s")
    verdicts = [verdict_of(s, r) for s, r in zip(specs, results)]
    if any(verdicts):  # the anomalies family: "reproduced" / "fixed", or "NOT ..." when its property fails
        headers += ("verdict",)
        rows = [row + (v,) for row, v in zip(rows, verdicts)]
    print(format_table(headers, rows))
    failed = [r for r in results if not r.ok]
    if not args.no_reports:
        from reports.summary import write_summary
        paths = write_summary(results, Path(args.reports_dir))
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


def cmd_replay(args: argparse.Namespace) -> int:
    from properties.replay import replay_path

    outcomes = replay_path(args.target, args.runtime)
    if not outcomes:
        raise BadInputError(f"{args.target}: no scenario files (*.json) found")
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
    from properties.bench import run_bench

    return run_bench(args)


def cmd_mutants(args: argparse.Namespace) -> int:
    from properties.mutants import run_mutants  # the bugs are applied only by this command and its tests

    return run_mutants(args)


def cmd_explain(args: argparse.Namespace) -> int:
    from engine.planner import plan
    from engine.scenario import load_scenario

    scenario = load_scenario(args.scenario)
    print(plan(scenario).explain())
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="converge", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run the property campaign and print a table")
    run.add_argument("--examples", type=int, default=None, help="examples per property (default: per property)")
    run.add_argument("--seed", type=int, default=None, help="Hypothesis seed, for a repeatable campaign")
    run.add_argument("--family", default=None, help="only this property family")
    run.add_argument("--property", default=None, help="only this property")
    run.add_argument("--runtime", choices=("local", "spark"), default="local")
    run.add_argument("--reports-dir", default=os.environ.get("CONVERGE_REPORTS_DIR") or "converge-reports",
                     help="where failure reports and summaries go (default: $CONVERGE_REPORTS_DIR or "
                          "./converge-reports)")
    run.add_argument("--no-reports", action="store_true", help="write no report files")
    run.set_defaults(func=cmd_run)

    rp = sub.add_parser("replay", help="replay scenario files; exit 1 on any difference")
    rp.add_argument("target", help="a scenario file or a folder of them")
    rp.add_argument("--runtime", choices=("local", "spark"), default="local")
    rp.set_defaults(func=cmd_replay)

    b = sub.add_parser("bench", help="measure engine events/s and property examples/s")
    b.add_argument("--events", type=int, default=1_000_000)
    b.add_argument("--keys", type=int, default=100_000)
    b.add_argument("--examples", type=int, default=300)
    b.add_argument("--rounds", type=int, default=3,
                   help="repeat the property benchmarks (same seed, same examples); median and best are reported")
    b.add_argument("--runtime", choices=("local", "spark"), default="local")
    b.add_argument("--only", default=None, help="comma-separated benchmark names")
    b.add_argument("--out", default="converge-bench.json", help="where the JSON results go")
    b.set_defaults(func=cmd_bench)

    m = sub.add_parser("mutants", help="seeded-bug campaign: apply each known bug, see which properties kill it")
    m.add_argument("--examples", type=int, default=300, help="examples per property per mutant")
    m.add_argument("--seed", type=int, default=None)
    m.add_argument("--only", default=None, help="comma-separated mutant names")
    m.add_argument("--out", default="converge-mutants.json", help="where the JSON results go")
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
