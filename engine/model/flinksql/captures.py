"""Reading changelogs captured from a real job: JSON lines, Debezium JSON, Flink's print format, CSV.

Every reader streams (one line at a time, nothing kept), turns each record
into (row kind, row in the engine's representation, position or None), and
refuses a bad line with a BadInputError naming `file:line`.

* ``jsonl``: one object per line, the columns by name and the row kind in
  `op` / `kind` / `rowkind` / `row_kind` (`+I`, `-U`, `+U`, `-D`, or Flink's
  RowKind names INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE);
* ``debezium``: Debezium's envelope (`before`, `after`, `op` = c/r/u/d,
  optionally inside `payload`); an update is -U before, +U after;
* ``print``: Flink's print sink, `+I[1, foo, null]` with an optional
  `name:1> ` prefix; values are split at ", ", so a STRING holding ", " is
  refused, and `null` is NULL;
* ``csv``: a header naming the columns and a `op`/`kind` column; an empty
  field is NULL.

A record may carry its position in the job's input (`pos`: the index of the
input record whose processing produced it, or of the input record itself);
`converge verify` checks the answer at those points when every record has one.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Literal, Sequence

from converge.engine.model.errors import ApiMisuseError, BadInputError
from converge.engine.model.flinksql.types import FlinkType
from converge.engine.model.scenario import short_repr

CaptureFormat = Literal["auto", "jsonl", "debezium", "print", "csv"]
KIND_FIELDS = ("op", "kind", "rowkind", "row_kind")
POSITION_FIELD = "pos"
_KINDS = {"+I": "+I", "-U": "-U", "+U": "+U", "-D": "-D", "INSERT": "+I", "UPDATE_BEFORE": "-U",
          "UPDATE_AFTER": "+U", "DELETE": "-D", "I": "+I", "UB": "-U", "UA": "+U", "D": "-D"}
_PRINT = re.compile(r"^(?:[^\[]*?>\s*)?([+-][IUD])\[(.*)\]\s*$")


@dataclass(frozen=True)
class Record:
    kind: str
    row: tuple
    position: int | None
    line: int


def detect_format(path: Path) -> str:
    """The format of a capture file from its name and first line."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    with path.open(encoding="utf-8-sig", errors="replace") as fh:
        first = next((line for line in fh if line.strip()), "").strip()
    if _PRINT.match(first):
        return "print"
    if first.startswith("{"):
        try:
            doc = json.loads(first)
        except ValueError:
            return "jsonl"
        body = doc.get("payload", doc) if isinstance(doc, dict) else doc
        if isinstance(body, dict) and ("before" in body or "after" in body) and "op" in body:
            return "debezium"
        return "jsonl"
    raise BadInputError(f"{path}:1: cannot tell the capture's format; pass --format jsonl|debezium|print|csv")


def read_capture(path: str | Path, columns: Sequence[tuple[str, FlinkType]], fmt: str = "auto"
                 ) -> Iterator[Record]:
    """The records of one capture file, in file order."""
    p = Path(path)
    if not p.is_file():
        raise BadInputError(f"{p}: no such file")
    if fmt == "auto":
        fmt = detect_format(p)
    readers: dict[str, Callable[[Path, Sequence[tuple[str, FlinkType]]], Iterator[Record]]] = {
        "jsonl": _jsonl, "debezium": _debezium, "print": _print, "csv": _csv}
    if fmt not in readers:
        raise ApiMisuseError(f"read_capture(fmt={fmt!r}): expected one of auto, {', '.join(readers)}")
    return readers[fmt](p, columns)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    with path.open("rb") as fh:
        for n, raw in enumerate(fh, 1):
            try:
                text = raw.decode("utf-8-sig" if n == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise BadInputError(f"{path}:{n}: not UTF-8 (byte {exc.start})") from None
            if text.strip():
                yield n, text


def _row_from(obj: dict, columns: Sequence[tuple[str, FlinkType]], where: str) -> tuple:
    out = []
    for name, ftype in columns:
        if name in obj:
            value = obj[name]
        else:
            folded = [k for k in obj if isinstance(k, str) and k.casefold() == name.casefold()]
            if len(folded) != 1:
                raise BadInputError(f"{where}: column {name!r} is missing (the record has "
                                    f"{', '.join(map(str, obj))})")
            value = obj[folded[0]]
        try:
            out.append(ftype.parse(value))
        except BadInputError as exc:
            raise BadInputError(f"{where}: column {name!r}: {exc}") from None
    return tuple(out)


def _position(obj: dict, where: str) -> int | None:
    pos = obj.get(POSITION_FIELD)
    if pos is None:
        return None
    if isinstance(pos, bool) or not isinstance(pos, int) or pos < 0:
        raise BadInputError(f"{where}: {POSITION_FIELD!r} must be a non-negative integer, got {short_repr(pos)}")
    return pos


def _kind(value: Any, where: str) -> str:
    kind = _KINDS.get(str(value).strip().upper()) if value is not None else None
    if kind is None:
        raise BadInputError(f"{where}: row kind {short_repr(value)} is not one of +I, -U, +U, -D (or INSERT, "
                            f"UPDATE_BEFORE, UPDATE_AFTER, DELETE)")
    return kind


def _json(text: str, where: str) -> dict:
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise BadInputError(f"{where}: not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise BadInputError(f"{where}: expected a JSON object, got {short_repr(doc)}")
    return doc


def _jsonl(path: Path, columns: Sequence[tuple[str, FlinkType]]) -> Iterator[Record]:
    for n, text in _lines(path):
        where = f"{path}:{n}"
        doc = _json(text, where)
        field = next((f for f in KIND_FIELDS if f in doc), None)
        if field is None:
            raise BadInputError(f"{where}: no row kind field ({', '.join(KIND_FIELDS)})")
        yield Record(_kind(doc[field], where), _row_from(doc, columns, where), _position(doc, where), n)


def _debezium(path: Path, columns: Sequence[tuple[str, FlinkType]]) -> Iterator[Record]:
    for n, text in _lines(path):
        where = f"{path}:{n}"
        doc = _json(text, where)
        body = doc.get("payload", doc)
        if not isinstance(body, dict):
            raise BadInputError(f"{where}: 'payload' must be an object")
        op, pos = body.get("op"), _position(doc, where) if POSITION_FIELD in doc else _position(body, where)
        before, after = body.get("before"), body.get("after")
        need = {"c": ("after",), "r": ("after",), "u": ("before", "after"), "d": ("before",)}.get(op)
        if need is None:
            raise BadInputError(f"{where}: Debezium 'op' must be c, r, u or d, got {short_repr(op)}")
        for key in need:
            if not isinstance(body.get(key), dict):
                raise BadInputError(f"{where}: op {op!r} needs a '{key}' object")
        if op in ("c", "r"):
            yield Record("+I", _row_from(after, columns, where), pos, n)
        elif op == "u":
            yield Record("-U", _row_from(before, columns, where), pos, n)
            yield Record("+U", _row_from(after, columns, where), pos, n)
        else:
            yield Record("-D", _row_from(before, columns, where), pos, n)


def _print(path: Path, columns: Sequence[tuple[str, FlinkType]]) -> Iterator[Record]:
    for n, text in _lines(path):
        where = f"{path}:{n}"
        m = _PRINT.match(text.strip())
        if m is None:
            raise BadInputError(f"{where}: expected Flink's print format, e.g. +I[1, foo], got "
                                f"{short_repr(text.strip())}")
        parts = m.group(2).split(", ") if m.group(2) else [""]
        if len(parts) != len(columns):
            raise BadInputError(f"{where}: {len(parts)} values for {len(columns)} columns (a STRING holding ', ' "
                                f"cannot be split in the print format; capture as JSON lines instead)")
        row = []
        for (name, ftype), part in zip(columns, parts):
            try:
                row.append(None if part == "null" else ftype.parse(part))
            except BadInputError as exc:
                raise BadInputError(f"{where}: column {name!r}: {exc}") from None
        yield Record(_kind(m.group(1), where), tuple(row), None, n)


def _csv(path: Path, columns: Sequence[tuple[str, FlinkType]]) -> Iterator[Record]:
    lines = _lines(path)
    try:
        n, head = next(lines)
    except StopIteration:
        return
    header = next(csv.reader(io.StringIO(head)))
    kind_at = next((i for i, h in enumerate(header) if h.strip().lower() in KIND_FIELDS), None)
    if kind_at is None:
        raise BadInputError(f"{path}:{n}: the header names no row kind column ({', '.join(KIND_FIELDS)})")
    pos_at = next((i for i, h in enumerate(header) if h.strip().lower() == POSITION_FIELD), None)
    names = [h.strip() for h in header]
    for n, text in lines:
        where = f"{path}:{n}"
        values = next(csv.reader(io.StringIO(text)))
        if len(values) != len(header):
            raise BadInputError(f"{where}: {len(values)} fields, the header has {len(header)}")
        obj: dict[str, Any] = {h: (v if v != "" else None) for h, v in zip(names, values)}
        pos = None
        if pos_at is not None:
            try:
                pos = int(values[pos_at])
            except ValueError:
                raise BadInputError(f"{where}: {POSITION_FIELD!r} must be an integer") from None
        yield Record(_kind(values[kind_at], where), _row_from(obj, columns, where), pos, n)
