"""Hypothesis strategies for streams of ANY declared schema (converge check uses them on a user's query).

`schema_scenarios(inputs, join)` draws changelogs for the inputs a scenario
declares, whatever their columns: small value domains per column type so
join keys collide (the columns a condition names share the smallest domain),
NULLs only where a column is nullable, unique keys kept unique (drawn from
the primary key), and each input's own changelog mode, all by construction
from model tables (generators.changelog), so every shrunk example is valid
too. Event-time inputs (a `time_column` with a watermark delay) get times
from a small domain scaled to the delay, so rows arrive out of order both
within the delay and beyond it (late), and a watermark of max(time) - delay
after each of their rows, as Flink's `WATERMARK FOR t AS t - INTERVAL ...`
does; `late=False` lifts every time above its input's watermark instead.
In half the streams of an event-time interval join, its time columns get
times whose difference lies on, just inside and just outside each bound
instead (`bound_times`). With `ttl=True` processing time advances between changes (gaps for a state
TTL).

`any_schema_join_scenarios()` draws the schema too (column types, nullable
columns, keys, modes), for properties that must hold on every schema.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from converge.engine.model.scenario import (
    COLUMN_TYPES,
    ChangeEvent,
    Config,
    Event,
    InputSpec,
    IntervalSpec,
    JoinSpec,
    ProcessingTimeEvent,
    Scenario,
    WatermarkEvent,
)
from converge.engine.model.time_text import derived_time, time_text
from converge.generators.arguments import check_count_range
from converge.generators.changelog import DELETE, INSERT, KEY_DOMAIN, UPDATE, build_events, domain_for, packed_ops
from converge.generators.readable import readable

_EPOCH = dt.datetime(1970, 1, 1)
_COLUMN_REF = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*|\"[^\"]+\")")


def condition_columns(join: JoinSpec) -> dict[str, set[str]]:
    """input -> the columns its join conditions name (they get the small, colliding key domain)."""
    out: dict[str, set[str]] = {}
    for cond in join.conditions:
        for alias, col in _COLUMN_REF.findall(cond):
            out.setdefault(alias, set()).add(col.strip('"'))
    return out


def source_columns(spec: InputSpec, columns: Collection[str]) -> set[str]:
    """The input's own columns behind the columns a condition names: through a projection, the source column a
    projected column is when it is one as it is (`k AS key`); a computed one has none (it gets no key domain)."""
    if spec.project is None:
        return set(columns)
    bare = {name: expr.rpartition(".")[2] for name, expr in spec.project
            if expr.rpartition(".")[0] in ("", spec.name) and expr.rpartition(".")[2] in spec.column_names}
    return {bare[c] for c in columns if c in bare}


def time_domain(delay: int) -> tuple[int, ...]:
    """Event times around a delay: steps of half the delay, so some rows fall within it and some beyond."""
    step = max(1, delay // 2)
    return tuple(1 + i * step for i in range(7))


def bound_times(interval: IntervalSpec, delay: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Event times for the left and the right time column of an interval join (left - right in [lower, upper]).

    The right column gets three delay-scaled steps from a base; the left one the base plus each bound and one
    past it, and two of those steps: so pairs fall on, just inside and just outside both bounds, and a bound
    read one off (exclusive for inclusive) changes the answer whatever the watermark delay. Few values, so
    that a pair on a bound is drawn often (the decoder draws from the first six values of a domain)."""
    base = max(1, 2 - interval.lower_ms)
    right = tuple(base - 1 + t for t in time_domain(delay)[:3])
    bounds = (interval.lower_ms - 1, interval.lower_ms, interval.upper_ms, interval.upper_ms + 1)
    left = tuple(dict.fromkeys(tuple(base + b for b in bounds) + right[:2]))
    return left[:6], right


def column_domains(spec: InputSpec, keys: Collection[str], not_null: Collection[str],
                   delay: int | None, times: tuple[int, ...] | None = None) -> list[tuple]:
    domains = []
    derived = derived_time(spec)  # a time attribute computed from a column: that column's value of each time
    for name, _ in spec.columns:
        dom: tuple
        if name == spec.time_column and delay is not None:
            dom = times if times is not None else time_domain(delay)
        elif derived is not None and name == derived[0] and delay is not None:
            write = _WRITE[derived[1]]
            dom = tuple(dict.fromkeys(write(t) for t in (times if times is not None else time_domain(delay))))
        else:
            dom = domain_for(spec, name, tuple(keys), KEY_DOMAIN)
        if name in not_null:
            dom = tuple(v for v in dom if v is not None)
        domains.append(dom)
    return domains


def add_watermarks(events: Sequence[Event], specs: Sequence[InputSpec], delays: Mapping[str, int],
                   late: bool) -> list[Event]:
    """A watermark of max(time) - delay after each row of an event-time input; without `late`, rows are
    first lifted above their input's current watermark."""
    by_name = {s.name: s for s in specs}
    seen: dict[str, int] = {}
    out: list[Event] = []
    for e in events:
        if not isinstance(e, ChangeEvent) or e.input not in delays:
            out.append(e)
            continue
        spec = by_name[e.input]
        idx, read, write = _time_slot(spec)
        row = e.row
        wm = seen.get(e.input)
        if not late and wm is not None and spec.changelog_mode == "insert_only" and row[idx] is not None \
                and read(row[idx]) <= wm:
            row = row[:idx] + (write(wm + 1),) + row[idx + 1:]
            e = ChangeEvent(e.input, e.kind, row)
        out.append(e)
        if row[idx] is not None:
            mark = read(row[idx]) - delays[e.input]
            if wm is None or mark > wm:
                seen[e.input] = mark
                out.append(WatermarkEvent(e.input, mark))
    return out


def _time_slot(spec: InputSpec) -> tuple[int, Callable[[Any], int], Callable[[int], Any]]:
    """(the source column holding the input's time, its value as a time, a time as its value): the time column
    itself, or the text a projected time attribute is parsed from (engine/model/time_text.py)."""
    derived = derived_time(spec)
    if derived is None:
        return spec.index_of(spec.time_column), int, int  # type: ignore[arg-type]
    return spec.index_of(derived[0]), _READ[derived[1]], _WRITE[derived[1]]


def _text_ms(text: str) -> int:
    """The time a text the generator wrote (time_text) stands for."""
    at = dt.datetime.strptime(text, "%Y-%m-%d %H:%M:%S.%f")
    return (at - _EPOCH) // dt.timedelta(milliseconds=1)


# how a derived time's source column holds a time (engine/model/time_text.py): the text of the time, or its epoch
# seconds rounded up (a time lifted above a watermark stays above it)
_READ: dict[str, Callable[[Any], int]] = {"text": _text_ms, "seconds": lambda n: n * 1000}
_WRITE: dict[str, Callable[[int], Any]] = {"text": time_text, "seconds": lambda t: -(-t // 1000)}


def arrival_schedule(events: Sequence[Event], late: bool, shared: Collection[str] = ()) -> list[Event]:
    """A processing-time interval join's stream: the clock starts at 1 (a real clock never reads 0;
    docs/interval-joins.md), advances in steps of about half the window, and without `late` a record never
    arrives in the millisecond of an earlier record of the other input (Flink's ProcTimeIntervalJoin then takes
    the operator time as the row's, and a same-time partner of a zero-size side is missed: a late record). A
    stream both inputs read (`shared`, a self-join) is both inputs: its records get a millisecond each."""
    out: list[Event] = [ProcessingTimeEvent(1)]
    shift, now = 1, 1
    arrived: set[str] = set()  # the inputs with a record at `now`
    for e in events:
        if isinstance(e, ProcessingTimeEvent):
            now, arrived = e.processing_time + shift, set()
            out.append(ProcessingTimeEvent(now))
            continue
        if isinstance(e, ChangeEvent) and not late and (arrived - {e.input} or e.input in arrived and e.input in shared):
            shift, now, arrived = shift + 1, now + 1, set()
            out.append(ProcessingTimeEvent(now))
        if isinstance(e, ChangeEvent):
            arrived.add(e.input)
        out.append(e)
    return out


def schema_scenarios(inputs: Sequence[InputSpec], join: JoinSpec, *, config: Config | None = None,
                     not_null: Mapping[str, Collection[str]] | None = None,
                     watermark_delays: Mapping[str, int] | None = None, late: bool = True, ttl: bool = False,
                     min_ops: int = 1, max_ops: int = 20, name: str = "generated") -> st.SearchStrategy[Scenario]:
    """Scenarios of `join` over `inputs` with valid, colliding, schema-typed changelogs (see the module doc)."""
    check_count_range("schema_scenarios", "min_ops", min_ops, "max_ops", max_ops)
    declared = {s.name: s for s in inputs}
    readers = [declared[n] for n in join.inputs]
    keys = {name: source_columns(declared[name], cols)
            for name, cols in condition_columns(join).items() if name in join.inputs}
    delays = dict(watermark_delays or {})
    nn = dict(not_null or {})
    # a stream read by several inputs (`source`) is drawn once: its key columns are every reader's
    chain = list({(r.source or r.name): declared[r.source or r.name] for r in readers}.values())
    for r in readers:
        if r.source is not None:
            keys[r.source] = keys.get(r.source, set()) | keys.get(r.name, set())
            nn.setdefault(r.source, nn.get(r.name, ()))
            if r.name in delays:
                delays.setdefault(r.source, delays[r.name])
    plain = [column_domains(s, keys.get(s.name, ()), nn.get(s.name, ()), delays.get(s.name)) for s in chain]
    # the streams both inputs of a binary join read (a self-join)
    shared = {r.source for r in readers if r.source is not None and sum(x.source == r.source for x in readers) > 1}
    aimed = plain  # an event-time interval join: half the streams draw times around its bounds
    iv = join.interval
    if iv is not None and iv.time == "event" and len(chain) == 2 and all(s.name in delays for s in chain):
        times = bound_times(iv, max(delays[s.name] for s in chain))
        aimed = [column_domains(s, keys.get(s.name, ()), nn.get(s.name, ()), delays.get(s.name), t)
                 for s, t in zip(chain, times, strict=False)]
    elif iv is not None and iv.time == "event" and len(chain) == 1 and chain[0].name in shared \
            and chain[0].name in delays:  # a self-join: one stream's times differ by each bound, inside, outside
        (stream,) = chain
        left, right = bound_times(iv, delays[stream.name])
        one = tuple(dict.fromkeys(right[:1] + left))[:6]
        aimed = [column_domains(stream, keys.get(stream.name, ()), nn.get(stream.name, ()), delays[stream.name],
                                one)]
    used = set(join.inputs) | {s.name for s in chain}
    declared_inputs = tuple(s for s in inputs if s.name in used) if chain != readers else tuple(readers)
    proc = iv is not None and iv.time == "processing"  # rows take their arrival time: the clock advances
    step = max(1, max(abs(iv.lower_ms), abs(iv.upper_ms)) // 2) if proc and iv is not None else 1
    appends_only = all(s.changelog_mode == "insert_only" for s in chain)
    actions = (INSERT,) if appends_only else (INSERT, UPDATE, DELETE)
    widths = [len(s.columns) for s in chain]
    cfg = config or Config()

    def assemble(drawn: tuple[bool, tuple[bytes, list]]) -> Scenario:
        at_bounds, packed = drawn
        events = build_events(chain, [sorted(keys.get(s.name, ())) for s in chain], packed[1],
                              domains=aimed if at_bounds else plain, time_step=step)
        if proc:
            events = arrival_schedule(events, late, shared)
        if delays:
            events = add_watermarks(events, chain, delays, late)
        return Scenario(name=name, inputs=declared_inputs, join=join, config=cfg, events=tuple(events))

    ops = packed_ops(len(chain), widths, min_ops=min_ops, max_ops=max_ops, allow_advance=ttl or proc,
                     actions=actions)
    return readable(st.tuples(st.booleans() if aimed is not plain else st.just(False), ops).map(assemble))


# ---------------------------------------------------------------- random schemas


_COMPARABLE = {"BIGINT": "num", "INTEGER": "num", "DOUBLE": "num", "VARCHAR": "str", "BOOLEAN": "bool"}


@st.composite
def _schema(draw: st.DrawFn, name: str, key_type: str) -> tuple[InputSpec, set[str]]:
    """An input with a join column of `key_type` at a drawn place, 1-3 other columns of any type."""
    others = draw(st.lists(st.sampled_from(COLUMN_TYPES), min_size=1, max_size=3))
    at = draw(st.integers(0, len(others)))
    types = others[:at] + [key_type] + others[at:]
    columns = tuple((f"{name}{i}", t) for i, t in enumerate(types))
    key_col = columns[at][0]
    mode = draw(st.sampled_from(("insert_only", "retract", "upsert")))
    uk_choice = draw(st.sampled_from(("none", "join_key", "other")))
    uk = None
    if uk_choice == "join_key":
        uk = (key_col,)
    elif uk_choice == "other":
        uk = (columns[(at + 1) % len(columns)][0],)
    if uk is None and mode == "upsert":
        mode = "retract"
    not_null = {c for c, _ in columns if draw(st.booleans()) and draw(st.booleans())}  # about a quarter
    return InputSpec(name, columns, uk, mode), not_null  # type: ignore[arg-type]


def _drawn_join(draw: st.DrawFn, max_ops: int) -> st.SearchStrategy[Scenario]:
    """Two inputs of drawn schemas joined on one column pair of comparable types: the scenarios of that join."""
    left_type = draw(st.sampled_from(COLUMN_TYPES))
    right_type = draw(st.sampled_from([t for t in COLUMN_TYPES if _COMPARABLE[t] == _COMPARABLE[left_type]]))
    (left, lnn), (right, rnn) = draw(_schema("l", left_type)), draw(_schema("r", right_type))
    lk = next(c for c, t in left.columns if t == left_type)
    rk = next(c for c, t in right.columns if t == right_type)
    op = draw(st.sampled_from(("=", "IS NOT DISTINCT FROM")))
    jtype = draw(st.sampled_from(("inner", "left", "right", "full", "semi", "anti")))
    join = JoinSpec(("l", "r"), (jtype,), (f"l.{lk} {op} r.{rk}",))
    return schema_scenarios((left, right), join, not_null={"l": lnn, "r": rnn}, max_ops=max_ops,
                            name=f"generated {jtype} join of drawn schemas")


@st.composite
def any_schema_join_scenarios(draw: st.DrawFn, *, max_ops: int = 16) -> Scenario:
    """A binary join of two inputs of drawn schemas on one column pair of comparable types."""
    return draw(_drawn_join(draw, max_ops))


@st.composite
def any_schema_join_batches(draw: st.DrawFn, *, max_ops: int = 16, max_scenarios: int = 8) -> list[Scenario]:
    """1..`max_scenarios` scenarios of one drawn join (`any_schema_join_scenarios`'s), answered by one oracle
    query (oracle/batch.py); shrinking deletes scenarios, down to the failing one alone."""
    check_count_range("any_schema_join_batches", "max_scenarios", max_scenarios, "max_scenarios", max_scenarios,
                      floor=1)
    return draw(st.lists(_drawn_join(draw, max_ops), min_size=1, max_size=max_scenarios))
