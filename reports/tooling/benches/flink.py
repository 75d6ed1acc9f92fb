"""The Flink adapter's throughput: batched cases of one shape per second after start-up, and the start-up itself.

Budgets (issue 14): at least 100 cases/s, start-up under 15 s. Skipped, with the reason, when the
Flink environment is not installed (`converge systems install flink`). It speaks the protocol
directly (JSON lines), so it measures the adapter and not a client's bookkeeping.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time

from converge.engine.errors import UsageError
from converge.engine.systems.flink import environment
from converge.reports.tooling.options import BenchConfig

BATCH = 500      # cases per request: the adapter's max_batch
REQUESTS = 4     # measured requests after the warm-up one
EVENTS = 20      # change events per case, both inputs together


def _case(i: int, rng: random.Random) -> dict:
    """A LEFT join with a residual, 10 changes per input over 3 keys, with retractions."""
    changelogs = {}
    for name in ("a", "b"):
        live: list[list[int]] = []
        rows = []
        while len(rows) < EVENTS // 2:
            if live and rng.random() < 0.3:
                row = live.pop(rng.randrange(len(live)))
                rows.append(["-D", *row])
            else:
                row = [rng.randint(1, 3), rng.randint(0, 9)]
                live.append(row)
                rows.append(["+I", *row])
        changelogs[name] = rows
    inputs = [{"name": n, "columns": [["k", "BIGINT"], [c, "BIGINT"]], "unique_key": None,
               "changelog_mode": "retract"} for n, c in (("a", "x"), ("b", "y"))]
    return {"id": f"c{i}", "scenario": {"name": "bench", "inputs": inputs, "join": {
        "inputs": ["a", "b"], "types": ["left"], "conditions": ["a.k = b.k AND a.x > b.y"]}, "config": {},
        "events": []}, "changelogs": changelogs}


def _bench_flink_adapter(config: BenchConfig) -> dict:
    try:
        command = environment.adapter_command()
    except UsageError as exc:
        return {"skipped": str(exc)}
    rng = random.Random(14)
    start = time.perf_counter()
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True, start_new_session=True)

    def ask(message: dict) -> dict:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()
        line = process.stdout.readline()
        if not line:
            raise UsageError(f"the Flink adapter exited ({process.poll()}) during the benchmark")
        return json.loads(line)

    try:
        ask({"type": "hello", "protocol": "converge-adapter", "versions": [1]})
        hello_seconds = time.perf_counter() - start
        ask({"type": "run", "request": 0, "cases": [_case(0, rng)]})
        startup_seconds = time.perf_counter() - start
        cases = ok = 0
        measured = time.perf_counter()
        for request in range(1, REQUESTS + 1):
            batch = [_case(request * BATCH + i, rng) for i in range(BATCH)]
            answer = ask({"type": "run", "request": request, "cases": batch})
            cases += len(batch)
            ok += sum(r["status"] == "ok" for r in answer["results"])
        seconds = time.perf_counter() - measured
        assert process.stdin is not None
        process.stdin.write(json.dumps({"type": "shutdown"}) + "\n")
        process.stdin.flush()
        process.wait(30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return {"cases_per_second": round(cases / seconds, 1), "startup_seconds": round(startup_seconds, 1),
            "hello_seconds": round(hello_seconds, 1), "cases": cases, "ok": ok, "events_per_case": EVENTS,
            "cases_per_job": BATCH, "ms_per_case": round(1000 * seconds / cases, 2),
            "budget": ">= 100 cases/s, start-up < 15 s"}


BENCHES = {"flink_adapter": _bench_flink_adapter}
