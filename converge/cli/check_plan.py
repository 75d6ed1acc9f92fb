"""`converge check --plan-only`: read and plan the query, print the plan or the refusals, run nothing else.

Meant for editors and pre-commit hooks, so it must answer in well under the
seconds a property run takes: no Hypothesis, no oracle run, no property, no
finding. Its imports are sqlglot, the planner and DuckDB's parser (the
planner reads join conditions with it). `converge` routes a plain
`check QUERY --plan-only [plan options]` here before it imports the other
commands (`fast_args`, called by cli.main); anything else on that command
line goes through the full parser, which ends in `plan_only` as well.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, get_args

from converge.cli.check_json import document, dumps, plan_document
from converge.cli.fast_parse import parse_fast
from converge.engine.model.errors import ConvergeError, UsageError
from converge.engine.model.flinksql import MappedQuery, load_query
from converge.engine.model.flinksql.job import PLANNER_KEYS
from converge.engine.model.scenario import MapStateOrder, MultiJoinMode, Semantics
from converge.properties.query_guard import guard_query
from converge.properties.query_plan import CheckOptions, plan_lines, state_views, with_file_options

OutputFormat = Literal["text", "json"]
PLAN_ONLY_NOTE = "plan only (--plan-only): the query was read and planned; no property, finding or oracle ran"


def add_plan_options(parser: argparse.ArgumentParser, ms: Callable[[str], int]) -> None:
    """The options that shape the plan (shared by `check` and its fast path), and --format / --plan-only."""
    parser.add_argument("--ttl", type=ms, default=None, metavar="MS",
                        help="state TTL in milliseconds (wins over the file's SET 'table.exec.state.ttl')")
    parser.add_argument("--semantics", choices=get_args(Semantics), default="correct")
    parser.add_argument("--map-state-order", choices=get_args(MapStateOrder), default="rocksdb")
    parser.add_argument("--multi-join", choices=get_args(MultiJoinMode), default=None,
                        help="off by default, or the file's SET 'table.optimizer.multi-join.enabled' (the flag wins)")
    parser.add_argument("--format", choices=get_args(OutputFormat), default="text", dest="output_format",
                        help="text (default) or json: one JSON document on stdout (docs/check-your-query.md)")
    parser.add_argument("--plan-only", action="store_true",
                        help="read and plan the query and print the plan (or the refusals); run no property")


def _ms(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(text)  # the full parser reads the command line again and explains
    return int(text)


def fast_args(argv: Sequence[str]) -> argparse.Namespace | None:
    """The parsed command line when it is `check QUERY --plan-only` with plan options only, else None."""
    if not argv or argv[0] != "check" or "--plan-only" not in argv or any(a in ("-h", "--help") for a in argv):
        return None
    def options(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("query")
        add_plan_options(parser, _ms)

    args = parse_fast("converge check", argv[1:], options)
    if args is None:
        return None
    args.handler = cmd_plan_only
    return args


def options_of(args: argparse.Namespace, **more: Any) -> CheckOptions:
    given = frozenset(flag for flag, value in (("--ttl", args.ttl), ("--multi-join", args.multi_join))
                      if value is not None)
    return CheckOptions(ttl_ms=args.ttl, semantics=args.semantics, map_state_order=args.map_state_order,
                        multi_join=args.multi_join or "off", given=given, **more)


def cmd_plan_only(args: argparse.Namespace) -> int:
    return plan_only(args.query, options_of(args), args.output_format)


def describe_query(query: MappedQuery) -> list[str]:
    """What converge read from the query file, as the text output's first lines."""
    lines = ["inputs:"]
    for alias, table in query.aliases:
        t = query.tables[table]
        cols = ", ".join(f"{c} {ft.name}{'' if ft.nullable else ' NOT NULL'}" for c, ft in t.columns)
        extra = f", primary key ({', '.join(t.primary_key)})" if t.primary_key else ""
        if t.time_column:
            named = f"{t.time_attribute} = {t.time_column}" if t.time_attribute != t.time_column else t.time_column
            extra += f", rowtime {named} (watermark delay {t.watermark_delay_ms} ms)"
        lines.append(f"  {alias} = {table} [{t.changelog_mode} from {t.connector}{extra}]: {cols}")
        if t.renamed:  # computed columns that compute nothing on the held value: no Calc (flinksql/renames.py)
            lines.append("    computed columns naming physical ones (no Calc): "
                         + ", ".join(f"{n} {ft.name} = {c}" for n, c, ft in t.renamed))
        stream = query.stream_of(alias)
        if stream != alias:  # a table read in several places: one stream, each change to every reader
            others = [a for a, _ in query.aliases if a != alias and query.stream_of(a) == stream]
            lines.append(f"    one source: reads stream {stream} ({table}, scanned once) with {', '.join(others)}")
        view = dict(query.derived).get(alias)
        if view is not None:  # a view or derived table: the Calc between the table and the join
            shown = ", ".join([f"{c} {ft.name}" for c, ft in view.columns]
                              + ([f"{view.proctime} (its processing-time attribute, forwarded)"] if view.proctime
                                 else []))
            lines.append(f"    through {view.via}: {shown}" + (f"; where {view.where}" if view.where else ""))
    lines.append("join chain: " + query.join.inputs[0] + "".join(
        f" {jt.upper()} {name} ON {cond}" for name, jt, cond in zip(query.join.inputs[1:], query.join.types,
                                                                   query.join.conditions, strict=False)))
    if query.join.interval is not None:
        iv = query.join.interval
        left, right = query.join.inputs[:2]
        times = (iv.left_time, iv.right_time) if iv.time == "event" else \
            tuple(f"{a}.{query.table_of(a).proctime}" for a in (left, right))
        lines.append(f"interval join: {times[0]} - {times[1]} in [{iv.lower_ms}, {iv.upper_ms}] ms "
                     + ("(event time)" if iv.time == "event" else "(processing time: a row's time is its arrival)")
                     + (": the window is empty, nothing joins (Flink plans no join)" if iv.lower_ms > iv.upper_ms
                        else ""))
    if query.where_sql:
        lines.append(f"where (on the join's output): {query.where_sql}")
    lines += [f"read as Flink plans it: {note}" for note in query.notes]
    lines.append("output: " + ", ".join(f"{o.name} ({o.alias}.{o.column})" for o in query.output))
    lines.append("checked answer: the query's (join, WHERE and SELECT list), equal to the query as written run in "
                 "DuckDB on every example (check/reading_equals_query)")
    job = [s for s in query.job if s.option not in PLANNER_KEYS]  # the planner options: option_lines
    lines.append("job options: " + ("; ".join(s.describe() for s in job) if job else
                                    "none set in the file (the system's defaults)"))
    return lines


def option_lines(settings: list[str]) -> list[str]:
    """Where the planner options come from (properties/query_plan.py with_file_options), when the file sets any."""
    return ["planner options: " + "; ".join(settings)] if settings else []


def read_query(query_file: str | Path) -> MappedQuery:
    """The query read and put through the oracle's guard: every refusal at file:line:col."""
    query = load_query(query_file)
    guard_query(query)  # what the oracle would refuse later, refused now at file:line:col
    return query


def plan_text(query: MappedQuery, options: CheckOptions) -> list[str]:
    """The plan block of the text output: the operators, then each input's state view."""
    return [f"  {line}" for line in plan_lines(query, options)] + [f"  state view: {v}" for v in state_views(query)]


def plan_json(query: MappedQuery, options: CheckOptions, system: str | None = None) -> dict:
    return plan_document(query, options, plan_lines(query, options), state_views(query), system)


def plan_only(query_file: str, options: CheckOptions, output_format: OutputFormat = "text",
              echo: Callable[[str], object] = print) -> int:
    """Print what converge read and the plan, or (json) the document with the refusals; the exit code."""
    if output_format == "json":
        try:
            query = read_query(query_file)
            options, _ = with_file_options(query, options)
            doc = document(query_file, plan=plan_json(query, options), plan_only=True)
        except ConvergeError as exc:
            doc = document(query_file, error=exc, plan_only=True)
        echo(dumps(doc))
        return doc["exit_code"]
    query = read_query(query_file)
    options, settings = with_file_options(query, options)
    for line in describe_query(query) + option_lines(settings):
        echo(line)
    echo("\nplan:")
    for line in plan_text(query, options):
        echo(line)
    echo("\n" + PLAN_ONLY_NOTE)
    return 0


def refuse_run_options(args: argparse.Namespace, defaults: dict[str, Any]) -> None:
    """--plan-only runs nothing: an option that only a run reads is refused, not silently ignored."""
    given = [name for name, default in defaults.items() if getattr(args, name, default) != default]
    if given:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        raise UsageError(f"--plan-only runs no property, so {flags} would be ignored: drop "
                         f"{'it' if len(given) == 1 else 'them'} or drop --plan-only")


__all__ = ["OutputFormat", "add_plan_options", "cmd_plan_only", "describe_query", "fast_args", "option_lines", "options_of",
           "plan_json", "plan_only", "plan_text", "read_query", "refuse_run_options"]
