"""The batch interval join in DuckDB: `a.t BETWEEN b.t + L AND b.t + U`, both bounds inclusive.

An interval join's inputs are append-only, so each input is simply its +I
records. A record's time is its time attribute (event time) or the
processing time at its arrival (processing time), which the query carries in
an extra column. `include` restricts the batch to some records (by event
position): the late-record properties compare the stream with the batch
join of the non-late records and of all records. A view in front of a
processing-time join (an input's `project` / `where`) is applied to the
records in SQL (oracle/views.py), the time column carried through it.

The time predicate is computed in HUGEINT so that `b.t + U` cannot overflow
near the ends of BIGINT.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import replace

from converge.engine.model.errors import ApiMisuseError, BadInputError, UnsupportedError
from converge.engine.model.scenario import (
    ChangeEvent,
    InputSpec,
    ProcessingTimeEvent,
    Scenario,
    interval_time_name,
    projected_time,
    sources_of,
)
from converge.oracle.guard import check_inputs, safe_condition
from converge.oracle.materialize import row_checker
from converge.oracle.query import run_query
from converge.oracle.sql import JOIN_KEYWORDS, quote_ident, render_source
from converge.oracle.views import input_path, view_source, without_views

__all__ = ["interval_records", "interval_final_sql", "batch_interval_join", "time_column"]

IntervalRecord = tuple[int, int | None, tuple]
"""(event position, time, row); the time is None where the input's projection computes it (in DuckDB)."""


def interval_records(scenario: Scenario) -> dict[str, list[IntervalRecord]]:
    """Every record of each joined input with its time, in stream order; a record of a stream both inputs read
    (`source`, a self-join) is a record of each, at the same position.

    Bad input for an interval join (a kind other than +I, a NULL time) raises
    BadInputError naming the event, as the engine does.
    """
    iv = scenario.join.interval
    if iv is None:
        raise ApiMisuseError(f"scenario {scenario.name!r} is not an interval join")
    chain = scenario.chain
    time_index: dict[str, int | None] = {spec.name: None for spec in chain}
    if iv.time == "event":
        for spec, ref in zip(chain, (iv.left_time, iv.right_time), strict=False):
            column = interval_time_name(spec, ref)
            if column is None:
                raise BadInputError(f"input {spec.name!r} has no time attribute")
            if projected_time(spec, ref):
                continue  # computed by the projection: in DuckDB, by interval_final_sql (the record's time: None)
            time_index[spec.name] = spec.index_of(column)
    computed = {spec.name for spec in chain if iv.time == "event" and time_index[spec.name] is None}
    out: dict[str, list[IntervalRecord]] = {spec.name: [] for spec in chain}
    # the stream each event names -> the joined inputs it feeds: its own, or every reader of it (`source`)
    fed = sources_of(scenario)
    checks = {stream: row_checker(scenario.input(stream)) for stream in fed}
    now = 0
    for pos, event in enumerate(scenario.events):
        if isinstance(event, ProcessingTimeEvent):
            now = max(now, event.processing_time)
            continue
        if not isinstance(event, ChangeEvent) or event.input not in fed:
            continue
        if event.kind != "+I":
            raise BadInputError(f"{event.kind} on input {event.input!r}: interval join inputs are append-only",
                                event_index=pos)
        try:
            row = checks[event.input](tuple(event.row))
        except BadInputError as exc:
            raise exc.at_event(pos) from None
        for name in fed[event.input]:  # one record of a stream read twice (a self-join) is a record of each side
            time = None if name in computed else _time_of(row, time_index[name], now, event.input, pos)
            out[name].append((pos, time, row))
    return out


def _time_of(row: tuple, idx: int | None, now: int, name: str, pos: int) -> int:
    """A record's time: its time attribute (event time) or the processing time at its arrival."""
    if idx is None:
        return now
    time = row[idx]
    if time is None:
        raise BadInputError(f"row {list(row)} on input {name!r} has a NULL time", event_index=pos)
    if type(time) is not int:
        raise BadInputError(f"row {list(row)} on input {name!r}: the time {time!r} is not an integer "
                            "(milliseconds)", event_index=pos)
    return time


def time_column(spec: InputSpec) -> str:
    """The name of the extra column holding a record's time (one the input does not use, nor its view)."""
    taken = {c.lower() for c in (*spec.column_names, *spec.joined_names)}
    name = "__time"
    while name.lower() in taken:
        name += "_"
    return name


def interval_final_sql(scenario: Scenario, include: AbstractSet[int] | None = None, *,
                       tables: Mapping[str, str] | None = None, seq: str | None = None) -> str:
    """The batch interval join over the records (only those at positions in `include`, when given).

    With `tables` (input name -> a FROM item holding its records, with the
    time in the column `time_column(spec)`), the records are read from there
    instead of being inlined; with `seq` (a column every table carries), the
    ON clause also equates it and the output starts with it (the Spark SQL
    oracle's scenario id)."""
    iv = scenario.join.interval
    assert iv is not None
    jtype = scenario.join.types[0]
    if jtype not in ("inner", "left", "right", "full"):
        raise BadInputError(f"an interval join cannot be {jtype!r}", path="join.types[0]")
    for bound in ("lower_ms", "upper_ms"):
        value = getattr(iv, bound)
        if type(value) is not int or not -(2**63) <= value < 2**63:
            raise BadInputError(f"{value!r} is not a BIGINT number of milliseconds", path=f"join.interval.{bound}")
    check_inputs(scenario)
    if len(scenario.chain) != 2 or len(scenario.join.conditions) != 1:
        raise BadInputError("an interval join joins two inputs with one condition", path="join")
    if scenario.has_views() and (tables is not None or scenario.join.has_calc):
        raise UnsupportedError("this interval join query takes a projection and filter in front of the join only, "
                               "and from the records it inlines (a SELECT list or WHERE after the join, or given "
                               "tables, are not rendered)")
    core = without_views(scenario) if scenario.has_views() else scenario
    condition = safe_condition(scenario.join.conditions[0], core.chain, "join.conditions[0]")
    records = interval_records(scenario) if tables is None else {}
    sources: dict[str, str] = {}
    times: dict[str, str] = {}
    for spec, ref in zip(scenario.chain, (iv.left_time, iv.right_time), strict=True):
        tcol = time_column(spec)
        times[spec.name] = f"{quote_ident(spec.name)}.{quote_ident(tcol)}"
        if tables is not None:
            sources[spec.name] = tables[spec.name]
            continue
        wide = replace(spec, columns=spec.columns + ((tcol, "BIGINT"),), project=None, where=None, time_column=None)
        rows = [row + (time,) for pos, time, row in records[spec.name] if include is None or pos in include]
        # a view's Calc in front of the join: each record projected and filtered, its time carried through (a
        # processing-time record's time is its arrival, whatever the Calc computes; an event-time attribute the
        # projection computes, such as one parsed from text, is read from the projection)
        sources[spec.name] = view_source(spec, render_source(wide, rows), input_path(scenario, spec.name), seq=tcol)
        computed = interval_time_name(spec, ref)
        if iv.time == "event" and computed is not None and projected_time(spec, ref):
            times[spec.name] = f"{quote_ident(spec.name)}.{quote_ident(computed)}"
    left, right = core.chain
    la, ra = quote_ident(left.name), quote_ident(right.name)
    lt, rt = times[left.name], times[right.name]
    select = [f"{la}.{quote_ident(c)}" for c in left.column_names] + \
             [f"{ra}.{quote_ident(c)}" for c in right.column_names]
    if seq is not None:
        lseq, rseq = f"{la}.{quote_ident(seq)}", f"{ra}.{quote_ident(seq)}"
        select.insert(0, {"right": rseq, "full": f"coalesce({lseq}, {rseq})"}.get(jtype, lseq))
        condition = f"{la}.{quote_ident(seq)} = {ra}.{quote_ident(seq)} AND (\n{condition}\n)"
    on = (f"(\n{condition}\n) AND {lt}::HUGEINT BETWEEN {rt}::HUGEINT + ({iv.lower_ms}) "
          f"AND {rt}::HUGEINT + ({iv.upper_ms})")
    return (f"SELECT {', '.join(select)}\nFROM {sources[left.name]} AS {la}\n"
            f"{JOIN_KEYWORDS[jtype]} {sources[right.name]} AS {ra} ON {on}")


def batch_interval_join(scenario: Scenario, include: AbstractSet[int] | None = None) -> Counter:
    """The batch answer as a bag of output rows (the shared oracle connection)."""
    return Counter(run_query(interval_final_sql(scenario, include)))
