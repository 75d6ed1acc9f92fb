"""A capture of converge's own engine on the documented LEFT join (docs/examples/left_join_residual.sql): its
sources and output as JSON lines with positions, as `converge verify` reads them.

`converge verify`'s tests (tests/cli/check_verify/) damage it, and tests/architecture/test_promised_files.py runs
verify on it.
"""

from __future__ import annotations

import json
from pathlib import Path

from converge.engine.model.changelog import Change
from converge.engine.model.flinksql import load_query
from converge.engine.model.scenario import ChangeEvent
from converge.engine.runtime.local import run_scenario
from tests.support.paths import EXAMPLES

LEFT_JOIN = EXAMPLES / "left_join_residual.sql"


def left_join_events() -> list[ChangeEvent]:
    o = lambda k, i, c, a: ChangeEvent("o", k, (i, c, a))  # noqa: E731
    p = lambda k, i, oid, paid, m: ChangeEvent("p", k, (i, oid, paid, m))  # noqa: E731
    return [o("+I", 1, 10, 500), p("+I", 100, 1, 300, "card"), p("+I", 101, 1, 600, "cash"),
            o("+U", 1, 10, 200), p("-U", 101, 1, 600, "cash"), p("+U", 101, 1, 100, "cash"),
            p("-D", 100, 1, 300, "card"), o("+I", 2, 11, 100)]


def left_join_capture(tmp_path: Path) -> tuple[Path, Path, Path, list[tuple[int, str, tuple]]]:
    """Sources and output of one run of converge's engine, as JSON lines with positions."""
    query = load_query(LEFT_JOIN)
    events = left_join_events()
    run = run_scenario(query.scenario(events))
    cols = query.join_columns()
    picks = [[(a, c) for a, c, _ in cols].index((o.alias, o.column)) for o in query.output]
    outputs = [(i, c.kind, tuple(c.row[j] for j in picks)) for i, items in enumerate(run.per_event)
               for c in items if isinstance(c, Change)]
    assert len(outputs) >= 6  # the stream exercises padding, retraction and updates
    files = {}
    for alias, table in query.aliases:
        names = [c for c, _ in query.table_of(alias).columns]
        types = query.types_of(alias)
        path = tmp_path / f"{table}.jsonl"
        path.write_text("".join(json.dumps({"op": e.kind, "pos": i, **{n: _plain(t, v) for n, t, v in
                                                                      zip(names, types, e.row, strict=False)}}) + "\n"
                                for i, e in enumerate(events) if e.input == alias))
        files[table] = path
    out = tmp_path / "output.jsonl"
    write_output(out, query, outputs)
    return files["orders"], files["payments"], out, outputs


def _plain(ftype, value):
    return None if value is None else ftype.display(value) if ftype.kind == "decimal" else value


def write_output(path: Path, query, outputs) -> None:
    path.write_text("".join(json.dumps({"op": kind, "pos": i, **{o.name: _plain(o.type, v) for o, v in
                                                                zip(query.output, row, strict=False)}}) + "\n"
                            for i, kind, row in outputs))
