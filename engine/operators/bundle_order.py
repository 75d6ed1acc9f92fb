"""The order in which Flink's mini-batch join walks one input's bundle (docs/minibatch.md, "Order inside a bundle").

MiniBatchStreamingJoinOperator.processSingleSideBundles walks a bundle through its `java.util.HashMap`s,
so the join keys, the unique keys under a join key, and the records of a keyless input come out in the
maps' iteration order (engine/java_hashmap.py), not in arrival order. The rules, per bundle class
(flink-table-runtime, org.apache.flink.table.runtime.operators.join.stream.bundle; the same in 1.19-2.3):

* JoinKeyContainsUniqueKeyBundle: `bundle` (BufferBundle's HashMap, join key -> records) is walked as is
  (`getRecords()` returns it): join keys in HashMap order, each key's records in arrival order.
* InputSideHasUniqueKeyBundle: `getJoinKeys()` is `bundle.keySet()` (join key -> a HashMap unique key ->
  records), then `getRecordsWithJoinKey(key)`: unique keys in that inner HashMap's order.
* InputSideHasNoUniqueKeyBundle: `bundle` maps join key -> a HashMap from the record's hashCode (as an
  INSERT row, a boxed Integer, whose hash is its value) -> records; `getRecords()` copies the join keys
  into a NEW HashMap in `bundle`'s order (so the walk is that new map's order), each key's records being
  the inner map's lists in its order, each list in arrival order.

Every key goes in with `computeIfAbsent` (at the head of its bucket), once before `foldRecord` and once
more when the record is kept; a fold that empties a list removes its key, and a join key whose inner map
empties goes too. `bundle` lives as long as the operator: `clear()` after each flush keeps its table, so
its capacity is the largest it grew to; the inner maps and getRecords' copy are new maps. The keys'
hashCodes are BinaryRowData.hashCode of the key rows Flink builds: the join key fields in the join key's
order, the unique key fields in column order (JoinUtil.analyzeJoinInput takes the key as a bit set), the
whole row for a keyless input.

`BundleOrder.walk` replays those map calls for one input's records of one bundle; `Walk` then orders the
engine's folded groups as Flink would visit them.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import Any

from converge.engine.java_hashmap import JavaHashMap, java_row_hash
from converge.engine.model.changelog import ACCUMULATE_KINDS, Change

_ABSENT = 1 << 40        # the rank of a key the maps no longer hold (only a seeded broken fold leaves one)


def _fold(kept: list[bool], accumulate: bool) -> bool:
    """The unique-key bundles' foldRecord on a list of accumulate flags; True when the record is folded
    away (an accumulate cancelled by a retraction), else the caller appends it."""
    if kept:
        if kept[-1]:
            kept.pop()
            return not accumulate
        if not accumulate:
            kept.pop()
    return False


def _drop(bundle: JavaHashMap, inner: dict[Any, JavaHashMap], lists: dict[tuple, list[bool]], key: Any, h: int,
          sub: Hashable, hs: int) -> None:
    """A sub-key whose records all cancelled leaves its key's inner map (HashMap.remove), and a key whose inner
    map is emptied leaves the bundle."""
    subs = inner[key]
    subs.remove(sub, hs)
    del lists[(key, sub)]
    if not len(subs):
        bundle.remove(key, h)
        del inner[key]


class Walk:
    """One bundle of one input as Flink walks it: join keys, then unique keys or rows under each."""

    __slots__ = ("_keys", "_inner", "_row_hash")

    def __init__(self, keys: list, inner: dict[Any, dict[Hashable, int]], row_hash: Any) -> None:
        self._keys = keys
        self._inner = inner
        self._row_hash = row_hash

    def keys(self, present: Iterable) -> list:
        """The join keys of `present` in Flink's order (any the maps dropped after them, in their order)."""
        present = list(present)
        wanted = set(present)
        ordered = [k for k in self._keys if k in wanted]
        if len(ordered) < len(present):
            seen = set(ordered)
            ordered += [k for k in present if k not in seen]
        return ordered

    def unique_keys(self, key: Any, present: Iterable) -> list:
        """The unique keys (as the engine groups them) under one join key, in the inner HashMap's order."""
        rank = self._inner.get(key, {})
        return sorted(present, key=lambda sub: rank.get(sub, _ABSENT))

    def rows(self, key: Any, changes: Sequence[Change]) -> list[Change]:
        """A keyless input's folded records of one join key, in the inner HashMap's order of their row
        hashes, arrival order within one hash."""
        rank = self._inner.get(key, {})
        if len(rank) < 2:
            return list(changes)
        row_hash = self._row_hash
        return sorted(changes, key=lambda c: rank.get(row_hash(c.row), _ABSENT))


class BundleOrder:
    """The HashMaps of one input's BufferBundle, replayed (see the module docstring)."""

    def __init__(self, kind: str, columns: Sequence[tuple[str, str]], key_indexes: Sequence[int],
                 unique_key_indexes: Sequence[int] | None) -> None:
        self.kind = kind
        self._row_types = tuple(t for _, t in columns)
        self._key_types = tuple(self._row_types[i] for i in key_indexes)
        self._uk = tuple(unique_key_indexes) if unique_key_indexes is not None else None
        flink_uk = tuple(sorted(self._uk)) if self._uk is not None else ()
        self._uk_flink = flink_uk
        self._uk_types = tuple(self._row_types[i] for i in flink_uk)
        self.bundle = JavaHashMap()        # BufferBundle.bundle: cleared at each flush, never shrunk

    def row_hash(self, row: tuple) -> int:
        return java_row_hash(row, self._row_types)

    def _key_hash(self, key: tuple) -> int:
        return java_row_hash(tuple(key), self._key_types)

    def walk(self, records: Sequence[tuple[Any, Change]]) -> Walk:
        """Replay addRecord for an input's (join key, change) records of one bundle, in arrival order."""
        self.bundle.clear()
        if len(records) == 1 or (self.kind == "JoinKeyContainsUniqueKey"
                                 and len(dict.fromkeys(key for key, _ in records)) == 1):
            return Walk([records[0][0]], {}, self.row_hash)   # one key: nothing to order, no table to grow
        if self.kind == "JoinKeyContainsUniqueKey":
            return self._walk_key_contains_unique_key(records)
        if self.kind == "InputSideHasUniqueKey":
            return self._walk_has_unique_key(records)
        return self._walk_no_unique_key(records)

    def _key_hashes(self, records: Sequence[tuple[Any, Change]]) -> dict[Any, int]:
        """Each join key's hashCode, or 0 for all when the bundle holds one join key (a map that only ever holds
        one key is walked the same whatever its hash, and never grows)."""
        keys = dict.fromkeys(key for key, _ in records)
        if len(keys) == 1:
            return dict.fromkeys(keys, 0)
        return {key: self._key_hash(key) for key in keys}

    def _walk_key_contains_unique_key(self, records: Sequence[tuple[Any, Change]]) -> Walk:
        bundle = self.bundle
        lists: dict[Any, list[bool]] = {}
        hashes = self._key_hashes(records)
        for key, change in records:
            h = hashes[key]
            bundle.compute_if_absent(key, h)
            kept = lists.setdefault(key, [])
            if _fold(kept, change.kind in ACCUMULATE_KINDS):
                if not kept:
                    bundle.remove(key, h)
                    del lists[key]
                continue
            bundle.compute_if_absent(key, h)
            kept.append(change.kind in ACCUMULATE_KINDS)
        return Walk(list(bundle), {}, self.row_hash)

    def _walk_has_unique_key(self, records: Sequence[tuple[Any, Change]]) -> Walk:
        bundle = self.bundle
        inner: dict[Any, JavaHashMap] = {}
        lists: dict[tuple, list[bool]] = {}
        uk, flink_uk, uk_types = self._uk or (), self._uk_flink, self._uk_types
        key_hashes = self._key_hashes(records)
        subs_of: dict[Any, set] = {}
        for key, change in records:
            subs_of.setdefault(key, set()).add(tuple([change.row[j] for j in uk]))
        for key, change in records:
            h = key_hashes[key]
            row = change.row
            sub = tuple([row[j] for j in uk])
            hs = java_row_hash(tuple([row[j] for j in flink_uk]), uk_types) if len(subs_of[key]) > 1 else 0
            if bundle.compute_if_absent(key, h):
                inner[key] = JavaHashMap()
            subs = inner[key]
            subs.compute_if_absent(sub, hs)
            kept = lists.setdefault((key, sub), [])
            if _fold(kept, change.kind in ACCUMULATE_KINDS):
                if not kept:
                    _drop(bundle, inner, lists, key, h, sub, hs)
                continue
            bundle.compute_if_absent(key, h)
            subs.compute_if_absent(sub, hs)
            kept.append(change.kind in ACCUMULATE_KINDS)
        return Walk(list(bundle), {k: m.rank() for k, m in inner.items()}, self.row_hash)

    def _walk_no_unique_key(self, records: Sequence[tuple[Any, Change]]) -> Walk:
        bundle = self.bundle
        inner: dict[Any, JavaHashMap] = {}
        lists: dict[tuple, list[bool]] = {}
        key_hashes = self._key_hashes(records)
        rows_of: dict[Any, set] = {}
        for key, change in records:
            rows_of.setdefault(key, set()).add(change.row)
        for key, change in records:
            h = key_hashes[key]
            hr = self.row_hash(change.row) if len(rows_of[key]) > 1 else 0
            if bundle.compute_if_absent(key, h):
                inner[key] = JavaHashMap()
            hashes = inner[key]
            hashes.compute_if_absent(hr, hr)
            kept = lists.setdefault((key, hr), [])
            accumulate = change.kind in ACCUMULATE_KINDS
            for i in range(len(kept) - 1, -1, -1):       # the latest record of the other direction goes
                if kept[i] != accumulate:
                    del kept[i]
                    if not kept:
                        _drop(bundle, inner, lists, key, h, hr, hr)
                    break
            else:
                bundle.compute_if_absent(key, h)
                hashes.compute_if_absent(hr, hr)
                kept.append(accumulate)
        walked = JavaHashMap()                         # getRecords(): a new HashMap, filled in bundle's order
        for key in bundle:
            walked.compute_if_absent(key, key_hashes[key])
        return Walk(list(walked), {k: m.rank() for k, m in inner.items()}, self.row_hash)
