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

from converge.engine.model.scenario import (
    ChangeEvent,
    Config,
    InputSpec,
    IntervalSpec,
    JoinSpec,
    Scenario,
    StateBackend,
    WatermarkEvent,
)
from converge.generators.arguments import check_choices
from converge.generators.changelog import DELETE, INSERT, UPDATE, Op, build_events, ops_strategy
from converge.generators.scenarios import LAYOUTS, input_spec

BACKENDS = ("hashmap", "rocksdb")
CONDITION = "a.k = b.k"
KEY_VALUES = (1,)                                       # one join key: every record meets every stored row
BIGINT_VALUES = (1, 256, 2, -1, 65536, 3)               # byte order 65536, 256, 1, 2, 3, -1 (little-endian slots)
VARCHAR_VALUES = ("a", "b", "eight888", "", "ab", "seven77")


def _domains(spec: InputSpec, keys: tuple = KEY_VALUES) -> list[tuple]:
    return [keys if name == "k" else BIGINT_VALUES if ctype == "BIGINT" else VARCHAR_VALUES
            for name, ctype in spec.columns]


def _changes(min_ops: int, max_ops: int) -> st.SearchStrategy:
    """Two inputs' changes: inserts, updates and deletes, no time advance."""
    return ops_strategy(2, [4, 4], min_ops=min_ops, max_ops=max_ops, allow_advance=False,
                        actions=(INSERT, INSERT, UPDATE, DELETE))


def _join_type_and_backend(draw: st.DrawFn, join_types: Sequence[str],
                           backends: Sequence[str]) -> tuple[str, StateBackend]:
    """The join type, then the state backend (this order: the measured seeds draw them so)."""
    return draw(st.sampled_from(tuple(join_types))), draw(st.sampled_from(tuple(backends)))


def map_order_scenarios(*, backends: Sequence[str] = BACKENDS, join_types: Sequence[str] = ("inner", "left"),
                        modes: Sequence[str] = ("insert_only", "retract"), layouts: Sequence[tuple] = LAYOUTS,
                        min_ops: int = 3, max_ops: int = 12) -> st.SearchStrategy[Scenario]:
    """`a JOIN b ON a.k = b.k` with several rows per side on one join key, on a drawn state backend (`layouts`:
    the column orders drawn, generators/scenarios.py; fewer make fewer shapes, so fewer jobs on a real engine)."""
    backends = check_choices("map_order_scenarios", "backends", backends)
    join_types = check_choices("map_order_scenarios", "join_types", join_types)
    modes = check_choices("map_order_scenarios", "modes", modes)
    layouts = check_choices("map_order_scenarios", "layouts", layouts)
    ops_st = _changes(min_ops, max_ops)

    @st.composite
    def scenarios(draw: st.DrawFn) -> Scenario:
        jtype, backend = _join_type_and_backend(draw, join_types, backends)
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


OUTER_AND_INNER = ("inner", "left", "right", "full")
# Several join keys: a mini-batch bundle walks its join keys in HashMap order too (engine/operators/bundle_order.py)
MINIBATCH_KEYS = (1, 2, 256)
UK_SHAPES = ("none", "own", "join_key")   # InputSideHasNoUniqueKey, InputSideHasUniqueKey, JoinKeyContainsUniqueKey
MINIBATCH_SIZE = 4


def minibatch_order_scenarios(*, backends: Sequence[str] = BACKENDS, join_types: Sequence[str] = OUTER_AND_INNER,
                              uk_shapes: Sequence[str] = UK_SHAPES, min_ops: int = 4,
                              max_ops: int = 14) -> st.SearchStrategy[Scenario]:
    """`a JOIN b ON a.k = b.k` (INNER/LEFT/RIGHT/FULL) as Flink's MiniBatchStreamingJoinOperator, bundles of
    MINIBATCH_SIZE records: retract inputs, each with its own bundle class (no unique key, its own `id`, the join
    key), three join key values, non-key values where hash and arrival order disagree.

    Retract inputs only and one bundle size: each choice is one more job shape (one Flink job each in the
    measurement); a retract input's stream holds inserts, updates and deletes, and the bundle class follows the
    unique key alone."""
    backends = check_choices("minibatch_order_scenarios", "backends", backends)
    join_types = check_choices("minibatch_order_scenarios", "join_types", join_types, OUTER_AND_INNER)
    uk_shapes = check_choices("minibatch_order_scenarios", "uk_shapes", uk_shapes, UK_SHAPES)
    ops_st = _changes(min_ops, max_ops)

    @st.composite
    def scenarios(draw: st.DrawFn) -> Scenario:
        jtype, backend = _join_type_and_backend(draw, join_types, backends)
        specs = [input_spec(name, value, draw(st.sampled_from(tuple(uk_shapes))), "retract", ("k",), LAYOUTS[0])
                 for name, value in (("a", "x"), ("b", "y"))]
        events = build_events(specs, [("k",), ("k",)], draw(witness(specs)) + draw(ops_st), conditions=(CONDITION,),
                              domains=[_domains(s, MINIBATCH_KEYS) for s in specs])
        return Scenario(name=f"mini-batch order {jtype} join, {backend}", inputs=tuple(specs),
                        join=JoinSpec(("a", "b"), (jtype,), (CONDITION,)),
                        config=Config(state_backend=backend, mini_batch_size=MINIBATCH_SIZE), events=tuple(events))

    return scenarios()


# `a.t BETWEEN b.t + L AND b.t + U` with L <= 0 <= U, times >= 1: under the Flink adapter's watermark (each input's
# largest time so far less a delay that spans every time of the job, converge/systems/flink/program/session.py)
# the operator time max(watermark, 0) stays below every row's time until the input ends, so (TimeIntervalJoin:
# processElement1/2, calExpirationTime, registerCleanUpTimer) every row is cached (operator time < t + its side's
# relative size), none expires in a join pass, and no cleanup timer (t + relative size + ... + 1) fires before
# the final watermark, Long.MAX_VALUE, which fires every timer: onTimer expires every cached row (padding an
# outer one that never joined). So a watermark below every time changes nothing, and the scenario holds none but
# the end's, on both inputs.
INTERVAL_BOUNDS = ((-2000, 2000), (-20, 40), (0, 16), (-16, 0))
# Long.hashCode of a small time is the time, its HashMap bucket (16 buckets) time % 16: 16 and 48 in 0, 1, 17 and
# 33 in 1, 2, 5, 1000 in 8; RocksDB orders them ascending (big-endian bytes of a positive Long)
INTERVAL_TIMES = (1, 17, 2, 33, 16, 48, 5, 1000)
WITNESS_TIMES = (1, 16, 17, 2)           # within 16 of each other: one record of the other side can meet two
END_OF_INPUT = 2**63 - 1                  # the watermark a bounded source emits when it ends


def _meets(stored: int, t_stored: int, t_record: int, bounds: tuple[int, int]) -> bool:
    """Whether a record at `t_record` meets a stored row of input `stored` (0: a, 1: b) at `t_stored`."""
    a_t, b_t = (t_stored, t_record) if stored == 0 else (t_record, t_stored)
    return b_t + bounds[0] <= a_t <= b_t + bounds[1]


def interval_order_scenarios(*, backends: Sequence[str] = BACKENDS, join_types: Sequence[str] = OUTER_AND_INNER,
                             min_ops: int = 3, max_ops: int = 12) -> st.SearchStrategy[Scenario]:
    """An event-time `a JOIN b ON a.k = b.k AND a.t BETWEEN b.t + L AND b.t + U` (Flink's RowTimeIntervalJoin),
    INNER/LEFT/RIGHT/FULL, insert-only inputs on one join key, times where the cache's HashMap order, byte order
    and arrival order disagree, several rows at one time; the watermark regime above (INTERVAL_BOUNDS)."""
    backends = check_choices("interval_order_scenarios", "backends", backends)
    join_types = check_choices("interval_order_scenarios", "join_types", join_types, OUTER_AND_INNER)
    record = st.tuples(st.integers(0, 1), st.sampled_from(INTERVAL_TIMES), st.integers(0, 2))

    @st.composite
    def scenarios(draw: st.DrawFn) -> Scenario:
        jtype, backend = _join_type_and_backend(draw, join_types, backends)
        bounds = draw(st.sampled_from(INTERVAL_BOUNDS))
        specs = tuple(InputSpec(name, (("k", "BIGINT"), ("t", "BIGINT"), (value, "BIGINT")), None, "insert_only", "t")
                      for name, value in (("a", "x"), ("b", "y")))
        # the witness: two rows at two times on one side, then a record of the other side that meets both
        side = draw(st.integers(0, 1))
        first, second = draw(st.permutations(WITNESS_TIMES))[:2]
        meeting = next(t for t in WITNESS_TIMES if _meets(side, first, t, bounds) and _meets(side, second, t, bounds))
        drawn = [(side, first, 0), (side, second, 1), (1 - side, meeting, 0)]
        drawn += draw(st.lists(record, min_size=min_ops, max_size=max_ops))
        events: list = [ChangeEvent(specs[s].name, "+I", (1, t, v)) for s, t, v in drawn]
        events += [WatermarkEvent("a", END_OF_INPUT), WatermarkEvent("b", END_OF_INPUT)]
        return Scenario(name=f"interval order {jtype} join, {backend}", inputs=specs,
                        join=JoinSpec(("a", "b"), (jtype,), (CONDITION,),
                                      IntervalSpec("a.t", "b.t", bounds[0], bounds[1], "event")),
                        config=Config(state_backend=backend), events=tuple(events))

    return scenarios()
