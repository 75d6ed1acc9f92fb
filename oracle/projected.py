"""A scenario as its join sees it, with the projections in front of the join computed by DuckDB.

A property whose subject is the join operator (the interval properties over a
time attribute computed from a column, docs/check-your-query.md) judges the
join on the rows it sees. Those rows are computed here, in DuckDB, from the
inputs' projections and filters (oracle/views.py's SQL), never by the engine's
Calc: so an expectation built on the lowered scenario does not move with an
engine bug, and the engine's Calc is judged on its own by the final answer
against the oracle's (properties/query_check.py, `system_final_answer`).
"""

from __future__ import annotations

import functools
from dataclasses import replace

from converge.engine.model.errors import UnsupportedError
from converge.engine.model.scenario import COLUMN_TYPES, ChangeEvent, InputSpec, JoinSpec, Scenario
from converge.oracle.query import run_query
from converge.oracle.sql import quote_ident, render_source
from converge.oracle.views import input_path, view_source

__all__ = ["projected_scenario", "projected_with_positions"]

_POSITION = "__event"


@functools.lru_cache(maxsize=256)
def _lowered_spec(spec: InputSpec, path: str) -> InputSpec:
    """The input as the join sees it: the projected columns with the types DuckDB gives them (they depend on the
    input alone, so every scenario of one query asks DuckDB once, not once per example)."""
    names = [n for n, _ in spec.project or ()]
    probe = render_source(InputSpec(spec.name, spec.columns), [tuple(None for _ in spec.columns)])
    source = view_source(replace(spec, where=None), probe, path)
    typed = ", ".join(f"typeof({quote_ident(n)})" for n in names)
    [types] = run_query(f"SELECT {typed} FROM {source} AS {quote_ident(spec.name)}")
    for name, type_ in zip(names, types, strict=True):
        if type_ not in COLUMN_TYPES:
            raise UnsupportedError(f"{path}: the projected column {name!r} is a {type_} in DuckDB; a lowered "
                                   f"input holds {', '.join(COLUMN_TYPES)} columns")
    time = spec.time_column if spec.time_column in names else None
    return InputSpec(spec.name, tuple(zip(names, types, strict=True)), None, spec.changelog_mode, time)


def _lowered_rows(spec: InputSpec, rows: list[tuple[int, tuple]], path: str) -> dict[int, tuple]:
    """Event position -> the projected row (a row the filter drops is absent), computed in DuckDB."""
    if not rows:
        return {}
    wide = InputSpec(spec.name, spec.columns + ((_POSITION, "BIGINT"),))
    source = view_source(spec, render_source(wide, [row + (pos,) for pos, row in rows]), path, seq=_POSITION)
    out = run_query(f"SELECT * FROM {source} AS {quote_ident(spec.name)}")
    return {row[0]: tuple(row[1:]) for row in out}


def projected_scenario(scenario: Scenario) -> Scenario:
    """The scenario with each input's projection and filter applied to its events in DuckDB (no Calc left in
    front of the join). A SELECT list or WHERE after the join stays the caller's (unsupported here)."""
    return projected_with_positions(scenario)[0]


def projected_with_positions(scenario: Scenario) -> tuple[Scenario, tuple[int, ...]]:
    """`projected_scenario` and, for each of its events, the position of the event it came from (an event whose
    row a filter drops has none)."""
    lowered = [spec for spec in scenario.chain if spec.has_calc]
    if not lowered:
        return scenario, tuple(range(len(scenario.events)))
    if scenario.join.has_calc or any(spec.source is not None for spec in scenario.chain):
        raise UnsupportedError("lowering a scenario with a SELECT list, WHERE or a shared source is not modelled")
    specs = {spec.name: _lowered_spec(spec, input_path(scenario, spec.name)) for spec in lowered}
    rows: dict[str, list[tuple[int, tuple]]] = {spec.name: [] for spec in lowered}
    for pos, event in enumerate(scenario.events):
        if isinstance(event, ChangeEvent) and event.input in rows:
            rows[event.input].append((pos, tuple(event.row)))
    projected = {spec.name: _lowered_rows(spec, rows[spec.name], input_path(scenario, spec.name)) for spec in lowered}
    events, positions = [], []
    for pos, event in enumerate(scenario.events):
        if isinstance(event, ChangeEvent) and event.input in projected:
            if pos not in projected[event.input]:
                continue
            event = replace(event, row=projected[event.input][pos], expect=None)
        events.append(event)
        positions.append(pos)
    join = scenario.join
    inputs = tuple(specs.get(spec.name, spec) for spec in scenario.inputs)
    return (replace(scenario, inputs=inputs, join=JoinSpec(join.inputs, join.types, join.conditions, join.interval),
                    events=tuple(events), expect_final=None, expect_changelog=None), tuple(positions))
