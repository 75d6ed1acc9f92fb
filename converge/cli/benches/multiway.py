"""FLIP-516's promise, measured: state of a multi-way join vs. the binary chain, and the speed of each.

For 3-, 4- and 5-way chains (alternating INNER / LEFT joins on a common key `k`,
inputs with a primary key `id`) two workloads are run through both plans:

* `low_selectivity`: every key has several rows in every input, so each join
  multiplies rows and the binary chain stores every intermediate result;
* `hot_key`: one key holds many rows of every input, the others one row each.

Each stream first inserts, then updates (`-U`/`+U` of a value column) rows in
turn. Measured after the stream: state entries (map entries count one each)
and serialized bytes (each live entry pickled as (key, map key, value), summed)
of every operator, the live input records, and events/s of each plan.
"""

from __future__ import annotations

import pickle
import time
from collections.abc import Callable

from converge.engine.model.errors import ApiMisuseError
from converge.engine.model.scenario import ChangeEvent, Config, InputSpec, JoinSpec, Scenario
from converge.engine.planner.multi import multi_join_nodes
from converge.engine.runtime.local import LocalRuntime
from converge.engine.state import KeyedStateBackend
from converge.oracle.materialize import materialize_inputs
from converge.reports.options import BenchConfig
from converge.reports.terminal import format_table

NAMES = ("a", "b", "c", "d", "e")
WORKLOADS = ("low_selectivity", "hot_key")


def chain_scenario(n_inputs: int, workload: str, max_events: int, *, multi: bool) -> Scenario:
    """A star chain a ⋈ b ⋈ ... on k (INNER, LEFT, INNER, LEFT), inserts then updates, at most max_events."""
    names = NAMES[:n_inputs]
    specs = tuple(InputSpec(n, (("k", "BIGINT"), ("id", "BIGINT"), ("v", "BIGINT")), ("id",), "retract")
                  for n in names)
    types = tuple("inner" if i % 2 == 0 else "left" for i in range(n_inputs - 1))
    conditions = tuple(f"a.k = {n}.k" for n in names[1:])
    if workload == "low_selectivity":
        per_key = 3
        n_keys = max(1, (max_events * 3 // 5) // (n_inputs * per_key))
        rows_of = {k: per_key for k in range(n_keys)}
    elif workload == "hot_key":
        hot = 6
        n_keys = max(2, (max_events * 3 // 5) // n_inputs - hot + 1)
        rows_of = {k: (hot if k == 0 else 1) for k in range(n_keys)}
    else:
        raise ApiMisuseError(f"unknown workload {workload!r}")
    events: list[ChangeEvent] = []
    rows: list[tuple[str, list]] = []
    next_id = 0
    for k, count in rows_of.items():
        for _ in range(count):
            for name in names:
                row = [k, next_id, 0]
                next_id += 1
                events.append(ChangeEvent(name, "+I", tuple(row)))
                rows.append((name, row))
    i = 0
    while len(events) + 2 <= max_events and rows:
        name, row = rows[i % len(rows)]
        events.append(ChangeEvent(name, "-U", tuple(row)))
        row[2] += 1
        events.append(ChangeEvent(name, "+U", tuple(row)))
        i += 7  # a stride, so updates visit inputs and keys in a mixed order
    config = Config(multi_join="on" if multi else "off")
    return Scenario(f"bench {n_inputs}-way {workload}", specs, JoinSpec(names, types, conditions), config,
                    tuple(events[:max_events]))


def state_size(backend: KeyedStateBackend) -> tuple[int, int]:
    """(live entries, serialized bytes) of one operator's keyed state."""
    entries = sum(backend.live_entries().values())
    size = 0
    for table in backend.snapshot()["tables"].values():
        for key, value in table.items():
            bucket = getattr(value, "entries", None)
            if bucket is not None:      # a MapState: one entry per map key
                for map_key, entry in bucket.items():
                    size += len(pickle.dumps((key, map_key, entry[0]), protocol=5))
            else:                       # a ValueState (possibly TTL-wrapped)
                size += len(pickle.dumps((key, getattr(value, "value", value)), protocol=5))
    return entries, size


def run_plan(scenario: Scenario) -> dict:
    runtime = LocalRuntime(scenario)
    process = runtime.process_event
    emitted = 0
    start = time.perf_counter()
    for event in scenario.events:
        emitted += len(process(event))
    seconds = time.perf_counter() - start
    entries = size = 0
    for _, backend in runtime.node_backends():
        e, s = state_size(backend)
        entries += e
        size += s
    return {"operators": len(runtime.plan.nodes()), "multi_way_operators": len(multi_join_nodes(runtime.plan)),
            "state_entries": entries, "state_bytes": size, "events_per_second": round(len(scenario.events) / seconds),
            "emitted": emitted, "seconds": round(seconds, 3)}


def live_input_records(scenario: Scenario) -> int:

    return sum(sum(t.values()) for t in materialize_inputs(scenario).values())


def compare(n_inputs: int, workload: str, max_events: int) -> dict:
    multi_s = chain_scenario(n_inputs, workload, max_events, multi=True)
    binary_s = chain_scenario(n_inputs, workload, max_events, multi=False)
    multi, binary = run_plan(multi_s), run_plan(binary_s)
    live = live_input_records(multi_s)
    return {"inputs": n_inputs, "workload": workload, "events": len(multi_s.events), "live_input_records": live,
            "multi": multi, "binary": binary,
            "multi_state_equals_live_inputs": multi["state_entries"] == live,
            "binary_intermediate_entries": binary["state_entries"] - live,
            "entries_ratio": round(binary["state_entries"] / max(multi["state_entries"], 1), 2),
            "bytes_ratio": round(binary["state_bytes"] / max(multi["state_bytes"], 1), 2),
            "speed_ratio": round(multi["events_per_second"] / max(binary["events_per_second"], 1), 2)}


def format_rows(cases: list[dict]) -> str:

    rows = []
    for c in cases:
        m, b = c["multi"], c["binary"]
        rows.append((f"{c['inputs']}-way", c["workload"], c["events"], c["live_input_records"],
                     m["state_entries"], b["state_entries"], c["entries_ratio"], m["state_bytes"], b["state_bytes"],
                     c["bytes_ratio"], m["events_per_second"], b["events_per_second"]))
    return format_table(("chain", "workload", "events", "live rows", "multi entries", "binary entries",
                         "x entries", "multi bytes", "binary bytes", "x bytes", "multi ev/s", "binary ev/s"), rows)


def _bench_multiway(config: BenchConfig) -> dict:
    """Multi-way vs binary chain: state entries and bytes, events/s, for 3/4/5 inputs and two workloads.

    `converge bench` prints the cases as a table (format_rows) and writes them all to its JSON file.
    Each case runs at most min(--events, 4000) events: a 5-way chain re-joins up to 81 rows per change.
    """
    max_events = max(100, min(config.events, 4000))
    cases = [compare(n, w, max_events) for w in WORKLOADS for n in (3, 4, 5)]
    return {"entries_ratio_min": min(c["entries_ratio"] for c in cases),
            "entries_ratio_max": max(c["entries_ratio"] for c in cases),
            "multi_state_equals_live_inputs": all(c["multi_state_equals_live_inputs"] for c in cases),
            "bytes_ratio_min": min(c["bytes_ratio"] for c in cases),
            "bytes_ratio_max": max(c["bytes_ratio"] for c in cases),
            "speed_ratio_min": min(c["speed_ratio"] for c in cases),
            "speed_ratio_max": max(c["speed_ratio"] for c in cases),
            "cases": cases}


BENCHES: dict[str, Callable[[BenchConfig], dict]] = {
    "multiway_state": _bench_multiway,
}
