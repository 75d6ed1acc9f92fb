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
import functools
import io
import json
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

from converge.engine.model.errors import ApiMisuseError, BadInputError
from converge.engine.model.flinksql.positions import byte_line_col, clip
from converge.engine.model.flinksql.types import FlinkType
from converge.engine.model.paths import not_a_file
from converge.engine.model.scenario import short_repr

CaptureFormat = Literal["auto", "jsonl", "debezium", "print", "csv"]
KIND_FIELDS = ("op", "kind", "rowkind", "row_kind")
POSITION_FIELD = "pos"
_KINDS = {"+I": "+I", "-U": "-U", "+U": "+U", "-D": "-D", "INSERT": "+I", "UPDATE_BEFORE": "-U",
          "UPDATE_AFTER": "+U", "DELETE": "-D", "I": "+I", "UB": "-U", "UA": "+U", "D": "-D"}
_PRINT = re.compile(r"^(?:[^\[]*?>\s*)?([+-][IUD])\[(.*)\]\s*$")


class Record(NamedTuple):
    """One captured record (a tuple: millions of them are made while a long capture is read)."""

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
        except (ValueError, RecursionError):  # the reader refuses the line itself, with its position
            return "jsonl"
        body = doc.get("payload", doc) if isinstance(doc, dict) else doc
        if isinstance(body, dict) and ("before" in body or "after" in body) and "op" in body:
            return "debezium"
        return "jsonl"
    raise BadInputError(f"{path}:1:1: cannot tell the capture's format from its first line "
                        f"{short_repr(first)}; pass --format jsonl|debezium|print|csv")


def read_capture(path: str | Path, columns: Sequence[tuple[str, FlinkType]], fmt: str = "auto"
                 ) -> Iterator[Record]:
    """The records of one capture file, in file order."""
    p = Path(path)
    problem = not_a_file(p)  # a folder, FIFO or device is named as what it is (a FIFO is never opened)
    if problem is not None:
        raise BadInputError(f"{p}: {problem}")
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
                _, col = byte_line_col(raw, exc.start)
                raise BadInputError(f"{path}:{n}:{col}: not UTF-8 text (byte {raw[exc.start]:#04x})") from None
            if text.strip():
                yield n, text


class _Line:
    """One line of a capture, to name `file:line:col` of the record or of one of its fields."""

    def __init__(self, path: Path, number: int, text: str) -> None:
        self.path, self.number, self.text = path, number, text

    def col(self, offset: int | None = None) -> int:
        """1-based column of character `offset` (default: the record's first non-blank character)."""
        if offset is None or offset < 0:
            offset = len(self.text) - len(self.text.lstrip())
        return offset + 1

    def at(self, offset: int | None = None) -> str:
        return f"{self.path}:{self.number}:{self.col(offset)}"

    def key(self, name: str) -> str:
        """Where the JSON key `name` is written on the line (the record's start when it is not found)."""
        return self.at(self.text.find(json.dumps(name)))

    def __str__(self) -> str:
        return self.at()


def _row_from(obj: dict, columns: Sequence[tuple[str, FlinkType]], line: _Line,
              where_of: Callable[[str], str] | None = None) -> tuple:
    where_of = where_of or line.key
    out = []
    for name, ftype in columns:
        key = name
        if name not in obj:
            folded = [k for k in obj if isinstance(k, str) and k.casefold() == name.casefold()]
            if len(folded) != 1:
                raise BadInputError(f"{line}: column {short_repr(name)} is missing (the record has "
                                    f"{clip(', '.join(map(repr, obj)), 200)})")
            key = folded[0]
        try:
            out.append(ftype.parse(obj[key]))
        except BadInputError as exc:
            raise BadInputError(f"{where_of(key)}: column {short_repr(name)}: {exc}") from None
    return tuple(out)


def _position(obj: dict, line: _Line) -> int | None:
    pos = obj.get(POSITION_FIELD)
    if pos is None:
        return None
    if isinstance(pos, bool) or not isinstance(pos, int) or pos < 0:
        raise BadInputError(f"{line.key(POSITION_FIELD)}: {POSITION_FIELD!r} must be a non-negative integer, got "
                            f"{short_repr(pos)}")
    return pos


def _kind(value: Any, where: object) -> str:
    """The row kind `value` names; `where` (or what it returns, when called) places a refusal."""
    kind = _KINDS.get(str(value).strip().upper()) if value is not None and not isinstance(value, (dict, list)) else None
    if kind is None:
        where = where() if callable(where) else where
        raise BadInputError(f"{where}: row kind {short_repr(value)} is not one of +I, -U, +U, -D (or INSERT, "
                            f"UPDATE_BEFORE, UPDATE_AFTER, DELETE)")
    return kind


def _json(line: _Line) -> dict:
    try:
        doc = json.loads(line.text)
    except json.JSONDecodeError as exc:
        raise BadInputError(f"{line.path}:{line.number}:{exc.colno}: not JSON: {exc.msg}") from None
    except ValueError as exc:  # a number too long for int(), ...
        raise BadInputError(f"{line}: not JSON: {clip(str(exc), 120)}") from None
    except RecursionError:
        raise BadInputError(f"{line}: the JSON is nested too deeply to read (a record is one flat object)") from None
    if not isinstance(doc, dict):
        raise BadInputError(f"{line}: expected a JSON object, got {short_repr(doc)}")
    return doc


class _ParsedValues:
    """Parsed column values by (column, JSON type, raw value): a capture repeats its values (an update
    retracts the row it inserted), and parsing a DECIMAL costs more than reading the line. Only values
    that parsed are kept; a bad one goes the slow way, which names where it is."""

    LIMIT = 100_000  # distinct values kept per column (the memory stays bounded on any capture)

    def __init__(self, columns: Sequence[tuple[str, FlinkType]]) -> None:
        # (name, type, raw value keyed by its type -> parsed value)
        self.columns: list[tuple[str, FlinkType, dict[tuple[type, Any], Any]]] = [
            (name, ftype, {}) for name, ftype in columns]

    def row(self, doc: dict) -> tuple | None:
        """The row when every column is present by its exact name and parses, else None."""
        out = []
        for name, ftype, seen in self.columns:
            try:
                raw = doc[name]
            except KeyError:
                return None
            kind = type(raw)
            key = (kind, raw) if kind is str or kind is int else None  # True == 1 == 1.0 == -0.0 + 1: typed keys
            value = seen.get(key, _ParsedValues) if key is not None else _ParsedValues
            if value is _ParsedValues:
                try:
                    value = ftype.parse(raw)
                except BadInputError:
                    return None
                if key is not None and len(seen) < self.LIMIT:
                    seen[key] = value
            out.append(value)
        return tuple(out)


def _jsonl(path: Path, columns: Sequence[tuple[str, FlinkType]]) -> Iterator[Record]:
    values = _ParsedValues(columns)
    for n, text in _lines(path):
        try:  # the common record first: an object, a kind spelled +I/-U/+U/-D, an integer pos, valid columns
            doc = json.loads(text)
        except (ValueError, RecursionError):
            doc = None
        if isinstance(doc, dict):
            field = next((f for f in KIND_FIELDS if f in doc), None)
            raw_kind = doc[field] if field is not None else None
            kind = _KINDS.get(raw_kind) if type(raw_kind) is str else None
            pos = doc.get(POSITION_FIELD)
            if kind is not None and (pos is None or (type(pos) is int and pos >= 0)):
                row = values.row(doc)
                if row is not None:
                    yield Record(kind, row, pos, n)
                    continue
        line = _Line(path, n, text)  # anything else: read again, refused with its place
        doc = _json(line)
        field = next((f for f in KIND_FIELDS if f in doc), None)
        if field is None:
            raise BadInputError(f"{line}: no row kind field ({', '.join(KIND_FIELDS)})")
        kind = _kind(doc[field], functools.partial(line.key, field))
        yield Record(kind, _row_from(doc, columns, line), _position(doc, line), n)


def _debezium(path: Path, columns: Sequence[tuple[str, FlinkType]]) -> Iterator[Record]:
    for n, text in _lines(path):
        line = _Line(path, n, text)
        doc = _json(line)
        body = doc.get("payload", doc)
        if not isinstance(body, dict):
            raise BadInputError(f"{line.key('payload')}: 'payload' must be an object")
        op, pos = body.get("op"), _position(doc, line) if POSITION_FIELD in doc else _position(body, line)
        need = {"c": ("after",), "r": ("after",), "u": ("before", "after"), "d": ("before",)}.get(op) \
            if isinstance(op, str) else None
        if need is None:
            raise BadInputError(f"{line.key('op')}: Debezium 'op' must be c, r, u or d, got {short_repr(op)}")
        for key in need:
            if not isinstance(body.get(key), dict):
                raise BadInputError(f"{line.key(key) if key in body else line}: op {op!r} needs a '{key}' object")
        # each key `need`s is an object (checked above)
        if op in ("c", "r"):
            yield Record("+I", _row_from(body["after"], columns, line), pos, n)
        elif op == "u":
            yield Record("-U", _row_from(body["before"], columns, line), pos, n)
            yield Record("+U", _row_from(body["after"], columns, line), pos, n)
        else:
            yield Record("-D", _row_from(body["before"], columns, line), pos, n)


def _print(path: Path, columns: Sequence[tuple[str, FlinkType]]) -> Iterator[Record]:
    for n, text in _lines(path):
        line = _Line(path, n, text)
        m = _PRINT.match(text.strip())
        if m is None:
            raise BadInputError(f"{line}: expected Flink's print format, e.g. +I[1, foo], got "
                                f"{short_repr(text.strip())}")
        parts = m.group(2).split(", ") if m.group(2) else [""]
        if len(parts) != len(columns):
            raise BadInputError(f"{line}: {len(parts)} values for {len(columns)} columns (a STRING holding ', ' "
                                f"cannot be split in the print format; capture as JSON lines instead)")
        offset = line.col() - 1 + m.start(2)
        row = []
        for (name, ftype), part in zip(columns, parts, strict=False):
            try:
                row.append(None if part == "null" else ftype.parse(part))
            except BadInputError as exc:
                raise BadInputError(f"{line.at(offset)}: column {short_repr(name)}: {exc}") from None
            offset += len(part) + 2
        yield Record(_kind(m.group(1), line), tuple(row), None, n)


def _csv_fields(line: _Line) -> list[str]:
    """The fields of one CSV line; a field longer than the csv module's default limit is read (the line is
    in memory already), a line the csv module cannot read is refused where it is."""
    previous = csv.field_size_limit()
    csv.field_size_limit(max(previous, len(line.text) + 1))
    try:
        return next(csv.reader(io.StringIO(line.text)), [])
    except csv.Error as exc:
        raise BadInputError(f"{line}: not CSV: {exc}") from None
    finally:
        csv.field_size_limit(previous)


def _csv(path: Path, columns: Sequence[tuple[str, FlinkType]]) -> Iterator[Record]:
    lines = _lines(path)
    try:
        n, head = next(lines)
    except StopIteration:
        raise BadInputError(f"{path}:1:1: the CSV capture is empty: it needs a header naming the columns and a "
                            f"row kind column ({', '.join(KIND_FIELDS)})") from None
    header = _csv_fields(_Line(path, n, head))
    kind_at = next((i for i, h in enumerate(header) if h.strip().lower() in KIND_FIELDS), None)
    if kind_at is None:
        raise BadInputError(f"{path}:{n}:1: the header names no row kind column ({', '.join(KIND_FIELDS)})")
    pos_at = next((i for i, h in enumerate(header) if h.strip().lower() == POSITION_FIELD), None)
    names = [h.strip() for h in header]
    for n, text in lines:
        line = _Line(path, n, text)
        values = _csv_fields(line)
        if len(values) != len(header):
            raise BadInputError(f"{line}: {len(values)} fields, the header has {len(header)}")

        where_of = functools.partial(_csv_where, line, values, names)

        obj: dict[str, Any] = {h: (v if v != "" else None) for h, v in zip(names, values, strict=False)}
        pos = None
        if pos_at is not None:
            try:
                pos = int(values[pos_at])
            except ValueError:
                raise BadInputError(f"{where_of(names[pos_at])}: {POSITION_FIELD!r} must be an integer, got "
                                    f"{short_repr(values[pos_at])}") from None
            if pos < 0:
                raise BadInputError(f"{where_of(names[pos_at])}: {POSITION_FIELD!r} must be non-negative, got {pos}")
        kind = _kind(values[kind_at], functools.partial(where_of, names[kind_at]))
        yield Record(kind, _row_from(obj, columns, line, where_of),
                     pos, n)


def _csv_where(line: _Line, values: list[str], names: list[str], name: str) -> str:
    """`file:line:col` of the field of column `name` (computed only for a refusal)."""
    return line.at(_field_starts(line.text, values)[names.index(name)] if name in names else None)


def _field_starts(text: str, values: list[str]) -> list[int]:
    """The offset where each CSV field starts (exact for unquoted fields; quoted ones are found by search)."""
    starts, at = [], 0
    for value in values:
        found = text.find(value, at) if value else at
        starts.append(found if found >= 0 else at)
        at = (found if found >= 0 else at) + len(value) + 1
    return starts
