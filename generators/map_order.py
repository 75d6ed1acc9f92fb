"""Binary joins where one record meets several stored rows: what the MapState order decides.

`map_order_scenarios` draws `a JOIN b ON a.k = b.k` (INNER or LEFT; insert-only or retract inputs; each
input with no unique key or its own `id`, so its join state is a MapState) with a state backend
(`config.state_backend`), and a stream built by construction on model tables (generators/changelog.py)
with ONE join key value: every stored row of a side is met by every record of the other. The non-key
values are chosen where byte order, hash order and arrival order disagree: 256 serializes before 1,
-1 after every positive number, strings of 8 bytes and more go to the variable-length part.

The template's shape is one that generators/shapes.py `same_shape` continues, so a system campaign's
batch adds generic streams of the same shape (a wider key domain) to the drawn one. Those rarely meet two
stored rows, so every template starts with a witness: two different rows on one side, then a row on the
other that meets both (issue 41 row 2: a campaign of 20 cases compared nothing). Every batch, the first one
too, then compares an order.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from converge.engine.model.scenario import Config, InputSpec, JoinSpec, Scenario
from converge.generators.arguments import check_choices
from converge.generators.changelog import DELETE, INSERT, UPDATE, Op, build_events, ops_strategy
from converge.generators.scenarios import LAYOUTS, input_spec

BACKENDS = ("hashmap", "rocksdb")
CONDITION = "a.k = b.k"
KEY_VALUES = (1,)                                       # one join key: every record meets every stored row
BIGINT_VALUES = (1, 256, 2, -1, 65536, 3)               # byte order 65536, 256, 1, 2, 3, -1 (little-endian slots)
VARCHAR_VALUES = ("a", "b", "eight888", "", "ab", "seven77")


def _domains(spec: InputSpec) -> list[tuple]:
    return [KEY_VALUES if name == "k" else BIGINT_VALUES if ctype == "BIGINT" else VARCHAR_VALUES
            for name, ctype in spec.columns]


def map_order_scenarios(*, backends: Sequence[str] = BACKENDS, join_types: Sequence[str] = ("inner", "left"),
                        modes: Sequence[str] = ("insert_only", "retract"), layouts: Sequence[tuple] = LAYOUTS,
                        min_ops: int = 3, max_ops: int = 12) -> st.SearchStrategy[Scenario]:
    """`a JOIN b ON a.k = b.k` with several rows per side on one join key, on a drawn state backend (`layouts`:
    the column orders drawn, generators/scenarios.py; fewer make fewer shapes, so fewer jobs on a real engine)."""
    backends = check_choices("map_order_scenarios", "backends", backends)
    join_types = check_choices("map_order_scenarios", "join_types", join_types)
    modes = check_choices("map_order_scenarios", "modes", modes)
    layouts = check_choices("map_order_scenarios", "layouts", layouts)
    ops_st = ops_strategy(2, [4, 4], min_ops=min_ops, max_ops=max_ops, allow_advance=False,
                          actions=(INSERT, INSERT, UPDATE, DELETE))

    @st.composite
    def scenarios(draw: st.DrawFn) -> Scenario:
        jtype = draw(st.sampled_from(tuple(join_types)))
        backend = draw(st.sampled_from(tuple(backends)))
        specs = [input_spec(name, value, draw(st.sampled_from(("none", "own"))), draw(st.sampled_from(tuple(modes))),
                            ("k",), draw(st.sampled_from(layouts)))
                 for name, value in (("a", "x"), ("b", "y"))]
        events = build_events(specs, [("k",), ("k",)], draw(witness(specs)) + draw(ops_st), conditions=(CONDITION,),
                              domains=[_domains(s) for s in specs])
        return Scenario(name=f"map order {jtype} join, {backend}", inputs=tuple(specs),
                        join=JoinSpec(("a", "b"), (jtype,), (CONDITION,)),
                        config=Config(state_backend=backend), events=tuple(events))

    return scenarios()


def witness(specs: Sequence[InputSpec]) -> st.SearchStrategy[list[Op]]:
    """Two inserts of different rows on one side (every column's value differs), then an insert on the other
    side: on the one join key it meets both stored rows, so its output has an order to compare."""
    @st.composite
    def ops(draw: st.DrawFn) -> list[Op]:
        side = draw(st.sampled_from((0, 1)))
        first = draw(st.integers(0, len(BIGINT_VALUES) - 1))
        second = (first + draw(st.integers(1, len(BIGINT_VALUES) - 1))) % len(BIGINT_VALUES)
        other = draw(st.integers(0, len(BIGINT_VALUES) - 1))
        return [Op(side, INSERT, 0, (first,) * len(specs[side].columns)),
                Op(side, INSERT, 0, (second,) * len(specs[side].columns)),
                Op(1 - side, INSERT, 0, (other,) * len(specs[1 - side].columns))]

    return ops()


MULTIWAY_CONDITIONS = ("a.k = b.k", "b.k = c.k")


def multiway_order_scenarios(*, backends: Sequence[str] = BACKENDS, join_types: Sequence[str] = ("inner", "left"),
                             modes: Sequence[str] = ("insert_only", "retract"), layouts: Sequence[tuple] = LAYOUTS,
                             min_ops: int = 3, max_ops: int = 12) -> st.SearchStrategy[Scenario]:
    """`a JOIN b ON a.k = b.k JOIN c ON b.k = c.k` planned as one multi-way join (`multi_join: on`, Flink's
    StreamingMultiJoinOperator, 2.1+), each join INNER or LEFT, one join key value, several rows per input:
    an event's output walks the stored rows of every other input, in their state's order."""
    backends = check_choices("multiway_order_scenarios", "backends", backends)
    join_types = check_choices("multiway_order_scenarios", "join_types", join_types)
    modes = check_choices("multiway_order_scenarios", "modes", modes)
    layouts = check_choices("multiway_order_scenarios", "layouts", layouts)
    ops_st = ops_strategy(3, [4, 4, 4], min_ops=min_ops, max_ops=max_ops, allow_advance=False,
                          actions=(INSERT, INSERT, UPDATE, DELETE))

    @st.composite
    def scenarios(draw: st.DrawFn) -> Scenario:
        types = (draw(st.sampled_from(tuple(join_types))), draw(st.sampled_from(tuple(join_types))))
        backend = draw(st.sampled_from(tuple(backends)))
        specs = [input_spec(name, value, draw(st.sampled_from(("none", "own"))), draw(st.sampled_from(tuple(modes))),
                            ("k",), draw(st.sampled_from(layouts)))
                 for name, value in (("a", "x"), ("b", "y"), ("c", "z"))]
        events = build_events(specs, [("k",)] * 3, draw(multiway_witness(specs)) + draw(ops_st),
                              conditions=MULTIWAY_CONDITIONS, domains=[_domains(s) for s in specs])
        return Scenario(name=f"multi-way order {'/'.join(types)} join, {backend}", inputs=tuple(specs),
                        join=JoinSpec(("a", "b", "c"), types, MULTIWAY_CONDITIONS),
                        config=Config(state_backend=backend, multi_join="on"), events=tuple(events))

    return scenarios()


def multiway_witness(specs: Sequence[InputSpec]) -> st.SearchStrategy[list[Op]]:
    """Two inserts of different rows on one input, then one insert on each other input in order: the last
    one (or, when the two rows are on the last input, the one before) meets both stored rows."""
    @st.composite
    def ops(draw: st.DrawFn) -> list[Op]:
        side = draw(st.sampled_from((0, 1, 2)))
        first = draw(st.integers(0, len(BIGINT_VALUES) - 1))
        second = (first + draw(st.integers(1, len(BIGINT_VALUES) - 1))) % len(BIGINT_VALUES)
        others = [Op(d, INSERT, 0, (draw(st.integers(0, len(BIGINT_VALUES) - 1)),) * len(specs[d].columns))
                  for d in range(3) if d != side]
        return [Op(side, INSERT, 0, (first,) * len(specs[side].columns)),
                Op(side, INSERT, 0, (second,) * len(specs[side].columns)), *others]

    return ops()
