"""`converge check QUERY.sql` and `converge verify QUERY.sql`: the user's own query, schema and captures.

`check` prints the plan converge chose (operators and the state view of each
input), every property it ran on streams of the query's schema with its
verdict, and the findings; a failing property writes the usual replayable
report. `verify` checks captured changelogs against the batch answer.
docs/check-your-query.md walks through both.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from hypothesis.errors import FailedHealthCheck, Unsatisfiable

from converge.engine.model.errors import UsageError, exit_code, label
from converge.engine.model.scenario import MapStateOrder, MultiJoinMode, Semantics
from converge.engine.planner import plan
from converge.engine.runtime.local import run_scenario
from converge.properties.campaign import run_property
from converge.reports.location import reports_folder
from converge.reports.run_reports import RunReports
from converge.reports.terminal import format_table

if TYPE_CHECKING:
    from converge.engine.model.flinksql import MappedQuery
    from converge.engine.model.system import System
    from converge.properties.query_check import CheckOptions

_WRAP = 100


def open_system_under_test(spec: str | None) -> "System | None":
    """The system `check --system SPEC` judges (None: converge's own engine, which needs no process)."""
    if spec in (None, "local", "reference"):
        return None
    from converge.reports.systems.registry import open_system  # lazy: may start an adapter process

    return open_system(spec)


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
        lines.append(f"filter on the join's output (stateless, not part of the checked join): {query.where_sql}")
    lines.append("output: " + ", ".join(f"{o.name} ({o.alias}.{o.column})" for o in query.output))
    return lines


def run_check(query: "MappedQuery", options: "CheckOptions", *, reports: Path | None = None,
              system: str | None = None, echo=print) -> int:
    """Print plan, properties and findings; the exit code (1 when a property fails)."""
    under_test = open_system_under_test(system)
    try:
        return _run_check(query, options, reports, system, under_test, echo)
    finally:
        if under_test is not None:
            under_test.close()


def _run_check(query: "MappedQuery", options: "CheckOptions", reports: Path | None, spec: str | None,
               under_test: "System | None", echo) -> int:
    from converge.properties.findings import all_findings, state_views  # lazy: sqlglot only for check
    from converge.properties.query_check import check_properties, skipped_properties, system_final  # lazy: as above
    from converge.properties.systems.checks import Tally  # lazy: as above
    tally = Tally()
    final = system_final(under_test, spec or "", tally) if under_test is not None else None
    if under_test is not None:
        echo(f"system under test: {under_test.title} (system_final_answer); the other properties and the "
             f"findings check converge's model of Flink")
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
    reporter = run_reports.reporter()
    rows, worst, failed = [], 0, []
    exact = query.scenario(config=options.config(ttl=False, semantics="correct"))
    refused = under_test.why_not(exact) if under_test is not None else None
    for spec in check_properties(query, options, final):
        if spec.name == "system_final_answer" and refused is not None:
            rows.append((f"{spec.family}/{spec.name}", "not run", 0, f"not applicable: {refused}"))
            continue
        tally.cases = tally.unsupported = 0
        result = run_property(spec, max_examples=options.examples, seed=options.seed, on_failure=reporter)
        error = result.failure or result.error
        if isinstance(error, (Unsatisfiable, FailedHealthCheck)) and tally.cases and tally.cases == tally.unsupported:
            rows.append((f"{spec.family}/{spec.name}", "not run", 0,
                         f"{under_test.title if under_test else 'the system'} could express none of "
                         f"{tally.cases} cases"))
            continue
        what = spec.description
        if spec.name == "system_final_answer" and under_test is not None:
            what = f"on {under_test.title}: {what}" + (f" ({tally.unsupported} of {tally.cases} cases "
                                                       f"unsupported)" if tally.unsupported else "")
        rows.append((f"{spec.family}/{spec.name}", label(error), result.examples, what))
        worst = max(worst, exit_code(error))
        if error is not None:
            failed.append((spec, result))
    for name, why in skipped_properties(query, options):
        rows.append((name, "not run", 0, why))
    echo(format_table(("property", "verdict", "examples", "what it checks"), rows))
    for spec, result in failed:
        echo(f"\n{label(result.failure or result.error).upper()} {spec.family}/{spec.name} (seed {result.seed})")
        echo("\n".join(str(result.failure or result.error).splitlines()[:15]))
        for path in result.reports:
            echo(f"  report: {path}")
    echo("\nfindings:")
    for finding in all_findings(query, options, run_scenario):
        echo(f"* {finding.topic}: {finding.text}")
        for line in finding.detail:
            echo(f"    {line}")
    return run_reports.settle(worst)


def cmd_check(args: argparse.Namespace) -> int:
    from converge.engine.model.flinksql import load_query  # lazy: sqlglot loads only for check/verify
    from converge.properties.query_check import CheckOptions  # lazy: as above
    query = load_query(args.query)
    options = CheckOptions(ttl_ms=args.ttl, semantics=args.semantics, map_state_order=args.map_state_order,
                           multi_join=args.multi_join, examples=args.examples, seed=args.seed)
    reports = None if args.no_reports else reports_folder(args.reports_dir)
    return run_check(query, options, reports=reports, system=args.system)


def _source(text: str) -> tuple[str, Path]:
    name, eq, path = text.partition("=")
    if not eq or not name or not path:
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=FILE")
    return name, Path(path)


def cmd_verify(args: argparse.Namespace) -> int:
    from converge.engine.model.flinksql import load_query  # lazy: sqlglot loads only for check/verify
    from converge.properties.verify_capture import verify_capture  # lazy: as above
    query = load_query(args.query)
    sources = dict(args.source or [])
    if len(sources) != len(args.source or []):
        raise UsageError("a table is named twice in --source")
    result = verify_capture(query, sources, Path(args.output), args.format, args.output_format)
    what = ("the output equals the answer after every input record" if result.mode == "prefix"
            else "the final output equals the batch answer")
    print(f"passed: {what} ({result.input_events} input records, {result.output_records} output records, "
          f"{result.checkpoints} checkpoints, {result.seconds:.1f} s)")
    for note in result.notes:
        print(f"note: {note}")
    return 0


def add_commands(sub: argparse._SubParsersAction, positive_int) -> None:
    c = sub.add_parser("check", help="check a Flink SQL join query: plan, properties on its schema, findings")
    c.add_argument("query", metavar="QUERY.sql", help="CREATE TABLE statements and one SELECT")
    c.add_argument("--ttl", type=positive_int, default=None, metavar="MS", help="state TTL in milliseconds")
    c.add_argument("--semantics", choices=Semantics.__args__, default="correct")
    c.add_argument("--map-state-order", choices=MapStateOrder.__args__, default="rocksdb")
    c.add_argument("--multi-join", choices=MultiJoinMode.__args__, default="off")
    c.add_argument("--examples", type=positive_int, default=50, help="examples per property and per finding")
    c.add_argument("--seed", type=int, default=None, help="Hypothesis seed, for a repeatable check")
    c.add_argument("--system", default=None, metavar="SPEC", help="the system whose final answers system_final_answer judges: reference (default), flink[:VERSION], cmd:COMMAND")
    c.add_argument("--reports-dir", metavar="DIR|off", default=None, help="where failure reports go")
    c.add_argument("--no-reports", action="store_true", help="write no report files")
    c.set_defaults(func=cmd_check)

    v = sub.add_parser("verify", help="check changelogs captured from a real job against the batch answer")
    v.add_argument("query", metavar="QUERY.sql")
    v.add_argument("--source", action="append", type=_source, metavar="NAME=FILE",
                   help="the capture of one source table (repeat for each)")
    v.add_argument("--output", required=True, metavar="FILE", help="the capture of the job's output")
    v.add_argument("--format", default="auto", choices=("auto", "jsonl", "debezium", "print", "csv"),
                   help="the captures' format (default: from each file)")
    v.add_argument("--output-format", default=None, choices=("auto", "jsonl", "debezium", "print", "csv"),
                   help="the output capture's format, when it differs from --format")
    v.set_defaults(func=cmd_verify)


__all__ = ["add_commands", "cmd_check", "cmd_verify", "open_system_under_test", "run_check"]
