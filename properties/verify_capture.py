"""`converge verify`: a changelog captured from a real job, checked against the batch answer.

The captured sources become one scenario (sources in position order when
every record carries a position, else one source after the other: the final
answer depends only on each source's own order). The oracle's answer comes
from the scalable history oracle (oracle/history_intervals.py), streamed as
per-position changes, so captures of millions of events fit; the projection
and WHERE filter of the query are applied to each of its rows.

Alignment: when every source and output record has a position, the output
must equal the answer after each input record (after all output records the
job produced for input records up to that position); otherwise only the
final answer is compared. Interval joins are compared on their final answer
with the batch interval join: every pair within the bounds, and a padded row
for each outer row without one (rows the job dropped as late show as missing).
The first divergence names the position, the input record there and the
differing rows.

A positioned output is first offered to properties/verify_fast.py, which
confirms agreement in DuckDB when the output is JSON lines in a plain form,
or hands back; the walk here is the only path that refuses or reports.
"""

from __future__ import annotations

import array
import bisect
import itertools
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from converge.engine.condition import compile_predicate
from converge.engine.model.errors import BadInputError, DivergenceError, UnsupportedError
from converge.engine.model.flinksql import MappedQuery
from converge.engine.model.flinksql.captures import Record, read_capture
from converge.engine.model.rows import allowed_kinds
from converge.engine.model.scenario import ChangeEvent, Event, Scenario
from converge.oracle import batch_interval_join
from converge.oracle.history_intervals import IntervalOracle, bulk_connection
from converge.properties.verify_fast import fast_verify

_SIGN = {"+I": 1, "+U": 1, "-U": -1, "-D": -1}


@dataclass
class VerifyResult:
    mode: str                      # "prefix" (aligned positions) or "final"
    input_events: int = 0
    output_records: int = 0
    checkpoints: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


def source_problem(query: MappedQuery, names: Collection[str], *, source: str = "source") -> str | None:
    """What is wrong with the names of the captured sources (None: one per table of the query, no other).

    `source` is how the caller's user names a source: the command line says `--source`.
    """
    tables = sorted({t for _, t in query.aliases})
    unknown = [n for n in names if n not in tables]
    if unknown:
        return f"{source} {unknown[0]}: the query joins no table of that name (tables: {', '.join(tables)})"
    missing = [t for t in tables if t not in names]
    if missing:
        return f"no capture for table(s) {', '.join(missing)}: give a {source} for each"
    return None


class _Origins:
    """'file:line' of every input record, kept as two integer arrays (a capture has millions of records)."""

    def __init__(self) -> None:
        self.paths: list[Path] = []
        self.files = array.array("l")
        self.lines = array.array("q")

    def add(self, path: Path, line: int) -> None:
        if not self.paths or self.paths[-1] != path:
            self.paths.append(path)
        self.files.append(len(self.paths) - 1)
        self.lines.append(line)

    def reordered(self, order: list[int]) -> _Origins:
        out = _Origins()
        out.paths = self.paths
        out.files = array.array("l", (self.files[i] for i in order))
        out.lines = array.array("q", (self.lines[i] for i in order))
        return out

    def __len__(self) -> int:
        return len(self.lines)

    def __getitem__(self, i: int) -> str:
        return f"{self.paths[self.files[i]]}:{self.lines[i]}"


def _source_events(query: MappedQuery, sources: Mapping[str, Path], fmt: str
                   ) -> tuple[list[Event], list[int | None], _Origins]:
    """(events, position of each, 'file:line' of each) of every captured source."""
    problem = source_problem(query, sources)
    if problem is not None:
        raise BadInputError(problem)
    events: list[Event] = []
    positions: list[int | None] = []
    origins = _Origins()
    for stream in query.streams():  # a table read in several places is captured (and replayed) once
        table = query.source_of(stream).name
        spec = query.source_of(stream).input_spec(stream)
        kinds = allowed_kinds(spec)
        path = sources[table]
        for rec in read_capture(path, query.source_of(stream).columns, fmt):
            if rec.kind not in kinds:
                raise BadInputError(f"{path}:{rec.line}:1: row kind {rec.kind} on {table!r}, whose changelog mode "
                                    f"({spec.changelog_mode}) allows {', '.join(sorted(kinds))}")
            events.append(ChangeEvent(stream, rec.kind, rec.row))
            positions.append(rec.position)
            origins.add(path, rec.line)
    return events, positions, origins


def _shaper(query: MappedQuery) -> Callable[[tuple], tuple | None]:
    """Join row -> the query's output row (None when the WHERE filter drops it)."""
    picks = query.output_picks()
    keep = None
    if query.where_sql:
        keep = compile_predicate(query.where_sql, [[query.table_of(a).input_spec(a) for a in query.joined_aliases()]])

    def shape(row: tuple) -> tuple | None:
        if keep is not None and keep(row) is not True:
            return None
        return tuple(row[i] for i in picks)

    return shape


def check_capturable(query: MappedQuery) -> None:
    """A processing-time interval join's answer depends on when each row arrived, which no capture records:
    `verify` (and `capture`, which writes what verify reads) would judge it as if every row arrived at once."""
    if query.join.interval is not None and query.join.interval.time == "processing":
        raise UnsupportedError(f"{query.path}: a processing-time interval join (PROCTIME()): its answer depends on "
                               f"each row's arrival time, which a capture does not record; verify and capture check "
                               f"event-time interval joins and regular joins (converge check runs this query)")


def verify_capture(query: MappedQuery, sources: Mapping[str, Path], output: Path, fmt: str = "auto",
                   output_format: str | None = None) -> VerifyResult:
    """Check the captured output; DivergenceError names the first divergence, BadInputError a bad line."""
    check_capturable(query)
    start = time.perf_counter()
    events, positions, origins = _source_events(query, sources, fmt)
    out_cols = [(o.name, o.type) for o in query.output]
    out_records = read_capture(output, out_cols, output_format or fmt)
    first = next(out_records, None)  # an output without positions (print, CSV without `pos`): the final answer
    out_records = itertools.chain([first] if first is not None else [], out_records)
    aligned = bool(events) and all(p is not None for p in positions) and (first is None or first.position is not None)
    if aligned:
        order = sorted(range(len(events)), key=lambda i: positions[i])  # type: ignore[arg-type,return-value]
        events = [events[i] for i in order]
        origins = origins.reordered(order)
        positions = [positions[i] for i in order]
        del order  # a million indices: not held while the oracle runs
        if first is not None and first.position is not None:  # positioned: DuckDB confirms agreement, or not
            fast = fast_verify(query, events, positions, output, output_format or fmt)  # type: ignore[arg-type]
            if fast is not None:
                return VerifyResult("prefix", input_events=len(events), output_records=fast[0], checkpoints=fast[1],
                                    seconds=time.perf_counter() - start)
    try:
        return _verify(query, events, positions, origins, aligned, output, out_records, out_cols, fmt, output_format,
                       start)
    except BadInputError as exc:  # the model and the oracle name an event by its index: name its capture line
        i = exc.event_index
        if i is None or not 0 <= i < len(origins):
            raise
        raise BadInputError(f"{origins[i]}:1: {exc.detail}") from None


def _verify(query: MappedQuery, events: list[Event], positions: list[int | None], origins: _Origins, aligned: bool,
            output: Path, out_records: Iterator[Record], out_cols: list, fmt: str, output_format: str | None,
            start: float) -> VerifyResult:
    scenario = query.scenario(events, name=f"capture of {query.path}")
    shape = _shaper(query)
    result = VerifyResult("prefix" if aligned else "final", input_events=len(events))
    if query.join.interval is not None:
        result.mode = "final"
        _compare_final_interval(query, scenario, out_records, shape, result, output)
    elif not aligned:
        _compare_history(query, scenario, out_records, shape, result, output, None, origins)
    else:
        try:
            _compare_history(query, scenario, out_records, shape, result, output, positions, origins)
        except _Unpositioned as exc:  # docs/check-your-query.md: not every record has `pos`, so the final answer
            result = VerifyResult("final", input_events=len(events))
            result.notes.append(f"{output}:{exc.line}:1 is the first output record without 'pos': only the final "
                                f"answer was checked")
            _compare_history(query, scenario, read_capture(output, out_cols, output_format or fmt), shape, result,
                             output, None, origins)
    result.seconds = time.perf_counter() - start
    return result


class _Unpositioned(Exception):
    """An output record without a position after positioned ones: the comparison starts again on the final answer."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


def _oracle_changes(scenario: Scenario, shape: Callable[[tuple], tuple | None]) -> Iterator[tuple[int, int, tuple]]:
    if not scenario.events:
        return
    for pos, delta, row in IntervalOracle(bulk_connection()).changes(scenario):
        shaped = shape(row)
        if shaped is not None:
            yield pos, delta, shaped


def _compare_history(query: MappedQuery, scenario: Scenario, records: Iterator[Record],
                     shape: Callable[[tuple], tuple | None], result: VerifyResult, output: Path,
                     positions: list[int | None] | None, origins: _Origins) -> None:
    """Walk the oracle's changes and the captured output together, event index by event index."""
    n = len(scenario.events)
    last = n - 1
    diff: Counter = Counter()      # output minus answer, nonzero entries only
    bag: Counter = Counter()       # the output so far (multiplicities must stay >= 0)
    lines: dict[tuple, list[int]] = {}
    unheld: dict[tuple, int] = {}  # rows retracted below zero, and the output line that did it

    def index_of(pos: int, line: int) -> int:
        # the last input event whose position is <= pos (the output of processing it)
        if positions is None or pos < positions[0]:  # type: ignore[operator]
            raise BadInputError(f"{output}:{line}:1: position {pos} is before the first input record")
        return bisect.bisect_right(positions, pos) - 1  # type: ignore[arg-type]

    def bump(row: tuple, delta: int) -> None:
        v = diff[row] + delta
        if v:
            diff[row] = v
        else:
            del diff[row]

    def output_at() -> Iterator[tuple[int, Record]]:
        prev = -1
        for rec in records:
            result.output_records += 1
            if positions is None:
                yield last, rec
                continue
            if rec.position is None:
                raise _Unpositioned(rec.line)
            at = index_of(rec.position, rec.line)
            if at < prev:
                raise BadInputError(f"{output}:{rec.line}:1: positions go backwards")
            prev = at
            yield at, rec

    oracle = _oracle_changes(scenario, shape)
    pending_oracle = next(oracle, None)
    outs = output_at()
    pending_out = next(outs, None)
    checkpoints = range(n) if positions is not None else [last] if n else []
    for at in checkpoints:
        touched = False
        while pending_oracle is not None and (pending_oracle[0] <= at):
            bump(pending_oracle[2], -pending_oracle[1])
            pending_oracle = next(oracle, None)
            touched = True
        while pending_out is not None and pending_out[0] <= at:
            rec = pending_out[1]
            delta = _SIGN[rec.kind]
            bag[rec.row] += delta
            if bag[rec.row] < 0:  # reported where the output first differs from the answer (at this checkpoint
                unheld.setdefault(rec.row, rec.line)  # or earlier), not at the retraction
            bump(rec.row, delta)
            lines.setdefault(rec.row, []).append(rec.line)
            pending_out = next(outs, None)
            touched = True
        if touched or at == last:
            result.checkpoints += 1
            if diff:
                _diverged(query, at, diff, lines, origins, output, positions, unheld)
            if unheld:  # the final answer agrees, but the changelog retracted rows it never held
                row, line = next(iter(unheld.items()))
                raise DivergenceError(f"{output}:{line}:1: a retraction of a row the output does not hold: "
                                      f"{show_row(query, row)} (the final answer agrees only because a row was "
                                      f"dropped and its retraction kept)")
            if positions is not None:
                lines.clear()
    if pending_out is not None:
        raise BadInputError(f"{output}:{pending_out[1].line}:1: output after the last input record")


def show_row(query: MappedQuery, row: tuple) -> str:
    """A row of the query's output, by the SELECT list's names."""
    return "(" + ", ".join(f"{o.name}={o.type.display(v)}" for o, v in zip(query.output, row, strict=False)) + ")"


def _diverged(query: MappedQuery, at: int, diff: Counter, lines: dict[tuple, list[int]], origins: _Origins | None,
              output: Path, positions: list[int | None] | None, unheld: Mapping[tuple, int] | None = None,
              count: int | None = None) -> None:
    where = (f"after input record {at} (pos {positions[at]}, {origins[at]})"  # type: ignore[index]
             if positions is not None else
             f"at the end of the capture ({len(origins) if origins is not None else count} input records)")
    parts = [f"the output differs from the answer {where}:"]
    for row, d in sorted(diff.items(), key=repr)[:10]:
        what = f"{d} extra" if d > 0 else f"{-d} missing"
        if unheld and row in unheld and d < 0:
            what += f" (the output retracts it at line {unheld[row]} without holding it)"
        seen = lines.get(row)
        parts.append(f"  {what}: {show_row(query, row)}" + (f"  (output lines {seen[:5]})" if seen else ""))
    if len(diff) > 10:
        parts.append(f"  ... and {len(diff) - 10} more rows")
    raise DivergenceError("\n".join(parts))


def _compare_final_interval(query: MappedQuery, scenario: Scenario, records: Iterator[Record],
                            shape: Callable[[tuple], tuple | None], result: VerifyResult, output: Path) -> None:
    want: Counter = Counter()
    for row, count in batch_interval_join(scenario).items():
        shaped = shape(row)
        if shaped is not None:
            want[shaped] += count
    got: Counter = Counter()
    lines: dict[tuple, list[int]] = {}
    for rec in records:
        result.output_records += 1
        got[rec.row] += _SIGN[rec.kind]
        lines.setdefault(rec.row, []).append(rec.line)
    result.checkpoints = 1
    diff = Counter(got)
    diff.subtract(want)
    diff = Counter({r: d for r, d in diff.items() if d})
    if diff:
        result.notes.append("rows the job dropped as late show as missing")
        _diverged(query, len(scenario.events) - 1, diff, lines, None, output, None, count=len(scenario.events))
