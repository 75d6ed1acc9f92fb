"""The multi-way join's state order on each backend, as Flink 2.3.0's StreamingMultiJoinOperator keeps it.

Flink 2.1 to 2.3 (MultiJoinStateViews, read from the released flink-table-runtime jars) keep one flat MapState
per input and partition key; an input d >= 1 keys it by the row (its join key, its unique key or record).
The hash codes below are Flink's own: BinaryRowData.hashCode of `RowDataSerializer(ROW<ROW<INT, BIGINT>,
ROW<INT, BIGINT>>).toBinaryRow(key, true)`, as MultiJoinStateViews.getStateKey builds the key on the heap
backend, printed by a Java program against Flink 2.3.0's jars. The expected orders are worked out by hand
from them: java.util.HashMap's bucket `(h ^ h >>> 16) & 15` (a map of four keys has 16 buckets), buckets in
index order; RocksDB's order is the byte order of the serialized key, whose nested (join key, unique key)
rows differ only in the unique key's 8-byte little-endian slot.
"""

from __future__ import annotations

import pytest

from converge.engine.java_hashmap import as_java_int, row_of_rows_hash
from converge.engine.keycodec import encode_row_of_rows
from converge.engine.model.scenario import ChangeEvent, Config, InputSpec, JoinSpec, MapStateOrder, Scenario
from converge.engine.runtime.local import run_scenario

INT_BIGINT = ("INTEGER", "BIGINT")
RECORD = ("INTEGER", "BIGINT", "BIGINT", "BIGINT", "VARCHAR")


@pytest.mark.parametrize(("key", "stored", "types", "java"), [
    ((7, 1), (7, 1), INT_BIGINT, 625091749),
    ((7, 1), (7, 256), INT_BIGINT, 821318449),
    ((7, 1), (7, 2), INT_BIGINT, -388722390),
    ((7, 1), (7, -1), INT_BIGINT, -1513714598),
    ((7, 1), (0, 65536), INT_BIGINT, 1691493530),
    ((3, 1), (3, 1, 2, 1, "a"), RECORD, 773580519),
    ((3, 1), (3, 1, 256, 1, "eight888"), RECORD, -1820880192),   # 8 bytes: the nested row's variable part
])
def test_the_row_of_rows_hash_is_flinks(key: tuple, stored: tuple, types: tuple, java: int) -> None:
    assert as_java_int(row_of_rows_hash([(key, INT_BIGINT), (stored, types)])) == java


def test_a_nested_row_is_a_variable_length_field() -> None:
    """Flink's bytes of ((7, 1), (7, 256)): header, two slots of offset << 32 | size, then both rows."""
    row = "0700000000000000"
    expected = ("0000000000000000" "1800000018000000" "1800000030000000"
                "0000000000000000" + row + "0100000000000000"
                "0000000000000000" + row + "0001000000000000")
    assert encode_row_of_rows([((7, 1), INT_BIGINT), ((7, 256), INT_BIGINT)]) == (
        (len(expected) // 2).to_bytes(4, "big") + bytes.fromhex(expected))


def _chain(order: MapStateOrder) -> Scenario:
    """b holds ids 1, 256, 2, -1 under one join key; then a c row; then an `a` row meets every b row."""
    cols = (("k", "BIGINT"), ("id", "BIGINT"))
    specs = tuple(InputSpec(n, cols, ("id",), "retract") for n in "abc")
    events = [ChangeEvent("b", "+I", (1, i)) for i in (1, 256, 2, -1)]
    events += [ChangeEvent("c", "+I", (1, 9)), ChangeEvent("a", "+I", (1, 5))]
    return Scenario("state order", specs, JoinSpec(("a", "b", "c"), ("inner", "inner"), ("a.k = b.k", "b.k = c.k")),
                    Config(multi_join="on", map_state_order=order), tuple(events))


@pytest.mark.parametrize(("order", "ids"), [
    # hashmap: buckets 7 (1), 5 (256), 14 (2), 12 (-1), from the hash codes above (low 16 bits ^ high 16 bits):
    # 0x254224a5: 0x24a5 ^ 0x2542 = 0x01e7 -> 7; 0x30f45331: 0x5331 ^ 0x30f4 = 0x63c5 -> 5;
    # 0xe8d4912a: 0x912a ^ 0xe8d4 = 0x79fe -> 14; 0xa5c68c5a: 0x8c5a ^ 0xa5c6 = 0x299c -> 12.
    # Hashed as the unique key alone (the binary join's rule) they would be 2, 1, -1, 256.
    ("hashmap", [256, 1, -1, 2]),
    # rocksdb: slots 00 01 .. (256) < 01 .. (1) < 02 .. (2) < ff .. (-1)
    ("rocksdb", [256, 1, 2, -1]),
    ("arrival", [1, 256, 2, -1]),
])
def test_an_input_after_the_first_is_walked_in_its_state_keys_order(order: MapStateOrder, ids: list[int]) -> None:
    run = run_scenario(_chain(order), hash_prefix=((7,), ("INTEGER",)))
    assert [c.row[3] for c in run.per_event[-1]] == ids


def test_the_first_input_is_keyed_by_its_unique_key_alone() -> None:
    """Input 0 has no join key of its own (AttributeBasedJoinKeyExtractor.getJoinKey(row, 0) is null), so its
    state key is the unique key row (7, id), hashed as the binary join hashes it: Flink's hash codes 0x205d11f8
    (1), 0x9df36c6f (256), 0xa94f082f (2), 0x018af710 (-1) give buckets 5, 12, 0, 10."""
    s = _chain("hashmap")
    moved = [ChangeEvent("a", "+I", e.row) for e in s.events[:4]]
    s = Scenario(s.name, s.inputs, s.join, s.config, (*moved, ChangeEvent("c", "+I", (1, 9)),
                                                        ChangeEvent("b", "+I", (1, 5))))
    run = run_scenario(s, hash_prefix=((7,), ("INTEGER",)))
    assert [c.row[1] for c in run.per_event[-1]] == [2, 1, -1, 256]


def _released(version: str) -> Scenario:
    """b holds three rows under one join key, its unique key `id` in one byte order and its records in another:
    (k, id, y, s) = (1, 2, -1, 'b'), (1, -1, -1, ''), (1, 3, 65536, 'eight888')."""
    cols = (("k", "BIGINT"), ("id", "BIGINT"), ("y", "BIGINT"), ("s", "VARCHAR"))
    specs = tuple(InputSpec(n, cols, ("id",), "retract") for n in "abc")
    rows = [(1, 2, -1, "b"), (1, -1, -1, ""), (1, 3, 65536, "eight888")]
    events = [ChangeEvent("b", "+I", r) for r in rows]
    events += [ChangeEvent("c", "+I", (1, 9, 9, "c")), ChangeEvent("a", "+I", (1, 5, 5, "a"))]
    return Scenario("released", specs, JoinSpec(("a", "b", "c"), ("inner", "inner"), ("a.k = b.k", "b.k = c.k")),
                    Config(multi_join="on", map_state_order="rocksdb", semantics="flink", flink_version=version),
                    tuple(events))


@pytest.mark.parametrize(("version", "ids"), [
    # 2.2, 2.3: keyed by the unique key (case id, id): slots 02 .. < 03 .. < ff ..
    ("2.3", [2, 3, -1]), ("2.2", [2, 3, -1]),
    # 2.1: keyed by the record, as measured on Flink 2.1.0: the serialized length first ('eight888', 8 bytes, goes
    # to the variable part: the longest row, last), then the id slot 02 .. < ff ..
    ("2.1", [2, -1, 3]),
])
def test_flink_2_1_keys_every_multiway_input_by_its_record(version: str, ids: list[int]) -> None:
    run = run_scenario(_released(version), hash_prefix=((7,), ("INTEGER",)))
    assert [c.row[5] for c in run.per_event[-1]] == ids
