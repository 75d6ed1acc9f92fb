"""The properties' own reference model (properties/reference.py) against the facts, never against the engine."""

from __future__ import annotations

from converge.engine.model.scenario import ChangeEvent, InputSpec, JoinSpec, Scenario
from converge.properties.reference import (
    JavaHashMap,
    PairMatcher,
    binary_row_key,
    equality_keys,
    interval_cache_key,
    java_long_hash,
    view_kind,
)


def _rocksdb(values: list, ctype: str) -> list:
    return sorted(values, key=lambda v: binary_row_key([v], [ctype]))


def test_longs_iterate_in_the_order_measured_on_rocksdb() -> None:
    # Measured (tests/engine/test_state.py's source): Spark's RocksDB MapState iterated UnsafeRow longs inserted as
    # 3, 1, 256, 2, -1, 1000, 65536, 0, -256 in the order 0, 65536, 256, -256, 1, 2, 3, 1000, -1.
    assert _rocksdb([3, 1, 256, 2, -1, 1000, 65536, 0, -256], "BIGINT") == [0, 65536, 256, -256, 1, 2, 3, 1000, -1]


def test_short_strings_sort_by_their_bytes_before_long_ones() -> None:
    assert _rocksdb(["b", "aa", "zzzzzzzzz", "a", "ab", ""], "VARCHAR") == ["", "a", "aa", "ab", "b", "zzzzzzzzz"]


def test_a_null_sorts_by_its_null_bit() -> None:
    assert _rocksdb([None, 5, 0], "BIGINT") == [0, 5, None]


def test_binary_row_layout_of_flinks_serializer() -> None:
    # BinaryRowData: 8-byte header (null bits from bit 8), one 8-byte slot per field, variable part in words.
    row = binary_row_key((1, None, "abc"), ("BIGINT", "BIGINT", "VARCHAR"))
    assert row[:4] == (32).to_bytes(4, "big")
    assert row[4:12] == bytes([0, 0b10, 0, 0, 0, 0, 0, 0])
    assert row[12:20] == bytes([1, 0, 0, 0, 0, 0, 0, 0]) and row[20:28] == bytes(8)
    assert row[28:36] == b"abc\0\0\0\0\x83"
    long_text = binary_row_key(("abcdefghij",), ("VARCHAR",))
    assert long_text[:4] == (8 + 8 + 16).to_bytes(4, "big")
    assert long_text[12:20] == ((16 << 32) | 10).to_bytes(8, "little")
    assert long_text[20:] == b"abcdefghij" + bytes(6)
    assert binary_row_key((7,), ("INTEGER",))[12:20] == bytes([7, 0, 0, 0, 0, 0, 0, 0])
    assert binary_row_key((True,), ("BOOLEAN",))[12:20] == bytes([1]) + bytes(7)


def test_java_hashmap_of_longs_iterates_as_java_does() -> None:
    # Java facts: Long.hashCode(v) is v for 0 <= v < 2^31, so small keys land in bucket v mod the table size;
    # 16 and 0 share bucket 0 of the first table (insertion order), and part when 13 keys grow it to 32
    m = JavaHashMap(java_long_hash)
    for k in (16, 0, 5, 3):
        m.put(k)
    assert list(m) == [16, 0, 3, 5]
    for k in (1, 2, 4, 6, 7, 8, 9, 10):
        m.put(k)
    assert m.size == 12 and list(m)[:2] == [16, 0]
    m.put(11)
    assert list(m) == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 16]
    for k in range(12):
        m.remove(k)
    m.put(48)   # 48 = 16 mod 32: behind 16 in bucket 16 of the table that did not shrink
    assert list(m) == [16, 48]
    assert [java_long_hash(v) for v in (-1, 2**32, 2**32 + 3)] == [0, 1, 2]


def test_interval_cache_keys_sort_as_java_longs_in_rocksdb() -> None:
    times = [5, -1, 0, 2**63 - 1, -(2**63)]
    ordered = sorted(times, key=lambda t: interval_cache_key(t))
    assert ordered == [0, 5, 2**63 - 1, -(2**63), -1]  # big-endian bytes of the two's complement


def test_equality_keys_are_the_top_level_equality_conjuncts() -> None:
    assert equality_keys("a.k = b.k AND (a.x = b.y)", ["a"], "b") == [("a", "k", "k", False), ("a", "x", "y", False)]
    assert equality_keys("b.k IS NOT DISTINCT FROM a.k", ["a"], "b") == [("a", "k", "k", True)]
    assert equality_keys("a.k = b.k AND (a.s = b.s OR a.x IS NOT DISTINCT FROM b.y)", ["a"], "b") == \
        [("a", "k", "k", False)]
    assert equality_keys("a.k = b.k AND (a.x BETWEEN b.y AND b.y + 1)", ["a"], "b") == [("a", "k", "k", False)]
    assert equality_keys("a.x + 1 = b.y", ["a"], "b") == []


def test_view_kinds() -> None:
    cols = (("k", "BIGINT"), ("id", "BIGINT"))
    assert view_kind(InputSpec("a", cols), ["k"]) == "InputSideHasNoUniqueKey"
    assert view_kind(InputSpec("a", cols, ("k",)), ["k", "id"]) == "JoinKeyContainsUniqueKey"
    assert view_kind(InputSpec("a", cols, ("id",)), ["k"]) == "InputSideHasUniqueKey"


def test_pair_matcher_uses_sql_three_valued_logic() -> None:
    a = InputSpec("a", (("k", "BIGINT"), ("x", "BIGINT")))
    b = InputSpec("b", (("k", "BIGINT"), ("y", "BIGINT")))
    rows_a = [(1, 1), (1, None), (None, 2)]
    rows_b = [(1, 0), (None, 5)]
    events = tuple(ChangeEvent("a", "+I", r) for r in rows_a) + tuple(ChangeEvent("b", "+I", r) for r in rows_b)
    s = Scenario("m", (a, b), JoinSpec(("a", "b"), ("left",), ("a.k = b.k AND (a.x > b.y)",)), events=events)
    m = PairMatcher(s)
    assert m.matches((1, 1), (1, 0))
    assert not m.matches((1, None), (1, 0))      # NULL > 0 is unknown: no match
    assert not m.matches((None, 2), (None, 5))   # NULL = NULL is unknown
    ns = Scenario("n", (a, b), JoinSpec(("a", "b"), ("inner",), ("a.k IS NOT DISTINCT FROM b.k",)), events=events)
    assert PairMatcher(ns).matches((None, 2), (None, 5))
