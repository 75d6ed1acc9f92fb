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

A second property pins the `arrival` order across a restart: one hot join
key, a snapshot taken halfway and restored into a fresh runtime, and the
output must be exactly the uninterrupted run's, order included.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from converge.engine.model.changelog import Change
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import ChangeEvent, InputSpec, Scenario
from converge.engine.runtime.local import run_scenario
from converge.generators.scenarios import regular_join_scenarios
from converge.properties.divergence import Divergence, PropertyFailure
from converge.properties.families.dense import one_join_key
from converge.properties.reference import binary_row_key, equality_keys, view_kind
from converge.properties.regular import snapshot_restore
from converge.properties.spec import PropertySpec


def _map_key_encoder(spec: InputSpec, key_columns: list[str]) -> Callable[[tuple], bytes] | None:
    """How a record of this input is keyed in its MapState (None: a ValueState holds one record)."""
    kind = view_kind(spec, key_columns)
    if kind == "JoinKeyContainsUniqueKey":
        return None
    if kind == "InputSideHasUniqueKey":
        idx = [spec.index_of(c) for c in spec.unique_key or ()]
        types = [spec.column_types[i] for i in idx]
        return lambda row: binary_row_key([row[i] for i in idx], types)
    types = list(spec.column_types)
    return lambda row: binary_row_key(row, types)


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


# One hot key (order only shows among records of one key), unique keys that are not the join key
# (a unique key inside the join key is a ValueState: one record, no order to check).
_ROCKSDB = regular_join_scenarios(map_state_orders=("rocksdb",), uk_shapes=("none", "own"))
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
    PropertySpec("regular", "arrival_order_survives_restore", lambda: _ARRIVAL.map(_restore_midway),
                 snapshot_restore, 100,
                 "arrival mode, one hot key: a snapshot restored midway continues in the same order"),
]
