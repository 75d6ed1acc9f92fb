"""`converge check QUERY.sql`: the user's own Flink SQL join query, checked on streams of its schema.

It prints the plan converge chose (operators and the state view of each
input), every property it ran on streams of the query's schema with its
verdict, and the findings; a failing property writes the usual replayable
report. docs/check-your-query.md walks through it (and through `verify`,
commands/verify.py).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from converge.cli import check_json
from converge.cli.arguments import (
    Subparsers,
    adapter_log_of,
    add_examples,
    add_quiet,
    add_reports_options,
    add_seed,
    add_system,
    existing_file,
    positive_int,
    reports_of,
    system_timeout_of,
)
from converge.cli.check_plan import (
    add_plan_options,
    describe_query,
    option_lines,
    options_of,
    plan_json,
    plan_only,
    plan_text,
    read_query,
    refuse_run_options,
)
from converge.engine.model.errors import ConvergeError, MisreadQueryError, UsageError, exit_code, label
from converge.engine.runtime.local import run_scenario
from converge.properties.campaign import run_property
from converge.properties.query_plan import with_file_options
from converge.reports.progress import StepProgress
from converge.reports.run_reports import RunReports
from converge.reports.terminal import format_table
from converge.systems.adapter.log import adapter_log
from converge.systems.adapter.requests import with_stderr

if TYPE_CHECKING:
    from converge.engine.model.flinksql import MappedQuery
    from converge.engine.model.system import System
    from converge.properties.query_check import CheckOptions

_WRAP = 100
EXAMPLES = 50  # --examples by default (a different number with --plan-only is refused: it would be ignored)


def register(subparsers: Subparsers) -> None:
    """The `check` parser: the query file and the options of the checked configuration."""
    c = subparsers.add_parser("check", help="check a Flink SQL join query: plan, properties on its schema, findings")
    c.add_argument("query", metavar="QUERY.sql", help="CREATE TABLE statements and one SELECT")
    add_plan_options(c, positive_int)  # --ttl, --semantics, --map-state-order, --multi-join, --format, --plan-only
    add_examples(c, EXAMPLES, "examples per property and per finding")
    add_seed(c, "Hypothesis seed, for a repeatable check")
    add_system(c, "the system whose final answers system_final_answer judges: reference (default), "
                  "flink[:VERSION], pathway[:VERSION], cmd:COMMAND")
    add_reports_options(c, "where failure reports go", "write no report files")
    add_quiet(c)
    c.set_defaults(handler=cmd_check)


def open_system_under_test(spec: str | None, timeout: float | None = None) -> System | None:
    """The system `check --system SPEC` judges (None: converge's own engine, which needs no process); `timeout`
    is `--system-timeout`."""
    if spec in (None, "local", "reference"):
        if timeout is not None:
            raise UsageError("--system-timeout applies to systems behind an adapter (cmd:COMMAND, flink[:VERSION], "
                             "pathway[:VERSION]), "
                             "not to converge's own engine")
        return None
    from converge.systems.registry import open_system  # lazy: may start an adapter process

    return open_system(spec, timeout=timeout)


def run_check(query: MappedQuery, options: CheckOptions, *, reports: Path | None = None,
              system: str | None = None, system_timeout: float | None = None, echo=print,
              record: dict | None = None, steps: StepProgress | None = None, settings: list[str] | None = None) -> int:
    """Print plan, properties and findings; the exit code (1 when a property fails). `record`, when given, receives
    the run's verdicts and findings as --format json lists them (converge/cli/check_json.py); `steps` shows
    each phase on stderr as it starts (None: nothing is shown)."""
    steps = steps or StepProgress("check", quiet=True)
    if system not in (None, "local", "reference"):
        steps.step(f"starting {system}")
    with steps.watch.waiting(f"check: still starting {system}"):  # Flink's MiniCluster: a minute on a loaded machine
        under_test = open_system_under_test(system, system_timeout)
    try:
        return _run_check(query, options, reports, system, under_test, echo, record, steps, settings or [])
    finally:
        if under_test is not None:
            under_test.close()


def _run_check(query: MappedQuery, options: CheckOptions, reports: Path | None, system: str | None,
               under_test: System | None, echo, record: dict | None, steps: StepProgress,
               settings: list[str]) -> int:
    from converge.properties.findings import all_findings  # lazy: sqlglot only for check
    from converge.properties.query_check import check_properties, skipped_properties, system_final  # lazy: as above
    final = system_final(under_test, system or "") if under_test is not None else None
    if under_test is not None:
        echo(f"system under test: {under_test.title} (system_final_answer); the other properties and the "
             f"findings check converge's model of Flink")
        sent = ", ".join(f"{k}={','.join(v) if isinstance(v, tuple) else v}" for k, v in query.job_config().items())
        echo(f"job options sent to {under_test.name} with every case: {sent or 'none (its defaults)'}")
    steps.step("planning")
    steps.finish()
    for line in describe_query(query) + option_lines(settings):
        echo(line)
    echo("\nplan:")
    for line in plan_text(query, options):
        echo(line)
    echo("\nproperties:")
    run_reports = RunReports.open(reports, "check")
    reporter = with_stderr(under_test, run_reports.reporter())  # a divergence's report shows the adapter's stderr
    rows, worst, failed = [], 0, []
    exact = query.scenario(config=options.config(ttl=False, semantics="correct"))
    refused = under_test.why_not(exact) if under_test is not None else None
    misread = None
    checked = list(check_properties(query, options, final))
    steps.step(f"running {len(checked)} properties, {options.examples} examples each")
    watch = steps.campaign()
    for i, spec in enumerate(checked):
        watch.begin(i, len(checked))
        if misread is not None:
            rows.append((f"{spec.family}/{spec.name}", "not run", 0, 0, f"not applicable: {misread}"))
            continue
        if spec.name == "system_final_answer" and refused is not None:
            rows.append((f"{spec.family}/{spec.name}", "not run", 0, 0, f"not applicable: {refused}"))
            continue
        result = run_property(spec, max_examples=options.examples, seed=options.seed, on_failure=reporter,
                              progress=watch)
        error = result.failure or result.error
        what = spec.description
        if spec.name == "system_final_answer" and under_test is not None:
            what = f"on {under_test.title}: {what}"
        if result.exercised.not_compared:
            what += f" ({result.exercised.describe(compared=False)})"
        if result.not_checked:
            what = f"{result.error}; {what}"
        rows.append((f"{spec.family}/{spec.name}", label(error), result.examples, result.exercised.compared, what))
        worst = max(worst, exit_code(error))
        if error is not None:
            failed.append((spec, result))
        if isinstance(error, MisreadQueryError):  # the other properties would check a query the user did not write
            misread = f"converge misread the query ({spec.family}/{spec.name})"
    for name, why in skipped_properties(query, options):
        rows.append((name, "not run", 0, 0, why))
    steps.finish()
    echo(format_table(("property", "verdict", "examples", "compared", "what it checks"), rows))
    for spec, result in failed:
        echo(f"\n{label(result.failure or result.error).upper()} {spec.family}/{spec.name} (seed {result.seed})")
        echo("\n".join(str(result.failure or result.error).splitlines()[:15]))
        for path in result.reports:
            echo(f"  report: {path}")
    echo("\nfindings:")
    if misread is not None:
        echo(f"* none searched: {misread}")
    findings = []
    if misread is None:
        steps.step("searching for findings")
        findings = list(all_findings(query, options, run_scenario))
        steps.finish()
    for finding in findings:
        echo(f"* {finding.topic}: {finding.text}")
        for line in finding.detail:
            echo(f"    {line}")
    if record is not None:
        _record(record, query, rows, failed, findings)
    return run_reports.settle(worst)


def _record(record: dict, query: MappedQuery, rows: list, failed: list, findings: list) -> None:
    """The run's verdicts (each failure's seed, reports and message on its line) and findings, as JSON fields."""
    failures = {f"{spec.family}/{spec.name}": result for spec, result in failed}
    record["verdicts"] = []
    for row in rows:
        result = failures.get(row[0])
        record["verdicts"].append(check_json.verdict(row) if result is None else check_json.verdict(
            row, result.seed, result.reports, str(result.failure or result.error)))
    record["findings"] = [check_json.finding(query, f) for f in findings]


def cmd_check(args: argparse.Namespace) -> int:
    """Read the query, then run_check with the command line's options (or only plan it: --plan-only)."""
    if args.plan_only:
        refuse_run_options(args, {"examples": EXAMPLES, "seed": None, "system": None, "system_timeout": None,
                                  "adapter_log": None, "reports_dir": None, "no_reports": False})
        return plan_only(args.query, options_of(args), args.output_format)
    options = options_of(args, examples=args.examples, seed=args.seed)
    steps = StepProgress("check", quiet=args.quiet)
    steps.step(f"reading {args.query}")
    if args.output_format == "json":
        return _check_json(args, options, steps)
    query = read_query(existing_file(args.query))
    options, settings = with_file_options(query, options)
    with adapter_log(adapter_log_of(args)):
        return run_check(query, options, reports=reports_of(args), system=args.system,
                         system_timeout=system_timeout_of(args), steps=steps, settings=settings)


def _check_json(args: argparse.Namespace, options: CheckOptions, steps: StepProgress) -> int:
    """--format json: the text goes nowhere; one document (converge/cli/check_json.py) goes to stdout."""
    record: dict = {}
    try:
        query = read_query(existing_file(args.query))
        options, _ = with_file_options(query, options)
        record["plan"] = plan_json(query, options, args.system)
        with adapter_log(adapter_log_of(args)):
            code = run_check(query, options, reports=reports_of(args), system=args.system,
                             system_timeout=system_timeout_of(args), echo=lambda *_: None, record=record,
                             steps=steps)
        doc = check_json.document(args.query, code=code, **record)
    except ConvergeError as exc:  # a refusal of the query (or of the run): its document, with what was done
        doc = check_json.document(args.query, error=exc, **record)
    print(check_json.dumps(doc))
    return doc["exit_code"]


__all__ = ["cmd_check", "open_system_under_test", "register", "run_check"]
