"""The Spark SQL oracle's inputs: Parquet files of tables or changelogs, and the SQL that materializes a changelog.

Two paths give an input's final table to Spark:

* ``python`` (small cases): oracle/materialize.py replays the stream in
  Python (the DuckDB oracle's own materialization) and the table is written
  to Parquet, one row per row instance.
* ``spark`` (a stream that does not fit the driver): the changelog itself is
  in Parquet, one row per event ``(pos, kind, columns...)``, and Spark SQL
  folds it: bag inputs (``insert_only``/``retract``) by signed counts per
  row, ``upsert``/``all`` inputs by the last event per unique key. The checks
  oracle/materialize.py makes (no retraction of a row the input does not
  hold; an ``all`` input's retraction carries the image its key holds) are
  made in the same query with ``raise_error``, so an invalid stream is a
  BadInputError here too, without the event index.

Columns are stored under positional names (``c0``, ``c1``...) and renamed in
the view, so any column name the oracle accepts works in Parquet.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

import pyarrow as pa
import pyarrow.parquet as pq

from converge.engine.model.scenario import ChangeEvent, InputSpec, Scenario
from converge.oracle.spark_translate import SPARK_TYPES, spark_ident, spark_string

__all__ = ["BAD_INPUT", "MaterializeMode", "MATERIALIZE_MODES", "arrow_type", "changelog_table", "log_schema",
           "materialize_sql", "table_of_rows", "write_parquet"]

MaterializeMode = Literal["python", "spark"]
MATERIALIZE_MODES: tuple[MaterializeMode, ...] = ("python", "spark")

BAD_INPUT = "converge-bad-input: "
"""Prefix of the raise_error messages that mean an invalid stream (BadInputError), not an oracle failure."""

_ARROW = {"BIGINT": pa.int64(), "INTEGER": pa.int32(), "DOUBLE": pa.float64(), "VARCHAR": pa.string(),
          "BOOLEAN": pa.bool_()}


def arrow_type(ctype: str) -> pa.DataType:
    return _ARROW[ctype]


def _columns(spec: InputSpec, rows: Sequence[tuple]) -> dict[str, pa.Array]:
    data = list(zip(*rows, strict=False)) if rows else [()] * len(spec.columns)
    return {f"c{i}": pa.array(list(values), arrow_type(ctype))
            for i, ((_, ctype), values) in enumerate(zip(spec.columns, data, strict=False))}


def table_of_rows(spec: InputSpec, rows: Sequence[tuple], sids: Sequence[int] | None = None) -> pa.Table:
    """A table's rows (one per instance) under positional column names; ``sids``: a scenario id per row."""
    cols = _columns(spec, rows)
    if sids is not None:
        cols["sid"] = pa.array(list(sids), pa.int64())
    return pa.table(cols)


def changelog_table(spec: InputSpec, events: Iterable[tuple[int, str, tuple]],
                    sids: Sequence[int] | None = None) -> pa.Table:
    """An input's changelog, one row per event: (pos, kind, c0..cn[, sid])."""
    positions, kinds, rows = [], [], []
    for pos, kind, row in events:
        positions.append(pos)
        kinds.append(kind)
        rows.append(tuple(row))
    cols = {"pos": pa.array(positions, pa.int64()), "kind": pa.array(kinds, pa.string()), **_columns(spec, rows)}
    if sids is not None:
        cols["sid"] = pa.array(list(sids), pa.int64())
    return pa.table(cols)


def scenario_changelog(scenario: Scenario, spec: InputSpec) -> list[tuple[int, str, tuple]]:
    """(pos, kind, row) of every change event on one input."""
    return [(pos, e.kind, tuple(e.row)) for pos, e in enumerate(scenario.events)
            if isinstance(e, ChangeEvent) and e.input == spec.name]


def write_parquet(table: pa.Table, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path


def log_schema(spec: InputSpec, with_sid: bool) -> str:
    """The Spark DDL schema of a changelog file (for reading an empty folder too)."""
    cols = ["pos BIGINT", "kind STRING"] + [f"c{i} {SPARK_TYPES[t]}" for i, (_, t) in enumerate(spec.columns)]
    return ", ".join(cols + (["sid BIGINT"] if with_sid else []))


def _fail(message: str) -> str:
    return f"raise_error({spark_string(BAD_INPUT + message)})"


def materialize_sql(spec: InputSpec, log_view: str, *, sid: bool, strict: bool = True) -> str:
    """The input's final table from its changelog view: columns c0..cn (and sid), one row per row instance.

    ``strict`` also checks every prefix of a bag input (a retraction of a row
    not held at that point, even if it is inserted again later): a window over
    the log, sorted by position per row.
    """
    cols = [f"c{i}" for i in range(len(spec.columns))]
    group = (["sid"] if sid else []) + cols
    out, by = ", ".join(group), ", ".join(group)
    view = spark_ident(log_view)
    unknown = _fail(f"input {spec.name!r}: an unknown row kind")
    if spec.changelog_mode in ("insert_only", "retract"):
        # every output column depends on the checks, so the optimizer cannot drop them
        sign = f"CASE WHEN kind IN ('+I', '+U') THEN 1 WHEN kind IN ('-U', '-D') THEN -1 ELSE {unknown} END"
        missing = _fail(f"input {spec.name!r}: a retraction of a row the input does not hold")
        if strict:
            running = (f"SELECT {out}, pos, sum({sign}) OVER (PARTITION BY {by} ORDER BY pos "
                       f"ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running FROM {view}")
            summed = (f"SELECT {out}, CASE WHEN min(running) < 0 THEN {missing} ELSE max_by(running, pos) END AS n "
                      f"FROM ({running}) GROUP BY {by}")
        else:
            summed = (f"SELECT {out}, CASE WHEN sum({sign}) < 0 THEN {missing} ELSE sum({sign}) END AS n "
                      f"FROM {view} GROUP BY {by}")
        return (f"SELECT {out} FROM ({summed}) LATERAL VIEW explode(array_repeat(0, CAST(n AS INT))) AS _copy "
                f"WHERE n > 0")
    assert spec.unique_key is not None
    ukey = ", ".join((["sid"] if sid else []) + [f"c{spec.index_of(c)}" for c in spec.unique_key])
    window = f"(PARTITION BY {ukey} ORDER BY pos)"
    check = f"CASE WHEN kind NOT IN ('+I', '-U', '+U', '-D') THEN {unknown} END"
    if spec.changelog_mode == "all":
        same = " AND ".join(f"c{i} <=> lag(c{i}) OVER {window}" for i in range(len(cols)))
        bad = _fail(f"input {spec.name!r}: a retraction that is not the image its unique key holds")
        check = (f"CASE WHEN kind IN ('-U', '-D') AND NOT (coalesce(lag(kind) OVER {window} IN ('+I', '+U'), false) "
                 f"AND {same}) THEN {bad} ELSE {check} END")
    ranked = (f"SELECT {out}, kind, CAST({check} AS BOOLEAN) AS failed, "
              f"row_number() OVER (PARTITION BY {ukey} ORDER BY pos DESC) AS _last FROM {view}")
    # `failed` is NULL or raises: coalesce evaluates it on every row before the real filter
    return f"SELECT {out} FROM ({ranked}) WHERE coalesce(failed, _last = 1 AND kind IN ('+I', '+U'))"
