"""`map_state_order: hashmap`: Flink's HashMapStateBackend order, checked against Flink and against Java's rules.

The expected hash codes are Flink's own (BinaryRowData.hashCode printed by a Java program against Flink
2.3.0's flink-table-runtime jar, BinaryRowWriter rows). The expected orders come from this file's own
Murmur3 (written from the algorithm's specification) and its own java.util.HashMap: a table of linked
buckets that appends, unlinks, splits on resize and resizes a small table instead of treeifying, as
HashMap.putVal / resize / treeifyBin / removeNode do. Neither shares code with engine/java_hashmap.py, whose
MapState model (engine/state.py) sorts by (bucket, insertion stamp) instead of keeping buckets.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from converge.engine.java_hashmap import as_java_int, binary_row_hash, long_hash
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import Config
from converge.engine.state import KeyedStateBackend


@pytest.mark.parametrize(("values", "types", "java"), [
    ((0, 1, 2), ("INTEGER", "BIGINT", "BIGINT"), 1141287431),
    ((0, 1, 256), ("INTEGER", "BIGINT", "BIGINT"), 199221631),
    ((0, 1, 1), ("INTEGER", "BIGINT", "BIGINT"), -105380086),
    ((0, 1, -1), ("INTEGER", "BIGINT", "BIGINT"), 1705586578),
    ((0, 1, 1000000), ("INTEGER", "BIGINT", "BIGINT"), 863846647),
    ((5, "a"), ("BIGINT", "VARCHAR"), -2120921498),
    ((5, "abcdefgh"), ("BIGINT", "VARCHAR"), -1850529214),      # 8 bytes: the variable-length part
    ((5, "hello world!"), ("BIGINT", "VARCHAR"), 96220595),
    ((5, None), ("BIGINT", "VARCHAR"), -1485691927),
    ((5, 1.5, True), ("BIGINT", "DOUBLE", "BOOLEAN"), -689000143),
])
def test_the_row_hash_is_flinks_binary_row_hash_code(values: tuple, types: tuple, java: int) -> None:
    assert as_java_int(binary_row_hash(values, types)) == java


def test_long_hash_is_long_hash_code() -> None:
    # Long.hashCode(v) = (int) (v ^ (v >>> 32)): -1 folds to 0, 2^32 to 1, a small value is itself
    assert [long_hash(v) for v in (5, -1, 1 << 32, (1 << 32) + 3)] == [5, 0, 1, 2]


# ------------------------------------------------------------ the test's own Murmur3 and HashMap


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & 0xFFFFFFFF


def murmur3_words(data: bytes, seed: int = 42) -> int:
    """MurmurHash3_x86_32 over whole 4-byte little-endian blocks (the row is a whole number of 8-byte words)."""
    c1, c2, h = 0xCC9E2D51, 0x1B873593, seed
    for i in range(0, len(data), 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = _rotl(k * c1 & 0xFFFFFFFF, 15) * c2 & 0xFFFFFFFF
        h = (_rotl(h ^ k, 13) * 5 + 0xE6546B64) & 0xFFFFFFFF
    h ^= len(data)
    for shift, mul in ((16, 0x85EBCA6B), (13, 0xC2B2AE35)):
        h = (h ^ (h >> shift)) * mul & 0xFFFFFFFF
    return h ^ (h >> 16)


def bigint_row_hash(*values: int) -> int:
    """The hash code of a BinaryRowData of BIGINTs: an 8-byte header (no nulls), each long little-endian."""
    return murmur3_words(bytes(8) + b"".join(v.to_bytes(8, "little", signed=True) for v in values))


def bucket16(h: int) -> int:
    return (h ^ (h >> 16)) & 15


class JavaHashMap:
    """java.util.HashMap's table, bucket by bucket."""

    def __init__(self) -> None:
        self.table: list[list] = [[] for _ in range(16)]
        self.size = 0

    def _index(self, key: int, n: int) -> int:
        h = bigint_row_hash(key)
        return (h ^ (h >> 16)) & (n - 1)

    def _resize(self) -> None:
        n = len(self.table)
        new: list[list] = [[] for _ in range(2 * n)]
        for j, chain in enumerate(self.table):      # each chain splits into a low and a high one, in order
            for key in chain:
                new[self._index(key, 2 * n)].append(key)
                assert self._index(key, 2 * n) in (j, j + n)
        self.table = new

    def put(self, key: int) -> None:
        chain = self.table[self._index(key, len(self.table))]
        if key in chain:
            return                                  # an update keeps the node where it is
        chain.append(key)
        if len(chain) > 8 and len(self.table) < 64:   # treeifyBin on a small table: resize instead
            self._resize()
        self.size += 1
        if self.size > len(self.table) * 3 // 4:
            self._resize()

    def remove(self, key: int) -> None:
        chain = self.table[self._index(key, len(self.table))]
        if key in chain:
            chain.remove(key)
            self.size -= 1

    def keys(self) -> list[int]:
        return [k for chain in self.table for k in chain]


class HeapMapState:
    """HeapMapState: one HashMap per key, dropped once a remove empties it."""

    def __init__(self) -> None:
        self.map: JavaHashMap | None = None

    def apply(self, op: str, key: int) -> None:
        if op == "put":
            self.map = self.map or JavaHashMap()
            self.map.put(key)
        elif self.map is not None:
            self.map.remove(key)
            if self.map.size == 0:
                self.map = None

    def keys(self) -> list[int]:
        return [] if self.map is None else self.map.keys()


def _engine_map():
    backend = KeyedStateBackend("hashmap")
    backend.current_key = ("k",)
    return backend.map_state("m", ["BIGINT"])


def _engine_keys(m) -> list[int]:
    return [k[0] for k in m]


def test_the_test_murmur3_is_flinks() -> None:
    # the same Flink-printed code as above, for a row this file lays out by hand: INTEGER 0, BIGINT 1, BIGINT 2
    row = bytes(8) + (0).to_bytes(8, "little") + (1).to_bytes(8, "little") + (2).to_bytes(8, "little")
    assert murmur3_words(row) == 1141287431


def test_twenty_keys_iterate_in_the_grown_tables_buckets() -> None:
    m, java = _engine_map(), HeapMapState()
    for k in range(20):
        m.put((k,), 1)
        java.apply("put", k)
    assert java.map is not None and len(java.map.table) == 32      # 20 > 12: grown once
    assert _engine_keys(m) == java.keys()
    assert _engine_keys(m) != sorted(_engine_keys(m), key=lambda k: (bigint_row_hash(k) ^ bigint_row_hash(k) >> 16) & 15)


def _keys_by_bucket(buckets_of: int, count: int, bucket: int | None = None) -> list[int]:
    """`count` BIGINT keys in one bucket of a table of `buckets_of` (the first bucket with that many)."""
    found: dict[int, list[int]] = {}
    for k in range(10_000):
        h = bigint_row_hash(k)
        b = (h ^ (h >> 16)) & (buckets_of - 1)
        found.setdefault(b, []).append(k)
        if (bucket is None or b == bucket) and len(found[b]) == count:
            return found[b]
    raise AssertionError("no such keys")


def test_nine_keys_in_one_bucket_of_a_small_table_resize_it() -> None:
    keys = _keys_by_bucket(16, 9)
    m, java = _engine_map(), HeapMapState()
    for k in keys:
        m.put((k,), 1)
        java.apply("put", k)
    assert java.map is not None and len(java.map.table) == 32      # 9 < 12 entries: treeifyBin's resize
    assert _engine_keys(m) == java.keys()


def test_the_table_never_shrinks_but_an_emptied_map_starts_again() -> None:
    m, java = _engine_map(), HeapMapState()
    ops = [("put", k) for k in range(13)] + [("remove", k) for k in range(2, 13)]
    for op, k in ops:
        (m.put((k,), 1) if op == "put" else m.remove((k,)))
        java.apply(op, k)
    assert java.map is not None and len(java.map.table) == 32 and java.keys() == _engine_keys(m)
    for op, k in [("remove", 0), ("remove", 1), ("put", 1), ("put", 0)]:
        (m.put((k,), 1) if op == "put" else m.remove((k,)))
        java.apply(op, k)
    assert java.map is not None and len(java.map.table) == 16 and java.keys() == _engine_keys(m)


@settings(max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(st.sampled_from(["put", "put", "remove"]), st.integers(-40, 40)), max_size=80))
def test_the_engine_iterates_as_java_util_hashmap(ops: list[tuple[str, int]]) -> None:
    m, java = _engine_map(), HeapMapState()
    for op, k in ops:
        if op == "put":
            m.put((k,), 1)
        else:
            m.remove((k,))
        java.apply(op, k)
        assert _engine_keys(m) == java.keys()


def test_the_hash_prefix_hashes_the_stored_row_wider() -> None:
    # the Flink adapter stores (case id, *row): the same keys, hashed with an INTEGER 0 in front
    plain, prefixed = KeyedStateBackend("hashmap"), KeyedStateBackend("hashmap", hash_prefix=((0,), ("INTEGER",)))
    orders = []
    for backend in (plain, prefixed):
        backend.current_key = ("k",)
        m = backend.map_state("m", ["BIGINT", "BIGINT"])
        for item in (2, 256, 1):
            m.put((1, item), 1)
        orders.append([k[1] for k in m])
    # Flink 2.3.0 printed the prefixed rows' codes (above): buckets 1, 0, 2 of 16 for items 2, 256, 1
    assert orders[1] == [256, 2, 1]
    assert orders[0] == sorted((2, 256, 1), key=lambda item: bucket16(bigint_row_hash(1, item)))
    assert orders[0] != orders[1]


@pytest.mark.parametrize("config", [{"map_state_order": "heap"}])
def test_the_removed_heap_order_is_refused_naming_hashmap(config: dict) -> None:
    with pytest.raises(BadInputError, match="'heap' was converge's stand-in.*name 'hashmap'"):
        Config(**config)


def test_a_removal_through_the_iterator_leaves_the_emptied_table() -> None:
    # TimeIntervalJoin removes expired times with Iterator.remove, which bypasses HeapMapState.remove: the
    # emptied HashMap stays in the state table with its grown table. Two keys that share a bucket of 16 (so a
    # fresh map keeps them in insertion order) but not of 32, the later one in the lower bucket:
    first, second = next((a, b) for a in range(100) for b in range(100) if a != b
                         and bucket16(bigint_row_hash(a)) == bucket16(bigint_row_hash(b))
                         and _bucket(bigint_row_hash(b), 32) < _bucket(bigint_row_hash(a), 32))
    m, java = _engine_map(), JavaHashMap()
    for k in range(200, 213):
        m.put((k,), 1)
        java.put(k)
    for k in range(200, 213):
        m.remove((k,), by_iterator=True)
        java.remove(k)
    for k in (first, second):
        m.put((k,), 1)
        java.put(k)
    assert len(java.table) == 32 and _engine_keys(m) == java.keys() == [second, first]
    dropped = _engine_map()          # HeapMapState.remove drops the emptied map: a fresh one of 16
    for k in range(200, 213):
        dropped.put((k,), 1)
    for k in range(200, 213):
        dropped.remove((k,))
    for k in (first, second):
        dropped.put((k,), 1)
    assert _engine_keys(dropped) == [first, second]


def _bucket(h: int, n: int) -> int:
    return (h ^ (h >> 16)) & (n - 1)
