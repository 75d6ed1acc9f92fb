"""The properties' own reference model of the facts their expectations need, derived without the engine.

A property that computed its expected answer with a module of the code under
test (key codec, condition compiler, state views, pipeline options) would
move with a bug in that module and never see it. Everything an expectation
needs from those areas is derived here again, from the documented or
measured fact, and tested against the facts themselves
(tests/properties/test_reference.py), never against the engine's module:

* `binary_row_key`: the bytes of Flink's BinaryRowDataSerializer for a map
  key, whose unsigned byte order is RocksDB's iteration order (measured:
  longs iterate 0, 65536, 256, -256, 1, 2, 3, 1000, -1; strings of up to 7
  bytes sort by their bytes before longer ones; a NULL by its null bit);
* `JavaHashMap` / `binary_row_hash` / `java_long_hash`: the iteration order of
  a java.util.HashMap (the HashMapStateBackend's MapState), simulated bucket by
  bucket as HashMap.putVal / resize / removeNode keep them, with
  BinaryRowData.hashCode keys (Murmur3 over `binary_row_key`, checked against
  Flink 2.3.0's printed codes) and Long.hashCode keys (the interval join's
  per-timestamp caches);
* `equality_keys` / `view_kind`: which columns of each side a condition
  compares for equality, and which state view Flink picks from them;
* `inputs_as_joined`: the unique keys the join sees after `unique_key_lost`
  and `dedupe_before_join`;
* `PairMatcher`: whether a left and a right row satisfy the whole join
  condition, decided by DuckDB (SQL's three-valued logic, not the engine's
  compiled predicate).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from converge.engine.model.errors import InternalError
from converge.engine.model.scenario import ChangeEvent, InputSpec, JoinSpec, Scenario, sources_of
from converge.oracle.query import run_query
from converge.oracle.sql import render_join_sql, render_source

LONG_MAX = 2**63 - 1   # Long.MAX_VALUE: the watermark / processing time that ends a stream
_WORD = 8


def _field_bytes(value: object, ctype: str) -> tuple[bytes, bytes]:
    """(the 8-byte fixed slot, the variable-length bytes) of one non-null field."""
    if ctype == "BIGINT":
        return int(value).to_bytes(_WORD, "little", signed=True), b""  # type: ignore[call-overload]
    if ctype == "INTEGER":
        return int(value).to_bytes(4, "little", signed=True).ljust(_WORD, b"\0"), b""  # type: ignore[call-overload]
    if ctype == "DOUBLE":
        return struct.pack("<d", float(value)), b""  # type: ignore[arg-type]
    if ctype == "BOOLEAN":
        return bytes([1 if value else 0]).ljust(_WORD, b"\0"), b""
    text = str(value).encode("utf-8")
    if len(text) < _WORD:  # inline: the bytes, then 0x80 | length in the slot's last byte
        return text.ljust(_WORD - 1, b"\0") + bytes([0x80 | len(text)]), b""
    return b"", text


def binary_row_key(values: Sequence[object], types: Sequence[str]) -> bytes:
    """A map key as Flink's BinaryRowDataSerializer writes it: 4-byte big-endian length, then the row
    (8-byte header with the row kind byte and one null bit per field from bit 8 on, one 8-byte slot per
    field, the variable part padded to whole words; a long string's slot holds offset << 32 | length)."""
    fixed = bytearray(_WORD * (1 + len(types)))
    variable = bytearray()
    for i, (value, ctype) in enumerate(zip(values, types, strict=False)):
        slot_at = _WORD * (1 + i)
        if value is None:
            bit = 8 + i
            fixed[bit // 8] |= 1 << (bit % 8)
            continue
        slot, data = _field_bytes(value, ctype)
        if not slot:
            offset = len(fixed) + len(variable)
            slot = ((offset << 32) | len(data)).to_bytes(_WORD, "little")
            variable += data + b"\0" * (-len(data) % _WORD)
        fixed[slot_at:slot_at + _WORD] = slot
    body = bytes(fixed) + bytes(variable)
    return len(body).to_bytes(4, "big") + body


def binary_row_hash(values: Sequence[object], types: Sequence[str]) -> int:
    """BinaryRowData.hashCode (unsigned): MurmurHash3_x86_32, seed 42, over the row's little-endian 4-byte blocks
    (binary_row_key without its 4-byte length), finished with the row's byte length."""
    body = binary_row_key(values, types)[4:]
    h = 42
    for i in range(0, len(body), 4):
        k = int.from_bytes(body[i:i + 4], "little") * 0xCC9E2D51 & 0xFFFFFFFF
        k = ((k << 15 | k >> 17) & 0xFFFFFFFF) * 0x1B873593 & 0xFFFFFFFF
        h ^= k
        h = ((h << 13 | h >> 19) & 0xFFFFFFFF) * 5 + 0xE6546B64 & 0xFFFFFFFF
    h ^= len(body)
    h = (h ^ h >> 16) * 0x85EBCA6B & 0xFFFFFFFF
    h = (h ^ h >> 13) * 0xC2B2AE35 & 0xFFFFFFFF
    return h ^ h >> 16


def java_long_hash(value: int) -> int:
    """Long.hashCode: the high and low 32 bits of the two's complement, xor'ed (unsigned)."""
    bits = value % 2**64
    return (bits >> 32) ^ (bits & 0xFFFFFFFF)


class JavaHashMap:
    """The iteration order of one java.util.HashMap whose keys hash by `hash_of`: a table of chains (16 at
    the first put), a new key appended to its chain, the table doubled (each chain split in order into its
    low and high halves) when a chain reaches 9 in a table under 64 or the size passes 3/4 of the table, a
    removed key unlinked, the table never shrunk."""

    def __init__(self, hash_of: Callable[[Any], int]) -> None:
        self.hash_of = hash_of
        self.chains: list[list] = [[] for _ in range(16)]
        self.size = 0

    def _chain(self, key: object, n: int) -> int:
        h = self.hash_of(key)
        return (h ^ (h >> 16)) & (n - 1)

    def _double(self) -> None:
        n = 2 * len(self.chains)
        chains: list[list] = [[] for _ in range(n)]
        for chain in self.chains:
            for key in chain:
                chains[self._chain(key, n)].append(key)
        self.chains = chains

    def put(self, key: object) -> None:
        chain = self.chains[self._chain(key, len(self.chains))]
        if key in chain:
            return
        chain.append(key)
        if len(chain) > 8 and len(self.chains) < 64:
            self._double()
        self.size += 1
        if 4 * self.size > 3 * len(self.chains):
            self._double()

    def remove(self, key: object) -> None:
        chain = self.chains[self._chain(key, len(self.chains))]
        if key in chain:
            chain.remove(key)
            self.size -= 1

    def __iter__(self) -> Iterator:
        return (key for chain in self.chains for key in chain)


def interval_cache_key(time: int) -> tuple[str]:
    """An interval join's time-bucket map key (docs/interval-joins.md): the 16 hex digits of the time's
    64-bit two's complement, a VARCHAR whose order is a Java Long map key's big-endian byte order."""
    return ("%016x" % (time % 2**64),)


# ---------------------------------------------------------------- conditions and views

_CONJUNCT_EQ = re.compile(r"^(\w+)\.(\w+)\s*(=|IS\s+NOT\s+DISTINCT\s+FROM)\s*(\w+)\.(\w+)$", re.IGNORECASE)


def _top_level_conjuncts(sql: str) -> list[str]:
    """The operands of the top-level ANDs of `sql`, outer parentheses removed."""
    text = sql.strip()
    while text.startswith("(") and _closing(text, 0) == len(text) - 1:
        text = text[1:-1].strip()
    parts, depth, start, i = [], 0, 0, 0
    upper = text.upper()
    while i < len(text):
        ch = text[i]
        if ch == "'":
            i = text.index("'", i + 1)
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0 and upper.startswith(" AND ", i) and not _inside_between(upper[start:i]):
            parts.append(text[start:i])
            start = i + 5
        i += 1
    parts.append(text[start:])
    out: list[str] = []
    for part in parts:
        part = part.strip()
        if part.startswith("(") and _closing(part, 0) == len(part) - 1:
            out.extend(_top_level_conjuncts(part))
        else:
            out.append(part)
    return out


def _inside_between(segment: str) -> bool:
    """True when `segment` has a BETWEEN still waiting for its AND."""
    return segment.count(" BETWEEN ") > 0 and segment.count(" BETWEEN ") > segment.count(" AND ")


def _closing(text: str, at: int) -> int:
    depth = 0
    for i in range(at, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def equality_keys(condition: str, left: Sequence[str], right: str) -> list[tuple[str, str, str, bool]]:
    """(left input, left column, right column, null_safe) for each top-level equality conjunct between an
    input of `left` and `right`: the join key Flink's planner extracts."""
    keys = []
    for conjunct in _top_level_conjuncts(condition):
        m = _CONJUNCT_EQ.match(conjunct)
        if m is None:
            continue
        t1, c1, op, t2, c2 = m.groups()
        null_safe = op.upper() != "="
        if t1 in left and t2 == right:
            keys.append((t1, c1, c2, null_safe))
        elif t2 in left and t1 == right:
            keys.append((t2, c2, c1, null_safe))
    return keys


def has_residual(condition: str, left: Sequence[str], right: str) -> bool:
    """Whether the condition holds anything besides the equalities `equality_keys` finds (a residual predicate)."""
    return len(_top_level_conjuncts(condition)) != len(equality_keys(condition, left, right))


def view_kind(spec: InputSpec, key_columns: Sequence[str]) -> str:
    """Flink's JoinInputSideSpec: no unique key; a unique key inside the join key; another unique key."""
    if not spec.unique_key:
        return "InputSideHasNoUniqueKey"
    if set(spec.unique_key) <= set(key_columns):
        return "JoinKeyContainsUniqueKey"
    return "InputSideHasUniqueKey"


def inputs_as_joined(scenario: Scenario) -> tuple[InputSpec, ...]:
    """The chain's inputs with the unique keys the join sees (docs/anomalies.md): `unique_key_lost` drops
    one; `dedupe_before_join` gives its dedupe key (the declared unique key by default), as a retract input."""
    cfg = scenario.config
    out = []
    for spec in scenario.chain:
        if spec.name in cfg.dedupe_before_join:
            key = cfg.dedupe_before_join[spec.name] or spec.unique_key
            spec = replace(spec, unique_key=tuple(key) if key else None, changelog_mode="retract")
        elif spec.name in cfg.unique_key_lost:
            spec = replace(spec, unique_key=None)
        out.append(spec)
    return tuple(out)


# ---------------------------------------------------------------- the join condition, decided by DuckDB


class PairMatcher:
    """Which (left row, right row) pairs of a binary join satisfy its whole condition, from one DuckDB
    query over every distinct row the scenario's events carry (plus any rows passed in)."""

    def __init__(self, scenario: Scenario, extra: dict[str, Sequence[tuple]] | None = None) -> None:
        left, right = scenario.chain
        rows: dict[str, dict[tuple, int]] = {left.name: {}, right.name: {}}
        fed = sources_of(scenario)  # a stream both inputs read (`source`): its rows are rows of each
        for event in scenario.events:
            if isinstance(event, ChangeEvent) and event.input in fed:
                for name in fed[event.input]:
                    rows[name].setdefault(event.row, len(rows[name]))
        for name, extra_rows in (extra or {}).items():
            for row in extra_rows:
                rows[name].setdefault(tuple(row), len(rows[name]))
        self._index = rows
        self._pairs: set[tuple[int, int]] = set()
        if rows[left.name] and rows[right.name]:
            self._pairs = self._query(scenario, left, right, rows)

    @staticmethod
    def _query(scenario: Scenario, left: InputSpec, right: InputSpec,
               rows: dict[str, dict[tuple, int]]) -> set[tuple[int, int]]:
        index_col = "__row_index"
        specs = [InputSpec(s.name, s.columns + ((index_col, "BIGINT"),)) for s in (left, right)]
        probe = Scenario("pair matcher", tuple(specs), JoinSpec((left.name, right.name), ("inner",),
                                                                (scenario.join.conditions[0],)))
        tables = {s.name: render_source(s, [r + (i,) for r, i in rows[s.name].items()]) for s in specs}
        width = len(left.columns)
        return {(r[width], r[-1]) for r in run_query(render_join_sql(probe, tables))}

    def matches(self, left_row: tuple, right_row: tuple) -> bool:
        names = list(self._index)
        i = self._index[names[0]].get(left_row)
        j = self._index[names[1]].get(right_row)
        if i is None or j is None:
            raise InternalError(f"PairMatcher: {left_row} / {right_row} is not a row of the scenario")
        return (i, j) in self._pairs
