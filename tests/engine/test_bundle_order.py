"""Flink's order inside a mini-batch bundle: java.util.HashMap by hand, then the join's outputs in that order.

Every expected order is worked out here from the JDK's rules (engine/java_hashmap.py's docstring), not by
calling the engine's own walk: Integer keys hash to themselves; a binary key's hashCode is given as a
literal (BinaryRowData.hashCode, the function checked against Flink 2.3.0's own values in
tests/properties/systems/test_map_order.py) and its bucket is worked out beside it, (h ^ h >>> 16) & (n - 1):

    key row (BIGINT)   hashCode      bucket of 16   of 32
    (0,)               -300363099    13             29
    (1,)               1465514398     7              7
    (2,)               1340390384     4             20
    (3,)               -771300025     1              1
    (4,)               1447522506    13             13

    row (BIGINT, BIGINT)  hashCode     bucket of 16
    (1, 10)               -1688960984  12
    (1, 11)               704573115     5
    (1, 12)               1447285829    6
"""

from __future__ import annotations

import pytest

from converge.engine.java_hashmap import JavaHashMap, bucket, java_row_hash
from converge.engine.model.changelog import Change
from converge.engine.model.errors import InternalError
from converge.engine.model.scenario import ChangeEvent, Config, InputSpec, JoinSpec, Scenario
from converge.engine.runtime.local import run_scenario


def ints(order: list[int], *, capacity: int | None = None, put: bool = False) -> JavaHashMap:
    m = JavaHashMap(capacity)
    for k in order:
        (m.put if put else m.compute_if_absent)(k, k)
    return m


def test_compute_if_absent_puts_a_new_key_at_the_head_of_its_bucket_and_put_at_the_tail() -> None:
    # 1 and 17 share bucket 1 of 16; 2 is in bucket 2
    assert list(ints([1, 17, 2])) == [17, 1, 2]
    assert list(ints([1, 17, 2], put=True)) == [1, 17, 2]


def test_a_hash_above_16_bits_is_spread() -> None:
    assert bucket(65536, 16) == 1            # 65536 ^ (65536 >>> 16) = 65537
    assert bucket(-1, 16) == 0               # 0xFFFFFFFF ^ 0x0000FFFF = 0xFFFF0000
    assert list(ints([1, 65536])) == [65536, 1]


def test_compute_if_absent_resizes_at_its_next_call_and_a_resize_keeps_a_buckets_order() -> None:
    m = ints([0, 16, *range(1, 12)])        # 13 keys: over 3/4 of 16, not yet resized
    assert m.capacity == 16 and list(m) == [16, 0, *range(1, 12)]
    assert not m.compute_if_absent(5, 5)     # an existing key: the call still resizes first
    assert m.capacity == 32 and list(m) == [0, *range(1, 12), 16]
    m = ints([0, 32, 16])                    # one bucket of 16: [16, 32, 0]; of 32: 0 keeps [32, 0]
    assert list(m) == [16, 32, 0]


def test_put_resizes_right_after_the_insert_that_passes_three_quarters() -> None:
    m = ints([16, *range(1, 12), 0], put=True)
    assert m.capacity == 32 and list(m) == [0, *range(1, 12), 16]


def test_clear_and_remove_keep_the_table() -> None:
    m = ints([0, 16, *range(1, 12)])
    m.compute_if_absent(5, 5)                # grown to 32
    m.clear()
    assert m.capacity == 32 and list(m) == []
    m.compute_if_absent(16, 16)
    m.compute_if_absent(0, 0)
    assert list(m) == [0, 16]                # buckets 0 and 16 of 32 (in 16 they would share bucket 0: [0, 16])
    m = ints([1, 17, 33])
    m.remove(17, 17)
    assert list(m) == [33, 1] and len(m) == 2


def test_a_ninth_key_in_a_bucket_doubles_a_small_table_and_a_big_one_is_refused() -> None:
    # 0, 16, .., 112 all in bucket 0 of 16; the 8th (112) meets 7 already there: treeifyBin resizes to 32
    m = ints([16 * i for i in range(8)])
    assert m.capacity == 32
    assert list(m) == [96, 64, 32, 0, 112, 80, 48, 16]   # the chain [112, 96, .., 0] split, order kept
    big = ints([64 * i for i in range(8)][:7], capacity=64)
    with pytest.raises(InternalError, match="tree"):
        big.compute_if_absent(64 * 7, 64 * 7)


def test_the_hash_literals_above_are_the_key_rows_hashes() -> None:
    assert [java_row_hash((k,), ("BIGINT",)) for k in range(5)] == [
        -300363099, 1465514398, 1340390384, -771300025, 1447522506]
    assert [java_row_hash((1, v), ("BIGINT", "BIGINT")) for v in (10, 11, 12)] == [-1688960984, 704573115,
                                                                                    1447285829]


# ---------------------------------------------------------------- the mini-batch join's outputs


def _run(a: InputSpec, b: InputSpec, jtype: str, size: int, events: list[tuple[str, str, tuple]]) -> list[list]:
    s = Scenario("t", (a, b), JoinSpec(("a", "b"), (jtype,), ("a.k = b.k",)), Config(mini_batch_size=size),
                 tuple(ChangeEvent(i, k, r) for i, k, r in events))
    return [[(c.kind, *c.row) for c in items if isinstance(c, Change)] for items in run_scenario(s).per_event]


KEYLESS = InputSpec("a", (("k", "BIGINT"), ("v", "BIGINT")), None, "insert_only")
KEYED = InputSpec("a", (("k", "BIGINT"), ("v", "BIGINT")), ("k",), "retract")            # uk inside the join key
KEYED_ID = InputSpec("a", (("k", "BIGINT"), ("id", "BIGINT")), ("id",), "retract")      # uk beside it
B = InputSpec("b", (("k", "BIGINT"), ("w", "BIGINT")), None, "insert_only")


def test_join_keys_come_in_bucket_order_not_arrival_order() -> None:
    # bundle 2 holds a's rows of keys 1, 2, 3 (buckets 7, 4, 1): joined as 3, 2, 1
    b_rows = [("b", "+I", (k, 10 * k)) for k in (1, 2, 3)]
    a_rows = [("a", "+I", (k, 100 * k)) for k in (1, 2, 3)]
    out = _run(KEYLESS, B, "inner", 3, b_rows + a_rows)
    assert out[5] == [("+I", 3, 300, 3, 30), ("+I", 2, 200, 2, 20), ("+I", 1, 100, 1, 10)]


def test_two_keys_of_one_bucket_come_out_reversed_and_a_keyless_input_reverses_them_again() -> None:
    # (0,) and (4,) share bucket 13. JoinKeyContainsUniqueKeyBundle walks `bundle` itself: computeIfAbsent put
    # 4 at the head, so 4 then 0. InputSideHasNoUniqueKeyBundle.getRecords copies the keys, in that order, into
    # a new HashMap, whose computeIfAbsent reverses them again: 0 then 4.
    b_rows = [("b", "+I", (0, 1)), ("b", "+I", (4, 2))]
    a_rows = [("a", "+I", (0, 7)), ("a", "+I", (4, 8))]
    keyed = _run(KEYED, B, "inner", 2, b_rows + a_rows)
    keyless = _run(KEYLESS, B, "inner", 2, b_rows + a_rows)
    assert keyed[3] == [("+I", 4, 8, 4, 2), ("+I", 0, 7, 0, 1)]
    assert keyless[3] == [("+I", 0, 7, 0, 1), ("+I", 4, 8, 4, 2)]


def test_unique_keys_under_one_join_key_come_in_their_inner_maps_order() -> None:
    # a's unique key id is not in the join key: one inner HashMap for key 1, ids 1, 2, 3 in buckets 7, 4, 1
    rows = [("b", "+I", (1, 5))] + [("a", "+I", (1, i)) for i in (1, 2, 3)]
    out = _run(KEYED_ID, B, "inner", 4, rows)
    assert out[3] == [("+I", 1, 3, 1, 5), ("+I", 1, 2, 1, 5), ("+I", 1, 1, 1, 5)]


def test_a_keyless_inputs_rows_of_one_key_come_in_the_order_of_their_row_hashes() -> None:
    # rows (1, 10), (1, 11), (1, 12): buckets 12, 5, 6 of the inner Integer-keyed map: 11, 12, 10
    rows = [("b", "+I", (1, 5))] + [("a", "+I", (1, v)) for v in (10, 11, 12)]
    out = _run(KEYLESS, B, "inner", 4, rows)
    assert out[3] == [("+I", 1, 11, 1, 5), ("+I", 1, 12, 1, 5), ("+I", 1, 10, 1, 5)]


def test_the_bundles_table_keeps_the_size_it_grew_to() -> None:
    # bundle 1: 13 keys of a (100..112) grow a's bundle map to 32 buckets (13 > 12: the 13th record's second
    # computeIfAbsent resizes); clear() keeps them. Bundle 2 (the end of input): keys 1 and 2, in 32 buckets 7
    # and 20, so 1 then 2; a fresh map (16 buckets: 7 and 4) gives 2 then 1.
    flip = [("a", "+I", (k, 1)) for k in (1, 2)]
    grown = _run(KEYED, B, "left", 13, [("a", "+I", (k, 0)) for k in range(100, 113)] + flip)
    fresh = _run(KEYED, B, "left", 13, flip)
    assert grown[-1] == [("+I", 1, 1, None, None), ("+I", 2, 1, None, None)]
    assert fresh[-1] == [("+I", 2, 1, None, None), ("+I", 1, 1, None, None)]
