"""Measure the paced wall clock of a TTL job (ttl_clock.py): when the join processes each instant's round.

Run by the Flink environment's interpreter (`<venv>/bin/python -I ttl_probe.py [--cases N] [--instants M]
[--jobs J] [--backend hashmap|rocksdb]`); it starts its own MiniCluster (session.FlinkSession) and prints one
JSON line per job, then a summary line. Each job holds N probe cases of an INNER join `a.k = b.k`: b's row at
instant 0, then one insert of a per instant 1..M, each meeting b's row, so the join emits one row per instant
and case. The job's SELECT adds CURRENT_TIMESTAMP (evaluated per record in streaming mode by the Calc chained
behind the join, in the join's thread), which is when the join processed that instant's round. The TTL sent is
the grid's longest, so nothing expires.

What it reports: per instant t, the deviation d(t) = (stamp(t) - stamp(1)) - (t - 1) * ms_per_logical_ms of
every case's row (all cases of a job share the round, so they agree to within a millisecond or two), and the
largest |d(r) - d(w)| over every pair of instants w < r: how far from the grid a read can lie from the write
it decides on. An expiry decision flips only when that exceeds half a logical ms (ttl_clock.py).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parent))  # the sibling modules, as top-level names

from case_plan import plan  # noqa: E402
from session import FlinkSession  # noqa: E402
from ttl_clock import CLOCK  # noqa: E402

STAMP = ", CAST(CURRENT_TIMESTAMP AS STRING) NULL ON NULL)"


def probe_case(n: int, instants: int, backend: str) -> dict:
    """Probe case n: b's row at instant 0, then an insert of a at each instant 1..`instants`."""
    events: list[dict] = [{"input": "b", "kind": "+I", "row": [n, 0]}]
    for t in range(1, instants + 1):
        events.append({"processing_time": t})
        events.append({"input": "a", "kind": "+I", "row": [n, t]})
    columns = [["k", "BIGINT"], ["x", "BIGINT"]]
    inputs = [{"name": name, "columns": columns, "unique_key": None, "changelog_mode": "insert_only"}
              for name in ("a", "b")]
    return {"id": f"probe-{n}", "changelogs": {"a": [["+I", n, t] for t in range(1, instants + 1)],
                                               "b": [["+I", n, 0]]},
            "scenario": {"name": "ttl-probe", "inputs": inputs, "events": events,
                         "config": {"state_ttl_ms": instants + 2, "state_backend": backend},
                         "join": {"inputs": ["a", "b"], "types": ["inner"], "conditions": ["a.k = b.k"]}}}


def _millis(text: str) -> float:
    stamp = datetime.strptime(text[:23], "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=timezone.utc)
    return stamp.timestamp() * 1000


def measure(session: FlinkSession, cases: int, instants: int, backend: str) -> dict[str, Any]:
    planned = [plan(probe_case(n, instants, backend)) for n in range(cases)]
    shape = planned[0].shape
    assert " NULL ON NULL)" in shape.select, shape.select
    shape.select = shape.select.replace(" NULL ON NULL)", STAMP, 1)
    for p in planned:
        p.shape = shape
    started = time.perf_counter()
    changelogs = session.run(shape, planned)
    wall = time.perf_counter() - started
    step = CLOCK.ms_per_logical_ms
    deviations: dict[int, list[float]] = {}
    offsets: list[float] = []   # a case's join's stamp minus the probe's of the same round
    for rows in changelogs.values():
        if not isinstance(rows, list):
            continue  # not decided on the probe's clock (ttl_clock.undecided): its stamps are still the study's
        stamps = {row[2]: _millis(row[-1]) for row in rows}  # [kind, a.k, a.x, ...]: a.x is its instant
        if 1 not in stamps:
            continue
        for t, stamp in stamps.items():
            deviations.setdefault(t, []).append(stamp - stamps[1] - (t - 1) * step)
            if t in session.stamps:
                offsets.append(stamp - session.stamps[t])
    per_instant = {t: statistics.median(d) for t, d in sorted(deviations.items())}
    spread_in_round = max((max(d) - min(d) for d in deviations.values()), default=0.0)
    values = list(per_instant.values())
    pairs = max((abs(values[r] - values[w]) for r in range(len(values)) for w in range(r)), default=0.0)
    return {"backend": backend, "cases": cases, "instants": instants, "rows": sum(map(len, changelogs.values())),
            "seconds": round(wall, 1), "ms_per_logical_ms": step, "round_ms": CLOCK.round_ms,
            "deviation_ms": [round(v, 1) for v in values], "max_pair_ms": round(pairs, 1),
            "max_spread_in_round_ms": round(spread_in_round, 1),
            "join_minus_probe_ms": [round(min(offsets, default=0), 1), round(statistics.median(offsets or [0]), 1),
                                    round(max(offsets, default=0), 1)],
            "undecided": sum(not isinstance(rows, list) for rows in changelogs.values())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10)
    parser.add_argument("--instants", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=3)
    parser.add_argument("--backend", choices=("hashmap", "rocksdb"), default="hashmap")
    args = parser.parse_args()
    session = FlinkSession()
    worst = 0.0
    try:
        for _ in range(args.jobs):
            report = measure(session, args.cases, args.instants, args.backend)
            worst = max(worst, report["max_pair_ms"])
            print("PROBE", json.dumps(report), flush=True)
    finally:
        session.close()
    print("PROBE", json.dumps({"jobs": args.jobs, "worst_pair_ms": worst, "half_logical_ms": CLOCK.ms_per_logical_ms / 2}))
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    import os

    os._exit(code)  # the py4j gateway's threads would otherwise keep the process alive
