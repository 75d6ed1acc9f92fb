"""converge's reading of a user's query against the query as written: one batch answer by two paths.

Path 1 is converge's reading (engine/model/flinksql): the DuckDB oracle's final
answer of the mapped join, with the query's WHERE filter and SELECT list
applied as `converge verify` applies them (properties/verify_capture.py), read
back into real values with the reading's own output types. Path 2 is the
query's text run in DuckDB as written (oracle/query_sql.py) over the same
example's final input tables. They must be equal as bags (duplicates count);
a difference is converge's misreading (MisreadQueryError, exit 3), shown with
the example's tables and both answers. An interval join is compared on its
batch answer over every row (the SELECT's BETWEEN over the full tables).
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections import Counter
from collections.abc import Mapping
from typing import Any

from converge.engine.model.errors import MisreadQueryError
from converge.engine.model.flinksql import MappedQuery
from converge.engine.model.flinksql.types import FlinkType
from converge.engine.model.scenario import Scenario
from converge.oracle import batch_interval_join
from converge.oracle.interval import interval_records
from converge.oracle.materialize import materialize_inputs
from converge.oracle.query_sql import QueryAsWritten, common, show
from converge.oracle.shared import shared_oracle
from converge.properties import interval
from converge.properties.verify_capture import _shaper

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DAY = dt.date(1970, 1, 1)
_WRITTEN: dict[tuple[str, str], QueryAsWritten] = {}
_SHOWN = 12  # rows of each table and answer a message shows


def oracle_final(scenario: Scenario) -> Counter:
    """The DuckDB oracle's final answer of converge's reading (an interval join's after a final watermark)."""
    if scenario.join.interval is not None:
        return batch_interval_join(interval.with_final(scenario))
    return shared_oracle().final(scenario)


def as_written(query: MappedQuery) -> QueryAsWritten:
    """The query's text, transpiled and with its tables created, once per query text."""
    key = (query.path, query.text)
    if key not in _WRITTEN:
        _WRITTEN[key] = QueryAsWritten(query.text, query.path)
    return _WRITTEN[key]


def _real(ftype: FlinkType, value: Any) -> Any:
    """A held output value as converge's reading types it."""
    if value is None:
        return None
    if ftype.kind == "decimal":
        return decimal.Decimal(value).scaleb(-ftype.scale)
    if ftype.kind == "timestamp":
        return _EPOCH + dt.timedelta(milliseconds=value)
    if ftype.kind == "date":
        return _EPOCH_DAY + dt.timedelta(days=value)
    return value


def reading_answer(query: MappedQuery, scenario: Scenario) -> Counter:
    """converge's answer to the query on this example: the oracle's join answer, filtered and projected."""
    shape = _shaper(query)
    types = [o.type for o in query.output]
    out: Counter = Counter()
    for row, count in oracle_final(scenario).items():
        shaped = shape(row)
        if shaped is not None:
            out[tuple(common(_real(t, v)) for t, v in zip(types, shaped, strict=False))] += count
    return +out


def input_tables(query: MappedQuery, scenario: Scenario,
                 arrival: Mapping[str, int] | None = None) -> dict[str, list[tuple]]:
    """Each declared table's final rows (held values) in this example. `arrival`: table -> where the query as
    written holds its PROCTIME() attribute (QueryAsWritten.arrival), filled with each row's arrival time in a
    processing-time interval join (append-only inputs: every record is a final row). A query that is none
    names the attribute nowhere (the reader refuses every other use of it), so it holds NULL there."""
    arrival = arrival or {}
    iv = scenario.join.interval
    if iv is not None and iv.time == "processing":
        records = interval_records(scenario)
        return {table: sorted((_at(row, arrival.get(table), time) for _, time, row in records[alias]), key=repr)
                for alias, table in query.aliases}
    final = materialize_inputs(scenario)
    return {table: sorted((_at(row, arrival.get(table), None)
                           for row in final.get(query.stream_of(alias), Counter()).elements()), key=repr)
            for alias, table in query.aliases}


def _at(row: tuple, index: int | None, value: object) -> tuple:
    """`row` with `value` put in at `index` (as it is without an index)."""
    return row if index is None else row[:index] + (value,) + row[index:]


def reading_equals_query(query: MappedQuery, scenario: Scenario) -> None:
    """converge's answer equals the query as written run in DuckDB, on this example's final tables."""
    written = as_written(query)
    tables = input_tables(query, scenario, written.arrival)
    want = written.answer(tables)
    got = reading_answer(query, scenario)
    if got != want:
        raise MisreadQueryError(_message(query, written, tables, got, want))


def _rows(bag: Counter) -> list[str]:
    lines = [f"    {'(' + ', '.join(show(v) for v in row) + ')'}" + (f" x{n}" if n != 1 else "")
             for row, n in sorted(bag.items(), key=repr)]
    return lines[:_SHOWN] + ([f"    ... and {len(lines) - _SHOWN} more"] if len(lines) > _SHOWN else [])


def _message(query: MappedQuery, written: QueryAsWritten, tables: dict[str, list[tuple]], got: Counter,
             want: Counter) -> str:
    missing, extra = want - got, got - want
    parts = [(f"converge misread your query {query.path}: on this example its reading's answer differs from the "
              f"query as written, run in DuckDB"),
             (f"  converge's reading: {sum(got.values())} rows; the query as written: {sum(want.values())} rows "
              f"({sum(extra.values())} only in the reading, {sum(missing.values())} only in the query)")]
    if extra:
        parts += ["  only in converge's reading:"] + _rows(extra)
    if missing:
        parts += ["  only in the query as written:"] + _rows(missing)
    parts.append("  tables (final rows):")
    for table, rows in tables.items():
        names = ", ".join(c.name for c in written.tables[table])
        parts.append(f"  {table} ({names}): {len(rows)} rows")
        parts += _rows(Counter(tuple(written.real(table, r)) for r in rows))
    parts += ["  converge's reading's answer:"] + (_rows(got) or ["    (empty)"])
    parts += ["  the query as written's answer:"] + (_rows(want) or ["    (empty)"])
    parts.append(f"  the query as written, in DuckDB: {written.sql}")
    return "\n".join(parts)


__all__ = ["as_written", "input_tables", "oracle_final", "reading_answer", "reading_equals_query"]
