"""Hypothesis strategies for the mini-batch join: random regular joins with a bundle size, and the two
known mini-batch anomalies, each as a class of generated cases (docs/minibatch.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

from hypothesis import strategies as st

from converge.engine.model.errors import ApiMisuseError
from converge.engine.model.scenario import ChangeEvent, ChangelogMode, Config, JoinSpec, Scenario
from converge.generators.arguments import check_choices, check_one
from converge.generators.scenarios import TtlMode, input_spec, regular_join_scenarios

OUTER_AND_INNER = ("inner", "left", "right", "full")
_VALUES = st.integers(-3, 3)
_TEXT = st.sampled_from(("p", "q"))
VariantPurpose = Literal["equals_off", "oracle", "any"]


def minibatch_scenarios(*, semantics: str = "correct", max_size: int = 6,
                        modes: Sequence[str] = ("insert_only", "retract"), changelog_normalize: bool = True,
                        ttl: TtlMode = "none",
                        map_state_orders: Sequence[str] | None = None) -> st.SearchStrategy[Scenario]:
    """A binary INNER/LEFT/RIGHT/FULL join with a bundle of 1..max_size elements (1 flushes after every
    record; a size beyond the stream flushes only at the end).

    `modes` may hold "upsert": with `changelog_normalize` a ChangelogNormalize sends the join 0, 1 or 2
    elements per change event (a bundle can end between the -U and +U of one update); without it the
    raw upsert changes reach the join one element each. `ttl` adds state TTL ("long": nothing expires
    during the stream; "short": state expires, so processing time advances). `map_state_orders` narrows
    the MapState orders drawn (a system campaign keeps converge's engine-model options at their defaults)."""
    name = "minibatch_scenarios"
    check_one(name, "semantics", semantics, ("correct", "flink"))
    check_one(name, "ttl", ttl, TtlMode)
    modes = check_choices(name, "modes", modes, ChangelogMode)
    orders = {} if map_state_orders is None else {"map_state_orders": map_state_orders}
    base = regular_join_scenarios(join_types=OUTER_AND_INNER, modes=modes, semantics=semantics, ttl=ttl, **orders)
    return st.tuples(base.flatmap(_with_duplicated_inserts), st.integers(1, max_size)).map(
        lambda drawn: replace(drawn[0], name=drawn[0].name + " (mini-batch)",
                              config=replace(drawn[0].config, mini_batch_size=drawn[1],
                                             changelog_normalize=changelog_normalize)))


def _with_duplicated_inserts(scenario: Scenario) -> st.SearchStrategy[Scenario]:
    """The scenario with some +I of an input without a unique key repeated at once: two identical records in
    one bundle are what the no-unique-key fold must keep apart (a repeated insert is valid there by
    construction, and shrinking drops the copies first)."""
    no_key = {spec.name for spec in scenario.inputs if not spec.unique_key}
    candidates = [i for i, e in enumerate(scenario.events)
                  if isinstance(e, ChangeEvent) and e.kind == "+I" and e.input in no_key]
    if not candidates:
        return st.just(scenario)

    def copy(chosen: list[int]) -> Scenario:
        events = []
        for i, event in enumerate(scenario.events):
            events.append(event)
            if i in chosen:
                events.append(event)
        return scenario.with_events(tuple(events))

    return st.lists(st.sampled_from(candidates), max_size=3, unique=True).map(copy)


def minibatch_variants(*, semantics: str = "correct", purpose: VariantPurpose = "equals_off") -> st.SearchStrategy[Scenario]:
    """The input shapes a mini-batch property takes. "equals_off": insert-only / retract, upsert behind
    ChangelogNormalize, state TTL that expires nothing during the stream (raw upsert and expiring state
    are refused there: properties.minibatch says why); "oracle": what DuckDB decides as well (no TTL);
    "any": raw upsert and expiring TTL too (a snapshot must restore any run)."""
    check_one("minibatch_variants", "purpose", purpose, VariantPurpose)
    all_modes = ("insert_only", "retract", "upsert")
    shapes = [minibatch_scenarios(semantics=semantics, modes=all_modes)]
    if purpose != "oracle":
        shapes.append(minibatch_scenarios(semantics=semantics, modes=all_modes, ttl="long"))
    if purpose == "any":
        shapes.append(minibatch_scenarios(semantics=semantics, modes=("retract", "upsert"), changelog_normalize=False))
        shapes.append(minibatch_scenarios(semantics=semantics, modes=all_modes, ttl="short",
                                          changelog_normalize=False))
    # half of the examples keep the insert-only / retract shape, where the no-unique-key fold is busiest
    return st.one_of(minibatch_scenarios(semantics=semantics), st.one_of(*shapes))


@st.composite
def match_flip_cases(draw: st.DrawFn, *, join_types: Sequence[str] = OUTER_AND_INNER,
                     modes: Sequence[str] = ("insert_only", "retract")) -> Scenario:
    """A row on each input, then one of them updated by a -U/+U pair inside one bundle to a version that starts
    or stops matching the other: by its join key or by the residual `a.x > b.y`. What a bundle folds here
    decides whether a row is joined or NULL-padded (the suppressed-padding and FLINK-34380 class), with
    semantics left correct, so a system campaign can send it (the final answer is DuckDB's).

    The updated input is retract; the other one takes the first of `modes` it can. The bundle holds 2, 4 or 6
    elements, so the pair (elements 3 and 4) always shares one. Condition and inputs are regular_join_scenarios'
    (a key and a residual it draws), so generators.shapes can draw more streams of the same shape."""
    if "retract" not in modes:
        raise ApiMisuseError("match_flip_cases(modes=...): the updated input needs retract")
    jtype = draw(st.sampled_from(tuple(check_choices("match_flip_cases", "join_types", join_types,
                                                     OUTER_AND_INNER))))
    by_key = draw(st.booleans())
    side = draw(st.sampled_from(("b", "a")))
    starts = draw(st.booleans())  # the update makes the row match (True) or stop matching
    shape = draw(st.sampled_from(("none", "own") if by_key else ("none", "own", "join_key")))
    other_mode = "insert_only" if "insert_only" in modes else "retract"
    a = input_spec("a", "x", shape if side == "a" else "none", "retract" if side == "a" else other_mode, ("k",))
    b = input_spec("b", "y", shape if side == "b" else "none", "retract" if side == "b" else other_mode, ("k",))
    k, ida, idb, base = draw(_VALUES), draw(_VALUES), draw(_VALUES), draw(_VALUES)
    above, below = base + draw(st.integers(1, 3)), base - draw(st.integers(0, 3))  # a.x > b.y: above base, not below
    row_a, row_b = (k, ida, base, draw(_TEXT)), (k, idb, base, draw(_TEXT))
    if by_key:  # the partner's value stays below: only the key decides
        row_a, row_b = (k, ida, above, row_a[3]), (k, idb, base, row_b[3])
        hit = row_a if side == "a" else row_b
        miss = (k + draw(st.integers(1, 3)),) + hit[1:]
    elif side == "a":  # b.y = base; a.x above or not
        hit, miss = (k, ida, above, row_a[3]), (k, ida, below, row_a[3])
    else:  # a.x = base; b.y below it or not
        hit, miss = (k, idb, base - (above - base), row_b[3]), (k, idb, base + (base - below), row_b[3])
    old, new = (miss, hit) if starts else (hit, miss)
    fixed = ChangeEvent("b", "+I", row_b) if side == "a" else ChangeEvent("a", "+I", row_a)
    events = (fixed, ChangeEvent(side, "+I", old), ChangeEvent(side, "-U", old), ChangeEvent(side, "+U", new))
    condition = "a.k = b.k" if by_key else "a.k = b.k AND (a.x > b.y)"
    size = draw(st.sampled_from((2, 4, 6)))
    how = "key" if by_key else "residual"
    return Scenario(f"generated {jtype} join (mini-batch): an update of {side} {'starts' if starts else 'stops'} "
                    f"matching by its {how}", (a, b), JoinSpec(("a", "b"), (jtype,), (condition,)),
                    Config(mini_batch_size=size), events)


@st.composite
def flink_34380_cases(draw: st.DrawFn) -> tuple[Scenario, tuple]:
    """+I a1, -U a1, +U a2 of one unique key in one bundle, the other side holding one partner.
    Returns the scenario and the one joined row a2 + partner the bundle must emit."""
    shape = draw(st.sampled_from(("join_key", "own")))
    a = input_spec("a", "x", shape, "retract", ("k",))
    b = input_spec("b", "y", "none", "insert_only", ("k",))
    k, ida, idb = draw(_VALUES), draw(_VALUES), draw(_VALUES)
    a1 = (k, ida, draw(_VALUES), draw(_TEXT))
    a2 = (k, ida, draw(_VALUES), draw(_TEXT))
    partner = (k, idb, draw(_VALUES), draw(_TEXT))
    events = (ChangeEvent("b", "+I", partner), ChangeEvent("a", "+I", a1), ChangeEvent("a", "-U", a1),
              ChangeEvent("a", "+U", a2))
    size = draw(st.integers(4, 8))
    scenario = Scenario(f"FLINK-34380 case ({shape} unique key)", (a, b), JoinSpec(("a", "b"), ("inner",),
                        ("a.k = b.k",)), Config(mini_batch_size=size, semantics="flink"), events)
    return scenario, a2 + partner


@st.composite
def suppressed_padding_cases(draw: st.DrawFn) -> tuple[Scenario, tuple]:
    """a LEFT/FULL JOIN b ON a.k = b.k AND a.x > b.y: b's only match of a row of a is updated, in one
    bundle, to a version that no longer matches. Returns the scenario and the padded row of a that must
    come back."""
    jtype = draw(st.sampled_from(("left", "full")))
    shape = draw(st.sampled_from(("join_key", "own")))
    a = input_spec("a", "x", "none", "insert_only", ("k",))
    b = input_spec("b", "y", shape, "retract", ("k",))
    k, ida, idb = draw(_VALUES), draw(_VALUES), draw(_VALUES)
    x = draw(_VALUES)
    y1 = draw(st.integers(x - 3, x - 1))
    y2 = draw(st.integers(x, x + 3))
    left = (k, ida, x, draw(_TEXT))
    b1 = (k, idb, y1, draw(_TEXT))
    b2 = (k, idb, y2, draw(_TEXT))
    events = (ChangeEvent("a", "+I", left), ChangeEvent("b", "+I", b1), ChangeEvent("b", "-U", b1),
              ChangeEvent("b", "+U", b2))
    scenario = Scenario(f"suppressed padding ({jtype} join, {shape} unique key)", (a, b),
                        JoinSpec(("a", "b"), (jtype,), ("a.k = b.k AND (a.x > b.y)",)),
                        Config(mini_batch_size=2, semantics="flink"), events)
    return scenario, left + (None,) * len(b.columns)
