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

from converge.engine.model.errors import MisreadQueryError, UsageError, exit_code, label
from converge.engine.model.scenario import MapStateOrder, MultiJoinMode, Semantics
from converge.engine.planner import plan
from converge.engine.runtime.local import run_scenario
from converge.properties.campaign import run_property
from converge.reports.progress import StepProgress
from converge.reports.run_reports import RunReports
from converge.reports.systems.adapter.log import adapter_log
from converge.reports.systems.adapter.requests import with_stderr
from converge.reports.terminal import format_table
from converge.reports.tooling.arguments import (
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

if TYPE_CHECKING:
    from converge.engine.model.flinksql import MappedQuery
    from converge.engine.model.system import System
    from converge.properties.query_check import CheckOptions

_WRAP = 100


def register(subparsers: Subparsers) -> None:
    """The `check` parser: the query file and the options of the checked configuration."""
    c = subparsers.add_parser("check", help="check a Flink SQL join query: plan, properties on its schema, findings")
    c.add_argument("query", metavar="QUERY.sql", help="CREATE TABLE statements and one SELECT")
    c.add_argument("--ttl", type=positive_int, default=None, metavar="MS", help="state TTL in milliseconds")
    c.add_argument("--semantics", choices=Semantics.__args__, default="correct")
    c.add_argument("--map-state-order", choices=MapStateOrder.__args__, default="rocksdb")
    c.add_argument("--multi-join", choices=MultiJoinMode.__args__, default="off")
    add_examples(c, 50, "examples per property and per finding")
    add_seed(c, "Hypothesis seed, for a repeatable check")
    add_system(c, "the system whose final answers system_final_answer judges: reference (default), "
                  "flink[:VERSION], pathway[:VERSION], cmd:COMMAND")
    add_reports_options(c, "where failure reports go", "write no report files")
    add_quiet(c)
    c.set_defaults(handler=cmd_check)


def open_system_under_test(spec: str | None, timeout: float | None = None) -> "System | None":
    """The system `check --system SPEC` judges (None: converge's own engine, which needs no process); `timeout`
    is `--system-timeout`."""
    if spec in (None, "local", "reference"):
        if timeout is not None:
            raise UsageError("--system-timeout applies to systems behind an adapter (cmd:COMMAND, flink[:VERSION], "
                             "pathway[:VERSION]), "
                             "not to converge's own engine")
        return None
    from converge.reports.systems.registry import open_system  # lazy: may start an adapter process

    return open_system(spec, timeout=timeout)


def describe_query(query: "MappedQuery") -> list[str]:
    lines = ["inputs:"]
    for alias, table in query.aliases:
        t = query.tables[table]
        cols = ", ".join(f"{c} {ft.name}{'' if ft.nullable else ' NOT NULL'}" for c, ft in t.columns)
        extra = f", primary key ({', '.join(t.primary_key)})" if t.primary_key else ""
        if t.time_column:
            extra += f", rowtime {t.time_column} (watermark delay {t.watermark_delay_ms} ms)"
        lines.append(f"  {alias} = {table} [{t.changelog_mode} from {t.connector}{extra}]: {cols}")
    lines.append("join chain: " + query.join.inputs[0] + "".join(
        f" {jt.upper()} {name} ON {cond}" for name, jt, cond in zip(query.join.inputs[1:], query.join.types,
                                                                   query.join.conditions)))
    if query.join.interval is not None:
        iv = query.join.interval
        lines.append(f"interval join: {iv.left_time} - {iv.right_time} in [{iv.lower_ms}, {iv.upper_ms}] ms "
                     f"(event time)")
    if query.where_sql:
        lines.append(f"where (on the join's output): {query.where_sql}")
    lines.append("output: " + ", ".join(f"{o.name} ({o.alias}.{o.column})" for o in query.output))
    lines.append("checked answer: the query's (join, WHERE and SELECT list), equal to the query as written run in "
                 "DuckDB on every example (check/reading_equals_query)")
    lines.append("job options: " + ("; ".join(s.describe() for s in query.job) if query.job else
                                    "none set in the file (the system's defaults)"))
    return lines


def run_check(query: "MappedQuery", options: "CheckOptions", *, reports: Path | None = None,
              system: str | None = None, system_timeout: float | None = None, echo=print,
              steps: StepProgress | None = None) -> int:
    """Print plan, properties and findings; the exit code (1 when a property fails). `steps` shows each phase
    on stderr as it starts (None: nothing is shown)."""
    steps = steps or StepProgress("check", quiet=True)
    if system not in (None, "local", "reference"):
        steps.step(f"starting {system}")
    under_test = open_system_under_test(system, system_timeout)
    try:
        return _run_check(query, options, reports, system, under_test, echo, steps)
    finally:
        if under_test is not None:
            under_test.close()


def _run_check(query: "MappedQuery", options: "CheckOptions", reports: Path | None, spec: str | None,
               under_test: "System | None", echo, steps: StepProgress) -> int:
    from converge.properties.findings import all_findings, state_views  # lazy: sqlglot only for check
    from converge.properties.query_check import check_properties, skipped_properties, system_final  # lazy: as above
    final = system_final(under_test, spec or "") if under_test is not None else None
    if under_test is not None:
        echo(f"system under test: {under_test.title} (system_final_answer); the other properties and the "
             f"findings check converge's model of Flink")
        sent = ", ".join(f"{k}={','.join(v) if isinstance(v, tuple) else v}" for k, v in query.job_config().items())
        echo(f"job options sent to {under_test.name} with every case: {sent or 'none (its defaults)'}")
    steps.step("planning")
    steps.finish()
    for line in describe_query(query):
        echo(line)
    echo("\nplan:")
    shown = query.scenario(config=options.config())
    for line in plan(shown).explain().splitlines():
        echo("  " + line)
    for line in state_views(query):
        echo("  state view: " + line)
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
        return run_reports.settle(worst)
    steps.step("searching for findings")
    found = list(all_findings(query, options, run_scenario))
    steps.finish()
    for finding in found:
        echo(f"* {finding.topic}: {finding.text}")
        for line in finding.detail:
            echo(f"    {line}")
    return run_reports.settle(worst)


def cmd_check(args: argparse.Namespace) -> int:
    """Read the query, then run_check with the command line's options."""
    from converge.engine.model.flinksql import load_query  # lazy: sqlglot loads only for check/verify
    from converge.properties.query_check import CheckOptions  # lazy: as above
    from converge.properties.query_guard import guard_query  # lazy: as above
    steps = StepProgress("check", quiet=args.quiet)
    steps.step(f"reading {args.query}")
    query = load_query(existing_file(args.query))
    guard_query(query)  # what the oracle would refuse later, refused now at file:line:col
    options = CheckOptions(ttl_ms=args.ttl, semantics=args.semantics, map_state_order=args.map_state_order,
                           multi_join=args.multi_join, examples=args.examples, seed=args.seed)
    with adapter_log(adapter_log_of(args)):
        return run_check(query, options, reports=reports_of(args), system=args.system,
                         system_timeout=system_timeout_of(args), steps=steps)


__all__ = ["cmd_check", "open_system_under_test", "register", "run_check"]
