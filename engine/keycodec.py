"""Serialized map keys, so MapState iteration order is the byte order RocksDB would give.

Flink keeps a RowData map key in RocksDB as BinaryRowDataSerializer writes it:
a 4-byte big-endian length, then the binary row. The binary row is an 8-byte
header (row-kind byte, then one null bit per field), then one 8-byte slot per
field, then the variable-length part in 8-byte words:

* BIGINT and DOUBLE: 8 bytes little-endian in the slot (so numeric order is
  NOT kept: 256 sorts before 1, and -1 after every positive number);
* INTEGER: 4 bytes little-endian, the rest of the slot zero;
* BOOLEAN: one byte;
* VARCHAR of at most 7 UTF-8 bytes: inline, bytes first, the slot's last byte
  is 0x80 | length; longer: the slot holds offset << 32 | length
  (little-endian) and the bytes go to the variable part, padded to 8 bytes;
* NULL: the null bit is set and the slot is zero.

RocksDB compares keys as unsigned bytes, so sorting by these bytes reproduces
the iteration order of a RocksDB-backed MapState for one join key (all entries
of one key share the key-group / key / namespace prefix).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence

from converge.engine.model.errors import ApiMisuseError

_PACK_Q = struct.Struct("<q").pack
_PACK_D = struct.Struct("<d").pack
_PACK_I = struct.Struct("<i").pack
_PACK_BE_I = struct.Struct(">i").pack
_ZERO8 = b"\x00" * 8


def _slot(value: object, ctype: str) -> tuple[bytes, bytes]:
    """(fixed slot, variable-length bytes) of one non-null field."""
    if ctype == "BIGINT":
        return _PACK_Q(value), b""
    if ctype == "INTEGER":
        return _PACK_I(value) + b"\x00\x00\x00\x00", b""
    if ctype == "DOUBLE":
        return _PACK_D(float(value)), b""
    if ctype == "BOOLEAN":
        return (b"\x01" if value else b"\x00") + b"\x00" * 7, b""
    data = str(value).encode("utf-8")
    if len(data) <= 7:
        return data + b"\x00" * (7 - len(data)) + bytes([0x80 | len(data)]), b""
    return b"", data


def encode_binary_row(values: Sequence[object], types: Sequence[str]) -> bytes:
    """The serialized form of a row as a RocksDB map key (see module docstring)."""
    arity = len(types)
    header_bits = 0
    slots: list[bytes] = []
    var = bytearray()
    fixed_len = 8 + 8 * arity
    for i, (value, ctype) in enumerate(zip(values, types, strict=False)):
        if value is None:
            header_bits |= 1 << (i + 8)
            slots.append(_ZERO8)
            continue
        slot, data = _slot(value, ctype)
        if slot:
            slots.append(slot)
            continue
        offset = fixed_len + len(var)
        slots.append(_PACK_Q((offset << 32) | len(data)))
        var += data
        pad = (-len(data)) % 8
        var += b"\x00" * pad
    body = header_bits.to_bytes(8, "little") + b"".join(slots) + bytes(var)
    return _PACK_BE_I(len(body)) + body


def encode_row_of_rows(parts: Sequence[tuple[Sequence[object], Sequence[str]]]) -> bytes:
    """A binary row whose fields are rows (`parts`: each nested row's values and types), serialized as above.

    A nested row is a variable-length field: its slot holds offset << 32 | size (little-endian) and its own
    binary row (header, slots, variable part: a multiple of 8 bytes) goes to the outer row's variable part,
    as BinaryRowWriter.writeRow copies a BinaryRowData. The multi-way join keys its state by such a row
    (MultiJoinStateViews: the input's join key and its unique key or record, engine/operators/multi_join.py)."""
    fixed_len = 8 + 8 * len(parts)
    slots: list[bytes] = []
    var = bytearray()
    for values, types in parts:
        nested = encode_binary_row(values, types)[4:]
        slots.append(_PACK_Q(((fixed_len + len(var)) << 32) | len(nested)))
        var += nested
    body = _ZERO8 + b"".join(slots) + bytes(var)
    return _PACK_BE_I(len(body)) + body


OrderKeyFn = Callable[[tuple], object]


def order_key_fn(order: str, types: Sequence[str]) -> OrderKeyFn | None:
    """How a map key sorts in iteration for the given MapState order mode.

    `rocksdb`: its serialized bytes; `arrival`: None, meaning the state stamps each entry with an arrival
    counter instead. (`hashmap` sorts by the table's buckets: engine/java_hashmap.py, `hashmap_key_fn`.)
    """
    types = tuple(types)
    if order == "rocksdb":
        return lambda key: encode_binary_row(key, types)
    if order == "arrival":
        return None
    raise ApiMisuseError(f"unknown map state order {order!r}")
