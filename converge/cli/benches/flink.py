"""The Flink adapter's throughput (batched cases of one shape per second after start-up; `flink_adapter_shapes`:
a campaign's requests, 80 cases of 8 shapes with interleaved inputs), its start-up, and shrinking one failure
against the live MiniCluster.

Budgets: at least 150 cases/s (issue 39; 100 in issue 14), start-up under 15 s; a campaign's requests at least
20 cases/s; shrinking under 60 s for a counterexample of at most 6 events. `CONVERGE_FLINK_PACING` in the
environment reaches the adapter (docs/flink.md, "Paced arrival: its cost, lever by lever"). Skipped, with the reason, when the
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
from collections import Counter
from typing import Any

from converge.engine.model.changelog import sign
from converge.engine.model.errors import UsageError
from converge.engine.model.scenario import ChangeEvent, Scenario
from converge.engine.model.system import System
from converge.generators.scenarios import regular_join_scenarios
from converge.properties.campaign import run_property
from converge.properties.divergence import fail
from converge.properties.spec import PropertySpec
from converge.properties.systems.specs import batches
from converge.reports.options import BenchConfig
from converge.systems.adapter.client import AdapterSystem
from converge.systems.flink import environment

BATCH = 500      # cases per request: the adapter's max_batch
REQUESTS = 4     # measured requests after the warm-up one
SHAPES_BATCH = 80     # flink_adapter_shapes: a campaign's request (the flink system type's default_batch),
SHAPES = 8            # eight shapes of 10 cases (properties/systems/specs.py CASES_PER_SHAPE)
SHAPES_REQUESTS = 10
EVENTS = 20      # change events per case, both inputs together


def _case(i: int, rng: random.Random, shape: int = 0, interleave: bool = False) -> dict:
    """A LEFT join with a residual, 10 changes per input over 3 keys, with retractions; `shape` > 0 adds that
    constant to the residual, a query (and a job shape) of its own. Without `interleave` the case has no events
    (the inputs arrive one after the other); with it, its events interleave the inputs at random, as a
    campaign's do."""
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
    events: list[dict] = []
    if interleave:
        left: dict[str, list[list[Any]]] = {name: list(rows) for name, rows in changelogs.items()}
        while left["a"] or left["b"]:
            name = rng.choice([n for n in ("a", "b") if left[n]])
            change = left[name].pop(0)
            events.append({"input": name, "kind": change[0], "row": change[1:]})
    inputs = [{"name": n, "columns": [["k", "BIGINT"], [c, "BIGINT"]], "unique_key": None,
               "changelog_mode": "retract"} for n, c in (("a", "x"), ("b", "y"))]
    return {"id": f"c{i}", "scenario": {"name": "bench", "inputs": inputs, "join": {
        "inputs": ["a", "b"], "types": ["left"],
        "conditions": ["a.k = b.k AND a.x > b.y" + (f" + {shape}" if shape else "")]}, "config": {},
        "events": events}, "changelogs": changelogs}


def _bench_flink_adapter(config: BenchConfig) -> dict:
    return _measure(BATCH, 1, REQUESTS, ">= 150 cases/s (issue 39), start-up < 15 s", interleave=False)


def _bench_flink_adapter_shapes(config: BenchConfig) -> dict:
    """What a campaign sends: requests of SHAPES_BATCH cases in SHAPES shapes, their inputs interleaved."""
    return _measure(SHAPES_BATCH, SHAPES, SHAPES_REQUESTS, ">= 20 cases/s (a campaign's requests, issue 39)",
                    interleave=True)


def _measure(batch_size: int, shapes: int, requests: int, budget: str, *, interleave: bool) -> dict:
    """Cases per second after start-up for `requests` requests of `batch_size` cases over `shapes` shapes."""
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
        for request in range(1, requests + 1):
            batch = [_case(request * batch_size + i, rng, i % shapes, interleave) for i in range(batch_size)]
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
            "cases_per_request": batch_size, "shapes_per_request": shapes, "inputs_interleaved": interleave,
            "ms_per_case": round(1000 * seconds / cases, 2),
            "pacing": os.environ.get("CONVERGE_FLINK_PACING", "default"), "budget": budget}


SHRINK_SEED = 14


def _never_more_rows_than_the_left_input(system: System, cases: list[Scenario]) -> None:
    """A deliberately wrong expectation, for this benchmark only: an INNER join's final answer has no more rows
    than its left input's final table (false as soon as one left row meets two right rows). Flink's answers
    are real; only the expectation is wrong, so Hypothesis finds a failure and shrinks it on the live system."""
    for scenario, result in zip(cases, system.run_cases(cases), strict=False):
        if result.status != "ok":
            continue
        left = Counter()
        for event in scenario.events:
            if isinstance(event, ChangeEvent) and event.input == scenario.join.inputs[0]:
                left[event.row] += sign(event.kind)
        got = result.folded()
        if sum(got.values()) > sum(left.values()):
            fail("bench_wrong_expectation", scenario, f"{sum(got.values())} joined rows from "
                 f"{sum(left.values())} left rows", engine=got)


def _bench_flink_shrink(config: BenchConfig) -> dict:
    """Find and shrink one failure of the wrong expectation above, every step a run request to the MiniCluster."""
    try:
        command = environment.adapter_command()
    except UsageError as exc:
        return {"skipped": str(exc)}
    started = time.perf_counter()
    with AdapterSystem(command, label="flink") as system:
        startup = time.perf_counter() - started
        first_failure: list[float] = []

        def check(cases: list[Scenario]) -> None:
            try:
                _never_more_rows_than_the_left_input(system, cases)
            except Exception:
                first_failure.append(first_failure[0] if first_failure else time.perf_counter())
                raise

        spec = PropertySpec("bench", "wrong_expectation", lambda: batches(
            regular_join_scenarios(join_types=("inner",), modes=("insert_only", "retract"),
                                   map_state_orders=("rocksdb",)), 8), check)
        searched = time.perf_counter()
        result = run_property(spec, max_examples=50, seed=SHRINK_SEED)
        done = time.perf_counter()
        requests = system.requests
    if result.failure is None:
        return {"error": f"no failure found in {result.examples} batches", "startup_seconds": round(startup, 1)}
    shrunk = result.failure.divergence.scenario
    (cases,) = result.failure_args or ((),)
    found = first_failure[0] if first_failure else done
    return {"shrink_seconds": round(done - found, 1), "find_seconds": round(found - searched, 1),
            "run_requests": requests,
            "shrunk_events": len(shrunk.events), "shrunk_cases_in_batch": len(cases),
            "startup_seconds": round(startup, 1), "seed": SHRINK_SEED,
            "budget": "shrinking < 60 s for a counterexample of <= 6 events"}


BENCHES = {"flink_adapter": _bench_flink_adapter, "flink_adapter_shapes": _bench_flink_adapter_shapes,
           "flink_shrink": _bench_flink_shrink}
