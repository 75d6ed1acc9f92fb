"""Per-key disorder as an explicit mode: two changes of one join key arrive swapped.

The state-views write-up names the cause: a keyBy on a different field before the join sends
two changes A, B of one join key through different subtasks, B is processed
first and reaches the join before A. Every other generator keeps each key's
own order (`generators.changelog.interleave`); this one breaks it on purpose,
exactly once, and says so: the arrived scenario carries
`config.per_key_order = "disordered"` (engine/pipeline_options.py), without
which the engine rejects a retraction of a row its join state does not hold.

A drawn pair is (source, arrived): `source` is the valid changelog as the
sources emitted it (per-key order kept; the batch answer is defined over it),
`arrived` the same events with one same-key pair exchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from hypothesis import strategies as st

from converge.engine.model.scenario import ChangeEvent, Event, Scenario
from converge.generators.changelog import equality_columns
from converge.generators.scenarios import regular_join_scenarios


def join_key_columns(scenario: Scenario) -> dict[str, tuple[str, ...]]:
    """The join key columns of each input of a binary join (its equality conjuncts), read by the
    generators' own parser, not the engine's condition compiler."""
    return {spec.name: equality_columns(scenario.join.conditions, spec.name) for spec in scenario.chain}


def swap_candidates(events: Sequence[Event], key_columns: Mapping[str, Sequence[str]],
                    specs: dict) -> list[tuple[int, int]]:
    """Pairs (i, j), i < j, of different changes on one input with one join key and no change of
    that input and key between them: the pairs a different upstream keyBy can swap."""
    last: dict[tuple, int] = {}
    pairs: list[tuple[int, int]] = []
    for j, event in enumerate(events):
        if not isinstance(event, ChangeEvent):
            continue
        spec = specs[event.input]
        token = (event.input, tuple(event.row[spec.index_of(c)] for c in key_columns[event.input]))
        i = last.get(token)
        if i is not None and events[i] != event:
            pairs.append((i, j))
        last[token] = j
    return pairs


def swap(events: Sequence[Event], i: int, j: int) -> list[Event]:
    """The events with positions i and j exchanged; everything else stays where it was."""
    out = list(events)
    out[i], out[j] = out[j], out[i]
    return out


def disordered(scenario: Scenario, i: int, j: int) -> Scenario:
    """The arrived stream: events i and j swapped, in the Flink-faithful disordered mode."""
    config = replace(scenario.config, semantics="flink", per_key_order="disordered")
    return replace(scenario, name=f"{scenario.name} (events {i} and {j} swapped)", config=config,
                   events=tuple(swap(scenario.events, i, j)), meta={**scenario.meta, "disorder_swapped": [i, j]})


def _has_candidates(scenario: Scenario) -> bool:
    specs = {s.name: s for s in scenario.inputs}
    return bool(swap_candidates(scenario.events, join_key_columns(scenario), specs))


def disordered_scenarios(base: st.SearchStrategy[Scenario] | None = None
                         ) -> st.SearchStrategy[tuple[Scenario, Scenario]]:
    """(source, arrived) pairs. `base` gives per-key-ordered binary join scenarios with retract or
    insert-only inputs (the stream behind ChangelogNormalize is a retract stream too)."""
    if base is None:
        base = regular_join_scenarios(modes=("insert_only", "retract"), min_ops=2)
    base = base.filter(_has_candidates)

    @st.composite
    def pairs(draw: st.DrawFn) -> tuple[Scenario, Scenario]:
        source = draw(base)
        specs = {s.name: s for s in source.inputs}
        candidates = swap_candidates(source.events, join_key_columns(source), specs)
        i, j = candidates[draw(st.integers(0, len(candidates) - 1))]
        return source, disordered(source, i, j)

    return pairs()
