"""java.util.HashMap's iteration order and the Java hash codes of its keys, for the Java maps whose order a
Flink operator's output follows.

Flink keeps binary rows (BinaryRowData), Longs and boxed Integers as keys of plain `java.util.HashMap`s in
several places whose iteration order reaches the changelog: the HashMapStateBackend's MapState (a HashMap
per key and namespace: HeapMapState over a CopyOnWriteStateMap; engine/state.py, `map_state_order:
hashmap`, which sorts by this module's buckets), and the mini-batch join's bundles (engine/operators/
bundle_order.py, over `JavaHashMap`). The order is not random and not arrival order; it is fixed by the
JDK's HashMap (the same since JDK 8; JDK 17's HashMap.putVal / computeIfAbsent / resize / treeifyBin /
removeNode / clear):

* a key's hash is its `hashCode()`: `BinaryRowData.hashCode` is MurmurHashUtil.hashUnsafeBytesByWords:
  Murmur3_32, seed 42, over the binary row's little-endian 4-byte words (header, fixed slots, variable
  part; the row kind byte is INSERT, as the join operators reset it before storing), finished with the
  byte length (`binary_row_hash`, checked against Flink 2.3.0's own hashCode in tests/engine/
  test_javahash.py); `Long.hashCode` is `(int) (v ^ (v >>> 32))` (the interval join's per-timestamp
  caches); `Integer.hashCode` is the value itself;
* its bucket is `spread(h) & (capacity - 1)` with HashMap.hash's `spread(h) = h ^ (h >>> 16)`; iteration
  walks the buckets in index order;
* the table starts at 16 buckets on the first insert and doubles when the size passes 3/4 of its
  capacity; a resize splits each bucket into a low and a high one keeping its entries' relative order,
  so "insertion order inside a bucket" survives every resize; `clear()` and `remove()` never shrink it,
  so a map that lives on (a bundle cleared after each flush) keeps its largest table (HeapMapState.remove
  drops a MapState's whole map once it is empty, so that key's next map starts at 16 again);
* `put` appends a new key at the tail of its bucket; `computeIfAbsent` puts it at the HEAD, and checks
  `size > threshold` (so resizes) at the start of each call, not after its own insert;
* a bucket that reaches TREEIFY_THRESHOLD keys (put: a 9th key, computeIfAbsent: an 8th, as their bin
  counts differ) asks for a tree (`treeifyBin`), which a table under MIN_TREEIFY_CAPACITY (64) answers
  by doubling instead. A tree bucket (a table of 64 or more, so a map of 49+ keys) iterates in an order
  no longer insertion order (TreeNode.putTreeVal, moveRootToFront): not modelled, so both models raise
  InternalError there rather than guess; no case converge generates comes near it.
* Copy-on-write: while a checkpoint or savepoint snapshot of the state map is open, CopyOnWriteStateMap
  hands out a copy of a map it touches (MapSerializer.copy: `new HashMap<>(size)`, a table of the next
  power of two >= size), and a restore deserializes every map the same way; the copy's order follows the
  smaller table until it grows. converge cannot see when a snapshot is open; the Flink adapter runs
  without periodic checkpoints, so only a case with `restart_after` can meet it, and the MapState model
  does not follow it (docs/anomalies.md, "On real Flink").
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Hashable, Iterator, Sequence
from functools import lru_cache

from converge.engine.keycodec import encode_binary_row, encode_row_of_rows
from converge.engine.model.errors import InternalError

INITIAL_CAPACITY = 16          # HashMap.DEFAULT_INITIAL_CAPACITY
TREEIFY_THRESHOLD = 8          # a bucket's 9th put (8th computeIfAbsent) asks for a tree ...
MIN_TREEIFY_CAPACITY = 64      # ... which a smaller table answers with a resize
_M32 = 0xFFFFFFFF


def _murmur_words(body: bytes) -> int:
    """Murmur3_32, seed 42, over `body`'s little-endian 4-byte words, finished with its length (unsigned)."""
    h = 42
    for k in struct.unpack(f"<{len(body) // 4}I", body):
        k = (k * 0xCC9E2D51) & _M32
        k = ((k << 15) | (k >> 17)) & _M32
        k = (k * 0x1B873593) & _M32
        h ^= k
        h = ((h << 13) | (h >> 19)) & _M32
        h = (h * 5 + 0xE6546B64) & _M32
    h ^= len(body)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    return h ^ (h >> 16)


@lru_cache(maxsize=65536)
def _cached_row_hash(values: tuple, types: tuple[str, ...]) -> int:
    return _murmur_words(encode_binary_row(values, types)[4:])   # without the serializer's length prefix


def binary_row_hash(values: Sequence[object], types: Sequence[str]) -> int:
    """BinaryRowData.hashCode of a row of kind INSERT, as an unsigned 32-bit number (module docstring)."""
    values = tuple(values)
    if any(isinstance(v, float) for v in values):   # 0.0 == -0.0 in Python, not in the row's bytes: no cache
        return _murmur_words(encode_binary_row(values, types)[4:])
    return _cached_row_hash(values, tuple(types))


def row_of_rows_hash(parts: Sequence[tuple[Sequence[object], Sequence[str]]]) -> int:
    """BinaryRowData.hashCode of a row whose fields are rows (keycodec.encode_row_of_rows), unsigned."""
    return _murmur_words(encode_row_of_rows(parts)[4:])


def java_row_hash(values: Sequence[object], types: Sequence[str]) -> int:
    """BinaryRowData.hashCode of a row as the Java int Flink prints."""
    return as_java_int(binary_row_hash(values, types))


def long_hash(value: int) -> int:
    """Long.hashCode as an unsigned 32-bit number."""
    v = value & 0xFFFFFFFFFFFFFFFF
    return (v ^ (v >> 32)) & _M32


def as_java_int(h: int) -> int:
    """An unsigned 32-bit hash as the Java int Flink prints."""
    h &= _M32
    return h - (1 << 32) if h >= 1 << 31 else h


def spread(h: int) -> int:
    """HashMap.hash of a key whose hashCode is `h` (signed or unsigned): the high half folded into the low
    half, unsigned; the bucket index is `spread(h) & (capacity - 1)`."""
    h &= _M32
    return h ^ (h >> 16)


def bucket(h: int, capacity: int) -> int:
    """The bucket of a key whose hashCode is `h` in a table of `capacity` buckets."""
    return spread(h) & (capacity - 1)


def _tree_bucket() -> InternalError:
    return InternalError("a java.util.HashMap bucket of 8 or more keys in a table of 64 or more buckets turns "
                         "into a tree, whose order converge does not model")


def grown_capacity(capacity: int, size: int, same_bucket: int) -> int:
    """The table size after a put added a new key at its bucket's tail: `size` entries now, `same_bucket` of
    them (the new one included) in the new key's bucket at the old `capacity` (HashMap.putVal: treeifyBin's
    resize of a small table, then the 3/4 threshold). A bucket that would become a tree raises InternalError."""
    if same_bucket > TREEIFY_THRESHOLD:
        if capacity >= MIN_TREEIFY_CAPACITY:
            raise _tree_bucket()
        capacity *= 2
    if size > capacity * 3 // 4:
        capacity *= 2
    return capacity


def hashmap_key_fn(types: Sequence[str], prefix: tuple[tuple, tuple] = ((), ())) -> Callable[[tuple], int]:
    """HashMap.hash of a row map key of `types`, hashed as the row `prefix` (values, types) + key: the
    Flink adapter stores its case id (an INTEGER) in front of every row and unique key, so Flink hashes
    rows one column wider than the user's query does (engine/state.py, `hash_prefix`)."""
    values0, types0 = prefix
    all_types = (*types0, *types)
    if not values0:
        return lambda key: spread(binary_row_hash(key, all_types))
    return lambda key: spread(binary_row_hash((*values0, *key), all_types))


def long_key_fn(to_long: Callable[[tuple], int]) -> Callable[[tuple], int]:
    """HashMap.hash of a Long map key, read from the engine's map key by `to_long`."""
    return lambda key: spread(long_hash(to_long(key)))


class JavaHashMap:
    """The key order of one java.util.HashMap under the calls Flink makes on it (keys only: values live
    with the caller). `h` is always the key's Java hashCode; keys are compared with Python equality,
    which for the rows converge models is the binary rows' byte equality. The table is kept sparse (bucket
    index -> chain), so a new or cleared map costs nothing until keys go in."""

    __slots__ = ("_buckets", "_capacity", "_size", "_threshold")

    def __init__(self, capacity: int | None = None) -> None:
        # capacity: the table a map that lived on already has (None: a new map, no table yet)
        self._buckets: dict[int, list[tuple[int, Hashable]]] = {}
        self._capacity = capacity
        self._size = 0
        self._threshold = 0 if capacity is None else capacity * 3 // 4

    @property
    def capacity(self) -> int | None:
        return self._capacity

    def __len__(self) -> int:
        return self._size

    def _resize(self) -> int:
        capacity = INITIAL_CAPACITY if self._capacity is None else 2 * self._capacity
        mask = capacity - 1
        buckets: dict[int, list[tuple[int, Hashable]]] = {}
        for index in sorted(self._buckets):
            for entry in self._buckets[index]:   # split lo/hi, each keeping the chain's order
                buckets.setdefault(spread(entry[0]) & mask, []).append(entry)
        self._buckets = buckets
        self._capacity = capacity
        self._threshold = capacity * 3 // 4
        return capacity

    def compute_if_absent(self, key: Hashable, h: int) -> bool:
        """HashMap.computeIfAbsent; True when the key was absent (and is now the head of its bucket)."""
        capacity = self._capacity
        if capacity is None or self._size > self._threshold:
            capacity = self._resize()
        index = spread(h) & (capacity - 1)
        chain = self._buckets.get(index)
        if chain is None:
            self._buckets[index] = [(h, key)]
            self._size += 1
            return True
        for other_h, other in chain:
            if other_h == h and other == key:
                return False
        held = len(chain)                        # computeIfAbsent's binCount
        chain.insert(0, (h, key))
        if held >= TREEIFY_THRESHOLD - 1:        # treeifyBin: a small table doubles instead
            if capacity >= MIN_TREEIFY_CAPACITY:
                raise _tree_bucket()
            self._resize()
        self._size += 1
        return True

    def put(self, key: Hashable, h: int) -> bool:
        """HashMap.put of a key (its value left aside); True when the key was absent (now at its bucket's tail)."""
        capacity = self._capacity if self._capacity is not None else self._resize()
        chain = self._buckets.setdefault(spread(h) & (capacity - 1), [])
        for other_h, other in chain:
            if other_h == h and other == key:
                return False
        chain.append((h, key))
        self._size += 1
        grown = grown_capacity(capacity, self._size, len(chain))
        while capacity < grown:
            capacity = self._resize()
        return True

    def remove(self, key: Hashable, h: int) -> None:
        """HashMap.remove: the key leaves its bucket; the others keep their order and the table its size."""
        if self._capacity is None:
            return
        index = spread(h) & (self._capacity - 1)
        chain = self._buckets.get(index, [])
        for i, (other_h, other) in enumerate(chain):
            if other_h == h and other == key:
                del chain[i]
                if not chain:
                    del self._buckets[index]
                self._size -= 1
                return

    def clear(self) -> None:
        """HashMap.clear: every key goes, the table keeps its size."""
        self._buckets.clear()
        self._size = 0

    def __iter__(self) -> Iterator[Hashable]:
        buckets = self._buckets
        for index in sorted(buckets):
            for _, key in buckets[index]:
                yield key

    def rank(self) -> dict[Hashable, int]:
        """Each key's position in iteration order."""
        return {key: i for i, key in enumerate(self)}
