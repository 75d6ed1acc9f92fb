"""The regular-join family: INNER / LEFT / RIGHT / FULL / SEMI / ANTI over changelogs."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from converge.generators.changelog import interleave, per_key_tokens
from converge.generators.scenarios import (
    BATCH_SCENARIOS,
    RESIDUALS,
    TtlMode,
    regular_join_batches,
    regular_join_scenarios,
    without_unique_keys,
)
from converge.generators.schema import any_schema_join_batches
from converge.generators.views import self_join_scenarios, view_join_scenarios
from converge.properties import regular, shapes, wellformed
from converge.properties.spec import PropertySpec


@st.composite
def _interleaved(draw: st.DrawFn) -> tuple:
    scenario = draw(regular_join_scenarios())
    specs = {s.name: s for s in scenario.inputs}
    key_cols = {"a": ["k"], "b": ["k"]}
    cond = scenario.join.conditions[0]
    if "a.id = b.id" in cond:
        key_cols = {"a": ["k", "id"], "b": ["k", "id"]}
    key_idx: dict[str, Sequence[int]] = {n: [specs[n].index_of(c) for c in key_cols[n]] for n in specs}
    tokens = [per_key_tokens(e, specs, key_idx) for e in scenario.events]
    choices = draw(st.lists(st.integers(0, 7), min_size=1, max_size=len(scenario.events) + 1))
    reordered = scenario.with_events(interleave(scenario.events, tokens, choices))
    return scenario, reordered


@st.composite
def _with_stripped_keys(draw: st.DrawFn) -> tuple:
    scenario = draw(regular_join_scenarios(modes=("insert_only", "retract"), uk_shapes=("join_key", "own")))
    return scenario, without_unique_keys(scenario)


@st.composite
def _tlp(draw: st.DrawFn) -> tuple:
    # no raw `all` input: its bare +U keeps the join key of the condition it was generated for, and a partition
    # such as NOT (a.x <> b.y) becomes a.x = b.y, a new join key the bare +U may move (docs/semantics.md)
    scenario = draw(regular_join_scenarios(join_types=("inner",), residuals=(None,),
                                           modes=("insert_only", "retract", "upsert")))
    residual = draw(st.sampled_from([r for r in RESIDUALS if r is not None]))
    return scenario, scenario.join.conditions[0], residual


@st.composite
def _snapshot(draw: st.DrawFn) -> tuple:
    ttl: TtlMode = draw(st.sampled_from(("none", "short")))
    modes = ("insert_only", "retract", "upsert") if ttl == "none" else ("insert_only", "retract")
    scenario = draw(regular_join_scenarios(ttl=ttl, modes=modes))
    cut = draw(st.integers(0, len(scenario.events)))
    return scenario, cut


def _single(strategy: st.SearchStrategy) -> st.SearchStrategy[tuple]:
    return strategy.map(lambda s: (s,))


REGULAR = "regular"

PROPERTIES: list[PropertySpec] = [
    PropertySpec(REGULAR, "prefix_consistency", lambda: regular_join_batches().map(lambda b: (b,)),
                 regular.prefix_consistency_batch, 200,
                 "after every event the materialized output equals DuckDB's answer on the input so far",
                 batch=BATCH_SCENARIOS),
    PropertySpec(REGULAR, "final_convergence", lambda: regular_join_batches().map(lambda b: (b,)),
                 regular.final_convergence_batch, 100, "final answer = batch answer; multiplicities never negative",
                 batch=BATCH_SCENARIOS),
    PropertySpec(REGULAR, "prefix_consistency_any_schema", lambda: any_schema_join_batches().map(lambda b: (b,)),
                 regular.prefix_consistency_batch, 100,
                 "drawn schemas (column types, NOT NULL columns, keys, modes): the DuckDB answer after every event",
                 batch=BATCH_SCENARIOS),
    PropertySpec(REGULAR, "final_convergence_any_schema", lambda: any_schema_join_batches().map(lambda b: (b,)),
                 regular.final_convergence_batch, 100, "drawn schemas: final answer = batch answer",
                 batch=BATCH_SCENARIOS),
    PropertySpec(REGULAR, "prefix_consistency_views", lambda: _single(view_join_scenarios()),
                 regular.prefix_consistency, 100,
                 "views (a projection and filter in front of each input, a SELECT list and WHERE after the join): "
                 "DuckDB's answer after every event"),
    PropertySpec(REGULAR, "prefix_consistency_one_source", lambda: _single(self_join_scenarios()),
                 regular.prefix_consistency, 100,
                 "one source feeding both inputs (a self-join, with views): DuckDB's answer after every event"),
    PropertySpec(REGULAR, "interleaving_invariance", _interleaved, regular.interleaving_invariance, 100,
                 "per-key-order-preserving reorderings give the same final answer"),
    PropertySpec(REGULAR, "unique_key_views_agree", _with_stripped_keys, regular.unique_key_views_agree, 100,
                 "unique-key and no-unique-key state views give the same answer at every prefix"),
    PropertySpec(REGULAR, "tlp_partition", _tlp, regular.tlp_partition, 100,
                 "INNER: p / NOT p / p IS NULL add back up to the join on the key"),
    PropertySpec(REGULAR, "ttl_longer_than_stream", lambda: _single(regular_join_scenarios(ttl="long")),
                 regular.ttl_longer_than_stream, 100, "TTL longer than the stream: the batch answer"),
    PropertySpec(REGULAR, "ttl_matches_model",
                 lambda: _single(regular_join_scenarios(ttl="short", modes=("insert_only", "retract"))),
                 regular.ttl_matches_model, 150, "short TTL: the TTL-aware model's answer at every event"),
    PropertySpec(REGULAR, "snapshot_restore", _snapshot, regular.snapshot_restore, 100,
                 "snapshot, restore into a fresh runtime, continue: identical output"),
    PropertySpec(REGULAR, "changelog_wellformed", lambda: _single(regular_join_scenarios()),
                 wellformed.changelog_wellformed, 200,
                 "no retraction of an absent row, kinds follow the input, key locality, padding excludes matches"),
    PropertySpec(REGULAR, "shape_variants_agree", lambda: _single(st.one_of(
                     regular_join_scenarios(modes=("retract",)),
                     regular_join_scenarios(modes=("retract",), semantics="flink"))),
                 shapes.shape_variants_agree, 100,
                 "insert+delete / retract pairs / upsert with and without normalize / raw `all` / duplicate "
                 "inserts: one folded answer (flink semantics: the bare-update shapes excepted)",
                 suite_examples=25),
]


