"""Fixed witnesses of the documented anomalies: small streams that show each one, checked on every run.

An existential property ("the anomaly is reproduced") must never fail by
chance, so its per-run check is a fixed stream, not a search: the witnesses
below were found by the seeded searches of properties/anomalies.py and shrunk,
then written down. The search itself still runs, once per campaign (see
`PropertySpec.search`), and reports "not found within budget" as a warning.
"""

from __future__ import annotations

from converge.engine.model.scenario import ChangeEvent, Config, InputSpec, JoinSpec, Scenario

_ORDERS = InputSpec("orders", (("order_id", "BIGINT"), ("status", "VARCHAR")), ("order_id",), "retract")
_ITEMS = InputSpec("items", (("order_id", "BIGINT"), ("item_id", "BIGINT"), ("qty", "BIGINT")),
                   ("order_id", "item_id"), "retract")
_PAYMENTS = InputSpec("payments", (("order_id", "BIGINT"), ("amount", "BIGINT")), ("order_id",), "upsert")


def _change(name: str, kind: str, *row: object) -> ChangeEvent:
    return ChangeEvent(name, kind, tuple(row))


def mapstate_order_witness(order: str) -> Scenario:
    """Two items of one order, then the order: rocksdb / hashmap visit the items out of arrival order.

    rocksdb: item 3 arrives before item 1, but (1, 1) serializes before (1, 3); hashmap: item 1 arrives
    before item 2, but the BinaryRowData hash codes of the unique keys put (1, 2) in bucket 5 and (1, 1) in
    bucket 15 of the map's 16."""
    key, first, second = {"rocksdb": (1, (3, 1), (1, 2)), "hashmap": (1, (1, 2), (2, 2))}[order]
    return Scenario(
        f"MapState order witness ({order})", (_ORDERS, _ITEMS),
        JoinSpec(("orders", "items"), ("inner",), ("orders.order_id = items.order_id",)),
        Config(map_state_order=order, semantics="flink"),  # type: ignore[arg-type]
        (_change("items", "+I", key, *first), _change("items", "+I", key, *second),
         _change("orders", "+I", key, "new")))


def lost_key_witness() -> Scenario:
    """A payment updated by a bare +U while the join lost its unique key: the order joins both versions."""
    return Scenario(
        "lost unique key witness", (_ORDERS, _PAYMENTS),
        JoinSpec(("orders", "payments"), ("inner",), ("orders.order_id = payments.order_id",)),
        Config(changelog_normalize=False, semantics="flink", unique_key_lost=("payments",)),
        (_change("payments", "+I", 1, 300), _change("payments", "+U", 1, 5), _change("orders", "+I", 1, "new")))


def flink_40681_witness() -> Scenario:
    """RIGHT join, raw upsert: a's +U replaces its row and counts as a second association, so after a's
    -D the association count stays 1 and b's null-padded row never comes back."""
    cols = (("k", "BIGINT"), ("id", "BIGINT"), ("x", "BIGINT"))
    a = InputSpec("a", cols, ("k",), "upsert")
    b = InputSpec("b", (("k", "BIGINT"), ("id", "BIGINT"), ("y", "BIGINT")), ("k",), "upsert")
    return Scenario(
        "FLINK-40681 witness", (a, b), JoinSpec(("a", "b"), ("right",), ("a.k = b.k",)),
        Config(changelog_normalize=False, semantics="flink"),
        (_change("a", "+I", 0, 0, 0), _change("b", "+I", 0, 0, 0), _change("a", "+U", 0, 0, 0),
         _change("a", "-D", 0, 0, 0)))


def disorder_witness() -> tuple[Scenario, Scenario]:
    """(source, arrived): b's +I and the -U retracting it swapped on the way; the -U finds nothing to
    retract, and the final answer keeps one joined row too many."""
    cols = (("k", "BIGINT"), ("id", "BIGINT"), ("x", "BIGINT"), ("s", "VARCHAR"))
    a = InputSpec("a", cols, None, "insert_only")
    b = InputSpec("b", (("k", "BIGINT"), ("id", "BIGINT"), ("y", "BIGINT"), ("s", "VARCHAR")), None, "retract")
    join = JoinSpec(("a", "b"), ("inner",), ("a.k = b.k",))
    row = (0, 0, 0, "a")
    source = Scenario("per-key disorder witness", (a, b), join, Config(),
                      (_change("b", "+I", *row), _change("b", "-U", *row), _change("b", "+U", *row),
                       _change("a", "+I", *row)))
    arrived = Scenario("per-key disorder witness (events 0 and 1 swapped)", (a, b), join,
                       Config(semantics="flink", per_key_order="disordered"),
                       (source.events[1], source.events[0], *source.events[2:]),
                       meta={"disorder_swapped": [0, 1]})
    return source, arrived
