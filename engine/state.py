"""Keyed state with processing-time TTL and explicit MapState iteration order.

State is scoped to the backend's `current_key`, as Flink's keyed state is.
TTL follows Flink's StateTtlConfig with UpdateType.OnCreateAndWrite and
StateVisibility.NeverReturnExpired: an entry written at t with TTL T is
visible up to t+T-1 and gone at t+T. Reads never refresh it.

MapState never iterates in dict order by accident: every entry carries an
order key and iteration sorts by it: the serialized bytes for `rocksdb`
(RocksDB's byte order, engine/keycodec.py); for `hashmap` the key's
HashMap.hash and an insertion stamp, sorted by (bucket index at the map's
current capacity, stamp), java.util.HashMap's order (engine/java_hashmap.py:
the capacity grows with the map and never shrinks while the map lives; an
emptied map is dropped, so the key's next map starts at 16 again; a put on a
key already stored keeps its place); an arrival stamp for `arrival`.

A runtime that must apply an event to all operators or to none sets one
`StateJournal` on its backends (and timer services): while it is set, every
change appends how to undo it (the old value, the old map entry, a bucket
created or dropped, the old arrival counter; expired entries dropped on read
included), `rollback()` undoes them newest first, `commit()` forgets them.
Values are never changed in place (an operator that changes one puts a new
one, as it must on RocksDB, where a read returns a copy), so the old value
itself is the undo record. Appending a tuple per write is the whole cost on
the hot path.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from converge.engine.java_hashmap import INITIAL_CAPACITY, grown_capacity, hashmap_key_fn
from converge.engine.keycodec import order_key_fn
from converge.engine.model.errors import ApiMisuseError
from converge.engine.model.scenario import MapStateOrder

_MISSING = object()


class StateJournal:
    """How to undo every change of the event being processed, over any number of backends and timer services.

    `records` holds (undo function, *arguments); `rollback` calls them newest
    first, so each one sees the state its change left behind."""

    __slots__ = ("records",)

    def __init__(self) -> None:
        self.records: list[tuple] = []

    def commit(self) -> None:
        if self.records:
            self.records.clear()

    def rollback(self) -> None:
        records = self.records
        for record in reversed(records):
            record[0](*record[1:])
        records.clear()


def _undo_value(table: dict, key: Any, old: Any) -> None:
    if old is _MISSING:
        table.pop(key, None)
    else:
        table[key] = old


def _undo_entry(table: dict, key: Any, map_key: Any, old: list | None) -> None:
    bucket = table[key]                 # newest-first undo: the bucket this change wrote to is back in place
    if old is None:
        bucket.entries.pop(map_key, None)
    else:
        bucket.entries[map_key] = old


def _undo_bucket_created(table: dict, key: Any) -> None:
    table.pop(key, None)


def _undo_bucket_dropped(table: dict, key: Any, bucket: Any) -> None:
    table[key] = bucket


def _undo_arrival(arrival: list, value: int) -> None:
    arrival[0] = value


def _undo_capacity(bucket: Any, capacity: int) -> None:
    bucket.capacity = capacity


class KeyedStateBackend:
    """All keyed state of one operator instance, plus the clock TTL reads."""

    def __init__(self, map_state_order: MapStateOrder = "rocksdb", *,
                 hash_prefix: tuple[tuple, tuple] = ((), ())) -> None:
        """`hash_prefix` (values, types): columns a system stores in front of every row map key, which
        `hashmap` hashes with the key (the Flink adapter's case id); no effect on the other orders."""
        if map_state_order not in ("rocksdb", "hashmap", "arrival"):
            raise ApiMisuseError(f"unknown map_state_order {map_state_order!r}")
        self.map_state_order = map_state_order
        self.hash_prefix = hash_prefix
        self.current_key: Any = None
        self.now = 0
        self._tables: dict[str, dict] = {}
        self._arrival = [0]
        self.undo: list | None = None    # a StateJournal's records, set by a runtime that rolls events back

    # -- registration -------------------------------------------------------
    def value_state(self, name: str, ttl_ms: int | None = None) -> ValueState:
        table = self._tables.setdefault(name, {})
        return ValueState(self, table) if ttl_ms is None else TtlValueState(self, table, ttl_ms)

    def map_state(self, name: str, key_types: Sequence[str], ttl_ms: int | None = None, *,
                  java_hash: Callable[[tuple], int] | None = None) -> MapState:
        """A MapState of row keys of `key_types`; `java_hash` (HashMap.hash of a key) for a map whose Java
        key is not a row (the interval join's Long timestamps), used by `hashmap` only."""
        table = self._tables.setdefault(name, {})
        if self.map_state_order == "hashmap":
            spread = java_hash or hashmap_key_fn(key_types, self.hash_prefix)
            return MapState(self, table, ttl_ms, spread, hashmap=True)
        return MapState(self, table, ttl_ms, order_key_fn(self.map_state_order, key_types))

    # -- whole-backend operations -------------------------------------------
    def snapshot(self) -> dict:
        """A deep copy of all state; restoring it gives back exactly this state."""
        return {"tables": copy.deepcopy(self._tables), "arrival": self._arrival[0]}

    def restore(self, snap: dict) -> None:
        restored = copy.deepcopy(snap["tables"])
        for name, table in self._tables.items():
            table.clear()
            table.update(restored.get(name, {}))
        for name, table in restored.items():
            if name not in self._tables:
                self._tables[name] = table
        self._arrival[0] = snap["arrival"]

    # -- per-key slices (for runtimes that keep each key's state elsewhere) --
    def take_key_slice(self, key: Any) -> tuple[dict, int] | None:
        """Remove and return everything stored under `key`: ({state name: entry}, arrival counter).

        None when nothing is stored. The counter travels with the slice so a
        slice put into another backend keeps its arrival order."""
        entries = {name: table.pop(key) for name, table in self._tables.items() if key in table}
        return (entries, self._arrival[0]) if entries else None

    def put_key_slice(self, key: Any, key_slice: tuple[dict, int]) -> None:
        """Put back a slice taken by `take_key_slice` (the states must be registered already)."""
        entries, arrival = key_slice
        for name, entry in entries.items():
            self._tables[name][key] = entry
        if arrival > self._arrival[0]:
            self._arrival[0] = arrival

    def keys(self) -> set:
        out: set = set()
        for table in self._tables.values():
            out.update(table)
        return out

    def live_entries(self, now: int | None = None) -> dict[str, int]:
        """Entries per state name (map entries count one each), expired ones excluded."""
        now = self.now if now is None else now
        counts: dict[str, int] = {}
        for name, table in self._tables.items():
            n = 0
            for value in table.values():
                if isinstance(value, _MapBucket):
                    n += sum(1 for e in value.entries.values() if e[1] > now)
                elif isinstance(value, _Timed):
                    n += value.expires > now
                else:
                    n += 1
            counts[name] = n
        return counts

    def purge_expired(self) -> None:
        """Drop what TTL has already made invisible (Flink's background cleanup)."""
        now = self.now
        undo = self.undo
        for table in self._tables.values():
            for key in list(table):
                value = table[key]
                if isinstance(value, _MapBucket):
                    for mk in [k for k, e in value.entries.items() if e[1] <= now]:
                        if undo is not None:
                            undo.append((_undo_entry, table, key, mk, value.entries[mk]))
                        del value.entries[mk]
                    if not value.entries:
                        if undo is not None:
                            undo.append((_undo_bucket_dropped, table, key, value))
                        del table[key]
                elif isinstance(value, _Timed) and value.expires <= now:
                    if undo is not None:
                        undo.append((_undo_value, table, key, value))
                    del table[key]


class _Timed:
    """A TTL'd value: the value and the first processing time it is gone."""

    __slots__ = ("value", "expires")

    def __init__(self, value: Any, expires: int) -> None:
        self.value = value
        self.expires = expires

    def __deepcopy__(self, memo: dict) -> _Timed:
        return _Timed(self.value, self.expires)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Timed) and (self.value, self.expires) == (other.value, other.expires)


class ValueState:
    """ValueState without TTL: the value itself is stored."""

    __slots__ = ("_backend", "_table")

    def __init__(self, backend: KeyedStateBackend, table: dict) -> None:
        self._backend = backend
        self._table = table

    def get(self) -> Any:
        return self._table.get(self._backend.current_key)

    def update(self, value: Any) -> None:
        backend = self._backend
        key = backend.current_key
        table = self._table
        undo = backend.undo
        if undo is not None:
            undo.append((_undo_value, table, key, table.get(key, _MISSING)))
        table[key] = value

    def clear(self) -> None:
        backend = self._backend
        key = backend.current_key
        table = self._table
        if key in table:
            undo = backend.undo
            if undo is not None:
                undo.append((_undo_value, table, key, table[key]))
            del table[key]


class TtlValueState(ValueState):
    __slots__ = ("_ttl",)

    def __init__(self, backend: KeyedStateBackend, table: dict, ttl_ms: int) -> None:
        super().__init__(backend, table)
        self._ttl = ttl_ms

    def get(self) -> Any:
        backend = self._backend
        timed = self._table.get(backend.current_key)
        if timed is None:
            return None
        if backend.now >= timed.expires:
            if backend.undo is not None:
                backend.undo.append((_undo_value, self._table, backend.current_key, timed))
            del self._table[backend.current_key]
            return None
        return timed.value

    def update(self, value: Any) -> None:
        backend = self._backend
        key = backend.current_key
        table = self._table
        undo = backend.undo
        if undo is not None:
            undo.append((_undo_value, table, key, table.get(key, _MISSING)))
        table[key] = _Timed(value, backend.now + self._ttl)


_NEVER = float("inf")


class _MapBucket:
    """One key's map: map key -> [value, expires, order], and its HashMap table size (`hashmap` only)."""

    __slots__ = ("entries", "capacity")

    def __init__(self) -> None:
        self.entries: dict[Any, list] = {}
        self.capacity = INITIAL_CAPACITY

    def __deepcopy__(self, memo: dict) -> _MapBucket:
        b = _MapBucket()
        b.entries = {k: list(e) for k, e in self.entries.items()}
        b.capacity = self.capacity
        return b

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, _MapBucket) and self.entries == other.entries
                and self.capacity == other.capacity)


class MapState:
    """MapState whose iteration order is the configured one, with per-entry TTL."""

    __slots__ = ("_backend", "_table", "_ttl", "_order_fn", "_hashmap")

    def __init__(self, backend: KeyedStateBackend, table: dict, ttl_ms: int | None, order_fn: Any, *,
                 hashmap: bool = False) -> None:
        self._backend = backend
        self._table = table
        self._ttl = ttl_ms
        self._order_fn = order_fn      # hashmap: HashMap.hash of a key
        self._hashmap = hashmap

    def get(self, map_key: Any, default: Any = None) -> Any:
        bucket = self._table.get(self._backend.current_key)
        if bucket is None:
            return default
        entry = bucket.entries.get(map_key)
        if entry is None:
            return default
        backend = self._backend
        if entry[1] <= backend.now:
            if backend.undo is not None:
                backend.undo.append((_undo_entry, self._table, backend.current_key, map_key, entry))
            del bucket.entries[map_key]
            return default
        return entry[0]

    def contains(self, map_key: Any) -> bool:
        return self.get(map_key, _MISSING) is not _MISSING

    def put(self, map_key: Any, value: Any, *, new_arrival: bool = True) -> None:
        """Write an entry. `new_arrival=False` keeps its place in arrival order
        (used for count and association updates, which are not new records)."""
        backend = self._backend
        undo = backend.undo
        bucket = self._table.get(backend.current_key)
        if bucket is None:
            bucket = self._table[backend.current_key] = _MapBucket()
            if undo is not None:
                undo.append((_undo_bucket_created, self._table, backend.current_key))
        expires = _NEVER if self._ttl is None else backend.now + self._ttl
        entry = bucket.entries.get(map_key)
        if undo is not None:
            undo.append((_undo_entry, self._table, backend.current_key, map_key,
                         None if entry is None else list(entry)))
        if entry is not None and (entry[1] > backend.now or self._hashmap):
            # a live key is updated in place; on a HashMap an expired one too (TtlMapState.put overwrites it)
            entry[0] = value
            entry[1] = expires
            if new_arrival and self._order_fn is None:
                entry[2] = self._stamp()
            return
        if self._hashmap:
            self._insert_hashed(bucket, map_key, value, expires)
            return
        order = self._order_fn(map_key) if self._order_fn is not None else self._stamp()
        bucket.entries[map_key] = [value, expires, order]

    def _insert_hashed(self, bucket: _MapBucket, map_key: Any, value: Any, expires: float) -> None:
        """HashMap.putVal of a new key: appended to its bucket, then the table grows if it must."""
        spread = self._order_fn(map_key)
        entries = bucket.entries
        entries[map_key] = [value, expires, (spread, self._stamp())]
        capacity = bucket.capacity
        mask = capacity - 1
        index = spread & mask
        same = sum(1 for e in entries.values() if e[2][0] & mask == index)
        grown = grown_capacity(capacity, len(entries), same)
        if grown != capacity:
            undo = self._backend.undo
            if undo is not None:
                undo.append((_undo_capacity, bucket, capacity))
            bucket.capacity = grown

    def _stamp(self) -> int:
        backend = self._backend
        arrival = backend._arrival
        if backend.undo is not None:
            backend.undo.append((_undo_arrival, arrival, arrival[0]))
        arrival[0] += 1
        return arrival[0]

    def remove(self, map_key: Any, *, by_iterator: bool = False) -> None:
        """Remove an entry; the emptied map goes with it (HeapMapState.remove), except on `hashmap` for a
        removal through the map's iterator (`by_iterator`), which leaves the empty HashMap, its table kept."""
        backend = self._backend
        bucket = self._table.get(backend.current_key)
        if bucket is not None:
            undo = backend.undo
            entry = bucket.entries.pop(map_key, None)
            if undo is not None and entry is not None:
                undo.append((_undo_entry, self._table, backend.current_key, map_key, entry))
            if not bucket.entries and not (by_iterator and self._hashmap):
                if undo is not None:
                    undo.append((_undo_bucket_dropped, self._table, backend.current_key, bucket))
                del self._table[backend.current_key]

    def items(self) -> list[tuple[Any, Any]]:
        """Live entries in iteration order (expired ones are dropped on the way)."""
        backend = self._backend
        bucket = self._table.get(backend.current_key)
        if bucket is None:
            return []
        entries = bucket.entries
        now = backend.now
        if self._ttl is not None:
            dead = [k for k, e in entries.items() if e[1] <= now]
            undo = backend.undo
            for k in dead:
                if undo is not None:
                    undo.append((_undo_entry, self._table, backend.current_key, k, entries[k]))
                del entries[k]
            if not entries:
                if undo is not None:
                    undo.append((_undo_bucket_dropped, self._table, backend.current_key, bucket))
                del self._table[backend.current_key]
                return []
        if len(entries) == 1:
            for k, e in entries.items():
                return [(k, e[0])]
        if self._hashmap:
            mask = bucket.capacity - 1
            ordered = sorted(entries.items(), key=lambda item: (item[1][2][0] & mask, item[1][2][1]))
            return [(k, e[0]) for k, e in ordered]
        ordered = sorted(entries.items(), key=_order_of)
        return [(k, e[0]) for k, e in ordered]

    def __iter__(self) -> Iterator[Any]:
        return iter([k for k, _ in self.items()])

    def is_empty(self) -> bool:
        return not self.items()

    def clear(self) -> None:
        backend = self._backend
        bucket = self._table.pop(backend.current_key, None)
        if bucket is not None and backend.undo is not None:
            backend.undo.append((_undo_bucket_dropped, self._table, backend.current_key, bucket))


def _order_of(item: tuple[Any, list]) -> Any:
    return item[1][2]
