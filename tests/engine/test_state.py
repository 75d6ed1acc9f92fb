"""Keyed state: TTL boundaries, explicit MapState iteration order, snapshot / restore."""

from __future__ import annotations

import pytest

from converge.engine.keycodec import encode_binary_row
from converge.engine.state import KeyedStateBackend


def _map_keys(order: str, keys: list, types=("BIGINT",)) -> list:
    b = KeyedStateBackend(order)  # type: ignore[arg-type]
    b.current_key = ("k",)
    m = b.map_state("m", list(types))
    for k in keys:
        m.put((k,), 1)
    return [k[0] for k in m]


def test_rocksdb_order_of_longs_is_little_endian_byte_order() -> None:
    # The order Spark's RocksDB MapState gave for UnsafeRow longs on this kind of machine (PySpark 4.3):
    # 0, 65536, 256, -256, 1, 2, 3, 1000, -1 for the insertion order 3, 1, 256, 2, -1, 1000, 65536, 0, -256.
    assert _map_keys("rocksdb", [3, 1, 256, 2, -1, 1000, 65536, 0, -256]) == [0, 65536, 256, -256, 1, 2, 3, 1000, -1]


def test_rocksdb_order_of_strings_short_inline_before_long() -> None:
    # Strings of up to 7 bytes live in the fixed slot (same row size), so they sort by their bytes;
    # longer strings make a longer row, and the big-endian length prefix puts them after all short ones.
    got = _map_keys("rocksdb", ["b", "aa", "zzzzzzzzz", "a", "ab", ""], types=("VARCHAR",))
    assert got == ["", "a", "aa", "ab", "b", "zzzzzzzzz"]


def test_null_sorts_by_its_null_bit() -> None:
    got = _map_keys("rocksdb", [None, 5, 0], types=("BIGINT",))
    assert got == [0, 5, None]


def test_binary_row_layout() -> None:
    row = encode_binary_row((1, None, "abc"), ("BIGINT", "BIGINT", "VARCHAR"))
    assert row[:4] == (8 + 3 * 8).to_bytes(4, "big")
    header = row[4:12]
    assert header[1] == 0b10  # field 1 is null: bit 9 of the header
    assert row[12:20] == (1).to_bytes(8, "little")
    assert row[28:36] == b"abc\x00\x00\x00\x00" + bytes([0x83])


def test_arrival_order_is_insertion_and_rewrites_move_to_the_end() -> None:
    b = KeyedStateBackend("arrival")
    b.current_key = (1,)
    m = b.map_state("m", ["BIGINT"])
    for k in (3, 1, 2):
        m.put((k,), "v")
    m.put((3,), "w")
    m.put((1,), "count update", new_arrival=False)
    assert [k[0] for k in m] == [1, 2, 3]


def test_hashmap_order_is_neither_insertion_nor_sorted_order() -> None:
    # the exact order is checked against Java's rules in tests/engine/test_javahash.py
    keys = list(range(12))
    a = _map_keys("hashmap", keys)
    assert sorted(a) == keys and a != keys
    assert a != list(reversed(keys))


def test_value_state_ttl_boundary() -> None:
    b = KeyedStateBackend()
    b.current_key = (1,)
    v = b.value_state("v", ttl_ms=10)
    b.now = 5
    v.update("x")
    b.now = 14
    assert v.get() == "x"
    b.now = 15
    assert v.get() is None


def test_map_state_ttl_is_per_entry_and_reads_do_not_refresh() -> None:
    b = KeyedStateBackend()
    b.current_key = (1,)
    m = b.map_state("m", ["BIGINT"], ttl_ms=10)
    b.now = 0
    m.put((1,), "a")
    b.now = 6
    m.put((2,), "b")
    b.now = 9
    assert m.get((1,)) == "a"
    b.now = 10
    assert [k[0] for k in m] == [2]
    b.now = 16
    assert m.is_empty()


def test_state_is_scoped_to_the_current_key() -> None:
    b = KeyedStateBackend()
    v = b.value_state("v")
    b.current_key = (1,)
    v.update("one")
    b.current_key = (2,)
    assert v.get() is None


def test_snapshot_restore_round_trip() -> None:
    b = KeyedStateBackend("arrival")
    b.current_key = (1,)
    m = b.map_state("m", ["BIGINT"], ttl_ms=100)
    v = b.value_state("v")
    m.put((1,), "a")
    v.update("x")
    snap = b.snapshot()
    m.put((2,), "b")
    v.clear()
    b.restore(snap)
    assert [k[0] for k in m] == [1] and v.get() == "x"
    m.put((3,), "c")  # arrival stamps continue after the restored counter
    assert [k[0] for k in m] == [1, 3]


@pytest.mark.parametrize("order", ["rocksdb", "hashmap", "arrival"])
def test_iteration_never_follows_dict_order_by_accident(order: str) -> None:
    got = _map_keys(order, [256, 1])
    if order == "rocksdb":
        assert got == [256, 1]  # little-endian bytes: 00 01 .. < 01 00 ..
    elif order == "arrival":
        assert got == [256, 1]
    else:
        assert sorted(got) == [1, 256]
