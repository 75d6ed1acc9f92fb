"""java.util.HashMap's iteration order, for the Java maps whose order a Flink operator's output follows.

Flink keeps binary rows (BinaryRowData) and boxed Integers as keys of plain `java.util.HashMap`s in
several places whose iteration order reaches the changelog: the mini-batch join's bundles
(engine/operators/bundle_order.py) and the heap state backend's MapState (properties/systems/map_order.py).
The order is not random and not arrival order; it is fixed by the JDK's HashMap (the same since JDK 8):

* a key's hash is its `hashCode()`: `BinaryRowData.hashCode` is Murmur3_32 (seed 42) over the binary
  row's 4-byte words (`MurmurHashUtil.hashUnsafeBytesByWords`), finished with the byte length
  (`java_row_hash`); `Integer.hashCode` is the value itself;
* its bucket is `(h ^ h >>> 16) & (capacity - 1)`; iteration walks the buckets in index order;
* the table starts at 16 buckets on the first insert and doubles when it holds more than 3/4 of its
  capacity; a resize splits each bucket keeping its entries' relative order; `clear()` and `remove()`
  never shrink it, so a map that lives on (a bundle cleared after each flush) keeps its largest table;
* `put` appends a new key at the tail of its bucket; `computeIfAbsent` puts it at the HEAD, and checks
  `size > threshold` (so resizes) at the start of each call, not after its own insert;
* a bucket of 8 keys turns into a tree, or, while the table is under 64 buckets, doubles the table
  instead (`treeifyBin`). A tree bucket (8 keys in one bucket of a table of 64 or more) is not modelled:
  `JavaHashMap` raises InternalError rather than guess; no bundle converge generates comes near it.
"""

from __future__ import annotations

import struct
from collections.abc import Hashable, Iterator, Sequence
from functools import lru_cache

from converge.engine.keycodec import encode_binary_row
from converge.engine.model.errors import InternalError

_M32 = 0xFFFFFFFF
_TREEIFY_THRESHOLD = 8
_MIN_TREEIFY_CAPACITY = 64


@lru_cache(maxsize=65536)
def java_row_hash(values: tuple, types: tuple[str, ...]) -> int:
    """BinaryRowData.hashCode of a row of kind INSERT (a Java int): Murmur3_32, seed 42, over the binary
    row's little-endian 4-byte words, finished with the byte length (checked against Flink 2.3.0's own
    hashCode in tests/properties/systems/test_map_order.py)."""
    body = encode_binary_row(values, types)[4:]  # the binary row without the serializer's length prefix
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
    h ^= h >> 16
    return h - (1 << 32) if h >= 1 << 31 else h


def spread(h: int) -> int:
    """HashMap.hash: the hashCode's high half folded into the low half (unsigned 32 bits)."""
    h &= _M32
    return h ^ (h >> 16)


def bucket(h: int, capacity: int) -> int:
    """The bucket of a key whose hashCode is `h` in a table of `capacity` buckets."""
    return spread(h) & (capacity - 1)


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
        capacity = 16 if self._capacity is None else 2 * self._capacity
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
        if held >= _TREEIFY_THRESHOLD - 1:
            self._treeify_bin(capacity)
        self._size += 1
        return True

    def _treeify_bin(self, capacity: int) -> None:
        """HashMap.treeifyBin: a small table doubles instead; a tree bucket is not modelled."""
        if capacity < _MIN_TREEIFY_CAPACITY:
            self._resize()
            return
        raise InternalError("a java.util.HashMap bucket of 8 or more keys in a table of 64 or more buckets "
                            "turns into a tree, whose order converge does not model")

    def put(self, key: Hashable, h: int) -> bool:
        """HashMap.put of a key (its value left aside); True when the key was absent (now at its bucket's tail)."""
        capacity = self._capacity if self._capacity is not None else self._resize()
        chain = self._buckets.setdefault(spread(h) & (capacity - 1), [])
        for other_h, other in chain:
            if other_h == h and other == key:
                return False
        held = len(chain)
        chain.append((h, key))
        if held - 1 >= _TREEIFY_THRESHOLD - 1:       # putVal's binCount is the nodes walked past the first
            self._treeify_bin(capacity)
        self._size += 1
        if self._size > self._threshold:
            self._resize()
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


def row_hash(values: Sequence[object], types: Sequence[str]) -> int:
    """java_row_hash of any sequences (the cache wants tuples)."""
    return java_row_hash(tuple(values), tuple(types))
