"""How the oracle's answer-after-every-event scales with the stream, and what each history form costs per example.

* `oracle_scaling`: a LEFT join with a residual over two retract inputs
  (30% retractions, 10k keys; ``scaling_stream``) at 10k, 100k and 1M
  events (sizes up to ``--events``). Each size runs in a fresh child process,
  so its peak memory is that process's peak RSS (``os.wait4``'s
  ``ru_maxrss``: Python, the engine and DuckDB together). Two times per size:
  the oracle's history in the change form streamed to the end, and the whole
  `converge replay` check of the scenario (prefix consistency at every event
  and final convergence: engine runs included). Ratios time(100k)/time(10k)
  and time(1M)/time(100k) say how far from linear each is.
* `prefix_consistency_forms`: the prefix-consistency property on the same
  examples (same seed) with the oracle's snapshot form and with its change
  form, side by side in one run: the short-stream choice in
  properties/history_check.py rests on this figure.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from converge.engine.model.errors import InternalError
from converge.engine.model.scenario import ChangeEvent, Config, InputSpec, JoinSpec, Scenario
from converge.generators.scenarios import regular_join_scenarios
from converge.oracle.history_intervals import IntervalOracle, bulk_connection
from converge.oracle.shared import shared_oracle
from converge.properties import history_check, regular
from converge.properties.campaign import run_property
from converge.properties.registry import PropertySpec
from converge.properties.replay import replay_scenario
from converge.reports.options import BenchConfig

SIZES = (10_000, 100_000, 1_000_000)


def scaling_stream(n_events: int, n_keys: int = 10_000, *, retract_rate: float = 0.3,
                   fact_share: float = 0.95, seed: int = 0) -> Scenario:
    """A LEFT join `a.k = b.k AND a.v < b.w` of two retract inputs over `n_keys` keys, valid by construction.

    Each event goes to the fact input ``a`` with probability ``fact_share``
    (else to the dimension input ``b``); with probability ``retract_rate`` it
    is a ``-D`` of one of that input's live rows picked at random (so every
    retraction names a row the input holds), otherwise a ``+I`` of a new row
    with a uniform key and value. An input holding no row gets a ``+I``.
    The same arguments give the same stream (a seeded ``random.Random``).
    """
    rng = random.Random(seed)
    a = InputSpec("a", (("k", "BIGINT"), ("v", "BIGINT")), None, "retract")
    b = InputSpec("b", (("k", "BIGINT"), ("w", "BIGINT")), None, "retract")
    live: dict[str, list[tuple]] = {"a": [], "b": []}
    events: list[ChangeEvent] = []
    for _ in range(n_events):
        name = "a" if rng.random() < fact_share else "b"
        rows = live[name]
        if rows and rng.random() < retract_rate:
            i = rng.randrange(len(rows))
            rows[i], rows[-1] = rows[-1], rows[i]
            events.append(ChangeEvent(name, "-D", rows.pop()))
        else:
            row = (rng.randrange(n_keys), rng.randrange(100))
            rows.append(row)
            events.append(ChangeEvent(name, "+I", row))
    return Scenario(f"left join with residual, {n_events} events", (a, b),
                    JoinSpec(("a", "b"), ("left",), ("a.k = b.k AND a.v < b.w",)), Config(), tuple(events))


def measure_in_this_process(n_events: int) -> dict:
    """One size: the oracle's change-form history, then the replay checks (what the child process runs)."""
    scenario = scaling_stream(n_events)
    start = time.perf_counter()
    changes = sum(1 for _ in IntervalOracle(bulk_connection()).changes(scenario))
    oracle_seconds = time.perf_counter() - start
    start = time.perf_counter()
    outcome = replay_scenario(scenario, Path(f"scaling-{n_events}.json"))
    replay_seconds = time.perf_counter() - start
    return {"events": n_events, "oracle_changes": changes, "oracle_seconds": round(oracle_seconds, 2),
            "replay_seconds": round(replay_seconds, 2), "replay_ok": outcome.ok, "checked": outcome.checked,
            "problems": outcome.problems[:3]}


def _child(n_events: int) -> dict:
    """Run one size in a fresh interpreter; its peak RSS comes from the kernel's accounting of that child."""
    code = ("import json, sys; from converge.cli.benches.oracle_scaling import measure_in_this_process; "
            f"print(json.dumps(measure_in_this_process({int(n_events)})))")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise InternalError(f"the {n_events}-event scaling child failed (exit {proc.returncode})")
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_rss_mb"] = round(usage.ru_maxrss / 1024)  # Linux reports kilobytes
    return result


def _ratio(rows: dict[int, dict], key: str, big: int, small: int) -> float | None:
    if big in rows and small in rows and rows[small][key] > 0:
        return round(rows[big][key] / rows[small][key], 2)
    return None


def _bench_scaling(config: BenchConfig) -> dict:
    sizes = [n for n in SIZES if n <= config.events] or [min(SIZES)]
    rows = {n: _child(n) for n in sizes}
    return {"sizes": sizes,
            "oracle_ratio_100k_10k": _ratio(rows, "oracle_seconds", 100_000, 10_000),
            "oracle_ratio_1m_100k": _ratio(rows, "oracle_seconds", 1_000_000, 100_000),
            "replay_ratio_100k_10k": _ratio(rows, "replay_seconds", 100_000, 10_000),
            "replay_ratio_1m_100k": _ratio(rows, "replay_seconds", 1_000_000, 100_000),
            "memory": "peak RSS of a child process per size (os.wait4 ru_maxrss)",
            "runs": [rows[n] for n in sizes]}


def _bench_forms(config: BenchConfig) -> dict:
    """Examples/s of prefix consistency (streams of 16-30 operations) with each history form, same seed."""
    def strategy():
        return regular_join_scenarios(min_ops=16, max_ops=30).map(lambda s: (s,))
    spec = PropertySpec("regular", "prefix_consistency", strategy, regular.prefix_consistency, config.examples)
    shared_oracle()
    out: dict = {}
    for form, limit in (("snapshots", 10**9), ("changes", -1)):
        saved = history_check.SNAPSHOT_MAX_EVENTS
        history_check.SNAPSHOT_MAX_EVENTS = limit
        try:
            rates = []
            for _ in range(max(1, config.rounds)):
                result = run_property(spec, max_examples=config.examples, seed=1234)
                if not result.ok:
                    raise result.failure or result.error  # type: ignore[misc]
                rates.append(result.examples_per_second)
        finally:
            history_check.SNAPSHOT_MAX_EVENTS = saved
        out[f"{form}_examples_per_second"] = round(statistics.median(rates), 1)
        out[f"{form}_rounds"] = [round(r, 1) for r in rates]
    return out


BENCHES: dict[str, Callable[[BenchConfig], dict]] = {
    "prefix_consistency_forms": _bench_forms,
    "oracle_scaling": _bench_scaling,
}
