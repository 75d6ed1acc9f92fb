"""Hypothesis strategies for whole regular / SEMI / ANTI join scenarios.

Users import these to drive their own properties:

    from converge.generators import regular_join_scenarios
    @given(regular_join_scenarios(join_types=("left",)))
    def test_mine(scenario): ...
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Literal

from hypothesis import strategies as st

from converge.engine.model.errors import ApiMisuseError
from converge.engine.model.scenario import (
    ChangelogMode,
    Config,
    InputSpec,
    JoinSpec,
    JoinType,
    MapStateOrder,
    Scenario,
    Semantics,
)
from converge.generators.arguments import check_choices, check_count_range, check_one
from converge.generators.changelog import INSERT, Op, build_events, ops_strategy, packed_ops
from converge.generators.readable import readable

JOIN_TYPES = ("inner", "left", "right", "full", "semi", "anti")
MODES = ("insert_only", "retract", "upsert", "all")
UK_SHAPES = ("none", "join_key", "own")
TtlMode = Literal["none", "long", "short"]

# (condition, the columns it compares on each input: they get the small key domain). The first three are the
# simple forms every shrink falls back to (header byte 0 is the first); the others are where planners broke
# (docs/generators.md): key columns paired in another order on the two sides, BIGINT and VARCHAR key columns
# mixed, three key columns, and equalities inside an OR (with a common key, without one, and an OR whose
# disjuncts share a factor the planner may pull out). An OR form is parenthesised, so a residual ANDed after
# it stays outside it.
KEY_CONDITIONS = (
    ("a.k = b.k", ("k",)),
    ("a.k IS NOT DISTINCT FROM b.k", ("k",)),
    ("a.k = b.k AND a.id = b.id", ("k", "id")),
    ("a.k = b.id AND a.id = b.k", ("k", "id")),
    ("a.s = b.s AND a.k = b.k", ("s", "k")),
    ("a.id = b.k AND a.s = b.s AND a.k = b.id", ("id", "s", "k")),
    ("a.k = b.k AND (a.id = b.id OR a.x = b.y)", ("k", "id")),
    ("(a.k = b.k OR a.k = b.id)", ("k", "id")),
    ("((a.k = b.k AND a.x > b.y) OR (a.k = b.k AND a.s = b.s))", ("k",)),
)

# Column orders of an input (indexes into k, id, <value>, s): the first keeps every key column where the other
# input has it; the others put the key columns at other positions and in another order, so a plan that pairs
# key columns by position instead of by name joins the wrong columns.
LAYOUTS = ((0, 1, 2, 3), (3, 2, 1, 0), (2, 0, 3, 1))

# DuckDB 1.x's parser folds NOT over a comparison (NOT (x < y) becomes x >= y);
# NOT over a disjunction stays a NOT, so the compiled three-valued NOT is exercised.
RESIDUALS = (
    None,
    "a.x > b.y",
    "a.x <> b.y",
    "a.x + b.y <= 3",
    "a.x IS NULL OR b.y > 1",
    "NOT (a.x < b.y)",
    "NOT (a.x < b.y OR a.s > b.s)",
    "a.x = b.y",
    "a.s < b.s",
    "a.x BETWEEN b.y AND b.y + 1",
    "a.s = b.s OR a.x IS NOT DISTINCT FROM b.y",
)


def input_spec(name: str, value_col: str, uk_shape: str, mode: str, key_cols: Sequence[str],
               layout: Sequence[int] = LAYOUTS[0]) -> InputSpec:
    """An input with columns k, id, `value_col`, s in the order `layout` gives; its unique key is the join key,
    `id` or none (an upsert or `all` input without one falls back to retract)."""
    base = (("k", "BIGINT"), ("id", "BIGINT"), (value_col, "BIGINT"), ("s", "VARCHAR"))
    cols = tuple(base[i] for i in layout)
    uk: tuple[str, ...] | None
    if uk_shape == "join_key":
        uk = tuple(key_cols)
    elif uk_shape == "own":
        uk = ("id",)
    else:
        uk = None
    if uk is None and mode in ("upsert", "all"):
        mode = "retract"
    return InputSpec(name, cols, uk, mode)  # type: ignore[arg-type]


def regular_join_scenarios(
    *,
    join_types: Sequence[str] = JOIN_TYPES,
    modes: Sequence[str] = MODES,
    uk_shapes: Sequence[str] = UK_SHAPES,
    residuals: Sequence[str | None] = RESIDUALS,
    min_ops: int = 1,
    max_ops: int = 24,
    ttl: TtlMode = "none",
    map_state_orders: Sequence[str] = ("rocksdb", "hashmap", "arrival"),
    semantics: str = "correct",
    actions: Sequence[int] = (INSERT, 1, 2),
    encoding: Literal["ops", "packed"] = "packed",
) -> st.SearchStrategy[Scenario]:
    """A binary join scenario with a valid changelog on each input.

    `ttl="long"` sets a TTL longer than the stream's processing-time span;
    `ttl="short"` a TTL the stream's time advances can exceed. Sub-strategies are
    built once here, not per example: generation speed is the campaign's budget.

    Every choice is one byte of a header (byte 0 = the first option). The
    default `encoding="packed"` draws header and stream as ONE fixed-size byte
    string (generators.changelog.packed_ops): Hypothesis's cost is per draw,
    so this is several times faster to generate than `"ops"` (one draw per
    operation), and it shrinks as well: a counterexample loses operations in
    place, never by shifting the others (docs/generators.md has the measurements;
    tests/quality holds the registered properties to small counterexamples).
    """
    check_one("regular_join_scenarios", "encoding", encoding, ("ops", "packed"))
    parts = _RegularJoinParts("regular_join_scenarios", join_types=join_types, modes=modes, uk_shapes=uk_shapes,
                              residuals=residuals, min_ops=min_ops, max_ops=max_ops, ttl=ttl,
                              map_state_orders=map_state_orders, semantics=semantics, actions=actions)
    if encoding == "packed":
        return readable(parts.packed().map(lambda packed: parts.assemble(parts.picker(packed[0]), packed[1])))
    heads = st.binary(min_size=len(_PICKS), max_size=len(_PICKS))
    ops_st = ops_strategy(2, [4, 4], min_ops=min_ops, max_ops=max_ops, allow_advance=ttl != "none",
                          actions=actions)
    return readable(st.tuples(heads, ops_st).map(lambda drawn: parts.assemble(parts.picker(drawn[0]), drawn[1])))


BATCH_SCENARIOS = 8
"""Scenarios a batch holds at most (`regular_join_batches`): the oracle answers a batch in one query."""

# The choices the oracle's query text depends on (the join and the inputs' columns): one per batch.
_SHARED_PICKS = frozenset({"jtype", "key", "residual", "layout"})


def regular_join_batches(*, max_scenarios: int = BATCH_SCENARIOS, **options: Any) -> st.SearchStrategy[list[Scenario]]:
    """1..`max_scenarios` scenarios of `regular_join_scenarios(**options)` (packed) with one join and one column
    layout, so that one oracle query answers them all (oracle/batch.py).

    The join type, condition, residual and column layout are drawn once per batch; each scenario draws its own
    unique keys, changelog modes, state order, TTL and stream. Shrinking deletes scenarios from the list, so a
    failing batch shrinks to the scenario that fails, alone.
    """
    check_count_range("regular_join_batches", "max_scenarios", max_scenarios, "max_scenarios", max_scenarios,
                      floor=1)
    if "encoding" in options:
        raise ApiMisuseError("regular_join_batches: a batch is drawn packed; encoding is not an option")
    parts = _RegularJoinParts("regular_join_batches", **options)
    shared_st = st.binary(min_size=len(_PICKS), max_size=len(_PICKS))
    streams_st = st.lists(parts.packed(), min_size=1, max_size=max_scenarios)

    @st.composite
    def batches(draw: st.DrawFn) -> list[Scenario]:
        shared = draw(shared_st)
        return [parts.assemble(_split_picker(parts.picker(shared), parts.picker(own)), ops)
                for own, ops in draw(streams_st)]

    return batches()


def _split_picker(shared: Callable[[str], object], own: Callable[[str], object]) -> Callable[[str], object]:
    """The batch's picks for what the oracle's query depends on, the scenario's own for the rest."""
    return lambda name: (shared if name in _SHARED_PICKS else own)(name)


class _RegularJoinParts:
    """What both strategies share: the checked options, the choices a header byte picks from, and the
    scenario built from a picker and a stream."""

    def __init__(self, name: str, *, join_types: Sequence[str] = JOIN_TYPES, modes: Sequence[str] = MODES,
                 uk_shapes: Sequence[str] = UK_SHAPES, residuals: Sequence[str | None] = RESIDUALS,
                 min_ops: int = 1, max_ops: int = 24, ttl: TtlMode = "none",
                 map_state_orders: Sequence[str] = ("rocksdb", "hashmap", "arrival"), semantics: str = "correct",
                 actions: Sequence[int] = (INSERT, 1, 2)) -> None:
        check_one(name, "ttl", ttl, TtlMode)
        check_one(name, "semantics", semantics, Semantics)
        check_count_range(name, "min_ops", min_ops, "max_ops", max_ops)
        join_types = check_choices(name, "join_types", join_types, JoinType)
        modes = check_choices(name, "modes", modes, ChangelogMode)
        map_state_orders = check_choices(name, "map_state_orders", map_state_orders, MapStateOrder)
        residuals = check_choices(name, "residuals", residuals)
        uk_shapes = check_choices(name, "uk_shapes", uk_shapes)
        self.choices: dict[str, tuple] = {
            "jtype": tuple(join_types), "key": KEY_CONDITIONS, "residual": tuple(residuals),
            "shape": tuple(uk_shapes), "mode": tuple(modes), "order": tuple(map_state_orders),
            "long_extra": tuple(range(6)), "short_ttl": tuple(range(1, 7)), "layout": LAYOUTS,
        }
        self.ttl, self.semantics, self.actions = ttl, semantics, actions
        self.min_ops, self.max_ops = min_ops, max_ops

    def packed(self) -> st.SearchStrategy[tuple[bytes, list[Op]]]:
        return packed_ops(2, [4, 4], min_ops=self.min_ops, max_ops=self.max_ops, allow_advance=self.ttl != "none",
                          actions=self.actions, header=len(_PICKS))

    def picker(self, header: bytes) -> Callable[[str], object]:
        return _byte_picker(self.choices, header)

    def assemble(self, pick: Callable[[str], object], ops: Sequence[Op]) -> Scenario:
        jtype = pick("jtype")
        key_sql, key_cols = pick("key")  # type: ignore[misc]
        residual = pick("residual")
        condition = key_sql if residual is None else f"{key_sql} AND ({residual})"
        specs = [input_spec(name, value_col, pick("shape"), pick("mode"), key_cols, pick("layout"))  # type: ignore
                 for name, value_col in (("a", "x"), ("b", "y"))]
        events = build_events(specs, [key_cols, key_cols], ops, conditions=(condition,), tie_keys=True)
        span = max([getattr(e, "processing_time", 0) for e in events], default=0)
        ttl_value: int | None = None
        if self.ttl == "long":
            ttl_value = span + 1 + pick("long_extra")  # type: ignore[operator]
        elif self.ttl == "short":
            ttl_value = pick("short_ttl")  # type: ignore[assignment]
        config = Config(state_ttl_ms=ttl_value, map_state_order=pick("order"),  # type: ignore[arg-type]
                        semantics=self.semantics)  # type: ignore[arg-type]
        return Scenario(name=f"generated {jtype} join", inputs=tuple(specs),
                        join=JoinSpec(("a", "b"), (jtype,), (condition,)), config=config, events=tuple(events))


# The order in which `assemble` picks its choices (shape and mode once per input):
# one header byte each.
_PICKS = ("jtype", "key", "residual", "shape", "mode", "layout", "shape", "mode", "layout", "order", "long_extra",
          "short_ttl")


def _byte_picker(choices: dict[str, tuple], header: bytes) -> Callable[[str], object]:
    """Choices from the header: the n-th use of a name reads the byte of its n-th slot in _PICKS.

    Byte 0 means the first option, so header bytes shrink towards the first option of every choice.
    """
    slots: dict[str, list[int]] = {}
    for i, name in enumerate(_PICKS):
        slots.setdefault(name, []).append(i)
    used: dict[str, int] = {}

    def pick(name: str) -> object:
        n = used.get(name, 0)
        used[name] = n + 1
        idx = slots[name][n]
        options = choices[name]
        return options[header[idx] % len(options)]

    return pick


def without_unique_keys(s: Scenario) -> Scenario:
    """The same scenario with every unique key dropped (upsert and raw `all` inputs keep theirs: their rows
    replace each other by it)."""
    inputs = tuple(i if i.changelog_mode in ("upsert", "all") else replace(i, unique_key=None) for i in s.inputs)
    return replace(s, inputs=inputs, name=s.name + " (no unique keys)")
