"""`converge capture QUERY.sql --out DIR`: a capture of converge's engine on one drawn input of the query, in the
form `converge verify` reads (JSON lines with `op` and `pos`), to learn the format, to feed the same input to a
real job, or to try `verify` on (issue 41: users had no tool that makes a capture). docs/check-your-query.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from converge.cli.arguments import Subparsers, add_seed, existing_file, positive_int
from converge.engine.model.errors import UsageError

if TYPE_CHECKING:
    from converge.engine.model.flinksql import MappedQuery
    from converge.engine.model.flinksql.types import FlinkType
    from converge.engine.model.scenario import Scenario


def register(subparsers: Subparsers) -> None:
    """The `capture` parser: the query, the folder the capture goes to, the seed and size of the drawn input."""
    c = subparsers.add_parser("capture", help="write a capture of converge's engine on one drawn input of a query, "
                                              "as `converge verify` reads it")
    c.add_argument("query", metavar="QUERY.sql", help="CREATE TABLE statements and one SELECT")
    c.add_argument("--out", required=True, metavar="DIR", help="the folder: one TABLE.jsonl per source, output.jsonl")
    add_seed(c, "the seed of the drawn input (default 0: the same capture every time)")
    c.add_argument("--events", type=positive_int, default=8, metavar="N",
                   help="the least number of input records the drawn input has (default 8)")
    c.set_defaults(handler=cmd_capture)


def cmd_capture(args: argparse.Namespace) -> int:
    """Draw one input of the query's schema, run converge's engine on it, write the sources' and output's records."""
    from converge.engine.model.flinksql import load_query  # lazy: sqlglot loads only for capture/check/verify
    from converge.properties.verify_capture import check_capturable  # lazy: as above
    query = load_query(existing_file(args.query))
    check_capturable(query)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: is a file, not a folder")
    scenario = _ended(_drawn(query, args.seed if args.seed is not None else 0, args.events))
    out.mkdir(parents=True, exist_ok=True)
    written = _write(query, scenario, out)
    print(f"wrote {', '.join(str(p) for p in written)} ({_count(scenario)} input records; converge's engine)")
    sources = " ".join(f"--source {table}={out / f'{table}.jsonl'}" for table in dict.fromkeys(t for _, t in query.aliases))
    print(f"check it: converge verify {args.query} {sources} --output {out / 'output.jsonl'}")
    return 0


def _count(scenario: Scenario) -> int:
    from converge.engine.model.scenario import ChangeEvent  # lazy: the engine, for capture alone
    return sum(1 for e in scenario.events if isinstance(e, ChangeEvent))


def _drawn(query: MappedQuery, seed: int, events: int) -> Scenario:
    """The first input Hypothesis draws from the query's strategy (no late rows) with `events` records or more, not
    shrunk (a shrunk one is all zeros)."""
    from hypothesis import HealthCheck, Phase, find, settings  # lazy: Hypothesis, for capture alone
    from hypothesis.errors import NoSuchExample  # lazy: as above

    from converge.properties.query_check import CheckOptions, query_strategy  # lazy: as above
    strategy = query_strategy(query, CheckOptions().config(ttl=False, semantics="correct"), late=False,
                              max_ops=max(16, 2 * events))
    try:
        return find(strategy, lambda s: _count(s) >= events,
                    settings=settings(max_examples=500, database=None, deadline=None, phases=[Phase.generate],
                                      suppress_health_check=list(HealthCheck)),
                    random=random.Random(seed))
    except NoSuchExample:
        raise UsageError(f"--events {events}: no input of that many records was drawn; ask for fewer") from None


# Flink's Watermark.MAX_WATERMARK (Long.MAX_VALUE): what a bounded source sends when its input ends
END_OF_INPUT_WATERMARK = 2**63 - 1


def _ended(scenario: Scenario) -> Scenario:
    """The drawn input as a job over bounded sources sees it: each timed input ends with MAX_WATERMARK, which makes
    an outer interval join emit every padded row still held (verify compares the output with the batch answer,
    padded rows included; without it the capture of an outer interval join diverged from its own answer)."""
    from converge.engine.model.scenario import WatermarkEvent  # lazy: the engine, for capture alone
    # (a table read in several places ends once, on its stream: an input that reads it takes the stream's watermark)
    ends = [WatermarkEvent(s.name, END_OF_INPUT_WATERMARK) for s in scenario.inputs
            if s.time_column is not None and s.source is None]
    return dataclasses.replace(scenario, events=(*scenario.events, *ends)) if ends else scenario


def _write(query: MappedQuery, scenario: Scenario, out: Path) -> list[Path]:
    """Each source's records and the engine's output records, `pos` the index of the input record (an output
    record's: the input record whose processing produced it; a clock event's output goes to the last record)."""
    from converge.engine.model.changelog import Change  # lazy: the engine, for capture alone
    from converge.engine.model.scenario import ChangeEvent  # lazy: as above
    from converge.engine.runtime.local import run_scenario  # lazy: as above
    from converge.properties.verify_capture import _shaper  # lazy: as above (the rows verify compares with)
    run = run_scenario(scenario)
    # the table of each input the events name: an alias's, or a table read in several places, its stream's
    shape, table_of = _shaper(query), {query.stream_of(a): t for a, t in query.aliases}
    paths = {table: out / f"{table}.jsonl" for _, table in query.aliases}
    lines: dict[str, list[str]] = {table: [] for table in paths}
    output: list[str] = []
    pos = -1
    for event, items in zip(scenario.events, run.per_event, strict=True):
        if isinstance(event, ChangeEvent):
            pos += 1
            columns = query.source_of(event.input).columns  # the declared table's columns: what events carry
            lines[table_of[event.input]].append(_record(event.kind, pos, columns, event.row))
        for item in items:
            row = shape(item.row) if isinstance(item, Change) else None  # None: a watermark, or WHERE drops it
            if isinstance(item, Change) and row is not None:
                output.append(_record(item.kind, max(pos, 0), [(o.name, o.type) for o in query.output], row))
    for table, path in paths.items():
        path.write_text("".join(lines[table]), encoding="utf-8")
    (out / "output.jsonl").write_text("".join(output), encoding="utf-8")
    return [*paths.values(), out / "output.jsonl"]


def _record(kind: str, pos: int, columns: Sequence[tuple[str, FlinkType]], row: tuple) -> str:
    """One JSON line: the kind, the position, each column as a user writes it (DECIMAL, TIMESTAMP, DATE as text)."""
    values = {name: None if v is None else ftype.display(v) if ftype.kind in ("decimal", "timestamp", "date") else v
              for (name, ftype), v in zip(columns, row, strict=True)}
    return json.dumps({"op": kind, "pos": pos, **values}, ensure_ascii=False) + "\n"
