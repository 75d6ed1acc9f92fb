"""`converge verify`'s fast path: a positioned JSON-lines output confirmed in DuckDB, or handed back.

The strict path (properties/verify_capture.py) reads every output record in
Python and walks it beside the oracle's per-position changes; on millions of
records that walk is most of the time. This path reads the output file into
DuckDB, compares it there with the interval oracle's changes, and only ever
*confirms agreement*: when anything is outside the form below, or anything
differs, it returns None and the strict path runs from the start, so every
refusal, divergence report and note still comes from the strict path alone.

Taken only when the strict path would compare positions (every source record
and the first output record carry `pos`), the query is no interval join and
has no WHERE filter, and the output is JSON lines. The output file must then be,
as bytes:

* valid UTF-8 (checked with Python's decoder, the one the strict reader uses),
  without a byte-order mark, lines split at `\\n` only, no blank line (one final
  `\\n` is allowed): so line numbers and record numbers agree;
* each line exactly one JSON object, `{` first and `}` last, with no space but
  one optional blank after `:` and after `,`, whose keys are, in the order of
  the first line, one row-kind field (`op`, `kind`, `rowkind` or `row_kind`),
  `pos` and every output column under its exact name, each once: so the strict
  reader's dictionary holds exactly these values (no duplicate key it would
  resolve, no case-folded name, no other kind field it would look at first);
  column names must be plain identifiers, none called like the kind field or
  `pos`;
* the kind written `"+I"`, `"-U"`, `"+U"` or `"-D"` (what the strict reader
  maps without its fallback); `pos` a JSON integer without sign or leading
  zero, at most 18 digits;
* each value, per the column's Flink type (anything else, e.g. DOUBLE,
  TIMESTAMP or DATE columns, is not taken): `null` only in a nullable column;
  INT/BIGINT/SMALLINT/TINYINT a JSON integer without leading zero, inside the
  type's range (FlinkType.parse's `_int`); STRING/VARCHAR a JSON string with
  no backslash and no control character (its value is its text, as json.loads
  gives it); BOOLEAN `true`/`false`; DECIMAL(p, s) a JSON string
  `"-digits.digits"` with exactly s fraction digits (none and no point when
  s = 0) and at most p - s integer digits, no leading zero (so no rounding, no
  precision overflow: the unscaled value is the digits without the point).

The comparison (all in SQL): each output record's checkpoint is the last input
record (in position order) whose position is <= its `pos`; the output's net
change per (checkpoint, row) must equal the oracle's, no record may precede
the first input record or go back to an earlier checkpoint, and no row's
running count in file order may go below zero. That is the strict walk's
verdict: its difference counter is empty after every touched checkpoint iff
the per-checkpoint net changes agree. `checkpoints` counts the positions where
the oracle or the output changes anything, plus the last, as the walk does.

Memory: the oracle's query (its input rendered as SQL text) is the peak, as on
the strict path; it runs before the output is read, and its changes are kept
as a table of the output's columns only (the strict path streams them). So an
output whose first line is in the form but a later line is not pays for the
oracle twice, as a failing verify does.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import duckdb

from converge.engine.model.errors import BadInputError, OracleError, UnsupportedError
from converge.engine.model.flinksql import MappedQuery
from converge.engine.model.flinksql.captures import KIND_FIELDS, POSITION_FIELD, detect_format
from converge.engine.model.flinksql.types import _RANGES, FlinkType  # the ranges FlinkType.parse checks
from converge.engine.model.paths import not_a_file
from converge.engine.model.scenario import Event
from converge.oracle.history_intervals import bulk_connection, intervals_sql
from converge.oracle.sql import quote_ident

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CHUNK = 1 << 24

taken = 0  # how many verifies this path confirmed (tests check it was taken, not fallen back from)


def _value_pattern(ftype: FlinkType) -> str | None:
    """The regular expression (one group) of a value in the accepted form; None: the type is not taken."""
    if ftype.kind in ("int", "bigint"):
        body = r"-?(?:0|[1-9][0-9]{0,18})"
    elif ftype.kind == "string":
        body = r'"[^"\\\x00-\x1f]*"'
    elif ftype.kind == "boolean":
        body = "true|false"
    elif ftype.kind == "decimal":
        precision = int(ftype.name.split("(")[1].split(",")[0])
        digits = precision - ftype.scale
        whole = "0" if digits == 0 else f"(?:0|[1-9][0-9]{{0,{digits - 1}}})"
        body = f'"-?{whole}' + (rf'\.[0-9]{{{ftype.scale}}}"' if ftype.scale else '"')
    else:
        return None
    return f"({'null|' if ftype.nullable else ''}{body})"


def _value_sql(g: str, ftype: FlinkType) -> tuple[str, str | None]:
    """(SQL of the value held, SQL that is true when the value is out of range or None)."""
    if ftype.kind in ("int", "bigint"):
        lo, hi = _RANGES.get(ftype.name, _RANGES["BIGINT"])
        big = f"TRY_CAST({g} AS HUGEINT)"
        return (f"CAST(CASE WHEN {g} = 'null' THEN NULL ELSE {big} END AS BIGINT)",
                f"{g} <> 'null' AND ({big} IS NULL OR {big} < {lo} OR {big} > {hi})")
    if ftype.kind == "string":
        return f"CASE WHEN {g} = 'null' THEN NULL ELSE {g}[2:length({g}) - 1] END", None
    if ftype.kind == "boolean":
        return f"CASE WHEN {g} = 'null' THEN NULL ELSE {g} = 'true' END", None
    digits = f"replace({g}[2:length({g}) - 1], '.', '')"  # the unscaled value: the digits without the point
    return f"CASE WHEN {g} = 'null' THEN NULL ELSE TRY_CAST({digits} AS BIGINT) END", None


def _sql_type(ftype: FlinkType) -> str:
    """The type both sides are compared as (the oracle holds a DECIMAL as its unscaled BIGINT)."""
    return {"string": "VARCHAR", "boolean": "BOOLEAN"}.get(ftype.kind, "BIGINT")


def _utf8_without_bom(path: Path) -> bool:
    """Valid UTF-8 throughout, no byte-order mark: checked with Python's decoder, the strict reader's."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        with path.open("rb") as fh:
            chunk = fh.read(_CHUNK)
            if chunk.startswith(codecs.BOM_UTF8):
                return False
            while chunk:
                decoder.decode(chunk)
                chunk = fh.read(_CHUNK)
            decoder.decode(b"", final=True)
    except (UnicodeDecodeError, OSError):
        return False
    return True


def _line_pattern(path: Path, columns: Sequence[tuple[str, FlinkType]]) -> tuple[str, list[str]] | None:
    """The regular expression every line must match (keys in the first line's order) and its group names."""
    with path.open("rb") as fh:
        first = fh.readline()
    try:
        doc = json.loads(first)
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    names = [name for name, _ in columns]
    kind_fields = [k for k in doc if k in KIND_FIELDS]
    if len(kind_fields) != 1 or len(set(names)) != len(names) or any(
            not _NAME.fullmatch(n) or n in KIND_FIELDS or n == POSITION_FIELD for n in names):
        return None
    if sorted(doc) != sorted(kind_fields + [POSITION_FIELD] + names):
        return None
    types = dict(columns)
    parts, groups = [], []
    for key in doc:
        if key == kind_fields[0]:
            value, group = r'"(\+I|-U|\+U|-D)"', "k"
        elif key == POSITION_FIELD:
            value, group = r"(0|[1-9][0-9]{0,17})", "p"
        else:
            pattern = _value_pattern(types[key])
            if pattern is None:
                return None
            value, group = pattern, f"c{names.index(key)}"
        parts.append(f'"{key}": ?{value}')
        groups.append(group)
    return r"^\{" + ", ?".join(parts) + r"\}$", groups


def fast_verify(query: MappedQuery, events: list[Event], positions: list[int], output: Path, fmt: str
                ) -> tuple[int, int] | None:
    """(output records, checkpoints) when the output certainly agrees with the answer after every input
    record, else None (the strict path decides). `events` and `positions` are in position order."""
    global taken
    if query.join.interval is not None or query.where_sql or not events or positions[-1] >= 2**62:
        return None
    try:
        if not_a_file(output) is not None or (fmt if fmt != "auto" else detect_format(output)) != "jsonl":
            return None
        if not _utf8_without_bom(output):
            return None
        found = _compare(query, events, positions, output)
    except (BadInputError, OracleError, UnsupportedError, duckdb.Error, OSError):  # the strict path says it
        return None
    if found is not None:
        taken += 1
    return found


def _compare(query: MappedQuery, events: list[Event], positions: list[int], output: Path) -> tuple[int, int] | None:
    columns = [(o.name, o.type) for o in query.output]
    line = _line_pattern(output, columns)
    if line is None:
        return None
    pattern, groups = line
    con = bulk_connection().cursor()
    try:
        return _in_duckdb(con, query, events, positions, output, columns, pattern, groups)
    finally:
        for t in ("__vf_out", "__vf_src", "__vf_oracle"):
            con.execute(f"DROP TABLE IF EXISTS {t}")
        con.close()


def _in_duckdb(con: duckdb.DuckDBPyConnection, query: MappedQuery, events: list[Event], positions: list[int],
               output: Path, columns: list[tuple[str, FlinkType]], pattern: str, groups: list[str]
               ) -> tuple[int, int] | None:
    # the oracle first: its query is the memory peak, before the output's records take memory too
    _load_oracle(con, query, events, columns)
    records = _load_output(con, output, columns, pattern, groups)
    if records is None:
        return None
    k = len(columns)
    row = ", ".join(f"c{i}" for i in range(k))
    # each output record's checkpoint: the last input record at or before its position (bisect_right - 1)
    _load_positions(con, positions)
    picked = ", ".join(f"o.c{i}" for i in range(k))
    con.execute(f"CREATE OR REPLACE TEMP TABLE __vf_out AS SELECT o.n, o.d, s.idx AS cp, {picked} "
                f"FROM __vf_out AS o ASOF LEFT JOIN __vf_src AS s ON o.p >= s.pos")
    unplaced, backwards, unheld = _one_row(con.execute(
        f"SELECT count(*) FILTER (cp IS NULL), count(*) FILTER (cp < prev), count(*) FILTER (held < 0) FROM ("
        f"SELECT cp, lag(cp) OVER (ORDER BY n) AS prev, sum(d) OVER (PARTITION BY {row} ORDER BY n "
        f"ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS held FROM __vf_out)"))
    if unplaced or backwards or unheld:
        return None
    differs = con.execute(
        f"SELECT 1 FROM (SELECT cp, d, {row} FROM __vf_out UNION ALL SELECT cp, -d, {row} FROM __vf_oracle) "
        f"GROUP BY cp, {row} HAVING sum(d) <> 0 LIMIT 1").fetchone()
    if differs is not None:
        return None
    last = len(events) - 1
    touched, has_last = _one_row(con.execute(
        f"SELECT count(DISTINCT cp), bool_or(cp = {last}) FROM "
        f"(SELECT cp FROM __vf_out UNION ALL SELECT cp FROM __vf_oracle)"))
    return records, touched + (0 if has_last else 1)


def _one_row(cursor: duckdb.DuckDBPyConnection) -> tuple[Any, ...]:
    """The row of an aggregate query without GROUP BY: it always has exactly one (never None)."""
    return cast(tuple[Any, ...], cursor.fetchone())


def _load_oracle(con: duckdb.DuckDBPyConnection, query: MappedQuery, events: list[Event],
                 columns: list[tuple[str, FlinkType]]) -> None:
    """__vf_oracle: the oracle's per-position changes of the query's output rows (no WHERE: a query with one
    is not taken), the position as INTEGER when every index fits (a narrower table at the memory peak)."""
    scenario = query.scenario(events, name=f"capture of {query.path}")
    picks = query.output_picks()
    names = ", ".join(quote_ident(f"__o{i}") for i in range(len(query.join_columns())))
    shaped = ", ".join(f"CAST(__o{p} AS {_sql_type(t)}) AS c{i}" for i, (p, (_, t)) in enumerate(zip(picks, columns, strict=False)))
    at = "INTEGER" if len(events) < 2**31 else "BIGINT"
    prefix = (f"CREATE TEMP TABLE __vf_oracle AS SELECT CAST(__op AS {at}) AS cp, CAST(__od AS INTEGER) AS d, "
              f"{shaped} FROM (")
    con.execute(intervals_sql(scenario, "changes", prefix=prefix, suffix=f") AS __t(__op, __od, {names})",
                              ordered=False))


def _load_positions(con: duckdb.DuckDBPyConnection, positions: list[int]) -> None:
    """__vf_src: each distinct input position and the last input record (in position order) there."""
    # the positions as one text: a list parameter would become a DuckDB value per element (memory)
    con.execute("CREATE TEMP TABLE __vf_src AS SELECT max(i) - 1 AS idx, pos FROM "
                "(SELECT generate_subscripts(l, 1) AS i, CAST(unnest(l) AS BIGINT) AS pos FROM "
                "(SELECT string_split($1, ',') AS l)) GROUP BY pos", [",".join(map(str, positions))])


def _load_output(con: duckdb.DuckDBPyConnection, output: Path, columns: list[tuple[str, FlinkType]], pattern: str,
                 groups: list[str]) -> int | None:
    """__vf_out: (line, sign, pos, values) of every output record; its count, or None when a line is not in
    the accepted form."""
    values, bad = [], []
    for i, (_, ftype) in enumerate(columns):
        value, out_of_range = _value_sql(f"m.c{i}", ftype)
        values.append(f"{value} AS c{i}")
        if out_of_range:
            bad.append(out_of_range)
    # one line per element of the file split at \n; a line that does not match gives empty groups
    con.execute(
        f"CREATE TEMP TABLE __vf_out AS SELECT n, m.k = '' AS miss, "
        f"CASE WHEN m.k = '' THEN FALSE ELSE {' OR '.join(bad) or 'FALSE'} END AS bad, "
        f"CASE WHEN m.k IN ('+I', '+U') THEN 1 ELSE -1 END AS d, TRY_CAST(m.p AS BIGINT) AS p, "
        f"{', '.join(values)} FROM (\n"
        f"  SELECT n, regexp_extract(t, $1, $2) AS m FROM (\n"
        f"    SELECT generate_subscripts(l, 1) AS n, unnest(l) AS t FROM (\n"
        f"      SELECT string_split(content, chr(10)) AS l FROM read_text($3))))",
        [pattern, groups, str(output)])
    total, misses, bads, last_miss = _one_row(con.execute(
        "SELECT count(*), count(*) FILTER (miss), count(*) FILTER (bad), "
        "bool_or(miss AND n = (SELECT max(n) FROM __vf_out)) FROM __vf_out"))
    # a final \n leaves one empty element after it (and only that one may miss)
    with output.open("rb") as fh:
        fh.seek(-1, 2)
        ends_with_newline = fh.read(1) == b"\n"
    if bads or misses != (1 if ends_with_newline else 0) or (ends_with_newline and not last_miss):
        return None
    con.execute("DELETE FROM __vf_out WHERE miss")
    return (total - misses) or None
