"""`converge verify`'s readers on captures laid out otherwise than converge writes them, and its fast path against
its strict path on each (issue 41 row 13): columns in another order (JSON keys, CSV header, the kind and `pos`
fields first, last or between), Debezium with and without its `payload` envelope, and positions other than
converge's own run (sparse, offset, beyond the fast path's range, output positions between input positions,
each source file in another record order). Each layout is tried as captured (both paths pass: the same result)
and with one output row changed (both refuse it the same way): the fast path never confirms what the strict path
refuses, and on the JSON-lines outputs it can read it is the one that confirms.
"""

from __future__ import annotations

import csv
import io
import json
import random
from pathlib import Path

import pytest

from converge.engine.model.errors import BadInputError, DivergenceError
from converge.engine.model.flinksql import load_query
from converge.engine.model.flinksql.types import FlinkType
from converge.properties import verify_capture as strict_module
from converge.properties import verify_fast
from converge.properties.verify_capture import verify_capture
from tests.support.captures import LEFT_JOIN, left_join_events
from tests.support.captures import left_join_capture as engine_capture

QUERY = load_query(LEFT_JOIN)
OUTPUT_COLUMNS = [(o.name, o.type) for o in QUERY.output]
# (name, position of input record i, offset of an output record's pos after its input record's)
POSITIONS = {
    "own": (lambda i: i, 0),                          # converge's own run: 0, 1, 2 ...
    "sparse": (lambda i: 10 * i + 7, 0),              # gaps between input records
    "between": (lambda i: 10 * i + 7, 3),             # an output record's pos between two input records'
    "offset": (lambda i: 2**40 + i, 0),               # large, as a Kafka offset
    "huge": (lambda i: 2**62 + 5 * i, 0),             # beyond the fast path's range: the strict path alone
}
ORDERS = {"declared": lambda names: names, "reversed": lambda names: names[::-1],
          "shuffled": lambda names: random.Random(7).sample(names, len(names))}


def _plain(ftype: FlinkType, value: object) -> object:
    return None if value is None else ftype.display(value) if ftype.kind == "decimal" else value


def _fields(kind: str, pos: int | None, names: list[str], values: list, place: str) -> list[tuple[str, object]]:
    """The record's fields in order: the columns, with the kind and pos fields first, last or in the middle."""
    meta = [("op", kind)] + ([("pos", pos)] if pos is not None else [])
    cols = list(zip(names, values, strict=True))
    at = {"first": 0, "last": len(cols), "middle": len(cols) // 2}[place]
    return cols[:at] + meta + cols[at:]


def _write(path: Path, fmt: str, columns: list[tuple[str, FlinkType]], records: list[tuple[int | None, str, tuple]],
           order: str, place: str) -> Path:
    """Records (pos or None, kind, row) as one capture in `fmt`, the columns in `order`, kind/pos at `place`."""
    names = ORDERS[order]([n for n, _ in columns])
    types = dict(columns)
    rows = [(pos, kind, [_plain(types[n], dict(zip([c for c, _ in columns], row, strict=True))[n]) for n in names])
            for pos, kind, row in records]
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(dict(_fields(k, p, names, vs, place))) + "\n" for p, k, vs in rows))
    elif fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        with_pos = rows[0][0] is not None
        writer.writerow([f for f, _ in _fields("op", 0 if with_pos else None, names, names, place)])
        for p, k, vs in rows:
            writer.writerow(["" if v is None else v for _, v in _fields(k, p, names, vs, place)])
        path.write_text(out.getvalue())
    else:  # debezium, without positions (an update's -U and +U are one record); `place` picks the envelope
        lines, held = [], None
        for _, k, vs in rows:
            doc = dict(zip(names, vs, strict=True))
            body = {"+I": {"op": "c", "after": doc}, "-D": {"op": "d", "before": doc}}.get(k)
            if k == "-U":
                held = doc
            elif k == "+U":
                body = {"op": "u", "before": held, "after": doc} if held is not None else {"op": "c", "after": doc}
                held = None
            if body is not None:
                lines.append({"payload": body} if place == "first" else dict(reversed(list(body.items()))))
        path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    return path


def _capture(tmp_path: Path) -> tuple[dict[str, list], list[tuple[int, str, tuple]]]:
    """The engine's own run of the documented LEFT join: each source's (index, kind, row) and the output's."""
    (tmp_path / "engine").mkdir()
    *_, outputs = engine_capture(tmp_path / "engine")
    events = left_join_events()
    sources = {table: [(i, e.kind, e.row) for i, e in enumerate(events) if e.input == alias]
               for alias, table in QUERY.aliases}
    return sources, outputs


def _outcome(sources: dict[str, Path], output: Path, *, fast: bool, monkeypatch: pytest.MonkeyPatch) -> object:
    with monkeypatch.context() as m:
        if not fast:
            m.setattr(strict_module, "fast_verify", lambda *args: None)
        try:
            result = verify_capture(QUERY, sources, output)
        except (BadInputError, DivergenceError) as exc:
            return type(exc).__name__, str(exc)
    result.seconds = 0.0
    return result


def _changed(outputs: list[tuple[int, str, tuple]]) -> list[tuple[int, str, tuple]]:
    """One output row's payment amount changed (a row the answer never holds)."""
    i = next(k for k, (_, kind, row) in enumerate(outputs) if kind == "+I" and row[3] is not None)
    pos, kind, row = outputs[i]
    return outputs[:i] + [(pos, kind, (*row[:3], row[3] + 1, row[4]))] + outputs[i + 1:]


# every position pattern on JSON-lines outputs (the fast path's form), two on CSV outputs (the strict path's alone)
LAYOUTS = [(source_fmt, output_fmt, order, place, positions)
           for source_fmt in ("jsonl", "csv") for output_fmt in ("jsonl", "csv")
           for order, place in (("declared", "first"), ("reversed", "last"), ("shuffled", "middle"))
           for positions in POSITIONS if output_fmt == "jsonl" or positions in ("own", "between")]


@pytest.mark.parametrize("source_fmt, output_fmt, order, place, positions", LAYOUTS,
                         ids=["-".join(layout) for layout in LAYOUTS])
def test_a_positioned_layout_passes_and_a_changed_row_is_refused_by_both_paths(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source_fmt: str, output_fmt: str, order: str, place: str,
        positions: str) -> None:
    at, later = POSITIONS[positions]
    source_records, outputs = _capture(tmp_path)
    suffix = {"jsonl": ".jsonl", "csv": ".csv"}
    sources = {}
    for alias, table in QUERY.aliases:
        records = [(at(i), kind, row) for i, kind, row in source_records[table]]
        if positions in ("sparse", "offset"):  # each file in another record order: positions place them
            records = random.Random(3).sample(records, len(records))
        sources[table] = _write(tmp_path / f"{table}{suffix[source_fmt]}", source_fmt,
                                list(QUERY.table_of(alias).columns), records, order, place)
    placed = [(at(i) + later, kind, row) for i, kind, row in outputs]
    for name, rows in (("as captured", placed), ("changed", _changed(placed))):
        output = _write(tmp_path / f"output{suffix[output_fmt]}", output_fmt, OUTPUT_COLUMNS, rows, order, place)
        before = verify_fast.taken
        fast = _outcome(sources, output, fast=True, monkeypatch=monkeypatch)
        taken = verify_fast.taken > before
        strict = _outcome(sources, output, fast=False, monkeypatch=monkeypatch)
        assert fast == strict, (name, fast, strict)
        if name == "as captured":
            assert getattr(strict, "mode", None) == "prefix", strict  # every record placed: checked after each input
            assert taken == (output_fmt == "jsonl" and positions != "huge"), (name, taken)
        else:
            assert not taken and isinstance(strict, tuple) and strict[0] == "DivergenceError", strict


@pytest.mark.parametrize("order, place", [("declared", "first"), ("reversed", "last"), ("shuffled", "middle")])
@pytest.mark.parametrize("output_fmt", ["jsonl", "csv"])
def test_unpositioned_layouts_with_debezium_sources_check_the_final_answer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, order: str, place: str, output_fmt: str) -> None:
    """Debezium (with and without its envelope, keys in another order) and outputs without `pos`: the final
    answer, on both paths alike."""
    source_records, outputs = _capture(tmp_path)
    sources = {}
    for alias, table in QUERY.aliases:
        fmt = "debezium" if table == "payments" else "jsonl"  # orders is an upsert source: no Debezium there
        sources[table] = _write(tmp_path / f"{table}.{'json' if fmt == 'debezium' else 'jsonl'}", fmt,
                                list(QUERY.table_of(alias).columns),
                                [(None, kind, row) for _, kind, row in source_records[table]], order, place)
    unplaced = [(None, kind, row) for _, kind, row in outputs]
    for name, rows in (("as captured", unplaced), ("changed", _changed(unplaced))):
        output = _write(tmp_path / f"output.{output_fmt}", output_fmt, OUTPUT_COLUMNS, rows, order, place)
        fast = _outcome(sources, output, fast=True, monkeypatch=monkeypatch)
        assert fast == _outcome(sources, output, fast=False, monkeypatch=monkeypatch), name
        if name == "as captured":
            assert getattr(fast, "mode", None) == "final", fast
        else:
            assert isinstance(fast, tuple) and fast[0] == "DivergenceError", fast


def test_an_output_record_before_the_first_input_record_is_refused_by_both_paths(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Positions shifted so that the first output record precedes every input record: no checkpoint holds it."""
    source_records, outputs = _capture(tmp_path)
    sources = {table: _write(tmp_path / f"{table}.jsonl", "jsonl", list(QUERY.table_of(alias).columns),
                             [(10 * i + 7, kind, row) for i, kind, row in source_records[table]], "declared", "first")
               for alias, table in QUERY.aliases}
    output = _write(tmp_path / "output.jsonl", "jsonl", OUTPUT_COLUMNS,
                    [(10 * i, kind, row) for i, kind, row in outputs], "declared", "first")
    fast = _outcome(sources, output, fast=True, monkeypatch=monkeypatch)
    assert fast == _outcome(sources, output, fast=False, monkeypatch=monkeypatch)
    assert isinstance(fast, tuple), fast  # refused or diverged, never confirmed
