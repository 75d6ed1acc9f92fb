"""Interval-join benchmarks: engine events/s with peak state, and property examples/s.

The stream: pairs of records (one per input, same key, times up to 50 ms
apart and out of order) one millisecond apart, keys round-robin, and every
1000 pairs a bounded-out-of-orderness watermark (latest time - 100 ms) on both
inputs, so cleanup timers fire all along. The window is +-100 ms, so each
pair joins once. Peak state is sampled every `SAMPLE` events.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from converge.engine.model.scenario import (
    ChangeEvent,
    Config,
    Event,
    InputSpec,
    IntervalSpec,
    JoinSpec,
    Scenario,
    WatermarkEvent,
)
from converge.engine.operators.interval_join import MAX_TIME
from converge.engine.runtime.local import LocalRuntime
from converge.oracle.shared import shared_oracle
from converge.properties.campaign import run_property
from converge.properties.registry import select
from converge.reports.options import BenchConfig

SAMPLE = 20_000
WATERMARK_EVERY = 1000
DISORDER_MS = 50
WINDOW_MS = 100


def interval_join_stream(n_events: int, n_keys: int, *, time_mode: str = "event") -> Scenario:
    """An INNER interval join `a.t BETWEEN b.t - 100 AND b.t + 100` over about `n_events` events."""
    a = InputSpec("a", (("k", "BIGINT"), ("t", "BIGINT"), ("x", "BIGINT")), None, "insert_only", "t")
    b = InputSpec("b", (("k", "BIGINT"), ("t", "BIGINT"), ("y", "BIGINT")), None, "insert_only", "t")
    events: list[Event] = []
    i = 0
    latest = 0
    while len(events) + 2 <= n_events:
        key = i % n_keys
        base = 1000 + i
        ta, tb = base + (i * 7) % DISORDER_MS, base + (i * 13) % DISORDER_MS
        events.append(ChangeEvent("a", "+I", (key, ta, i)))
        events.append(ChangeEvent("b", "+I", (key, tb, i)))
        latest = max(latest, ta, tb)
        i += 1
        if i % WATERMARK_EVERY == 0 and len(events) + 2 <= n_events:
            events.append(WatermarkEvent("a", latest - WINDOW_MS))
            events.append(WatermarkEvent("b", latest - WINDOW_MS))
    interval = IntervalSpec("a.t", "b.t", -WINDOW_MS, WINDOW_MS, "event")
    return Scenario("bench interval join", (a, b), JoinSpec(("a", "b"), ("inner",), ("a.k = b.k",), interval),
                    Config(), tuple(events))


def run_interval_stream(scenario: Scenario) -> dict:

    rt = LocalRuntime(scenario)
    op = rt.plan.root.operator
    process = rt.process_event
    emitted = 0
    peak_entries = peak_rows = 0
    busy = 0.0
    events = scenario.events
    for start in range(0, len(events), SAMPLE):
        t0 = time.perf_counter()
        for event in events[start:start + SAMPLE]:
            emitted += len(process(event))
        busy += time.perf_counter() - t0
        peak_entries = max(peak_entries, rt.state_entries())
        peak_rows = max(peak_rows, len(op.stored_rows()))  # type: ignore[attr-defined]
    final = [WatermarkEvent("a", MAX_TIME), WatermarkEvent("b", MAX_TIME)]
    for event in final:
        emitted += len(process(event))
    return {"events": len(events), "seconds": round(busy, 3), "events_per_second": round(len(events) / busy),
            "emitted": emitted, "peak_state_entries": peak_entries, "peak_cached_rows": peak_rows,
            "state_entries_after_final_watermark": rt.state_entries(), "timers_after_final_watermark":
            rt.pending_timers()}


def _bench_event_time(config: BenchConfig) -> dict:
    return run_interval_stream(interval_join_stream(config.events, config.keys))


def _bench_property(config: BenchConfig) -> dict:

    shared_oracle()  # connection set-up is not per example
    out = {}
    for name in ("no_late_equals_oracle", "matches_step_model"):
        (spec,) = select("interval", name)
        result = run_property(spec, max_examples=config.examples, seed=1234)
        out[f"{name}_examples_per_second"] = round(result.examples_per_second, 1)
        out[f"{name}_failures"] = result.failures
    return out


BENCHES: dict[str, Callable[[BenchConfig], dict]] = {
    "interval_event_time_inner": _bench_event_time,
    "interval_property_examples": _bench_property,
}
