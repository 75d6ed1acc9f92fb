"""`converge check --format json`: one JSON document on stdout, for editors, CI and scripts.

The document's schema is documented in docs/check-your-query.md ("Machine-
readable output"); SCHEMA_VERSION changes when a field changes meaning or
goes away. Everything a text run prints has a field here: what converge read
(`plan`), the verdict of each property with the cases it compared
(`verdicts`), the findings with their examples' rows by the SELECT list's
names (`findings`), each refusal of the query with its position
(`refusals`), and the outcome and exit code. This module imports nothing
heavy: `--plan-only` uses it too.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from converge.engine.model.errors import ConvergeError, exit_code, label

if TYPE_CHECKING:
    from converge.engine.model.flinksql import MappedQuery
    from converge.engine.model.flinksql.types import FlinkType
    from converge.properties.findings import Finding
    from converge.properties.query_plan import CheckOptions

SCHEMA_VERSION = 1
_AT = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<column>\d+): ?(?P<rest>.*)$", re.S)


def value(ftype: FlinkType, held: Any) -> Any:
    """A held value as JSON: numbers, text and booleans as they are, NULL as null, DECIMAL, TIMESTAMP and DATE
    as Flink prints them (text, so no digit or millisecond is lost)."""
    if held is None:
        return None
    if ftype.kind in ("decimal", "timestamp", "date") or (isinstance(held, float) and not math.isfinite(held)):
        return ftype.display(held)
    return held


def plan_document(query: MappedQuery, options: CheckOptions, operators: list[str], views: list[str],
                  system: str | None = None) -> dict:
    """What converge read from the query and the plan it runs, as `plan`."""
    inputs = []
    for alias, name in query.aliases:
        t = query.tables[name]
        inputs.append({"alias": alias, "table": name, "connector": t.connector, "changelog_mode": t.changelog_mode,
                       "primary_key": list(t.primary_key or ()), "rowtime": t.time_column, "proctime": t.proctime,
                       "watermark_delay_ms": t.watermark_delay_ms,
                       "columns": [{"name": c, "type": ft.name, "nullable": ft.nullable} for c, ft in t.columns]})
    iv = query.join.interval
    return {
        "inputs": inputs,
        "join": {"first": query.join.inputs[0],
                 "steps": [{"input": name, "type": jt, "condition": cond} for name, jt, cond in
                           zip(query.join.inputs[1:], query.join.types, query.join.conditions, strict=False)],
                 "interval": None if iv is None else {"left_time": iv.left_time, "right_time": iv.right_time,
                                                      "lower_ms": iv.lower_ms, "upper_ms": iv.upper_ms,
                                                      "time": iv.time}},
        "where": query.where_sql,
        "select": [{"name": o.name, "alias": o.alias, "column": o.column, "type": o.type.name} for o in query.output],
        "job_options": [s.describe() for s in query.job],
        "options": {"ttl_ms": options.ttl_ms, "semantics": options.semantics,
                    "map_state_order": options.map_state_order, "multi_join": options.multi_join,
                    "examples": options.examples, "seed": options.seed, "system": system or "reference"},
        "operators": operators,
        "state_views": views,
    }


def refusals(exc: ConvergeError) -> list[dict]:
    """Each refusal of the query (all of them when several were found in one reading), with its position."""
    out = []
    for one in getattr(exc, "refusals", None) or (exc,):
        text = str(one)
        found = _AT.match(text)
        entry: dict[str, Any] = {"kind": label(one), "file": None, "line": None, "column": None,
                                 "clause": getattr(one, "clause", None), "reason": getattr(one, "reason", None),
                                 "message": text}
        if found:
            entry.update(file=found["file"], line=int(found["line"]), column=int(found["column"]))
            if entry["reason"] is None:
                entry["reason"] = found["rest"]
        elif entry["reason"] is None:
            entry["reason"] = text
        out.append(entry)
    return out


def finding(query: MappedQuery, f: Finding) -> dict:
    """One finding: its text, and its example's input events and output rows by the SELECT list's names."""
    names = [o.name for o in query.output]
    example = None
    if f.example is not None:
        from converge.properties.findings import show_event  # lazy: Hypothesis; --plan-only has no finding
        example = {"input": [show_event(query, e) for e in f.example.events],
                   "outputs": [{"title": title.rstrip(":"), "columns": names,
                                "rows": [{**_mark(mark), "row": {o.name: value(o.type, v) for o, v in
                                                                 zip(query.output, row, strict=False)}} for mark, row in rows]}
                               for title, rows in f.outputs]}
    return {"topic": f.topic, "text": f.text, "example": example, "detail": list(f.detail)}


def _mark(mark: str) -> dict:
    """A changelog row's kind (`{"kind": "+I"}`) or a bag row's count (`{"count": 2}`)."""
    if mark[:1] in ("+", "-"):
        return {"kind": mark}
    return {"count": int(mark.split()[0]) if mark else 1}


def verdict(row: tuple, seed: int | None = None, reports: Iterable[str] = (), message: str | None = None) -> dict:
    """One line of the properties table: (property, verdict, examples, compared, what it checks)."""
    name, outcome, examples, compared, what = row
    return {"property": name, "verdict": outcome, "examples": examples, "compared": compared, "what": what,
            "seed": seed, "reports": [str(r) for r in reports], "message": message}


def document(query_file: str, *, plan: dict | None = None, verdicts: list[dict] | None = None,
             findings: list[dict] | None = None, error: ConvergeError | None = None, code: int = 0,
             plan_only: bool = False) -> dict:
    """The whole document; `error` is what stopped the run (its refusals are listed), `code` the exit code."""
    code = exit_code(error) if error is not None else code
    outcome = label(error) if error is not None else next(
        (v["verdict"] for v in verdicts or [] if v["verdict"] not in ("passed", "not run")), "passed")
    return {"converge": "check", "schema_version": SCHEMA_VERSION, "query": query_file,
            "mode": "plan-only" if plan_only else "full", "outcome": outcome, "exit_code": code,
            "plan": plan, "verdicts": verdicts or [], "findings": findings or [],
            "refusals": refusals(error) if error is not None else []}


def dumps(doc: dict) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False, default=str)


__all__ = ["SCHEMA_VERSION", "document", "dumps", "finding", "plan_document", "refusals", "value", "verdict"]
