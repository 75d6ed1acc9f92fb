"""The rocksdb MapState order, pinned end to end: what a probe emits follows the serialized-key byte order.

The state-views write-up's out-of-order anomaly exists because a RocksDB-backed MapState
iterates in the byte order of the serialized map key, not in arrival order.
The bag-based properties cannot see order, so this one checks it directly:
when one change probes the other side's MapState, the rows it emits for the
matched records come out in the byte order of those records' map keys (the
whole row for a no-unique-key input, the unique key otherwise), as the
properties' own reference model encodes them (properties/reference.py, a
derivation of Flink's BinaryRowDataSerializer independent of the engine's key
codec, tested against measured RocksDB orders).

Rows of one operator call that come from one pass over the other side's
state share a row kind and the same part of the probing row; output rows are
grouped by exactly that, and each group must be sorted. A padded row of the
probing record itself (other part all NULL) is not an iteration and is left
out, which only removes elements from a group.

`hashmap_iteration_order` pins the `hashmap` order the same way: the
matched records come out in the iteration order of a java.util.HashMap that
the property keeps itself per side and join key (properties/reference.py's
`JavaHashMap` over `binary_row_hash`, independent of engine/java_hashmap.py),
fed with the map keys the side's state view puts and removes: a new record or
unique key is put, a record whose last copy is retracted (or a retracted
unique key) is removed, and a map emptied that way is dropped.

A further property pins the `arrival` order across a restart: one hot join
key, a snapshot taken halfway and restored into a fresh runtime, and the
output must be exactly the uninterrupted run's, order included.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from hypothesis import strategies as st

from converge.engine.model.changelog import Change
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import ChangeEvent, Config, InputSpec, JoinSpec, Scenario
from converge.engine.runtime.local import run_scenario
from converge.generators.scenarios import regular_join_scenarios
from converge.properties.divergence import Divergence, PropertyFailure
from converge.properties.families.dense import one_join_key
from converge.properties.reference import JavaHashMap, binary_row_hash, binary_row_key, equality_keys, view_kind
from converge.properties.regular import snapshot_restore
from converge.properties.spec import PropertySpec


def _map_key_encoder(spec: InputSpec, key_columns: list[str]) -> Callable[[tuple], bytes] | None:
    """How a record of this input is keyed in its MapState, serialized (None: a ValueState holds one record)."""
    keyed = _map_key(spec, key_columns)
    if keyed is None:
        return None
    key_of, types = keyed
    return lambda row: binary_row_key(key_of(row), types)


def rocksdb_iteration_order(scenario: Scenario) -> None:
    """Joined rows of one probe come out in the byte order of the matched records' serialized map keys."""
    prop = "rocksdb_iteration_order"
    if scenario.config.map_state_order != "rocksdb" or len(scenario.join.inputs) != 2 \
            or scenario.join.interval is not None:
        raise BadInputError(f"property {prop} needs a binary regular join with map_state_order=rocksdb")
    left, right = scenario.chain
    jtype = scenario.join.types[0]
    keys = equality_keys(scenario.join.conditions[0], [left.name], right.name)
    encoders = (_map_key_encoder(left, [lc for _, lc, _, _ in keys]),
                _map_key_encoder(right, [rc for _, _, rc, _ in keys]))
    width = len(left.columns)
    semi = jtype in ("semi", "anti")
    result = run_scenario(scenario)
    for i, (event, items) in enumerate(zip(scenario.events, result.per_event, strict=False)):
        if not isinstance(event, ChangeEvent):
            continue
        side = 0 if event.input == left.name else 1
        other = 1 - side
        encode = encoders[other]
        if encode is None or (semi and side == 0):
            continue
        groups: dict[tuple, list[tuple]] = {}
        for item in items:
            if not isinstance(item, Change):
                continue
            if semi:
                own, record = (), item.row
            else:
                parts = (item.row[:width], item.row[width:])
                own, record = parts[side], parts[other]
                if all(v is None for v in record):
                    continue  # the probing record's own padding
            groups.setdefault((item.kind, own), []).append(record)
        for (kind, _own), records in groups.items():
            encoded = [encode(r) for r in records]
            if encoded != sorted(encoded):
                want = [list(r) for _, r in sorted(zip(encoded, records, strict=False), key=lambda p: p[0])]
                raise PropertyFailure(Divergence(
                    prop, scenario,
                    f"{kind} rows for the matched {scenario.chain[other].name} records came out as "
                    f"{[list(r) for r in records]}; RocksDB's serialized-key order is {want}",
                    event_index=i))


def _map_key(spec: InputSpec, key_columns: list[str]) -> tuple[Callable[[tuple], tuple], list[str]] | None:
    """The map key a record of this input is stored under, and its column types (None: a ValueState holds one
    record)."""
    kind = view_kind(spec, key_columns)
    if kind == "JoinKeyContainsUniqueKey":
        return None
    if kind == "InputSideHasUniqueKey":
        idx = [spec.index_of(c) for c in spec.unique_key or ()]
        return (lambda row: tuple(row[i] for i in idx)), [spec.column_types[i] for i in idx]
    return (lambda row: row), list(spec.column_types)


class _HeapSide:
    """One side's HashMapStateBackend MapState: a JavaHashMap per join key, and each map key's copy count."""

    def __init__(self, spec: InputSpec, key_columns: list[str]) -> None:
        keyed = _map_key(spec, key_columns)
        self.map_key = None if keyed is None else keyed[0]
        self.types = [] if keyed is None else keyed[1]
        self.join_key = [spec.index_of(c) for c in key_columns]
        self.maps: dict[tuple, JavaHashMap] = {}
        self.copies: dict[tuple, int] = {}

    def table(self, row: tuple) -> JavaHashMap | None:
        return self.maps.get(tuple(row[i] for i in self.join_key))

    def apply(self, kind: str, row: tuple) -> None:
        if self.map_key is None:
            return
        jk, mk = tuple(row[i] for i in self.join_key), self.map_key(row)
        if kind in ("+I", "+U"):
            self.maps.setdefault(jk, JavaHashMap(self._hash)).put(mk)
            self.copies[jk + mk] = self.copies.get(jk + mk, 0) + 1
            return
        left = self.copies.get(jk + mk, 0) - 1
        if left > 0 and mk == row:     # a keyless record with copies left keeps its entry
            self.copies[jk + mk] = left
            return
        self.copies.pop(jk + mk, None)
        found = self.maps.get(jk)
        if found is not None:
            found.remove(mk)
            if found.size == 0:        # HeapMapState.remove drops the emptied map
                del self.maps[jk]

    def _hash(self, key: tuple) -> int:
        return binary_row_hash(key, self.types)


def hashmap_iteration_order(scenario: Scenario) -> None:
    """Joined rows of one probe come out in the iteration order of the matched records' java.util.HashMap."""
    prop = "hashmap_iteration_order"
    if scenario.config.map_state_order != "hashmap" or len(scenario.join.inputs) != 2 \
            or scenario.join.interval is not None or scenario.join.types[0] in ("semi", "anti"):
        raise BadInputError(f"property {prop} needs a binary INNER/outer regular join with map_state_order=hashmap")
    left, right = scenario.chain
    keys = equality_keys(scenario.join.conditions[0], [left.name], right.name)
    sides = (_HeapSide(left, [lc for _, lc, _, _ in keys]), _HeapSide(right, [rc for _, _, rc, _ in keys]))
    width = len(left.columns)
    for i, (event, items) in enumerate(zip(scenario.events, run_scenario(scenario).per_event, strict=False)):
        if not isinstance(event, ChangeEvent):
            continue
        side = 0 if event.input == left.name else 1
        other = sides[1 - side]
        table = other.table(event.row) if other.map_key is not None else None
        if table is not None:
            order = {key: n for n, key in enumerate(table)}
            groups: dict[str, list[tuple]] = {}
            for item in items:
                if isinstance(item, Change):
                    record = (item.row[:width], item.row[width:])[1 - side]
                    if not all(v is None for v in record):
                        seen = groups.setdefault(item.kind, [])
                        key = other.map_key(record)  # type: ignore[misc]
                        if not seen or seen[-1] != key:
                            seen.append(key)
            for kind, got in groups.items():
                want = sorted(got, key=lambda k: order.get(k, -1))
                if got != want:
                    raise PropertyFailure(Divergence(
                        prop, scenario, f"{kind} rows visited the {scenario.chain[1 - side].name} map keys "
                        f"{[list(k) for k in got]}; java.util.HashMap iterates {[list(k) for k in want]}",
                        event_index=i))
        sides[side].apply(event.kind, event.row)


# One hot key (order only shows among records of one key), unique keys that are not the join key
# (a unique key inside the join key is a ValueState: one record, no order to check).
_ROCKSDB = regular_join_scenarios(map_state_orders=("rocksdb",), uk_shapes=("none", "own"))
_HASHMAP = regular_join_scenarios(map_state_orders=("hashmap",), uk_shapes=("none", "own"),
                                  join_types=("inner", "left", "right", "full"), modes=("insert_only", "retract"))


@st.composite
def _crowded_map(draw: st.DrawFn) -> Scenario:
    """One join key whose keyless side holds 13 to 40 rows (more than a table of 16 takes at 3/4), some
    retracted and put back, probed by the other side between the changes: the table's growth decides."""
    a = InputSpec("a", (("k", "BIGINT"), ("x", "BIGINT")), ("k",), "retract")
    b = InputSpec("b", (("k", "BIGINT"), ("y", "BIGINT"), ("s", "VARCHAR")), None, "retract")
    rows = draw(st.lists(st.tuples(st.integers(-300, 300), st.sampled_from(("", "a", "eight888"))),
                         min_size=13, max_size=40, unique=True))
    events = [ChangeEvent("b", "+I", (0, y, s)) for y, s in rows]
    events.append(ChangeEvent("a", "+I", (0, 1)))
    gone = draw(st.lists(st.sampled_from(rows), max_size=len(rows) - 1, unique=True))
    events += [ChangeEvent("b", "-D", (0, y, s)) for y, s in gone]
    events.append(ChangeEvent("a", "-U", (0, 1)))
    events.append(ChangeEvent("a", "+U", (0, 2)))
    events += [ChangeEvent("b", "+I", (0, y, s)) for y, s in draw(st.permutations(gone))]
    events.append(ChangeEvent("a", "-D", (0, 2)))
    jtype = draw(st.sampled_from(("inner", "left")))
    return Scenario(f"crowded hashmap, {jtype}", (a, b), JoinSpec(("a", "b"), (jtype,), ("a.k = b.k",)),
                    Config(map_state_order="hashmap"), tuple(events))


_ARRIVAL = regular_join_scenarios(map_state_orders=("arrival",), uk_shapes=("none", "own"), residuals=(None,))


# BIGINT values where serialized order and numeric order part (little-endian slots: 256 sorts before 1, -1
# after every positive number); the generators' small domains (0..3) sort the same either way.
_WIDE = {0: 0, 1: 256, 2: -1, 3: 65536}


def wide_values(scenario: Scenario) -> Scenario:
    """Every BIGINT value outside the join key `k` mapped through _WIDE (a bijection: unique keys stay unique,
    a retraction still names its row), so the byte order of map keys differs from the numeric order."""
    def widen(spec: InputSpec, row: tuple) -> tuple:
        return tuple(_WIDE.get(v, v) if t == "BIGINT" and c != "k" and isinstance(v, int) else v
                     for (c, t), v in zip(spec.columns, row, strict=False))
    specs = {spec.name: spec for spec in scenario.inputs}
    events = tuple(replace(e, row=widen(specs[e.input], e.row)) if isinstance(e, ChangeEvent) else e
                   for e in scenario.events)
    return replace(scenario, events=events)


def _restore_midway(scenario: Scenario) -> tuple:
    """Cut in the middle: deleting events keeps records on both sides of the cut, so it shrinks well."""
    scenario = one_join_key(scenario)
    return scenario, len(scenario.events) // 2


PROPERTIES: list[PropertySpec] = [
    PropertySpec("regular", "rocksdb_iteration_order", lambda: _ROCKSDB.map(lambda s: (wide_values(one_join_key(s)),)),
                 rocksdb_iteration_order, 100,
                 "rocksdb mode: one probe's joined rows follow the serialized map-key byte order"),
    PropertySpec("regular", "hashmap_iteration_order",
                 lambda: st.one_of(_HASHMAP.map(one_join_key), _crowded_map()).map(lambda s: (s,)),
                 hashmap_iteration_order, 100,
                 "hashmap mode, one hot key: one probe's joined rows follow java.util.HashMap's iteration order"),
    PropertySpec("regular", "arrival_order_survives_restore", lambda: _ARRIVAL.map(_restore_midway),
                 snapshot_restore, 100,
                 "arrival mode, one hot key: a snapshot restored midway continues in the same order"),
]
