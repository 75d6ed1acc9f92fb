"""Java's hash codes and java.util.HashMap's table, as Flink's HashMapStateBackend meets them.

On the HashMapStateBackend a MapState is a `java.util.HashMap` per (key, namespace) (HeapMapState over a
CopyOnWriteStateMap), so its iteration order is the HashMap's: the table's buckets in index order, and
inside a bucket the entries in the order they were inserted. This module computes the two facts that
order needs; engine/state.py keeps the table's capacity per map and sorts by them (`map_state_order:
hashmap`).

* The hash code of a map key. A row key (the join views' records and unique keys) is a BinaryRowData,
  whose hashCode is MurmurHashUtil.hashUnsafeBytesByWords: Murmur3_32, seed 42, over the row's 4-byte
  little-endian words (header, fixed slots, variable part; the row kind byte is INSERT, as the join
  operators reset it before storing), finished with the byte length. A Long key (the interval join's
  per-timestamp caches) hashes as Long.hashCode, `(int) (v ^ (v >>> 32))`.
* The bucket: HashMap.hash spreads the code, `h ^ (h >>> 16)`, and the index is `spread & (capacity - 1)`.
  The capacity starts at 16 with the first put and doubles when the size passes 3/4 of it
  (HashMap.putVal / resize); a resize splits every bucket into a low and a high one that keep the relative
  order of their entries, so "insertion order inside a bucket" survives every resize. Removing never
  shrinks the table; HeapMapState.remove drops the whole map once it is empty, so a key's next map starts
  at 16 again.
* A bucket that reaches 9 entries (TREEIFY_THRESHOLD 8) while the table is smaller than 64
  (MIN_TREEIFY_CAPACITY) makes HashMap.treeifyBin resize the table instead: modelled (`grown_capacity`).
  Where the model stops: with a capacity of 64 or more (a map of 49+ entries) such a bucket becomes a
  red-black tree whose iteration order is no longer insertion order (TreeNode.putTreeVal links a new node
  after its tree parent, moveRootToFront moves the root first). converge's cases store at most a few dozen
  rows per join key, far below that.
* Copy-on-write: while a checkpoint or savepoint snapshot of the state map is open, CopyOnWriteStateMap
  hands out a copy of a map it touches (MapSerializer.copy: `new HashMap<>(size)`, whose table is the
  next power of two >= size, smaller than 16 for a small map), and a restore deserializes every map the
  same way. The copy's order then follows the smaller table until it grows again. converge cannot see when
  a snapshot is open; the Flink adapter runs without periodic checkpoints, so only a case with
  `restart_after` (stop with a savepoint, then restore) can meet it, and the model does not follow it
  (docs/anomalies.md, "On real Flink").
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence

from converge.engine.keycodec import encode_binary_row

INITIAL_CAPACITY = 16          # HashMap.DEFAULT_INITIAL_CAPACITY
TREEIFY_THRESHOLD = 8          # a bucket's 9th entry asks for a tree ...
MIN_TREEIFY_CAPACITY = 64      # ... which a smaller table answers with a resize
_M32 = 0xFFFFFFFF
_WORDS = struct.Struct("<I")


def binary_row_hash(values: Sequence[object], types: Sequence[str]) -> int:
    """BinaryRowData.hashCode as an unsigned 32-bit number (module docstring)."""
    body = encode_binary_row(values, types)[4:]      # the binary row, without the serializer's length prefix
    h = 42
    for (k,) in _WORDS.iter_unpack(body):
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


def long_hash(value: int) -> int:
    """Long.hashCode as an unsigned 32-bit number."""
    v = value & 0xFFFFFFFFFFFFFFFF
    return (v ^ (v >> 32)) & _M32


def spread(h: int) -> int:
    """HashMap.hash of a key whose hashCode is `h`: the bucket index is `spread(h) & (capacity - 1)`."""
    h &= _M32
    return h ^ (h >> 16)


def as_java_int(h: int) -> int:
    """An unsigned 32-bit hash as the Java int Flink prints."""
    h &= _M32
    return h - (1 << 32) if h >= 1 << 31 else h


def grown_capacity(capacity: int, size: int, same_bucket: int) -> int:
    """The table size after a put added a new key: `size` entries now, `same_bucket` of them (the new one
    included) in the new key's bucket at the old `capacity` (HashMap.putVal: treeifyBin's resize of a small
    table, then the 3/4 threshold)."""
    if same_bucket > TREEIFY_THRESHOLD and capacity < MIN_TREEIFY_CAPACITY:
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
