"""`converge run`: the property campaign on the reference engine (local or Spark runtime) or on a system under test."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence

from converge.cli.arguments import (
    Subparsers,
    adapter_log_of,
    add_examples,
    add_oracle,
    add_reports_options,
    add_runtime,
    add_seed,
    add_shrink_budget,
    add_system,
    check_oracle,
    existing_file,
    positive_int,
    reports_of,
    system_timeout_of,
)
from converge.cli.ci_options import add_ci_options, last_failed_of, with_project_defaults
from converge.cli.last_failed import LastFailed
from converge.cli.project_config import load_project_config
from converge.cli.selection import narrow
from converge.engine.model.errors import UsageError, exit_code, label
from converge.engine.model.scenario import Scenario
from converge.properties.budget import check_budget
from converge.properties.campaign import PropertyResult, run_property
from converge.properties.coverage import coverage_summary
from converge.properties.registry import families, select
from converge.properties.spec import PropertySpec
from converge.properties.systems.specs import CASES_PER_SHAPE
from converge.reports.counts import Counts, default_counts, embedded_counts
from converge.reports.junit import case_of, status_of, write_junit
from converge.reports.options import RunOptions
from converge.reports.progress import CampaignProgress
from converge.reports.run_reports import RunReports
from converge.reports.terminal import failure_excerpt, format_table, outcome_cell, shrink_note, tally
from converge.systems.adapter.log import adapter_log
from converge.systems.flink.system_type import FlinkSystemType
from converge.systems.registry import system_type_of

# Exit codes (engine/model/errors.py): 0 all passed, 1 a divergence, 2 bad input or usage, 3 an internal error or a
# crash. A run with several outcomes exits with the most severe one, 3 > 2 > 1 > 0: a crash means the other
# results cannot be trusted, bad input means some checks did not run at all, a divergence is a finished check.


NOT_RUN = "not run"  # a property --maxfail left unrun: never "passed"
QUIET_FOR = 5.0  # seconds a property of the embedded campaign runs before its progress is shown (most take less)


def register(subparsers: Subparsers) -> None:
    """The `run` parser and its options."""
    run = subparsers.add_parser("run", help="run the property campaign and print a table")
    add_examples(run, None, "examples per property (default: per property); an example is one case: one "
                            "Hypothesis example, or with --system one case of a batch (docs/systems.md)")
    add_seed(run, "Hypothesis seed, for a repeatable campaign")
    run.add_argument("--family", default=None, help="only this property family")
    run.add_argument("--property", default=None, help="only this property")
    add_runtime(run)
    add_oracle(run, "who computes final answers (spark: Spark SQL, with --runtime spark)")
    add_reports_options(run, "where failure reports and summaries go (default: $CONVERGE_REPORTS_DIR or "
                             "./converge-reports; off: none)", "write no report files (as --reports-dir off)")
    add_system(run, "check a system under test instead: reference, reference-spark, cmd:COMMAND, "
                    "flink[:VERSION], pathway[:VERSION] (docs/systems.md) or spark (Spark's native join, "
                    "docs/spark.md); "
                    "--examples N is then N cases per property, sent in batches of --batch")
    run.add_argument("--known", metavar="FILE", action="append", default=None,
                     help="with --system: a file of known divergences (JSON, docs/systems.md) added to the built-in "
                          "list; may be given more than once. A case they match is counted as known, never shrunk")
    run.add_argument("--no-known", action="store_true",
                     help="with --system: do not apply the built-in known divergences (a --known FILE still applies)")
    run.add_argument("--no-repro", action="store_true",
                     help="with --system flink: write no standalone repro beside each failure report (docs/repro.md)")
    run.add_argument("--batch", type=positive_int, default=None,
                     help=f"with --system: cases per batch, one run request each; every batch is full but the "
                          f"last, cut to what is left of --examples; a batch holds shapes of at most {CASES_PER_SHAPE} cases "
                          f"each (default: the system's, {FlinkSystemType.default_batch} on flink, {CASES_PER_SHAPE} "
                          f"elsewhere)")
    add_shrink_budget(run)
    run.add_argument("--stats", action="store_true",
                     help="also print how often each family drew each special case (properties/coverage.py)")
    add_ci_options(run)
    run.set_defaults(handler=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    """The command line as RunOptions, [tool.converge]'s defaults under it (converge/cli/project_config.py);
    --known, --no-known and --batch without --system are refused, not ignored."""
    args = with_project_defaults(args, load_project_config())
    reports = reports_of(args)
    last = last_failed_of(args, reports)
    only: tuple[str, ...] | None = None if last is None else tuple(last.failed)
    if only == ():
        return 0
    if last is not None:  # each property as it failed: on its campaign's system, in its batches
        args.system, args.batch = last.system, args.batch or (last.batch if last.system is not None else None)
    if args.system is None and (args.known is not None or args.no_known or args.batch is not None or args.no_repro):
        raise UsageError("--known, --no-known, --no-repro and --batch apply to a campaign against a system "
                         "(--system SPEC)")
    known = tuple(existing_file(f, "--known") for f in args.known or ())
    if args.keyword is not None or only is not None:  # -k and --last-failed: the names, resolved once here
        names = campaign_names(args)
        if names:  # none: an unknown --family or --property, which the campaign refuses in its own words
            only = tuple(narrow(names, keyword=args.keyword, only=only))
    with adapter_log(adapter_log_of(args)):
        return run_campaign(RunOptions(examples=args.examples, seed=args.seed, family=args.family,
                                   property=args.property, runtime=args.runtime, reports=reports,
                                   system=args.system, known=known, builtin_known=not args.no_known,
                                   repro=not args.no_repro, batch=args.batch, stats=args.stats,
                                   oracle=args.oracle,
                                   system_timeout=system_timeout_of(args), shrink_budget=args.shrink_budget,
                                   only=only, maxfail=args.maxfail, **reruns_of(last),
                                   junit=args.junit_xml, quiet=args.quiet))


def reruns_of(last: LastFailed | None) -> dict[str, tuple[tuple[str, int], ...]]:
    """RunOptions' seeds and examples_each for --last-failed: each property's as it failed (none: not asked)."""
    if last is None:
        return {}
    return {"seeds": tuple((k, r.seed) for k, r in last.failed.items() if r.seed is not None),
            "examples_each": tuple((k, r.examples) for k, r in last.failed.items() if r.examples is not None)}


def campaign_names(args: argparse.Namespace) -> list[str]:
    """The family/property names the campaign would run without -k and --last-failed, in its order: the
    system properties with --system, else the embedded ones (an unknown family or property is refused later,
    by the campaign itself)."""
    if args.system is not None:
        from converge.systems.campaign import select_properties  # lazy: as run_on_system's system types

        return [p.key for p in select_properties(args.family, args.property)]
    return [f"{s.family}/{s.name}" for s in select(args.family, args.property)]


def run_on_system(options: RunOptions) -> int:
    """`run --system SPEC`: the one place the command hands a campaign to a system under test."""
    if options.runtime != "local":
        raise UsageError("--runtime applies to the reference engine's own campaign; with --system, name "
                         "reference-spark to run the reference engine on Spark")
    system_type = system_type_of(options.system, timeout=options.system_timeout)
    if system_type.case_type is not Scenario:
        refuse_ci_options(options, f"--system {options.system} (its {system_type.case_type.__name__} campaign)")
    return system_type.run_campaign(options)


def refuse_ci_options(options: RunOptions, where: str) -> None:
    """-k, --last-failed, --maxfail and --junit-xml are refused (never ignored) by a campaign that lacks them."""
    given = [flag for flag, value in (("-k/--last-failed", options.only), ("--maxfail/-x", options.maxfail),
                                      ("--junit-xml", options.junit))
             if value is not None]
    if given:
        raise UsageError(f"{', '.join(given)}: not supported by {where} yet; they apply to the embedded campaign "
                         f"and to --system campaigns of converge scenarios (reference, cmd:, flink, pathway)")


def verdict_of(spec: PropertySpec, result: PropertyResult) -> str:
    """A property's verdict label: its spec's `verdict` when it holds, "NOT <verdict>" when it fails."""
    if not spec.verdict:
        return ""
    return spec.verdict if result.ok else f"NOT {spec.verdict}"


def result_error(result: PropertyResult) -> BaseException | None:
    """What a property's result stands for in engine/model/errors.py's terms (None: it held)."""
    return result.failure or result.error


def run_campaign(options: RunOptions) -> int:
    """Run the selected properties, print the table, the summary's path and each failure; see the exit codes above."""
    check_oracle(options.oracle, options.runtime, options.system)
    check_budget(options.shrink_budget)
    if options.system is not None:
        return run_on_system(options)
    if options.runtime != "local":
        if options.shrink_budget is not None:
            raise UsageError("--shrink-budget: the Spark runtime's campaign does not shrink (every try would be a "
                             "query); it reports the smallest failing scenario it drew")
        refuse_ci_options(options, "--runtime spark")
        from converge.cli.spark_campaign import run_spark_campaign  # lazy: only this starts a JVM
        return run_spark_campaign(options)
    if options.family and options.family not in families():
        raise UsageError(f"--family {options.family!r}: known families are {', '.join(families())}")
    specs = select(options.family, options.property)
    if not specs:
        raise UsageError(f"no property matches family={options.family!r} property={options.property!r}")
    if options.only is not None:
        specs = [s for s in specs if f"{s.family}/{s.name}" in options.only]
        if not specs:
            raise UsageError(f"none of the properties asked for ({', '.join(options.only)}) is a property of the "
                             f"campaign")
    reports = RunReports.open(options.reports, "run")
    reporter = reports.reporter()
    results: list[PropertyResult] = []
    not_run: dict[tuple[str, str], str] = {}  # (family, property) -> why it did not run (--maxfail reached)
    seeds = dict(options.seeds)
    watch = CampaignProgress(quiet_for=QUIET_FOR, every_done=True, quiet=options.quiet)
    try:
        for i, spec in enumerate(specs):
            watch.begin(i, len(specs))
            stop = stop_reason(options.maxfail, results, not_run)
            if stop is not None:  # an empty result stands in the table, labelled by not_run, never "passed"
                results.append(PropertyResult(spec.family, spec.name))
                not_run[(spec.family, spec.name)] = stop
                continue
            examples = options.examples_of(f"{spec.family}/{spec.name}", spec.examples)
            results.append(run_property(spec, max_examples=examples,
                                        seed=seeds.get(f"{spec.family}/{spec.name}", options.seed),
                                        on_failure=reporter, shrink_budget=options.shrink_budget, progress=watch))
    finally:
        watch.finish()
    counts = [Counts(0, None, 0) if (r.family, r.name) in not_run else
              embedded_counts(r, options.examples_of(f"{s.family}/{s.name}", s.examples))
              for s, r in zip(specs, results, strict=False)]
    print_results(specs, results, stats=options.stats, counts=counts, not_run=not_run)
    summary = reports.summary(results, counts={(r.family, r.name): c for r, c in zip(results, counts, strict=False)},
                              outcomes={k: NOT_RUN for k in not_run})
    if summary is not None:
        print(f"summary: {summary}")
    if options.junit is not None:
        written = write_junit(options.junit, "converge run", reports.problems, [
            case_of(r.family, r.name, outcome_of(r, not_run), seconds=r.seconds, reports=r.reports, seed=r.seed,
                    text=not_run.get((r.family, r.name)) or ("" if r.ok else str(result_error(r))))
            for r in results])
        if written:
            print(f"junit: {options.junit}")
    for r in results:
        for warning in r.warnings:
            print(f"WARNING {r.family}/{r.name}: {warning}")
    failed = [r for r in results if not r.ok]
    for r in failed:
        print(f"\n{label(result_error(r)).upper()} {r.family}/{r.name} (seed {r.seed})")
        print(failure_excerpt(str(r.failure or f"{type(r.error).__name__}: {r.error}"), r.reports))
    asked, cases = sum(c.examples for c in counts), sum(c.cases for c in counts)
    print(f"\n{tally(outcome_of(r, not_run) for r in results)} ({asked} examples asked, {cases} cases checked)")
    return reports.settle(max((exit_code(result_error(r)) for r in results), default=0))


def outcome_of(result: PropertyResult, not_run: Mapping[tuple[str, str], str]) -> str:
    """A property's outcome label: "not run" when --maxfail stopped the campaign before it, else its result's."""
    return NOT_RUN if (result.family, result.name) in not_run else label(result_error(result))


def stop_reason(maxfail: int | None, results: Sequence[PropertyResult],
                not_run: Mapping[tuple[str, str], str]) -> str | None:
    """Why the next property is not run: --maxfail N properties have failed (a divergence or an error; "not
    checked" is no failure); None: it runs."""
    if maxfail is None:
        return None
    failed = [r for r in results if (r.family, r.name) not in not_run
              and status_of(label(result_error(r))) in ("failure", "error")]
    if len(failed) < maxfail:
        return None
    return f"--maxfail {maxfail} reached ({', '.join(f'{r.family}/{r.name}' for r in failed)} failed)"


def print_results(specs: Sequence[PropertySpec], results: Sequence[PropertyResult], *, stats: bool,
                  counts: Sequence[Counts] | None = None, not_run: Mapping[tuple[str, str], str] | None = None) -> None:
    """The campaign's table (with a verdict column for the anomalies family) and, with --stats, its coverage;
    examples, batches and cases as reports/counts.py defines them (without `counts`: the examples run)."""
    counted = list(counts) if counts is not None else [default_counts(r) for r in results]
    skipped = not_run or {}
    rows = [(r.family, r.name, f"{NOT_RUN}: {skipped[(r.family, r.name)]}" if (r.family, r.name) in skipped else
             outcome_cell(label(result_error(r)), result_error(r)) + shrink_note(r.shrink_stopped),
             c.examples, c.batches_cell, c.cases, r.exercised.compared, r.failures, f"{r.seconds:.1f}",
             f"{c.cases / r.seconds:.0f}" if r.seconds > 0 else "") for r, c in zip(results, counted, strict=False)]
    headers: tuple[str, ...] = ("family", "property", "outcome", "examples", "batches", "cases", "compared",
                                "failures", "seconds", "cases/s")
    if any(r.exercised.not_compared for r in results):  # what was drawn and not compared, and why (below)
        headers += ("not compared",)
        rows = [row + (r.exercised.describe(compared=False) if r.exercised.not_compared else "",)
                for row, r in zip(rows, results, strict=False)]
    verdicts = [verdict_of(s, r) for s, r in zip(specs, results, strict=False)]
    if any(verdicts):  # the anomalies family: "reproduced" / "fixed", or "NOT ..." when its property fails
        headers += ("verdict",)
        rows = [row + (v,) for row, v in zip(rows, verdicts, strict=False)]
    print(format_table(headers, rows))
    if stats:
        print("\n" + coverage_table(results))


def coverage_table(results: Sequence[PropertyResult]) -> str:
    """`--stats`: per family, how many examples drew each special case (properties/coverage.py)."""
    return format_table(*coverage_summary(results))
