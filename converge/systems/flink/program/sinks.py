"""The job's sink (part of the Flink adapter program): Flink's collect() (retract), or an upsert sink.

Standard library at import time; pyflink only inside the functions that build a job (the tests
import this module without Java). An upsert case (`config.sink = "upsert"`) runs the join's result
through a real upsert sink: `to_changelog_stream(table, schema with PRIMARY KEY, ChangelogMode.upsert())`,
which the planner treats as any upsert table sink, so it decides on the SinkUpsertMaterializer as
it does for a user's (`table.exec.sink.upsert-materialize`: AUTO, FORCE, NONE). What the sink
receives is turned back into a table (changelog mode `all`, nothing normalised) and collected as
the retract path is, with its row kinds, in the order the sink received it.

The sink's primary key is the case id of the output row plus the columns of `sink_key`. Flink's
primary key columns are NOT NULL, so a key column must be an input's unique-key column (the adapter
declares those NOT NULL) on a side the join never pads with NULLs; anything else is refused as
untranslatable (docs/flink.md, "Upsert sink").

Flink 2.3 (FLIP-558) refuses an upsert sink whose primary key differs from the query's upsert key
unless the INSERT says ON CONFLICT; a DataStream sink has no INSERT, so the adapter sets
`table.exec.sink.require-on-conflict=false`, Flink's own switch back to the behaviour of 2.2 and
earlier (the materializer decides), which the release notes describe as ON CONFLICT DO DEDUPLICATE.
"""

from __future__ import annotations

import json
from typing import Any

from condition_sql import Column, Untranslatable  # the program's folder is on sys.path

MATERIALIZE = {"auto": "AUTO", "force": "FORCE", "none": "NONE"}
MATERIALIZER = "SinkMaterializer"   # the operator's name in Flink's job graph (1.19 .. 2.3)
_SELECT = "SELECT JSON_ARRAY("
_FROM = " NULL ON NULL) FROM "


def key_columns(chain: list[str], types: list[str], columns: list[Column], unique: dict[str, tuple[str, ...]],
                sink_key: tuple[str, ...]) -> tuple[str, ...]:
    """The Flink names of the sink key's columns ("input.column" -> "t<i>c<j>"); Untranslatable when a column is
    not an output column, not in its input's unique key (so nullable in Flink), or on a side padded with NULLs."""
    padded = _padded(chain, types)
    out = []
    for name in sink_key:
        table, _, column = name.partition(".")
        found = [c for c in columns if c.input == table and c.name == column]
        if not found or table not in chain or chain.index(table) in _hidden(types):
            raise Untranslatable(f"sink_key {name!r} is not a column of the join's output")
        if table in padded:
            raise Untranslatable(f"sink_key {name!r}: the join pads {table!r} with NULLs, and Flink's primary key "
                                 "columns are NOT NULL")
        if column not in unique.get(table, ()):
            raise Untranslatable(f"sink_key {name!r} is not in {table!r}'s unique key, so it is nullable in Flink, "
                                 "and Flink's primary key columns are NOT NULL")
        out.append(found[0].flink_name)
    return tuple(out)


def _hidden(types: list[str]) -> set[int]:
    """Chain positions whose columns the output does not carry (the right side of SEMI/ANTI)."""
    return {k for k, jtype in enumerate(types, start=1) if jtype in ("semi", "anti")}


def _padded(chain: list[str], types: list[str]) -> set[str]:
    """Inputs whose columns may be NULL in an output row: the right side of LEFT/FULL, all before RIGHT/FULL."""
    out: set[str] = set()
    for k, jtype in enumerate(types, start=1):
        if jtype in ("left", "full"):
            out.add(chain[k])
        if jtype in ("right", "full"):
            out.update(chain[:k])
    return out


def split_select(select: str) -> tuple[list[str], str]:
    """The retract query's output expressions (case id first) and its FROM clause (case_plan._query's form)."""
    if not select.startswith(_SELECT) or _FROM not in select:
        raise ValueError(f"not a case_plan query: {select[:60]!r}")
    values, frag = select[len(_SELECT):].split(_FROM, 1)
    return [v.strip() for v in _split_top(values)], frag


def _split_top(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def upsert_queries(select: str, key: tuple[str, ...]) -> tuple[str, list[str], list[str]]:
    """(the join's query with one named column per output value, the sink's column names, its primary key).

    The case id becomes column `scid`; the other values keep their Flink names (t<i>c<j>), so the planner
    sees the sink key as the input's own columns and derives upsert keys through them."""
    values, frag = split_select(select)
    names = ["scid"] + values[1:]
    if any(not n.replace("_", "").isalnum() for n in names[1:]):
        raise ValueError(f"an output value is not a column: {values!r}")
    query = f"SELECT {values[0]} AS scid, {', '.join(values[1:])} FROM {frag}" if len(values) > 1 \
        else f"SELECT {values[0]} AS scid FROM {frag}"
    return query, names, ["scid", *key]


def configure(config: Any, sink: str, materialize: str) -> None:
    """The job's sink options on the table config (each job sets them: the config outlives the job)."""
    config.set("table.exec.sink.upsert-materialize", MATERIALIZE[materialize] if sink == "upsert" else "AUTO")
    # see the module's docstring: without it Flink 2.3 refuses the sink when the materializer would be needed
    config.set("table.exec.sink.require-on-conflict", "false")


def upsert_result(session: Any, select: str, key: tuple[str, ...], materialize: str, view: str) -> str:
    """Run the join through an upsert sink; the sink's input as the text session._collect returns.

    The plan is checked against `materialize`: FORCE must show the materializer, NONE must not (an option
    Flink ignored would be a defect of the test, not of Flink), AUTO is the planner's choice."""
    from pyflink.table import Schema  # lazy: pyflink
    from pyflink.table.changelog_mode import ChangelogMode  # lazy: pyflink

    query, names, primary = upsert_queries(select, key)
    table = session.t_env.sql_query(query)
    stream = session.t_env.to_changelog_stream(table, Schema.new_builder().primary_key(*primary).build(),
                                               ChangelogMode.upsert())
    present = materializer_present(session.env.get_execution_plan())
    if materialize == "force" and not present:
        raise RuntimeError("upsert_materialize=force, but the job graph has no SinkMaterializer")
    if materialize == "none" and present:
        raise RuntimeError("upsert_materialize=none, but the job graph has a SinkMaterializer")
    session.t_env.create_temporary_view(view, session.t_env.from_changelog_stream(stream))
    try:
        return session._collect(f"SELECT JSON_ARRAY({', '.join(names)} NULL ON NULL) FROM {view}")
    finally:
        session.t_env.drop_temporary_view(view)


def materializer_present(plan_json: str) -> bool:
    """Whether a job graph (StreamExecutionEnvironment.getExecutionPlan's JSON) holds the materializer."""
    nodes = json.loads(plan_json).get("nodes", [])
    return any(MATERIALIZER in str(node.get("type", "")) or MATERIALIZER in str(node.get("contents", ""))
               for node in nodes)
