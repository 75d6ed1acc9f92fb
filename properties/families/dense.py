"""Dense variants of the regular-join properties: the same checks over streams where bugs have room to show.

The shared generators spread rows over three join keys, draw every column at
random and put long clock steps against short TTLs. The seeded-bug campaign
(`converge mutants`) measured what that leaves out, one generated example at
a time with the bug injected:

* "a duplicated row is joined once": 1 example in 1000 under
  `prefix_consistency` (two identical rows on one input are rare);
* "a read refreshes TTL", "an association update does not": 0 in 3000 under
  `ttl_matches_model` (an entry is seldom touched twice within one TTL);
* "normalize drops -U", "SEMI emits on every match": 1 in 170 and 1 in 250.

Each property below keeps its check and feeds it a denser stream, built from
the same generators so every shrunk example is still a valid changelog:

* `one_join_key` moves every non-NULL join key `k` to 0 (valid when `k` is in
  no unique key: unique key shapes `none` and `own` only; a retraction
  carries the same moved image as the row it retracts);
* `ttl_fine_clock`: one key, a clock tick of 1 between changes, TTL 2..4;
* `duplicates_prefix_consistency`: every `+I`/`+U` of an input without a
  unique key is sent twice (a retraction still removes one copy);
* `hot_key_prefix_consistency`: one key, upsert inputs twice as often, few
  residuals.

Ticks drawn per change (instead of one between every pair) shrank badly:
deleting a change shifted every later tick. These shrink to 2..5 events.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TypedDict

from hypothesis import strategies as st

from converge.engine.model.changelog import ACCUMULATE_KINDS
from converge.engine.model.scenario import ChangeEvent, Event, ProcessingTimeEvent, Scenario
from converge.generators.scenarios import BATCH_SCENARIOS, regular_join_batches, regular_join_scenarios
from converge.properties import regular, wellformed
from converge.properties.spec import PropertySpec

REGULAR = "regular"
_FEW_RESIDUALS = (None, None, "a.x <> b.y", "NOT (a.x < b.y OR a.s > b.s)", "a.x IS NULL OR b.y > 1")


def one_join_key(scenario: Scenario, column: str = "k") -> Scenario:
    """Every non-NULL value of the join key column set to 0: all records meet under one state key."""
    index = {spec.name: spec.index_of(column) for spec in scenario.inputs}
    events: list[Event] = []
    for e in scenario.events:
        if isinstance(e, ChangeEvent) and e.row[index[e.input]] is not None:
            row = list(e.row)
            row[index[e.input]] = 0
            e = replace(e, row=tuple(row))
        events.append(e)
    return replace(scenario, events=tuple(events))


def fine_clock(scenario: Scenario, ttl: int) -> Scenario:
    """One join key, the clock advanced by 1 between consecutive changes, and the given TTL."""
    events: list[Event] = []
    for now, event in enumerate(one_join_key(scenario).events):
        if now:
            events.append(ProcessingTimeEvent(now))
        events.append(event)
    return replace(scenario, name=scenario.name + " (fine clock)", events=tuple(events),
                   config=replace(scenario.config, state_ttl_ms=ttl))


def doubled(scenario: Scenario) -> Scenario:
    """Every accumulate of an input without a unique key, sent twice."""
    no_key = {spec.name for spec in scenario.inputs if not spec.unique_key}
    events: list[Event] = []
    for e in scenario.events:
        events.append(e)
        if isinstance(e, ChangeEvent) and e.input in no_key and e.kind in ACCUMULATE_KINDS:
            events.append(e)
    return replace(scenario, name=scenario.name + " (duplicated rows)", events=tuple(events))


# TTL streams are drawn without clock events (ttl="none"); fine_clock adds them.
_TTL_STREAMS = regular_join_scenarios(modes=("insert_only", "retract"), uk_shapes=("none", "own"),
                                      residuals=_FEW_RESIDUALS)
class _Streams(TypedDict, total=False):
    """The keyword arguments of regular_join_scenarios that a dense stream narrows."""
    modes: Sequence[str]
    uk_shapes: Sequence[str]
    residuals: Sequence[str | None]


_DUPLICATES = _Streams(modes=("insert_only", "retract"), uk_shapes=("none", "none", "own"))
_HOT = _Streams(uk_shapes=("none", "own"), modes=("insert_only", "retract", "upsert", "upsert"),
                residuals=_FEW_RESIDUALS)
_DUPLICATE_STREAMS = regular_join_scenarios(**_DUPLICATES)
_HOT_STREAMS = regular_join_scenarios(**_HOT)
# The prefix properties take batches of one join (one oracle query each: docs/generators.md)
_DUPLICATE_BATCHES = regular_join_batches(**_DUPLICATES)
_HOT_BATCHES = regular_join_batches(**_HOT)


@st.composite
def _fine_clock(draw: st.DrawFn) -> tuple:
    scenario = draw(_TTL_STREAMS)
    return (fine_clock(scenario, draw(st.integers(2, 4))),)


PROPERTIES: list[PropertySpec] = [
    PropertySpec(REGULAR, "ttl_fine_clock", _fine_clock, regular.ttl_matches_model, 150,
                 "one key, a clock tick between changes, TTL of 2..4 ticks: the TTL-aware model's answer"),
    PropertySpec(REGULAR, "duplicates_prefix_consistency",
                 lambda: _DUPLICATE_BATCHES.map(lambda b: ([doubled(s) for s in b],)),
                 regular.prefix_consistency_batch, 100,
                 "every row of a no-unique-key input arrives twice: DuckDB's answer after every event",
                 batch=BATCH_SCENARIOS),
    PropertySpec(REGULAR, "hot_key_prefix_consistency",
                 lambda: _HOT_BATCHES.map(lambda b: ([one_join_key(s) for s in b],)),
                 regular.prefix_consistency_batch, 150,
                 "one join key, upserts often, few residuals: DuckDB's answer after every event",
                 batch=BATCH_SCENARIOS),
    PropertySpec(REGULAR, "dense_changelog_wellformed",
                 lambda: st.one_of(_DUPLICATE_STREAMS.map(doubled), _HOT_STREAMS.map(one_join_key)).map(
                     lambda s: (s,)),
                 wellformed.changelog_wellformed, 150,
                 "duplicated rows or one hot key: the output changelog stays well-formed"),
]
