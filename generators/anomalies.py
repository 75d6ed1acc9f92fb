"""Scenario strategies for the documented join anomalies (the state-views write-up, FLINK-40681) and their fixes.

* `order_item_scenarios`: the state-views write-up's one-to-many case, orders keyed by order
  id (JoinKeyContainsUniqueKey) joined with items keyed by (order id, item id)
  (InputSideHasUniqueKey), or items without a unique key.
* `lost_key_scenarios`: an upsert input whose unique key the join does not
  know (`config.unique_key_lost`), reaching the join without a normalize step,
  so an update leaves two versions in InputSideHasNoUniqueKey state.
* `dedupe_scenarios`: any regular join with `config.dedupe_before_join` on
  some inputs (the ROW_NUMBER() ... = 1 fix).
* `replacing_scenarios`: unique-key inputs that replace a row without
  retracting it first (a bare +U, or a duplicate +I), on raw upsert, retract
  and insert-only inputs: what FLINK-40681 is about.

All streams are built by construction, so shrunk examples stay valid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from hypothesis import strategies as st

from converge.engine.model.scenario import ChangeEvent, Config, Event, InputSpec, JoinSpec, Scenario
from converge.generators.changelog import DELETE, INSERT, UPDATE
from converge.generators.scenarios import regular_join_scenarios

ORDERS = InputSpec("orders", (("order_id", "BIGINT"), ("status", "VARCHAR")), ("order_id",), "retract")
ITEMS = InputSpec("items", (("order_id", "BIGINT"), ("item_id", "BIGINT"), ("qty", "BIGINT")),
                  ("order_id", "item_id"), "retract")
PAYMENTS = InputSpec("payments", (("order_id", "BIGINT"), ("amount", "BIGINT")), ("order_id",), "upsert")
ORDER_KEY = "orders.order_id = {other}.order_id"
ORDER_STATES = ("rocksdb", "hashmap", "arrival")
ORDER_IDS = (1, 2)
ITEM_IDS = (3, 1, 256, 2)        # 256 serializes as 00 01 .. and sorts before 1 (01 00 ..) in RocksDB
STATUSES = ("new", "paid", "sent")
AMOUNTS = (300, 5, 120)
ADD, CHANGE, REMOVE, ORDER_ADD, ORDER_CHANGE, ORDER_REMOVE = range(6)
# one draw per operation (generation speed is the search's budget); shrinks towards ADD with 0s
_op = st.integers(0, 6 * 8 * 8 - 1).map(lambda n: (n // 64, n // 8 % 8, n % 8))


def build_order_events(ops: Sequence[tuple[int, int, int]], items: InputSpec) -> list[Event]:
    """Interpret (action, pick, value) on an orders table and an items (or payments) table.

    ADD sends a new item (+I; on an upsert input a +U when the key is taken:
    an upsert stream has no -U), CHANGE a proper -U/+U (upsert: a bare +U),
    REMOVE a -D with the full image; ORDER_* do the same on orders. A new row
    takes the first free key from the drawn values on.
    """
    upsert = items.changelog_mode == "upsert"
    uk = [items.index_of(c) for c in items.unique_key] if items.unique_key and not upsert else None
    orders: dict[int, tuple] = {}
    rows: list[tuple] = []
    events: list[Event] = []

    def item_row(pick: int, value: int, shift: int = 0) -> tuple:
        if len(items.columns) == 2:  # payments(order_id, amount)
            return (ORDER_IDS[pick % 2], AMOUNTS[value % 3])
        return (ORDER_IDS[pick % 2], ITEM_IDS[(value + shift) % 4], 1 + (pick + shift) % 2)

    for action, pick, value in ops:
        if action in (CHANGE, REMOVE) and not rows:
            action = ADD
        if action >= ORDER_ADD:
            oid = ORDER_IDS[pick % 2]
            old = orders.get(oid)
            if action == ORDER_ADD or old is None:
                if old is None:
                    orders[oid] = (oid, STATUSES[value % 3])
                    events.append(ChangeEvent("orders", "+I", orders[oid]))
                    continue
                action = ORDER_CHANGE
            if action == ORDER_CHANGE:
                new = (oid, STATUSES[(STATUSES.index(old[1]) + 1 + value % 2) % 3])
                orders[oid] = new
                events += [ChangeEvent("orders", "-U", old), ChangeEvent("orders", "+U", new)]
            else:
                del orders[oid]
                events.append(ChangeEvent("orders", "-D", old))
            continue
        if action == ADD:
            row = item_row(pick, value)
            if upsert:
                taken = [i for i, r in enumerate(rows) if r[0] == row[0]]
                if taken:
                    rows[taken[0]] = row
                    events.append(ChangeEvent(items.name, "+U", row))
                    continue
            elif uk:
                keys = {tuple(r[i] for i in uk) for r in rows}
                for shift in range(4):
                    row = item_row(pick, value, shift)
                    if tuple(row[i] for i in uk) not in keys:
                        break
                else:
                    continue
            rows.append(row)
            events.append(ChangeEvent(items.name, "+I", row))
            continue
        idx = pick % len(rows)
        old = rows[idx]
        if action == CHANGE:
            new = old[:-1] + ((AMOUNTS[(AMOUNTS.index(old[-1]) + 1 + value % 2) % 3],) if len(old) == 2
                              else (old[-1] % 2 + 1,))
            rows[idx] = new
            events += ([] if upsert else [ChangeEvent(items.name, "-U", old)]) + [ChangeEvent(items.name, "+U", new)]
        else:
            rows.pop(idx)
            events.append(ChangeEvent(items.name, "-D", old))
    return events


def order_item_scenarios(*, map_state_orders: Sequence[str] = ORDER_STATES, items_unique_key: bool = True,
                         join_types: Sequence[str] = ("inner", "left"), max_ops: int = 12
                         ) -> st.SearchStrategy[Scenario]:
    """orders JOIN items ON order_id: an order change re-emits every item of the order."""
    items = ITEMS if items_unique_key else replace(ITEMS, unique_key=None)
    ops_st = st.lists(_op, min_size=1, max_size=max_ops)
    orders_st = st.sampled_from(tuple(map_state_orders))
    jtypes = st.sampled_from(tuple(join_types))

    @st.composite
    def scenarios(draw: st.DrawFn) -> Scenario:
        events = build_order_events(draw(ops_st), items)
        return Scenario("orders join items", (ORDERS, items),
                        JoinSpec(("orders", "items"), (draw(jtypes),), (ORDER_KEY.format(other="items"),)),
                        Config(map_state_order=draw(orders_st), semantics="flink"), tuple(events))

    return scenarios()


def lost_key_scenarios(*, dedupe: bool = False, map_state_orders: Sequence[str] = ORDER_STATES,
                       max_ops: int = 12) -> st.SearchStrategy[Scenario]:
    """orders JOIN payments, one payment per order, payments an upsert stream whose unique key the
    join does not know; with `dedupe`, a dedupe on order_id restores it."""
    ops_st = st.lists(_op, min_size=1, max_size=max_ops)
    orders_st = st.sampled_from(tuple(map_state_orders))
    jtypes = st.sampled_from(("inner", "left"))
    dedupe_before_join = {"payments": None} if dedupe else {}

    @st.composite
    def scenarios(draw: st.DrawFn) -> Scenario:
        events = build_order_events(draw(ops_st), PAYMENTS)
        config = Config(map_state_order=draw(orders_st), changelog_normalize=False, semantics="flink",
                        unique_key_lost=("payments",), dedupe_before_join=dedupe_before_join)
        return Scenario("orders join payments (unique key lost)", (ORDERS, PAYMENTS),
                        JoinSpec(("orders", "payments"), (draw(jtypes),), (ORDER_KEY.format(other="payments"),)),
                        config, tuple(events))

    return scenarios()


def dedupe_scenarios(*, max_ops: int = 20) -> st.SearchStrategy[Scenario]:
    """Regular joins with a dedupe in front of one or both inputs, keyed by the unique key (or by `id`
    on inputs without one), with raw upsert inputs and lost unique keys behind the dedupe."""
    base = regular_join_scenarios(join_types=("inner", "left", "right", "full", "semi", "anti"), max_ops=max_ops)
    which = st.sampled_from(((True, False), (False, True), (True, True)))
    flags = st.tuples(st.booleans(), st.booleans(), st.sampled_from(("correct", "flink")))

    @st.composite
    def scenarios(draw: st.DrawFn) -> Scenario:
        s = draw(base)
        chosen = draw(which)
        normalize, lose, semantics = draw(flags)
        dedupe: dict[str, tuple[str, ...]] = {}
        lost: list[str] = []
        for spec, on in zip(s.inputs, chosen, strict=False):
            # a raw upsert or `all` input (bare +U) without a dedupe is FLINK-40681's territory
            raw_upsert = spec.changelog_mode == "all" or (spec.changelog_mode == "upsert" and not normalize)
            if on or raw_upsert:
                dedupe[spec.name] = tuple(spec.unique_key or ("id",))
                if lose and spec.unique_key:
                    lost.append(spec.name)
        config = replace(s.config, changelog_normalize=normalize, semantics=semantics, dedupe_before_join=dedupe,
                         unique_key_lost=tuple(lost))
        return replace(s, name=s.name + " (dedupe before join)", config=config)

    return scenarios()


# ---------------------------------------------------------------- replacing streams (FLINK-40681)

UK_SHAPES = ("join_key", "own", "none")
REPLACE = 4
_VALUES = (0, 1, 2, None)


def _replacing_spec(name: str, value: str, shape: str, mode: str) -> InputSpec:
    uk = {"join_key": ("k",), "own": ("id",), "none": None}[shape]
    if uk is None:
        mode = "retract"
    return InputSpec(name, (("k", "BIGINT"), ("id", "BIGINT"), (value, "BIGINT")), uk, mode)  # type: ignore[arg-type]


def build_replacing_events(specs: Sequence[InputSpec], ops: Sequence[tuple[int, int, int, int, bool]]) -> list[Event]:
    """Interpret (input, action, pick, value, flag) against model tables keyed by each unique key.

    REPLACE sends a new version of a stored row without retracting the old one
    (a bare +U, or a duplicate +I when `flag`; insert-only inputs always +I),
    keeping its join key: the operator sees one join key at a time, so only
    there can it tell that a row was replaced. UPDATE is a proper -U/+U on
    retract inputs (it may move the row to another join key). DELETE sends the
    full image, or on an upsert input keyed by the join key, with `flag`, the key only.
    """
    tables: list[list[tuple]] = [[] for _ in specs]
    events: list[Event] = []
    for input_i, action, pick, value, flag in ops:
        spec = specs[input_i % len(specs)]
        rows = tables[input_i % len(specs)]
        uk = [spec.index_of(c) for c in spec.unique_key] if spec.unique_key else None
        if not rows or (action == DELETE and spec.changelog_mode == "insert_only"):
            action = INSERT
        if action == UPDATE and (uk is None or spec.changelog_mode != "retract"):
            action = REPLACE if uk is not None else UPDATE
        if action == REPLACE and uk is None:
            action = UPDATE
        if action == INSERT:
            taken = {tuple(r[i] for i in uk) for r in rows} if uk else set()
            for shift in range(8):  # the first free unique key from the drawn values on
                k, ident = (pick + shift) % 2, (value + shift // 2) % 4
                row = (k, ident, _VALUES[(value + pick) % 4])
                if not uk or tuple(row[i] for i in uk) not in taken:
                    break
            else:
                continue
            rows.append(row)
            events.append(ChangeEvent(spec.name, "+I", row))
            continue
        idx = pick % len(rows)
        old = rows[idx]
        if action == REPLACE:
            new = (old[0], old[1], _VALUES[value % 4])
            rows[idx] = new
            kind = "+I" if flag or spec.changelog_mode == "insert_only" else "+U"
            events.append(ChangeEvent(spec.name, kind, new))
        elif action == UPDATE:
            new = list(old)
            new[2] = _VALUES[value % 4]
            if uk is None or spec.unique_key == ("id",):
                new[0] = pick % 2
            rows[idx] = tuple(new)
            events += [ChangeEvent(spec.name, "-U", old), ChangeEvent(spec.name, "+U", tuple(new))]
        else:
            rows.pop(idx)
            key_only = flag and spec.changelog_mode == "upsert" and spec.unique_key == ("k",)
            events.append(ChangeEvent(spec.name, "-D", (old[0], None, None) if key_only else old))
    return events


def replacing_scenarios(*, semantics: str, join_types: Sequence[str] = ("inner", "left", "right", "full"),
                        residuals: Sequence[str | None] = (None, "a.x > b.y", "a.x <> b.y"),
                        shapes: Sequence[str] = UK_SHAPES, modes: Sequence[str] = ("upsert", "retract", "insert_only"),
                        max_ops: int = 16) -> st.SearchStrategy[Scenario]:
    """Binary joins on k over unique-key inputs that replace rows without retracting them first."""
    shape_st = st.sampled_from(tuple(shapes))
    mode_st = st.sampled_from(tuple(modes))
    residual_st = st.sampled_from(tuple(residuals))
    # one draw per operation: input, action (INSERT first, so ops shrink to inserts), pick, value, flag
    actions = (INSERT, REPLACE, DELETE, UPDATE)
    one_op = st.integers(0, 2 * 4 * 8 * 8 * 2 - 1).map(
        lambda n: (n % 2, actions[n // 2 % 4], n // 8 % 8, n // 64 % 8, bool(n // 512)))
    ops_st = st.lists(one_op, min_size=1, max_size=max_ops)
    orders_st = st.sampled_from(ORDER_STATES)
    jtypes = st.sampled_from(tuple(join_types))

    @st.composite
    def scenarios(draw: st.DrawFn) -> Scenario:
        shape_a, shape_b = draw(shape_st), draw(shape_st)
        if shape_a == shape_b == "none":
            shape_b = "join_key"
        specs = (_replacing_spec("a", "x", shape_a, draw(mode_st)), _replacing_spec("b", "y", shape_b, draw(mode_st)))
        residual = draw(residual_st)
        cond = "a.k = b.k" + (f" AND ({residual})" if residual else "")
        events = build_replacing_events(specs, draw(ops_st))
        config = Config(map_state_order=draw(orders_st), changelog_normalize=False,  # type: ignore[arg-type]
                        semantics=semantics)  # type: ignore[arg-type]
        return Scenario(f"replacing rows ({semantics})", specs, JoinSpec(("a", "b"), (draw(jtypes),), (cond,)),
                        config, tuple(events))

    return scenarios()


def as_upsert_tables(scenario: Scenario, keys: dict[str, Sequence[str]] | None = None) -> Scenario:
    """The batch reading of a scenario whose keyed inputs keep the last row per key: those inputs
    become upsert inputs on that key (`keys`, by default every declared unique key)."""
    if keys is None:
        keys = {s.name: s.unique_key for s in scenario.inputs if s.unique_key}
    inputs = tuple(replace(s, unique_key=tuple(keys[s.name]), changelog_mode="upsert") if s.name in keys else s
                   for s in scenario.inputs)
    return replace(scenario, inputs=inputs, config=replace(scenario.config, dedupe_before_join={}, unique_key_lost=(),
                                                                 per_key_order="kept"))
