"""The anomalies family: each documented behaviour of Flink is reproduced, and its fix removes it.

`converge run` shows a verdict per property: "reproduced" (a fixed witness
stream shows the anomaly in the Flink-faithful mode, and the fix removes it on
that very stream; a seeded search for new witnesses runs once per campaign and
only warns when it finds none within its budget), "fixed" (the fix holds on every generated stream) or
"guarded" (the strict mode the other families run in rejects what it cannot
answer). A property that does not hold shows "NOT ..." instead.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from converge.generators.anomalies import (
    dedupe_scenarios,
    lost_key_scenarios,
    order_item_scenarios,
    replacing_scenarios,
)
from converge.generators.disorder import disordered_scenarios
from converge.generators.scenarios import regular_join_scenarios
from converge.properties import anomalies, wellformed
from converge.properties.spec import PropertySpec

ANOMALIES = "anomalies"
REPRODUCED, FIXED, GUARDED = "reproduced", "fixed", "guarded"


def _witness() -> st.SearchStrategy[tuple]:
    """No drawn input: the check runs its fixed witness (one example); the search runs once per campaign."""
    return st.just(())


def _single(strategy: st.SearchStrategy) -> st.SearchStrategy[tuple]:
    return strategy.map(lambda s: (s,))


def _arrival() -> st.SearchStrategy[tuple]:
    return _single(st.one_of(
        regular_join_scenarios(map_state_orders=("arrival",)),
        regular_join_scenarios(map_state_orders=("arrival",), semantics="flink"),
        order_item_scenarios(map_state_orders=("arrival",), join_types=("inner", "left", "right", "full")),
        order_item_scenarios(map_state_orders=("arrival",), items_unique_key=False),
    ))


def _dedupe() -> st.SearchStrategy[tuple]:
    return _single(st.one_of(dedupe_scenarios(), lost_key_scenarios(dedupe=True)))


def _correct(scenario):
    """The same stream under semantics=correct: the guarantees are stated for it (docs/wellformedness.md)."""
    return replace(scenario, config=replace(scenario.config, semantics="correct"))


def _wellformed_cases() -> st.SearchStrategy[tuple]:
    return _single(st.one_of(
        replacing_scenarios(semantics="correct", join_types=("inner", "left", "right", "full", "semi", "anti")),
        dedupe_scenarios().map(_correct), order_item_scenarios(map_state_orders=("arrival",)).map(_correct)))


PROPERTIES: list[PropertySpec] = [
    PropertySpec(ANOMALIES, "mapstate_order_reproduced", _witness, anomalies.mapstate_order_reproduced, 1,
                 "rocksdb / hashmap order: an order change re-emits its items out of arrival order",
                 suite_examples=1, verdict=REPRODUCED, search=anomalies.mapstate_order_search),
    PropertySpec(ANOMALIES, "emitted_in_arrival_order", _arrival, anomalies.emitted_in_arrival_order, 200,
                 "map_state_order=arrival: every event emits a key's records in arrival order",
                 suite_examples=30, verdict=FIXED),
    PropertySpec(ANOMALIES, "lost_unique_key_reproduced", _witness, anomalies.lost_key_reproduced, 1,
                 "an upsert input whose unique key the join lost keeps two versions: one-to-one becomes "
                 "one-to-many", suite_examples=1, verdict=REPRODUCED, search=anomalies.lost_key_search),
    PropertySpec(ANOMALIES, "dedupe_matches_batch", _dedupe, anomalies.dedupe_matches_batch, 150,
                 "dedupe before the join: the batch answer over the deduplicated inputs, after every event",
                 suite_examples=30, verdict=FIXED),
    PropertySpec(ANOMALIES, "flink_40681_reproduced", _witness, anomalies.flink_40681_reproduced, 1,
                 "semantics=flink: a replaced row counts as a new association, the padding never comes back",
                 suite_examples=1, verdict=REPRODUCED, search=anomalies.flink_40681_search),
    PropertySpec(ANOMALIES, "correct_matches_batch", lambda: _single(replacing_scenarios(
                     semantics="correct", join_types=("inner", "left", "right", "full", "semi", "anti"))),
                 anomalies.correct_matches_batch, 200,
                 "semantics=correct: replaced rows are retracted first; the batch answer after every event",
                 suite_examples=30, verdict=FIXED),
    PropertySpec(ANOMALIES, "per_key_disorder_reproduced", _witness, anomalies.disorder_reproduced, 1,
                 "two changes of one key swapped: Flink's behaviour, no crash, a final answer off the batch one",
                 suite_examples=1, verdict=REPRODUCED, search=anomalies.disorder_search),
    PropertySpec(ANOMALIES, "disorder_guarded", lambda: disordered_scenarios(), anomalies.disorder_guarded, 150,
                 "a swapped stream runs in disordered mode; strict per-key order rejects it or answers right",
                 suite_examples=30, verdict=GUARDED),
    PropertySpec(ANOMALIES, "changelog_wellformed", _wellformed_cases, wellformed.changelog_wellformed, 150,
                 "replaced rows, dedupes, order changes (fixed modes): the output changelog stays well-formed",
                 suite_examples=30, verdict=FIXED),
]
