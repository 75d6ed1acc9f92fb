"""`converge bench --only flink_map_order`: how often a model of the MapState order agrees with real Flink's
emission order, per state backend.

A measurement of Flink's behaviour (docs/anomalies.md cites it), not a test. It draws `--examples` scenarios per
backend from generators/map_order.py (Hypothesis, seed 1), sends them grouped by shape, at most 20 a request
(one job each), and for each case with an event that emits two or more rows compares the order in which the
system visits the stored rows with two models (properties/systems/map_order.py): "measured rule" (rocksdb: byte
order; hashmap: java.util.HashMap order of BinaryRowData.hashCode) and "converge model" (`map_state_order`
rocksdb / heap, converge's own). A case agrees when every such event visits its stored rows in the model's
order; how many events also have the reference engine's exact output sequence (an outer row's retraction and
padding interleaved the same way) is counted apart. Skipped, with the reason, when the Flink environment is not
installed or its adapter gives no order to measure.
"""

from __future__ import annotations

import json
from collections import Counter

from hypothesis import HealthCheck, given, seed, settings

from converge.engine.model.errors import UsageError
from converge.engine.model.scenario import Scenario
from converge.engine.model.system import System
from converge.generators.map_order import BACKENDS, map_order_scenarios
from converge.generators.scenarios import LAYOUTS
from converge.properties.systems.map_order import (
    case_ids,
    compare_orders,
    model_per_event,
    stored_visits,
    why_not_ordered,
)
from converge.reports.options import BenchConfig
from converge.reports.terminal import format_table
from converge.systems.adapter.client import Timeouts
from converge.systems.registry import open_system

SYSTEM = "flink"
SEED = 1     # the same scenarios every time, as docs/anomalies.md measured them
BATCH = 20   # cases a request (one job each)


def draw_cases(backend: str, n: int, seed_value: int) -> list[Scenario]:
    """`n` distinct scenarios of `backend` from the generator, the same ones for the same seed."""
    drawn: list[Scenario] = []

    @seed(seed_value)
    @settings(max_examples=n * 4, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(map_order_scenarios(backends=(backend,), layouts=LAYOUTS[:1]))
    def collect(scenario: Scenario) -> None:
        if len(drawn) < n and scenario not in drawn:
            drawn.append(scenario)

    collect()
    return drawn


def measure(system: System, cases: list[Scenario], batch: int) -> dict:
    """Counts over `cases` (of one backend): ordered cases, and how many agree with each model."""
    counts: Counter = Counter()
    # one shape per request (the adapter's case ids count per shape), at most `batch` cases each
    shapes: dict[str, list[Scenario]] = {}
    for s in cases:
        shapes.setdefault(repr((s.inputs, s.join)), []).append(s)
    groups = [g[i:i + batch] for g in shapes.values() for i in range(0, len(g), batch)]
    for group in groups:
        if group:
            results = system.run_cases(group)
            for scenario, result, case_id in zip(group, results, case_ids(results), strict=False):
                counts["cases"] += 1
                if result.status != "ok" or result.changelog is None:
                    counts[f"status {result.status}"] += 1
                    continue
                visit = stored_visits(scenario)
                rule = compare_orders(result.changelog, model_per_event(scenario, case_id, "flink"), visit)
                ours = compare_orders(result.changelog, model_per_event(scenario, case_id, "converge"), visit)
                if rule.unsplit is not None:
                    counts["not split per event"] += 1
                    continue
                if rule.ordered == 0:
                    continue
                counts["ordered cases"] += 1
                counts["ordered events"] += rule.ordered
                counts["agree with the measured rule"] += rule.ordered == rule.agreed
                counts["agree with converge's model"] += ours.unsplit is None and ours.ordered == ours.agreed
                counts["events agreeing with the measured rule"] += rule.agreed
                counts["events with the reference engine's output sequence"] += rule.same_sequence
                counts["events agreeing with converge's model"] += ours.agreed if ours.unsplit is None else 0
    return dict(counts)


def _bench_flink_map_order(config: BenchConfig) -> dict:
    """`--examples` scenarios per backend, the same ones every time (seed SEED)."""
    try:
        # a measurement on a loaded machine: a JVM's start and a job may take minutes
        system = open_system(SYSTEM, timeouts=Timeouts(hello=600.0, run_base=300.0))
    except UsageError as exc:
        return {"skipped": str(exc)}
    with system:
        reason = why_not_ordered(system.capabilities, system.name)
        if reason is not None:
            return {"skipped": f"no order to measure: {reason}"}
        backends = {backend: measure(system, draw_cases(backend, config.examples, SEED), BATCH)
                    for backend in BACKENDS}
        title = system.title
    return {**{f"{backend}_agree_with_the_measured_rule": f"{c.get('agree with the measured rule', 0)} of "
                                                          f"{c.get('ordered cases', 0)}"
               for backend, c in backends.items()},
            "system": title, "cases_per_backend": config.examples, "seed": SEED, "backends": backends}


def format_rows(result: dict) -> str:
    """One row per backend: its counts; a skipped benchmark's reason."""
    if "backends" not in result:
        return f"  {json.dumps(result)}"
    counts = result["backends"]
    columns = list(dict.fromkeys(key for c in counts.values() for key in c))
    return format_table(("backend", *columns), [(b, *(c.get(k, 0) for k in columns)) for b, c in counts.items()])


BENCHES = {"flink_map_order": _bench_flink_map_order}
