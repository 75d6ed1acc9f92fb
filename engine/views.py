"""The six join record state views of Flink's regular join (the regular-join and state-views write-ups).

| view                      | inner                   | outer                              |
|---------------------------|-------------------------|------------------------------------|
| JoinKeyContainsUniqueKey  | ValueState<row>         | ValueState<(row, assoc)>           |
| InputSideHasUniqueKey     | MapState<uk, row>       | MapState<uk, (row, assoc)>         |
| InputSideHasNoUniqueKey   | MapState<row, count>    | MapState<row, (count, assoc)>      |

`records()` of a no-unique-key view yields a row once per copy, exactly as
Flink's views do, so a duplicated row is joined (and padded) once per copy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from converge.engine.model.scenario import InputSpec
from converge.engine.state import KeyedStateBackend

JavaHash = Callable[[tuple], int]   # HashMap.hash of a MapState key (engine/state.py, KeyedStateBackend.map_state)
InputSideKind = Literal["JoinKeyContainsUniqueKey", "InputSideHasUniqueKey", "InputSideHasNoUniqueKey"]


@dataclass(frozen=True)
class JoinInputSideSpec:
    """Flink's JoinInputSideSpec: which view an input side gets, and its unique key."""

    kind: InputSideKind
    unique_key_indexes: tuple[int, ...] | None

    @property
    def has_unique_key(self) -> bool:
        return self.unique_key_indexes is not None


def analyze_join_input(spec: InputSpec, join_key_columns: Sequence[str]) -> JoinInputSideSpec:
    """As Flink's JoinUtil.analyzeJoinInput: no unique key -> NoUniqueKey; a unique
    key contained in the join key -> JoinKeyContainsUniqueKey; else the input side
    has a unique key (Flink picks the smallest declared one; converge declares one).
    The key's columns are in the input's column order, whatever order the key was
    declared in: Flink's unique keys are ImmutableBitSets (FlinkRelMetadataQuery.
    getUniqueKeys) and the selector takes `toArray`, ascending. The unique-key views'
    MapState keys, and so their order on both backends, are rows of those columns."""
    if not spec.unique_key:
        return JoinInputSideSpec("InputSideHasNoUniqueKey", None)
    idx = tuple(sorted(spec.index_of(c) for c in spec.unique_key))
    if set(spec.unique_key) <= set(join_key_columns):
        return JoinInputSideSpec("JoinKeyContainsUniqueKey", idx)
    return JoinInputSideSpec("InputSideHasUniqueKey", idx)


class JoinRecordStateView:
    """Inner-side view: the records of one side under the current join key."""

    side_spec: JoinInputSideSpec

    def add_record(self, row: tuple) -> None:
        raise NotImplementedError

    def retract_record(self, row: tuple) -> None:
        raise NotImplementedError

    def records(self) -> Iterable[tuple]:
        raise NotImplementedError

    def contains(self, row: tuple) -> bool:
        raise NotImplementedError

    def stored_for(self, row: tuple) -> tuple | None:
        """The row stored under `row`'s unique key (unique-key views only)."""
        return None


class OuterJoinRecordStateView(JoinRecordStateView):
    """Outer-side view: records with their number of associations."""

    def add_record(self, row: tuple, num_assoc: int = 0) -> None:
        raise NotImplementedError

    def update_num_of_associations(self, row: tuple, num_assoc: int) -> None:
        raise NotImplementedError

    def records_and_associations(self) -> Iterable[tuple[tuple, int]]:
        raise NotImplementedError

    def records(self) -> Iterable[tuple]:
        return [r for r, _ in self.records_and_associations()]


# ------------------------------------------------------------- key contains uk


class JoinKeyContainsUniqueKeyStateView(JoinRecordStateView):
    def __init__(self, backend: KeyedStateBackend, name: str, ttl: int | None, side: JoinInputSideSpec) -> None:
        self.side_spec = side
        self._state = backend.value_state(name, ttl)

    def add_record(self, row: tuple) -> None:
        self._state.update(row)

    def retract_record(self, row: tuple) -> None:
        self._state.clear()

    def records(self) -> Iterable[tuple]:
        row = self._state.get()
        return () if row is None else (row,)

    def contains(self, row: tuple) -> bool:
        return self._state.get() == row

    def stored_for(self, row: tuple) -> tuple | None:
        return self._state.get()


class OuterJoinKeyContainsUniqueKeyStateView(OuterJoinRecordStateView):
    def __init__(self, backend: KeyedStateBackend, name: str, ttl: int | None, side: JoinInputSideSpec) -> None:
        self.side_spec = side
        self._state = backend.value_state(name, ttl)

    def add_record(self, row: tuple, num_assoc: int = 0) -> None:
        self._state.update((row, num_assoc))

    def update_num_of_associations(self, row: tuple, num_assoc: int) -> None:
        self._state.update((row, num_assoc))

    def retract_record(self, row: tuple) -> None:
        self._state.clear()

    def records_and_associations(self) -> Iterable[tuple[tuple, int]]:
        value = self._state.get()
        return () if value is None else (value,)

    def contains(self, row: tuple) -> bool:
        value = self._state.get()
        return value is not None and value[0] == row

    def stored_for(self, row: tuple) -> tuple | None:
        value = self._state.get()
        return None if value is None else value[0]


# ------------------------------------------------------------ input side has uk


class _UniqueKeyMixin:
    _uk: tuple[int, ...]

    def _key(self, row: tuple) -> tuple:
        return tuple([row[i] for i in self._uk])


class InputSideHasUniqueKeyStateView(_UniqueKeyMixin, JoinRecordStateView):
    def __init__(self, backend: KeyedStateBackend, name: str, ttl: int | None, side: JoinInputSideSpec,
                 spec: InputSpec, java_hash: JavaHash | None = None) -> None:
        self.side_spec = side
        self._uk = side.unique_key_indexes or ()
        self._state = backend.map_state(name, [spec.column_types[i] for i in self._uk], ttl, java_hash=java_hash)

    def add_record(self, row: tuple) -> None:
        self._state.put(self._key(row), row)

    def retract_record(self, row: tuple) -> None:
        self._state.remove(self._key(row))

    def records(self) -> Iterable[tuple]:
        return [row for _, row in self._state.items()]

    def contains(self, row: tuple) -> bool:
        return self._state.get(self._key(row)) == row

    def stored_for(self, row: tuple) -> tuple | None:
        return self._state.get(self._key(row))


class OuterInputSideHasUniqueKeyStateView(_UniqueKeyMixin, OuterJoinRecordStateView):
    def __init__(self, backend: KeyedStateBackend, name: str, ttl: int | None, side: JoinInputSideSpec,
                 spec: InputSpec, java_hash: JavaHash | None = None) -> None:
        self.side_spec = side
        self._uk = side.unique_key_indexes or ()
        self._state = backend.map_state(name, [spec.column_types[i] for i in self._uk], ttl, java_hash=java_hash)

    def add_record(self, row: tuple, num_assoc: int = 0) -> None:
        self._state.put(self._key(row), (row, num_assoc))

    def update_num_of_associations(self, row: tuple, num_assoc: int) -> None:
        self._state.put(self._key(row), (row, num_assoc), new_arrival=False)

    def retract_record(self, row: tuple) -> None:
        self._state.remove(self._key(row))

    def records_and_associations(self) -> Iterable[tuple[tuple, int]]:
        return [value for _, value in self._state.items()]

    def contains(self, row: tuple) -> bool:
        value = self._state.get(self._key(row))
        return value is not None and value[0] == row

    def stored_for(self, row: tuple) -> tuple | None:
        value = self._state.get(self._key(row))
        return None if value is None else value[0]


# ------------------------------------------------------------ no unique key


class InputSideHasNoUniqueKeyStateView(JoinRecordStateView):
    def __init__(self, backend: KeyedStateBackend, name: str, ttl: int | None, side: JoinInputSideSpec,
                 spec: InputSpec, java_hash: JavaHash | None = None) -> None:
        self.side_spec = side
        self._state = backend.map_state(name, spec.column_types, ttl, java_hash=java_hash)

    def add_record(self, row: tuple) -> None:
        count = self._state.get(row)
        if count is None:
            self._state.put(row, 1)
        else:
            self._state.put(row, count + 1, new_arrival=False)

    def retract_record(self, row: tuple) -> None:
        count = self._state.get(row)
        if count is None:
            return
        if count > 1:
            self._state.put(row, count - 1, new_arrival=False)
        else:
            self._state.remove(row)

    def records(self) -> Iterable[tuple]:
        out: list[tuple] = []
        for row, count in self._state.items():
            if count == 1:
                out.append(row)
            else:
                out.extend([row] * count)
        return out

    def contains(self, row: tuple) -> bool:
        return self._state.contains(row)


class OuterInputSideHasNoUniqueKeyStateView(OuterJoinRecordStateView):
    def __init__(self, backend: KeyedStateBackend, name: str, ttl: int | None, side: JoinInputSideSpec,
                 spec: InputSpec, java_hash: JavaHash | None = None) -> None:
        self.side_spec = side
        self._state = backend.map_state(name, spec.column_types, ttl, java_hash=java_hash)

    def add_record(self, row: tuple, num_assoc: int = 0) -> None:
        value = self._state.get(row)
        if value is None:
            self._state.put(row, (1, num_assoc))
        else:
            self._state.put(row, (value[0] + 1, num_assoc), new_arrival=False)

    def update_num_of_associations(self, row: tuple, num_assoc: int) -> None:
        value = self._state.get(row)
        count = 1 if value is None else value[0]
        self._state.put(row, (count, num_assoc), new_arrival=False)

    def retract_record(self, row: tuple) -> None:
        value = self._state.get(row)
        if value is None:
            return
        if value[0] > 1:
            self._state.put(row, (value[0] - 1, value[1]), new_arrival=False)
        else:
            self._state.remove(row)

    def records_and_associations(self) -> Iterable[tuple[tuple, int]]:
        out: list[tuple[tuple, int]] = []
        for row, (count, assoc) in self._state.items():
            out.extend([(row, assoc)] * count)
        return out

    def contains(self, row: tuple) -> bool:
        return self._state.contains(row)


def create_view(backend: KeyedStateBackend, name: str, spec: InputSpec, side: JoinInputSideSpec,
                *, outer: bool, ttl: int | None, java_hash: JavaHash | None = None) -> JoinRecordStateView:
    """The view Flink's JoinRecordStateViews / OuterJoinRecordStateViews.create would pick. `java_hash`: the
    HashMap.hash of a map key (unique key or row) on `hashmap`, where Flink's Java key is not that row itself
    (the multi-way join's (join key, key) rows, engine/operators/multi_join.py); None: the row's own hash."""
    if side.kind == "JoinKeyContainsUniqueKey":
        cls = OuterJoinKeyContainsUniqueKeyStateView if outer else JoinKeyContainsUniqueKeyStateView
        return cls(backend, name, ttl, side)
    if side.kind == "InputSideHasUniqueKey":
        cls2 = OuterInputSideHasUniqueKeyStateView if outer else InputSideHasUniqueKeyStateView
        return cls2(backend, name, ttl, side, spec, java_hash)
    cls3 = OuterInputSideHasNoUniqueKeyStateView if outer else InputSideHasNoUniqueKeyStateView
    return cls3(backend, name, ttl, side, spec, java_hash)
