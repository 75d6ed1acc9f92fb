"""Per-key disorder is an explicit generator mode, tested on its own; every other stream keeps per-key order."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from converge.engine.model.scenario import ChangeEvent, InputSpec, ProcessingTimeEvent
from converge.generators.changelog import interleave, per_key_tokens
from converge.generators.disorder import disordered_scenarios, join_key_columns, swap, swap_candidates
from converge.generators.scenarios import regular_join_scenarios
from tests.conftest import examples

A = InputSpec("a", (("k", "BIGINT"), ("x", "BIGINT")), None, "retract")
B = InputSpec("b", (("k", "BIGINT"), ("y", "BIGINT")), ("k",), "retract")
SPECS = {"a": A, "b": B}
KEYS = {"a": ("k",), "b": ("k",)}


def test_swap_candidates_are_neighbouring_changes_of_one_input_and_key() -> None:
    events = [
        ChangeEvent("a", "+I", (1, 10)),   # 0
        ChangeEvent("b", "+I", (1, 5)),    # 1  same key, other input: never paired with 0
        ChangeEvent("a", "+I", (2, 10)),   # 2  other key
        ProcessingTimeEvent(3),            # 3
        ChangeEvent("a", "-D", (1, 10)),   # 4  pairs with 0
        ChangeEvent("a", "+I", (1, 11)),   # 5  pairs with 4 (not with 0: 4 is between)
        ChangeEvent("a", "+I", (1, 11)),   # 6  equal to 5: swapping them changes nothing
        ChangeEvent("b", "-U", (1, 5)),    # 7  pairs with 1
    ]
    assert swap_candidates(events, KEYS, SPECS) == [(0, 4), (4, 5), (1, 7)]
    swapped = swap(events, 0, 4)
    assert swapped[0] == events[4] and swapped[4] == events[0] and swapped[1:4] == events[1:4]


@settings(max_examples=examples(60), deadline=None, database=None)
@given(disordered_scenarios())
def test_the_disorder_mode_swaps_exactly_one_same_key_pair(pair) -> None:
    source, arrived = pair
    i, j = arrived.meta["disorder_swapped"]
    assert i < j
    moved = [n for n, (s, a) in enumerate(zip(source.events, arrived.events, strict=False)) if s != a]
    assert moved == [i, j] and arrived.events[i] == source.events[j] and arrived.events[j] == source.events[i]
    first, second = source.events[i], source.events[j]
    keys = join_key_columns(source)
    key = lambda e: (e.input, tuple(e.row[source.input(e.input).index_of(c)] for c in keys[e.input]))  # noqa: E731
    assert key(first) == key(second)
    between = [e for e in source.events[i + 1:j] if isinstance(e, ChangeEvent)]
    assert all(key(e) != key(first) for e in between), "only neighbours in the key's own order are swapped"
    assert arrived.config.per_key_order == "disordered" and arrived.config.semantics == "flink"
    assert source.config.per_key_order == "kept"


@settings(max_examples=examples(60), deadline=None, database=None)
@given(regular_join_scenarios(), st.lists(st.integers(0, 7), min_size=1, max_size=30))
def test_interleavings_of_the_other_families_keep_per_key_order(scenario, choices) -> None:
    specs = {s.name: s for s in scenario.inputs}
    keys = join_key_columns(scenario)
    key_idx = {n: [specs[n].index_of(c) for c in keys[n]] for n in specs}
    tokens = [per_key_tokens(e, specs, key_idx) for e in scenario.events]
    reordered = interleave(scenario.events, tokens, choices)

    def per_key(events):
        out: dict = {}
        for e in events:
            if isinstance(e, ChangeEvent):
                out.setdefault((e.input, tuple(e.row[i] for i in key_idx[e.input])), []).append(e)
        return out

    assert per_key(reordered) == per_key(scenario.events)
