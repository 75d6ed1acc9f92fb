"""Hypothesis strategies for join chains of three or more inputs (FLIP-516 multi-way joins).

A chain `a ⋈ b ⋈ c ⋈ ...` is drawn as: how many inputs, which join types,
which earlier input each join links to on the key (`chain`: the previous one,
`star`: the first one, `mixed`: any earlier visible one), whether the key is
composite (`k` and `id`) or null-safe, optional residual conditions over an
earlier input (which may be NULL-padded), and optionally one *break*: a join
that links on `id` only, so the chain has no common partition key across it.
Each link also draws a form (`LINK_FORMS`: plain, the VARCHAR column `s` added
to its key, or an equality inside an OR beside it), each input a column order
(`LAYOUTS`) and its own changelog mode, and the key values may come from a
wider domain with deliberate ties between key columns (docs/generators.md).

Every drawn scenario records what it was built from in
`scenario.meta["generated_chain"]`
(link targets, key columns, where the break is), so properties can check the
planner's choice against the construction rather than against the planner.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from hypothesis import strategies as st

from converge.engine.model.errors import ApiMisuseError, BadInputError
from converge.engine.model.scenario import (
    ChangelogMode,
    Config,
    InputSpec,
    JoinSpec,
    JoinType,
    MapStateOrder,
    MultiJoinMode,
    Scenario,
)
from converge.generators.arguments import check_choices, check_count_range, check_one
from converge.generators.changelog import DELETE, INSERT, UPDATE, build_events, ops_strategy

NAMES = ("a", "b", "c", "d", "e", "f", "g")
MULTIWAY_TYPES = ("inner", "left")
ALL_TYPES = ("inner", "left", "right", "full", "semi", "anti")
Shape = Literal["chain", "star", "mixed"]
SHAPES: tuple[Shape, ...] = ("chain", "star", "mixed")
MODES = ("insert_only", "retract", "upsert", "all")
UK_SHAPES = ("none", "join_key", "own")

# Residuals between the joined input {t} and an earlier visible input {x}; {x} may be NULL-padded.
RESIDUALS = (
    "{x}.v > {t}.v",
    "{x}.v <> {t}.v",
    "{x}.v + {t}.v <= 3",
    "{x}.v IS NULL OR {t}.v > 1",
    "NOT ({x}.v < {t}.v)",
    "{x}.s < {t}.s",
    "{x}.v IS NOT DISTINCT FROM {t}.v",
    "{t}.v <> 1",
)

# Key values: small, so that a combination across four or five inputs still matches often;
# sometimes a single hot key (with or without NULLs), where every row of an input shares the key.
KEY_DOMAINS = ((0, 1, None), (0, 1, None), (0, None), (0,))
# A wider domain: where two key columns of a row hold one value only when drawn so (generators.changelog.tie_pair),
# so a plan that swaps key columns answers differently (from 0/1/NULL two columns often agree by chance).
WIDE_KEY_DOMAIN = (0, 1, 2, 3, 4, None)

COLUMNS = (("k", "BIGINT"), ("id", "BIGINT"), ("v", "BIGINT"), ("s", "VARCHAR"))
# Column orders of an input (indexes into COLUMNS): key columns at other positions than on the input it links to.
LAYOUTS = ((0, 1, 2, 3), (3, 2, 1, 0), (2, 0, 3, 1))

# How a link compares beyond its key columns (the first is the plain form every shrink falls back to):
# `typed` adds the VARCHAR column s to the key (BIGINT and VARCHAR key columns mixed); `or` puts an equality
# inside an OR next to the key ({t} the joined input, {x} the input it links to).
LINK_FORMS = ("plain", "typed", "or")
OR_RESIDUALS = ("{x}.id = {t}.id OR {x}.v = {t}.v", "{x}.v = {t}.v OR {x}.s = {t}.s")


@dataclass(frozen=True)
class ChainLink:
    """How join i (input i+1) was built: the earlier input it links to, and on which columns."""

    target: str
    key_columns: tuple[str, ...]     # ("k",), ("k", "id") or ("id",) for a break
    null_safe: bool
    residual: str | None

    def to_json(self) -> dict:
        return {"target": self.target, "key_columns": list(self.key_columns), "null_safe": self.null_safe,
                "residual": self.residual}


def chain_input(name: str, uk_shape: str, mode: str, key_cols: Sequence[str],
                layout: Sequence[int] = LAYOUTS[0]) -> InputSpec:
    """An input with columns k, id, v, s (in the order `layout` gives); its unique key is the join key, `id`,
    or none."""
    uk: tuple[str, ...] | None = {"join_key": tuple(key_cols), "own": ("id",)}.get(uk_shape)
    if uk is None and mode in ("upsert", "all"):
        mode = "retract"
    return InputSpec(name, tuple(COLUMNS[i] for i in layout), uk, mode)  # type: ignore[arg-type]


def link_condition(target: str, name: str, key_columns: Sequence[str], null_safe: bool,
                   residual: str | None) -> str:
    op = "IS NOT DISTINCT FROM" if null_safe else "="
    parts = [f"{target}.{c} {op} {name}.{c}" for c in key_columns]
    if residual is not None:
        parts.append(f"({residual})")
    return " AND ".join(parts)


def multiway_scenarios(
    *,
    num_inputs: Sequence[int] = (3, 4),
    join_types: Sequence[str] = MULTIWAY_TYPES,
    shapes: Sequence[Shape] = SHAPES,
    composite: Sequence[bool] = (False, True),
    null_safe_rate: Sequence[bool] = (False, False, False, True),
    residual_rate: Sequence[bool] = (False, True),
    breaks: Sequence[bool] = (False,),
    modes: Sequence[str] = MODES,
    uk_shapes: Sequence[str] = UK_SHAPES,
    min_ops: int = 1,
    max_ops: int = 24,
    ttl: Literal["none", "long"] = "none",
    map_state_orders: Sequence[str] = ("rocksdb", "hashmap", "arrival"),
    multi_join: str = "on",
    extra_configs: Sequence[dict] = ({},),
    residuals: Sequence[str] = RESIDUALS,
    key_domains: Sequence[tuple] = KEY_DOMAINS + (WIDE_KEY_DOMAIN,),
    link_forms: Sequence[str] = LINK_FORMS,
    layouts: Sequence[Sequence[int]] = LAYOUTS,
    actions: Sequence[int] = (INSERT, UPDATE, DELETE),
    first_input_weight: int = 1,
) -> st.SearchStrategy[Scenario]:
    """A join chain of `num_inputs` inputs with a valid changelog on each.

    Without a break every join links (transitively) to the first input's `k`
    (and `id` when composite), so the chain has a common partition key unless a
    null-safe link goes through an input that may be padded. `ttl="long"` sets
    a TTL longer than the stream's processing-time span. `extra_configs` are
    drawn into the config (the multi-way planner's options). `first_input_weight`
    makes changes on the first input that many times as likely as on any other
    (every combination needs a record of input 0). With `min_ops` > 1 that many
    operations are drawn, each kept with probability 3/4 and able to shrink away,
    so examples are larger without making small counterexamples unreachable.
    `link_forms` (LINK_FORMS) and `layouts` (LAYOUTS) are drawn per link and per input; each input's
    changelog mode is drawn on its own, so one chain mixes modes.
    """
    name = "multiway_scenarios"
    num_inputs = check_choices(name, "num_inputs", num_inputs, range(2, 27))
    join_types = check_choices(name, "join_types", join_types, JoinType)
    shapes = check_choices(name, "shapes", shapes, Shape)
    modes = check_choices(name, "modes", modes, ChangelogMode)
    uk_shapes = check_choices(name, "uk_shapes", uk_shapes, UK_SHAPES)
    link_forms = check_choices(name, "link_forms", link_forms, LINK_FORMS)
    layouts = check_choices(name, "layouts", [tuple(x) for x in layouts], LAYOUTS)
    map_state_orders = check_choices(name, "map_state_orders", map_state_orders, MapStateOrder)
    check_one(name, "multi_join", multi_join, MultiJoinMode)
    check_one(name, "ttl", ttl, ("none", "long"))
    check_count_range(name, "min_ops", min_ops, "max_ops", max_ops)
    for options in check_choices(name, "extra_configs", extra_configs):
        try:
            Config(**options)
        except (TypeError, BadInputError) as exc:
            raise ApiMisuseError(f"{name}(extra_configs=...): {options!r} is not a set of Config options: "
                                 f"{exc}") from None
    n_st = st.sampled_from(tuple(num_inputs))
    type_st = st.sampled_from(tuple(join_types))
    shape_st = st.sampled_from(tuple(shapes))
    comp_st = st.sampled_from(tuple(composite))
    ns_st = st.sampled_from(tuple(null_safe_rate))
    res_on = st.sampled_from(tuple(residual_rate))
    res_st = st.sampled_from(tuple(residuals))
    extra_st = st.sampled_from(tuple(extra_configs))
    domain_st = st.sampled_from(tuple(key_domains))
    break_st = st.sampled_from(tuple(breaks))
    uk_st = st.sampled_from(tuple(uk_shapes))
    mode_st = st.sampled_from(tuple(modes))
    order_st = st.sampled_from(tuple(map_state_orders))
    pick_st = st.integers(0, 7)
    form_st = st.sampled_from(tuple(link_forms))
    layout_st = st.sampled_from(tuple(layouts))
    or_st = st.sampled_from(OR_RESIDUALS)
    ops_by_n = {n: ops_strategy(n + first_input_weight - 1, [4] * n, min_ops=min_ops, max_ops=max_ops,
                                allow_advance=ttl != "none", actions=actions) for n in num_inputs}
    keep_st = st.integers(0, 3)
    long_extra = st.integers(0, 5)

    @st.composite
    def scenarios(draw: st.DrawFn) -> Scenario:
        n = draw(n_st)
        names = NAMES[:n]
        shape = draw(shape_st)
        key_cols: tuple[str, ...] = ("k", "id") if draw(comp_st) else ("k",)
        break_at = draw(st.integers(1, n - 1)) if draw(break_st) else None
        types: list[str] = []
        conditions: list[str] = []
        links: list[ChainLink] = []
        visible = [names[0]]
        for i in range(1, n):
            name = names[i]
            jtype = draw(type_st)
            if shape == "chain":
                target = visible[-1]
            elif shape == "star":
                target = visible[0]
            else:
                target = visible[draw(pick_st) % len(visible)]
            cols = ("id",) if i == break_at else key_cols
            form = draw(form_st)
            if form == "typed" and i != break_at:
                cols = cols + ("s",)
            null_safe = draw(ns_st)
            residual = None
            if form == "or":
                residual = draw(or_st).format(x=target, t=name)
            elif draw(res_on):
                other = visible[draw(pick_st) % len(visible)]
                residual = draw(res_st).format(x=other, t=name)
            types.append(jtype)
            conditions.append(link_condition(target, name, cols, null_safe, residual))
            links.append(ChainLink(target, cols, null_safe, residual))
            if jtype not in ("semi", "anti"):
                visible.append(name)
        # state view choice and the generator's value domains follow each input's own key columns
        own_keys = [key_cols if i != break_at else ("id",) for i in range(n)]
        specs = [chain_input(names[i], draw(uk_st), draw(mode_st), own_keys[i], draw(layout_st)) for i in range(n)]
        domain_cols = ["k", "id"] if len(key_cols) > 1 or break_at is not None else ["k"]
        # operations drawn for the extra "inputs" n.. go to input 0 (first_input_weight)
        ops = [op if op.input < n else replace(op, input=0) for op in draw(ops_by_n[n])]
        if min_ops > 1:  # at least min_ops are drawn, but each may still shrink away (keep 0 drops it)
            ops = [op for op in ops if draw(keep_st)]
        events = build_events(specs, [domain_cols] * n, ops, key_domain=draw(domain_st), conditions=conditions,
                              tie_keys=True)
        ttl_value: int | None = None
        if ttl == "long":
            span = max([getattr(e, "processing_time", 0) for e in events], default=0)
            ttl_value = span + 1 + draw(long_extra)
        config = Config(state_ttl_ms=ttl_value, map_state_order=draw(order_st),
                        multi_join=multi_join, **draw(extra_st))  # type: ignore[arg-type]
        meta = {"generated_chain": {"shape": shape, "key_columns": list(key_cols), "break_at": break_at,
                          "links": [link.to_json() for link in links]}}
        return Scenario(
            name=f"generated {n}-way {shape} chain ({', '.join(types)})",
            inputs=tuple(specs),
            join=JoinSpec(tuple(names), tuple(types), tuple(conditions)),
            config=config,
            events=tuple(events),
            meta=meta,
        )

    return scenarios()
