"""Random join chains of two or three inputs as scenario dicts, and a DuckDB connection with its optimizer on: the
oracle's self-consistency tests (tests/oracle/) hold the snapshot and the interval history to each other on them."""

from __future__ import annotations

import duckdb
from hypothesis import strategies as st


def _optimized_connection() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")  # DuckDB's default optimizer; one thread keeps the suite fast
    con.execute("SET threads = 1")
    return con


OPTIMIZED_CON = _optimized_connection()


def ev(name: str, kind: str, *row) -> dict:
    return {"input": name, "kind": kind, "row": list(row)}


NAMES = ["a", "b", "c"]
KEYS = [None, 1, 2, 3]
VALUES = ["p", "q", "it's", None]
CONDITIONS = [
    "{l}.k = {r}.k",
    "{l}.k IS NOT DISTINCT FROM {r}.k",
    "{l}.k = {r}.k AND {l}.v <> {r}.v",
    "{l}.k = {r}.k OR {l}.v = {r}.v",
    "{l}.k < {r}.k",
]


@st.composite
def random_scenarios(draw) -> dict:
    n = draw(st.integers(2, 3))
    names = NAMES[:n]
    modes = {name: draw(st.sampled_from(["retract", "retract", "upsert", "insert_only"])) for name in names}
    inputs = [{"name": name, "columns": [["k", "BIGINT"], ["v", "VARCHAR"]],
               "unique_key": ["k"] if modes[name] == "upsert" else None, "changelog_mode": modes[name]}
              for name in names]
    types, conditions, visible = [], [], [names[0]]
    for right in names[1:]:
        jtype = draw(st.sampled_from(["inner", "left", "right", "full", "semi", "anti"]))
        left = draw(st.sampled_from(visible))
        conditions.append(draw(st.sampled_from(CONDITIONS)).format(l=left, r=right))
        types.append(jtype)
        if jtype not in ("semi", "anti"):
            visible.append(right)
    held: dict[str, list] = {name: [] for name in names}
    events = []
    for _ in range(draw(st.integers(0, 10))):
        name = draw(st.sampled_from(names))
        action = draw(st.sampled_from(["add", "add", "remove", "other"]))
        if action == "other":
            events.append(draw(st.sampled_from([{"input": name, "watermark": len(events)},
                                                {"processing_time": len(events)}])))
        elif modes[name] == "upsert":
            key = draw(st.sampled_from(KEYS[1:]))
            if action == "add":
                events.append(ev(name, draw(st.sampled_from(["+I", "+U"])), key, draw(st.sampled_from(VALUES))))
            else:
                events.append(ev(name, "-D", key, draw(st.sampled_from(VALUES))))  # maybe absent, maybe key-only
        elif action == "remove" and held[name] and modes[name] == "retract":
            row = held[name].pop(draw(st.integers(0, len(held[name]) - 1)))
            events.append(ev(name, draw(st.sampled_from(["-D", "-U"])), *row))
        else:
            row = [draw(st.sampled_from(KEYS)), draw(st.sampled_from(VALUES))]
            held[name].append(row)
            kind = "+I" if modes[name] == "insert_only" else draw(st.sampled_from(["+I", "+U"]))
            events.append(ev(name, kind, *row))
    return {"name": "random", "inputs": inputs,
            "join": {"inputs": names, "types": types, "conditions": conditions}, "events": events}
