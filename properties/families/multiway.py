"""The multi-way family: FLIP-516 multi-way joins against the binary chain and DuckDB, and their state."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

from hypothesis import strategies as st

from converge.generators.multiway import ALL_TYPES, MULTIWAY_TYPES, RESIDUALS, multiway_scenarios
from converge.properties import multiway, regular, wellformed
from converge.properties.spec import PropertySpec

MULTIWAY = "multiway"

# The planner's options as scenarios set them (Config fields); {} is Flink's default.
PLANNER_OPTIONS: tuple[dict[str, int | bool], ...] = (
    {},
    {},
    {"multi_join_max_tables": 3},
    {"multi_join_max_tables": 2, "multi_join_min_tables": 2},
    {"multi_join_min_tables": 2},
    {"multi_join_rewrite_right": True},
    {"multi_join_rewrite_right": True, "multi_join_min_tables": 2},
)


class _Dense(TypedDict):
    """_DENSE's keyword arguments of multiway_scenarios (a TypedDict, so each is checked against them)."""
    composite: Sequence[bool]
    residual_rate: Sequence[bool]
    min_ops: int
    max_ops: int
    first_input_weight: int


class _PlannerDraws(TypedDict):
    """The keyword arguments of multiway_scenarios that both kinds of planner case share."""
    num_inputs: Sequence[int]
    breaks: Sequence[bool]
    extra_configs: Sequence[dict]
    null_safe_rate: Sequence[bool]
    residuals: Sequence[str]
    max_ops: int


# Tuned so that a LEFT input often meets, loses and regains partners within one example:
# LEFT-heavy, rarely composite or filtered by a residual, several changes (each can still shrink away).
_DENSE = _Dense(composite=(False, False, True), residual_rate=(False, False, True), min_ops=6, max_ops=30,
                first_input_weight=2)


def _chains(**kw) -> st.SearchStrategy:
    """Mostly INNER/LEFT chains with a common key; sometimes any join type, or a join without the key."""
    eligible = multiway_scenarios(num_inputs=(3, 3, 4, 5), join_types=("inner", "left", "left"),
                                  extra_configs=PLANNER_OPTIONS, **_DENSE, **kw)
    mixed = multiway_scenarios(num_inputs=(3, 4), join_types=ALL_TYPES, breaks=(False, True),
                               extra_configs=PLANNER_OPTIONS, **_DENSE, **kw)
    return st.one_of(eligible, eligible, mixed)


def _dense_left_chains() -> st.SearchStrategy:
    """LEFT-heavy chains over one or two hot keys: partners arrive, leave and come back all the time."""
    return multiway_scenarios(num_inputs=(3, 3, 4, 5), join_types=("left", "left", "inner"),
                              key_domains=((0,), (0, None), (0, 1, None)), composite=(False,),
                              residual_rate=(False, False, True), min_ops=8, max_ops=30,
                              modes=("retract", "retract", "upsert"), first_input_weight=3)


def _single(strategy: st.SearchStrategy) -> st.SearchStrategy[tuple]:
    return strategy.map(lambda s: (s,))


def _planner_cases() -> st.SearchStrategy[tuple]:
    """Chains of up to six inputs with breaks and null-safe links; one event each (only the plan matters)."""
    options = [o for o in PLANNER_OPTIONS if not o.get("multi_join_rewrite_right")]
    common = _PlannerDraws(num_inputs=(3, 4, 5, 6), breaks=(False, True), extra_configs=options,
                           null_safe_rate=(False, True),
                           residuals=tuple(r for r in RESIDUALS if "DISTINCT" not in r), max_ops=1)
    return _single(st.one_of(multiway_scenarios(join_types=MULTIWAY_TYPES, **common),
                             multiway_scenarios(join_types=ALL_TYPES, **common)))


def _long_ttl() -> st.SearchStrategy[tuple]:
    """One TTL for every input, or one per input, all longer than the stream."""
    base = multiway_scenarios(num_inputs=(3, 4), ttl="long", extra_configs=PLANNER_OPTIONS[:3])

    @st.composite
    def cases(draw: st.DrawFn) -> tuple:
        scenario = draw(base)
        if draw(st.booleans()):
            scenario = multiway.per_input_ttl(scenario, scenario.config.state_ttl_ms)  # type: ignore[arg-type]
        return (scenario,)

    return cases()


def _snapshot() -> st.SearchStrategy[tuple]:
    base = multiway_scenarios(num_inputs=(3, 4), extra_configs=PLANNER_OPTIONS[:3])

    @st.composite
    def cases(draw: st.DrawFn) -> tuple:
        scenario = draw(base)
        return scenario, draw(st.integers(0, len(scenario.events)))

    return cases()


PROPERTIES: list[PropertySpec] = [
    PropertySpec(MULTIWAY, "prefix_consistency", lambda: _single(_chains()), multiway.prefix_consistency, 200,
                 "after every event multi-way plan = binary chain = DuckDB; the common key partitions the answer",
                 suite_examples=60),
    PropertySpec(MULTIWAY, "matches_binary_chain", lambda: _single(_dense_left_chains()),
                 multiway.matches_binary_chain, 500,
                 "LEFT-heavy hot-key chains: multi-way output = binary chain output after every event",
                 suite_examples=150),
    PropertySpec(MULTIWAY, "state_is_live_inputs", lambda: _single(_chains()), multiway.state_is_live_inputs, 200,
                 "multi-way state holds exactly the live input records, nothing intermediate", suite_examples=40),
    PropertySpec(MULTIWAY, "plan_choice", _planner_cases, multiway.plan_choice, 300,
                 "only INNER/LEFT runs with a common key become multi-way joins, split by max_tables",
                 suite_examples=100),
    PropertySpec(MULTIWAY, "ttl_longer_than_stream", _long_ttl, multiway.ttl_longer_than_stream, 100,
                 "per-input TTLs longer than the stream: the batch answer", suite_examples=20),
    PropertySpec(MULTIWAY, "snapshot_restore", _snapshot, regular.snapshot_restore, 100,
                 "snapshot a multi-way plan, restore into a fresh runtime, continue: identical output",
                 suite_examples=20),
    PropertySpec(MULTIWAY, "changelog_wellformed", lambda: _single(_chains()), wellformed.changelog_wellformed,
                 150, "no retraction of an absent row and kinds that follow the input, multi-way or binary chain",
                 suite_examples=40),
]
