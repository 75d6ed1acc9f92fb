"""Input materialization: what each input's table holds after a prefix of the stream.

Pure Python on purpose: the engine, the properties and the oracle all need
the same answer to "which rows does input X hold after event i", and the
oracle's SQL is only as trustworthy as the tables fed to it.

Semantics (docs/scenario-format.md):

* ``retract`` / ``insert_only`` inputs are bags: ``+I``/``+U`` add one
  instance of the row, ``-U``/``-D`` remove one; removing a row that is not
  there is an invalid stream (BadInputError naming the event).
* ``upsert`` inputs keep the last row per unique key: ``+I``/``+U`` set the
  row for its key, ``-D`` removes the key (its row may carry only the key
  columns, the rest NULL); deleting an absent key is a no-op. ``-U`` is
  treated like ``-D``, as Flink's ChangelogNormalize does.
* ``all`` inputs (a raw changelog: ``-U/+U`` pairs, bare ``+U``, ``-D``) are
  materialized by unique key too: ``+I``/``+U`` set the row for its key
  (replacing any), ``-U``/``-D`` remove the key and must carry the full image
  the key holds; anything else is an invalid stream (BadInputError).

Event positions are indexes into ``scenario.events``; watermark, processing
time and idle events occupy a position but change no table.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Any

from converge.engine.model.changelog import ACCUMULATE_KINDS, ROW_KINDS
from converge.engine.model.errors import ApiMisuseError, BadInputError
from converge.engine.model.scenario import ChangeEvent, InputSpec, Scenario

__all__ = ["materialize_inputs", "presence_intervals", "row_checker", "check_value", "Interval"]

Interval = tuple[int, int, tuple]
"""(start_seq, end_seq_exclusive, row): the row is present after events start..end-1."""

_INT_RANGES = {"BIGINT": (-(2**63), 2**63 - 1), "INTEGER": (-(2**31), 2**31 - 1)}


class _NaN:
    """Stands for every NaN inside a row key: NaN != NaN would make such a row impossible to retract."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NaN"


_NAN_KEY = _NaN()


def check_value(value: Any, ctype: str, column: str) -> Any:
    """Validate one value against its column type; return it normalized (DOUBLE -> float)."""
    if value is None:
        return None
    if ctype in _INT_RANGES:
        if isinstance(value, bool) or not isinstance(value, int):
            raise BadInputError(f"column {column!r} ({ctype}): expected an integer, got {value!r}")
        lo, hi = _INT_RANGES[ctype]
        if not lo <= value <= hi:
            raise BadInputError(f"column {column!r} ({ctype}): {value} is out of range")
        return value
    if ctype == "DOUBLE":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise BadInputError(f"column {column!r} (DOUBLE): expected a number, got {value!r}")
        try:
            return float(value)
        except OverflowError:
            raise BadInputError(f"column {column!r} (DOUBLE): {value} does not fit a double") from None
    if ctype == "VARCHAR":
        if not isinstance(value, str):
            raise BadInputError(f"column {column!r} (VARCHAR): expected a string, got {value!r}")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise BadInputError(f"column {column!r} (VARCHAR): {value!r} is not valid Unicode") from None
        return value
    if ctype == "BOOLEAN":
        if not isinstance(value, bool):
            raise BadInputError(f"column {column!r} (BOOLEAN): expected true or false, got {value!r}")
        return value
    raise BadInputError(f"column {column!r}: unsupported type {ctype!r}")


def row_checker(spec: InputSpec) -> Callable[[tuple], tuple]:
    """A function validating a row of ``spec`` and returning it normalized."""
    names = spec.column_names
    types = spec.column_types
    width = len(names)

    def check(row: tuple) -> tuple:
        if len(row) != width:
            raise BadInputError(
                f"input {spec.name!r}: row {list(row)!r} has {len(row)} values, expected {width} {list(names)}")
        return tuple(check_value(v, t, c) for v, t, c in zip(row, types, names, strict=False))

    return check


def _key_of(spec: InputSpec) -> Callable[[tuple], tuple]:
    """Dictionary key of a row: the row itself, with NaN made equal to NaN when DOUBLE columns exist."""
    if "DOUBLE" not in spec.column_types:
        return lambda row: row
    return lambda row: tuple(_NAN_KEY if isinstance(v, float) and math.isnan(v) else v for v in row)


class _InputState:
    """Open row instances of one input while replaying the stream."""

    def __init__(self, spec: InputSpec) -> None:
        self.spec = spec
        self.check = row_checker(spec)
        self.key = _key_of(spec)
        self.upsert = spec.changelog_mode in ("upsert", "all")
        self.full_image_retractions = spec.changelog_mode == "all"
        if self.upsert:
            assert spec.unique_key is not None  # enforced by scenario_from_dict
            idx = tuple(spec.index_of(c) for c in spec.unique_key)
            self.ukey: Callable[[tuple], tuple] = lambda row: self.key(tuple(row[i] for i in idx))
        # Every instance ever opened, in creation order: [start, end or None, row].
        self.instances: list[list] = []
        # bag inputs: row key -> indexes of open instances (oldest first);
        # upsert inputs: unique key -> index of the open instance.
        self.open_bag: dict[tuple, list[int]] = {}
        self.open_upsert: dict[tuple, int] = {}

    def apply(self, seq: int, kind: str, raw_row: tuple) -> None:
        row = self.check(raw_row)
        if self.upsert:
            self._apply_upsert(seq, kind, row)
        else:
            self._apply_bag(seq, kind, row)

    def _apply_bag(self, seq: int, kind: str, row: tuple) -> None:
        k = self.key(row)
        if kind in ACCUMULATE_KINDS:
            self.open_bag.setdefault(k, []).append(len(self.instances))
            self.instances.append([seq, None, row])
            return
        open_ = self.open_bag.get(k)
        if not open_:
            raise BadInputError(
                f"input {self.spec.name!r}: {kind} of row {list(row)!r}, which the input does not hold",
                event_index=seq)
        self.instances[open_.pop(0)][1] = seq
        if not open_:
            del self.open_bag[k]

    def _apply_upsert(self, seq: int, kind: str, row: tuple) -> None:
        uk = self.ukey(row)
        current = self.open_upsert.get(uk)
        if kind in ACCUMULATE_KINDS:
            if current is not None:
                if self.key(self.instances[current][2]) == self.key(row):
                    return  # same image again: the table does not change
                self.instances[current][1] = seq
            self.open_upsert[uk] = len(self.instances)
            self.instances.append([seq, None, row])
            return
        if self.full_image_retractions and (current is None or self.key(self.instances[current][2]) != self.key(row)):
            held = "nothing" if current is None else list(self.instances[current][2])
            raise BadInputError(f"input {self.spec.name!r}: {kind} of row {list(row)!r}, but its unique key holds "
                                f"{held}", event_index=seq)
        if current is not None:  # an upsert -D / -U of an absent key is a no-op
            self.instances[current][1] = seq
            del self.open_upsert[uk]

    def open_rows(self) -> Counter[tuple]:
        """The table now, as a bag (equal rows share one Counter key, NaN included)."""
        counts: Counter[tuple] = Counter()
        canon: dict[tuple, tuple] = {}
        for _start, end, row in self.instances:
            if end is None:
                counts[canon.setdefault(self.key(row), row)] += 1
        return counts


def _replay(scenario: Scenario, stop: int) -> dict[str, _InputState]:
    """Each input's state after events[:stop]; an input that reads another's stream (`source`) has that one's."""
    readers = {spec.name: spec.source for spec in scenario.inputs if spec.source is not None}
    states = {spec.name: _InputState(spec) for spec in scenario.inputs if spec.name not in readers}
    for seq, event in enumerate(scenario.events[:stop]):
        if not isinstance(event, ChangeEvent):
            continue
        state = states.get(event.input)
        if state is None:
            if event.input in readers:
                raise BadInputError(f"input {event.input!r} reads the stream of {readers[event.input]!r}: write its "
                                    f"events on {readers[event.input]!r}", event_index=seq)
            raise BadInputError(f"unknown input {event.input!r}", event_index=seq)
        if event.kind not in ROW_KINDS:
            raise BadInputError(f"unknown row kind {event.kind!r}", event_index=seq)
        try:
            state.apply(seq, event.kind, event.row)
        except BadInputError as exc:
            raise exc.at_event(seq) from None
    for name, source in readers.items():
        states[name] = states[source]  # one stream, one table: each reader sees it whole
    return states


def materialize_inputs(scenario: Scenario, upto: int | None = None) -> dict[str, Counter[tuple]]:
    """Each input's table after events[0..upto] (``upto`` inclusive; all events when None).

    ``materialize_inputs(s, i)`` is the state that ``history(s)[i]`` joins.
    Only events up to ``upto`` are validated.
    """
    n = len(scenario.events)
    stop = n if upto is None else upto + 1
    if not 0 <= stop <= n:
        raise ApiMisuseError(f"upto={upto} is outside the {n} events of scenario {scenario.name!r}")
    return {name: state.open_rows() for name, state in _replay(scenario, stop).items()}


def presence_intervals(scenario: Scenario) -> dict[str, list[Interval]]:
    """Per input, one (start, end_exclusive, row) per row instance, in creation order.

    A row instance is present after events start..end-1; ``end`` is
    ``len(scenario.events)`` when it is never removed. The whole stream is
    validated (BadInputError naming the event index).
    """
    n = len(scenario.events)
    return {
        name: [(start, n if end is None else end, row) for start, end, row in state.instances]
        for name, state in _replay(scenario, n).items()
    }
