"""Damaged captured changelogs for `converge verify`, in every format it reads, and a judge of typed outcomes.

The seeds are one run of converge's own engine on the left join of
docs/examples/left_join_residual.sql, written as each source's and the
output's capture in every format captures.py reads: JSON lines (with and
without `pos`), Debezium JSON, Flink's print format and CSV (with and without
a `pos` column). A damage, drawn by Hypothesis, hits one of the three files:
cut it, flip or insert bytes, drop, repeat or swap lines, blow a field up to
200,000 characters, nest a line 100,000 deep, put a 27- or 400-digit decimal
or integer in a value, put a value of the wrong JSON type in a column (a list,
an object, a boolean, a number or text where the column's type holds none),
change a row kind or a position, empty the file, or replace it by a directory, a FIFO or /dev/null. The judge runs
`converge verify` on the three files and accepts exit 0 (passed), 1
(diverged) or 2 with one stderr line naming `file:line:col` (or, for a path
that is not a regular file, saying what it is); anything else fails.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import shutil
from pathlib import Path

from hypothesis import strategies as st

from converge.cli.main import main
from converge.engine.model.changelog import Change
from converge.engine.model.flinksql import MappedQuery, load_query
from converge.engine.model.flinksql.types import FlinkType
from converge.engine.model.scenario import ChangeEvent
from converge.engine.runtime.local import run_scenario
from tests.fuzz.damage import Op, byte_damage, damage_ops
from tests.fuzz.hostile_sql import MESSAGE_LIMIT, BadRefusal
from tests.fuzz.outcomes import no_hang

QUERY_PATH = Path(__file__).resolve().parents[2] / "docs" / "examples" / "left_join_residual.sql"
FORMATS = ("jsonl", "jsonl-nopos", "debezium", "print", "csv", "csv-nopos")
UPSERT_FORMATS = tuple(f for f in FORMATS if f != "debezium")  # Debezium's u is -U/+U: not an upsert source
OUTPUT_FORMATS = ("jsonl", "jsonl-nopos", "print", "csv", "csv-nopos")
SUFFIX = {"jsonl": ".jsonl", "jsonl-nopos": ".jsonl", "debezium": ".json", "print": ".txt", "csv": ".csv",
          "csv-nopos": ".csv"}
HUGE = ("x" * 200_000, "1" * 27, "1" * 27 + ".5", "9" * 400, "-" + "9" * 30, "1e999", "NaN", "", "null", "\x00",
        "🙂", "a, b", '"', "+I[", "{", "-1", str(2**63), "0.000000000000000000000000000001")
KINDS = ("+I", "-U", "+U", "-D", "X", "", "INSERT", "c", "u", "d", "UPDATE_AFTER", "+i")
BAD_BYTES = (b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80", b"\xef\xbb\xbf", b"\x00", b"\r", b"\r\n")
# a JSON value of a type no column type holds, or of a type another column holds (issue 41 row 10)
WRONG_TYPES = ([], [1, 2], [0, [1], 0], {}, {"a": 1}, True, False, 1.5, 0, "x", "1.25", 10**40, -(2**63) - 1,
               "2024-01-01 10:00:00", "0001-01-01 00:00:00+01:00", None)
OPS = ("cut", "flip", "bad_bytes", "drop_line", "repeat_line", "swap_lines", "huge_value", "deep_line", "kind",
       "position", "empty", "not_a_file", "blank_lines", "strip_positions", "wrong_type")


def _events() -> list[ChangeEvent]:
    def o(k, i, c, a):
        return ChangeEvent("o", k, (i, c, a))
    def p(k, i, oid, paid, m):
        return ChangeEvent("p", k, (i, oid, paid, m))
    return [o("+I", 1, 10, 500), p("+I", 100, 1, 300, "card"), p("+I", 101, 1, 600, "cash"),
            o("+U", 1, 10, 200), p("-U", 101, 1, 600, "cash"), p("+U", 101, 1, 100, "cash"),
            p("-D", 100, 1, 300, "card"), o("+I", 2, 11, 100), p("+I", 102, 2, 100, "card")]


def _plain(ftype: FlinkType, value: object) -> object:
    return None if value is None else ftype.display(value) if ftype.kind in ("decimal", "timestamp", "date") \
        else value


def _write(fmt: str, columns: list[tuple[str, FlinkType]], records: list[tuple[int, str, tuple]]) -> bytes:
    """Records (pos, kind, row) as one capture file in `fmt`."""
    names = [c for c, _ in columns]
    values = [[_plain(t, v) for (_, t), v in zip(columns, row, strict=False)] for _, _, row in records]
    if fmt in ("jsonl", "jsonl-nopos"):
        return "".join(json.dumps({"op": k, **({"pos": p} if fmt == "jsonl" else {}), **dict(zip(names, vs, strict=False))}) + "\n"
                       for (p, k, _), vs in zip(records, values, strict=False)).encode()
    if fmt == "debezium":
        lines, held = [], None  # no positions: an update's -U and +U are one record, at one position
        for (_position, k, _row), vs in zip(records, values, strict=False):
            doc = dict(zip(names, vs, strict=False))
            if k == "+I":
                lines.append({"op": "c", "after": doc})
            elif k == "-D":
                lines.append({"op": "d", "before": doc})
            elif k == "-U":
                held = doc
            else:
                lines.append({"op": "u", "before": held, "after": doc})
        return "".join(json.dumps(d) + "\n" for d in lines).encode()
    if fmt == "print":
        return "".join(f"+I[{', '.join('null' if v is None else str(v) for v in vs)}]\n".replace("+I", k, 1)
                       for (_, k, _), vs in zip(records, values, strict=False)).encode()
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["op"] + (["pos"] if fmt == "csv" else []) + names)
    for (p, k, _), vs in zip(records, values, strict=False):
        w.writerow([k] + ([p] if fmt == "csv" else []) + ["" if v is None else v for v in vs])
    return out.getvalue().encode()


def _seeds() -> tuple[MappedQuery, dict[str, list[tuple[int, str, tuple]]], list[tuple[int, str, tuple]]]:
    query = load_query(QUERY_PATH)
    events = _events()
    run = run_scenario(query.scenario(events))
    cols = [(a, c) for a, c, _ in query.join_columns()]
    picks = [cols.index((o.alias, o.column)) for o in query.output]
    outputs = [(i, c.kind, tuple(c.row[j] for j in picks)) for i, items in enumerate(run.per_event)
               for c in items if isinstance(c, Change)]
    sources = {t: [(i, e.kind, e.row) for i, e in enumerate(events) if e.input == a] for a, t in query.aliases}
    return query, sources, outputs


QUERY, SOURCE_RECORDS, OUTPUT_RECORDS = _seeds()


class CaptureOp(Op):
    """One damage to one of the three files."""


capture_ops = damage_ops(CaptureOp, OPS)


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def apply_capture(op: CaptureOp, data: bytes) -> bytes | str:
    """`data` damaged, or a word naming what the path becomes instead of a file (directory, fifo, devnull)."""
    lines = _lines(data)
    damaged = byte_damage(op, data, BAD_BYTES)
    if damaged is not None:
        return damaged
    if op.kind == "empty":
        return b"" if op.what % 2 else b"\n\n"
    if op.kind == "not_a_file":
        return ("directory", "fifo", "devnull")[op.what % 3]
    if op.kind == "blank_lines":
        return b"\n".join(lines[i % len(lines)] if lines else b"" for i in range(op.what % 5)) + b"\n   \n" + data
    if not lines:
        return data
    i, j = op.where % len(lines), op.what % len(lines)
    if op.kind == "drop_line":
        del lines[i]
    elif op.kind == "repeat_line":
        lines.insert(i, lines[i])
    elif op.kind == "swap_lines":
        lines[i], lines[j] = lines[j], lines[i]
    elif op.kind == "deep_line":
        depth = (10, 1000, 100_000)[op.what % 3]
        lines[i] = (b"[" * depth + b"]" * depth if op.where % 2 else b'{"a":' * depth + b"1" + b"}" * depth) + b"\n"
    elif op.kind == "wrong_type":
        lines[i] = _wrong_type(lines[i], op.where, WRONG_TYPES[op.what % len(WRONG_TYPES)])
    else:
        text = lines[i].decode("utf-8", errors="surrogateescape")
        if op.kind == "huge_value":
            new = HUGE[op.what % len(HUGE)]
            fields = list(re.finditer(r'"[^"]*"|[^,\[\]{}:\s]+', text))
            if fields:
                m = fields[op.where % len(fields)]
                quoted = m.group(0).startswith('"')
                text = text[: m.start()] + (json.dumps(new) if quoted else new) + text[m.end():]
        elif op.kind == "kind":
            text = re.sub(r"\+I|-U|\+U|-D|\"[cud]\"", lambda _: KINDS[op.what % len(KINDS)], text, count=1)
        elif op.kind == "position":
            text = re.sub(r'"pos": \d+|^[^,]*,\d+', lambda m: m.group(0).rsplit(",", 1)[0] + "," + str(op.what % 20 - 5)
                          if not m.group(0).startswith('"') else f'"pos": {op.what % 20 - 5}', text, count=1)
        elif op.kind == "strip_positions":
            text = re.sub(r', "pos": -?\d+', "", text)
        lines[i] = text.encode("utf-8", errors="surrogateescape")
    return b"".join(lines)


def _wrong_type(line: bytes, where: int, value: object) -> bytes:
    """One column value of a JSON line (or of a Debezium image) replaced by `value`; a text line's field by
    `value` written as JSON."""
    try:
        doc = json.loads(line)
    except ValueError:
        doc = None
    if isinstance(doc, dict):
        images = [d for d in (doc.get("before"), doc.get("after")) if isinstance(d, dict)] or [doc]
        image = images[where % len(images)]
        keys = [k for k in image if k not in ("op", "pos")]
        if keys:
            image[keys[where % len(keys)]] = value
        return json.dumps(doc).encode() + b"\n"
    text = line.decode("utf-8", errors="surrogateescape")
    fields = list(re.finditer(r"[^,\[\]\s]+", text))
    if fields:
        m = fields[where % len(fields)]
        text = text[: m.start()] + json.dumps(value) + text[m.end():]
    return text.encode("utf-8", errors="surrogateescape")


@st.composite
def damaged_captures(draw) -> tuple[dict[str, str], int, list[CaptureOp]]:
    """(format of each file, which file is damaged, the damage): sources orders, payments, then the output."""
    formats = {"orders": draw(st.sampled_from(UPSERT_FORMATS)), "payments": draw(st.sampled_from(FORMATS)),
               "output": draw(st.sampled_from(OUTPUT_FORMATS))}
    return formats, draw(st.integers(0, 2)), draw(st.lists(capture_ops, min_size=1, max_size=3))


def _place(path: Path, content: bytes | str) -> Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
        return path
    if content == "directory":
        path.mkdir()
        return path
    if content == "fifo":
        os.mkfifo(path)
        return path
    return Path(os.devnull)


def judge_capture(case: tuple[dict[str, str], int, list[CaptureOp]], folder: Path) -> str:
    """One outcome word for one damaged set of captures, written under `folder` (emptied first)."""
    formats, target, damage = case
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    names = ["orders", "payments", "output"]
    paths: list[Path] = []
    for k, name in enumerate(names):
        if name == "output":
            data: bytes | str = _write(formats[name], [(o.name, o.type) for o in QUERY.output], OUTPUT_RECORDS)
        else:
            alias = next(a for a, t in QUERY.aliases if t == name)
            data = _write(formats[name], list(QUERY.table_of(alias).columns), SOURCE_RECORDS[name])
        if k == target:
            for op in damage:
                data = apply_capture(op, data) if isinstance(data, bytes) else data
        paths.append(_place(folder / f"{name}{SUFFIX[formats[name]]}", data))
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main(["verify", str(QUERY_PATH), "--source", f"orders={paths[0]}", "--source",
                     f"payments={paths[1]}", "--output", str(paths[2]), "--quiet"])  # the refusal alone
    if code in (0, 1):
        return "passed" if code == 0 else "diverged"
    lines = err.getvalue().strip().splitlines()
    message = lines[0] if lines else ""
    where = "|".join(re.escape(str(p)) for p in paths)
    located = re.match(rf"converge: (bad input|unsupported): ({where}):\d+:\d+: ", message)
    not_a_file = re.match(rf"converge: (usage|bad input): ({where}): (is a|no such file)", message)
    if code != 2 or len(lines) != 1 or len(message) > MESSAGE_LIMIT or not (located or not_a_file):
        raise BadRefusal(f"converge verify exited {code}; stderr: {err.getvalue()[:1500]!r}")
    return "refused: not a file" if not_a_file else f"refused: {located.group(1)}"  # type: ignore[union-attr]


def classify_capture(case: tuple[dict[str, str], int, list[CaptureOp]], folder: Path) -> str:
    with no_hang():
        return judge_capture(case, folder)
