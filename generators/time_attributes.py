"""Regular and multi-way join scenarios whose inputs carry an event-time attribute (`time_column`).

Users declare a rowtime (a column with a watermark) on the tables they join, not only on interval-join
inputs; a regular or multi-way join must then give the same answer as without it (Flink's planner
materializes the time attributes into plain timestamps). converge's engine and oracle read a
`time_column` only for interval joins, so these scenarios have the batch answer of their plain rows.

The time column is added to a drawn scenario by construction: `ts` (BIGINT, never NULL) goes at the end
of each chosen input's columns, a fresh time for every row that enters an input (+I, +U), and a
retraction (-U, -D) carries the time of the present row it removes (a key-only upsert delete: the row
of its key). So every shrunk example stays a valid changelog. Optionally a join condition also
compares two time columns (`a.ts <= b.ts`), where Flink reads the materialized rowtimes in the join's
condition. `meta.time_attributes` records what was added, so more cases of one shape
(generators/shapes.py) strip it, draw fresh streams and add it again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from hypothesis import strategies as st

from converge.engine.model.errors import ApiMisuseError
from converge.engine.model.scenario import ChangeEvent, Event, InputSpec, JoinSpec, Scenario
from converge.generators.multiway import multiway_scenarios
from converge.generators.scenarios import regular_join_scenarios

TIME_COLUMN = "ts"
META_KEY = "time_attributes"
MAX_BASE = 10**12   # times stay far inside what a rowtime holds (years 1970..2001)


def time_draws(max_rows: int = 64) -> st.SearchStrategy[tuple[int, int, tuple[int, ...]]]:
    """(base, step, jitters): row i that enters an input gets base + i * step + jitters[i % len(jitters)]."""
    return st.tuples(st.integers(0, MAX_BASE), st.integers(0, 1000),
                     st.lists(st.integers(-500, 500), min_size=1, max_size=max_rows).map(tuple))


def with_time_columns(scenario: Scenario, timed: Sequence[str], times: tuple[int, int, tuple[int, ...]],
                      compare: bool = False) -> Scenario:
    """`scenario` with a BIGINT time column `ts` on the inputs `timed` (see the module's docstring).

    With `compare`, the condition of the first join step whose new input and an earlier joined input both
    carry a time column also requires `earlier.ts <= new.ts`."""
    names = [s.name for s in scenario.inputs]
    unknown = [n for n in timed if n not in names]
    if unknown or len(set(timed)) != len(timed) or not timed:
        raise ApiMisuseError(f"with_time_columns: {list(timed)} must name distinct inputs of {names}")
    if scenario.join.interval is not None:
        raise ApiMisuseError("with_time_columns: an interval join's time attributes are its bounds already")
    specs = {s.name: s for s in scenario.inputs}
    for name in timed:
        if TIME_COLUMN in specs[name].column_names or specs[name].time_column is not None:
            raise ApiMisuseError(f"with_time_columns: input {name!r} already has a {TIME_COLUMN!r} or time column")
    inputs = tuple(replace(s, columns=s.columns + ((TIME_COLUMN, "BIGINT"),), time_column=TIME_COLUMN)
                   if s.name in timed else s for s in scenario.inputs)
    events = _timed_events(scenario.events, {n: specs[n] for n in timed}, times)
    join, compared = scenario.join, None
    if compare:
        join, compared = _compare_step(scenario.join, set(timed))
    meta = dict(scenario.meta)
    meta[META_KEY] = {"inputs": list(timed), "compared": compared}
    return replace(scenario, inputs=inputs, join=join, events=tuple(events), meta=meta, expect_final=None,
                   expect_changelog=None)


def without_time_columns(scenario: Scenario) -> Scenario:
    """The scenario with_time_columns was given (its events aside: their time values are dropped)."""
    added = scenario.meta.get(META_KEY)
    if not isinstance(added, Mapping):
        raise ApiMisuseError(f"without_time_columns: no meta.{META_KEY} (not made by with_time_columns)")
    timed = set(added["inputs"])
    inputs = tuple(replace(s, columns=s.columns[:-1], time_column=None) if s.name in timed else s
                   for s in scenario.inputs)
    events = tuple(replace(e, row=e.row[:-1]) if isinstance(e, ChangeEvent) and e.input in timed else e
                   for e in scenario.events)
    join = scenario.join
    step = added.get("compared")
    if step is not None:
        conditions = list(join.conditions)
        conditions[step] = conditions[step].rsplit(" AND ", 1)[0]
        join = replace(join, conditions=tuple(conditions))
    meta = {k: v for k, v in scenario.meta.items() if k != META_KEY}
    return replace(scenario, inputs=inputs, join=join, events=events, meta=meta)


def retimed(scenario: Scenario, template: Scenario, times: tuple[int, int, tuple[int, ...]]) -> Scenario:
    """A fresh stream of `template`'s base shape (`scenario`) with the template's time columns added again."""
    added = template.meta[META_KEY]
    out = with_time_columns(scenario, added["inputs"], times, compare=added.get("compared") is not None)
    return replace(out, name=template.name)


def _timed_events(events: Sequence[Event], specs: Mapping[str, InputSpec],
                  times: tuple[int, int, tuple[int, ...]]) -> list[Event]:
    base, step, jitters = times
    present: dict[str, list[tuple[tuple, int]]] = {name: [] for name in specs}
    fresh = 0
    out: list[Event] = []
    for event in events:
        if not isinstance(event, ChangeEvent) or event.input not in specs:
            out.append(event)
            continue
        spec, rows = specs[event.input], present[event.input]
        if event.kind in ("+I", "+U"):
            if spec.unique_key and (event.kind == "+U" or spec.changelog_mode == "upsert"):  # replaces its key's row
                key = _key(spec, event.row)
                rows[:] = [(r, t) for r, t in rows if _key(spec, r) != key]
            t = base + fresh * step + jitters[fresh % len(jitters)]
            fresh += 1
            rows.append((event.row, t))
        else:
            t = _retracted(spec, rows, event.row)
        out.append(replace(event, row=event.row + (t,)))
    return out


def _retracted(spec: InputSpec, rows: list[tuple[tuple, int]], row: tuple) -> int:
    """The time of the present row `row` retracts (the row of its key for a key-only upsert delete); removed."""
    for i, (r, t) in enumerate(rows):
        if r == row:
            del rows[i]
            return t
    if spec.unique_key:
        key = _key(spec, row)
        for i, (r, t) in enumerate(rows):
            if _key(spec, r) == key:
                del rows[i]
                return t
    raise ApiMisuseError(f"with_time_columns: {row!r} on {spec.name!r} retracts no present row")


def _key(spec: InputSpec, row: tuple) -> tuple:
    return tuple(row[spec.index_of(c)] for c in spec.unique_key or ())


def _compare_step(join: JoinSpec, timed: set[str]) -> tuple[JoinSpec, int | None]:
    """The join with `earlier.ts <= new.ts` added to the first step where both are timed and joined."""
    joined = [join.inputs[0]]
    for k, (name, jtype) in enumerate(zip(join.inputs[1:], join.types, strict=False)):
        earlier = [n for n in joined if n in timed]
        if name in timed and earlier and jtype not in ("semi", "anti"):
            conditions = list(join.conditions)
            conditions[k] = f"{conditions[k]} AND ({earlier[0]}.{TIME_COLUMN} <= {name}.{TIME_COLUMN})"
            return replace(join, conditions=tuple(conditions)), k
        if jtype not in ("semi", "anti"):
            joined.append(name)
    return join, None


@st.composite
def _timed(draw: st.DrawFn, base: st.SearchStrategy[Scenario], compare: bool | None) -> Scenario:
    scenario = draw(base)
    names = [s.name for s in scenario.inputs]
    chosen = draw(st.lists(st.sampled_from(names), min_size=1, max_size=len(names), unique=True))
    timed = [n for n in names if n in chosen]  # chain order, whatever order they were drawn in
    wants = draw(st.booleans()) if compare is None else compare
    return with_time_columns(scenario, timed, draw(time_draws()), compare=wants)


def time_attribute_scenarios(*, multiway: bool | None = None, compare: bool | None = None,
                             regular: Mapping[str, Any] | None = None,
                             chains: Mapping[str, Any] | None = None) -> st.SearchStrategy[Scenario]:
    """Regular (binary) and multi-way scenarios with a time column on some inputs.

    `multiway`: only multi-way chains (True), only binary joins (False), or either (None). `compare`: a
    condition comparing two time columns always, never, or drawn. `regular` / `chains` are passed on to
    regular_join_scenarios / multiway_scenarios."""
    bases = []
    if multiway is not True:
        bases.append(regular_join_scenarios(**dict(regular or {})))
    if multiway is not False:
        bases.append(multiway_scenarios(**dict(chains or {})))
    return _timed(st.one_of(*bases), compare)
