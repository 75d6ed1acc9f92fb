"""The Pathway adapter's throughput: cases per second when a run request's cases share one dataflow (the case
number in every key), against one request (one dataflow) per case; and its start-up.

Skipped, with the install command, when the Pathway environment is not installed (`converge systems install
pathway`). Cases go through converge's client (AdapterSystem), which builds protocol-v2 plans as a campaign does.
"""

from __future__ import annotations

import random
import time

from converge.engine.model.errors import UsageError
from converge.engine.model.scenario import Scenario
from converge.engine.model.scenario_json import scenario_from_dict
from converge.reports.options import BenchConfig
from converge.systems.adapter.client import AdapterSystem
from converge.systems.pathway import environment

BATCH = 500      # cases per request: the adapter's max_batch
REQUESTS = 2     # measured batched requests after the warm-up one
SINGLE = 20      # cases sent one per request
EVENTS = 20      # change events per case, both inputs together
SEED = 27


def _case(i: int, rng: random.Random) -> Scenario:
    """A LEFT join with a residual, 10 changes per input over 3 keys (one NULL), with retractions."""
    events = []
    for name in ("a", "b"):
        live: list[list] = []
        for _ in range(EVENTS // 2):
            if live and rng.random() < 0.3:
                events.append({"input": name, "kind": "-D", "row": live.pop(rng.randrange(len(live)))})
            else:
                row = [rng.choice([1, 2, 3, None]), rng.randint(0, 9)]
                live.append(row)
                events.append({"input": name, "kind": "+I", "row": row})
    inputs = [{"name": n, "columns": [["k", "BIGINT"], [c, "BIGINT"]], "unique_key": None,
               "changelog_mode": "retract"} for n, c in (("a", "x"), ("b", "y"))]
    return scenario_from_dict({"name": f"bench{i}", "inputs": inputs, "join": {
        "inputs": ["a", "b"], "types": ["left"], "conditions": ["a.k = b.k AND a.x > b.y"]}, "events": events})


def _bench_pathway_adapter(config: BenchConfig) -> dict:
    try:
        command = environment.adapter_command()
    except UsageError as exc:
        return {"skipped": str(exc)}
    rng = random.Random(SEED)
    started = time.perf_counter()
    with AdapterSystem(command, label="pathway") as system:
        system.run_cases([_case(0, rng)])
        startup = time.perf_counter() - started
        batched = [[_case(r * BATCH + i, rng) for i in range(BATCH)] for r in range(1, REQUESTS + 1)]
        measured = time.perf_counter()
        ok = sum(result.status == "ok" for batch in batched for result in system.run_cases(batch))
        batched_seconds = time.perf_counter() - measured
        singles = [_case(10**6 + i, rng) for i in range(SINGLE)]
        measured = time.perf_counter()
        ok_single = sum(system.run_cases([case])[0].status == "ok" for case in singles)
        single_seconds = time.perf_counter() - measured
    cases = BATCH * REQUESTS
    return {"cases_per_second": round(cases / batched_seconds, 1),
            "cases_per_second_one_dataflow_per_case": round(SINGLE / single_seconds, 1),
            "startup_seconds": round(startup, 1), "cases": cases, "ok": ok + ok_single,
            "events_per_case": EVENTS, "cases_per_dataflow": BATCH}


BENCHES = {"pathway_adapter": _bench_pathway_adapter}
