"""`converge bench`: throughput of the engine and of the property campaign, printed and written as JSON.

Speed targets live here, never as timed assertions in tests. Every
benchmark takes a BenchConfig and returns a JSON-able dict, so they can be
called from Python as well as from the command line.
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Callable

from converge.cli.bench_machine import load_average, machine_line
from converge.cli.benches import (
    anomalies,
    check,
    flink,
    flink_arrival,
    flink_map_order,
    interval,
    multiway,
    native_join,
    oracle_scaling,
    oracle_versions,
    pathway,
    regular,
)
from converge.cli.benches import verify_capture as verify_bench
from converge.engine.model.errors import BadInputError
from converge.reports.options import BenchConfig
from converge.reports.terminal import format_table

__all__ = ["BENCHES", "DETAIL_TABLES", "results_table", "run_benchmarks"]

# The order they run in: the regular join's benchmarks first. Those on Flink skip, with the reason, when its
# environment is not installed.
BENCHES: dict[str, Callable[[BenchConfig], dict]] = {
    **regular.BENCHES, **anomalies.BENCHES, **interval.BENCHES, **multiway.BENCHES, **oracle_scaling.BENCHES,
    **oracle_versions.BENCHES,
    **flink.BENCHES, **flink_arrival.BENCHES, **flink_map_order.BENCHES, **pathway.BENCHES, **check.BENCHES,
    **native_join.BENCHES, **verify_bench.BENCHES}

# Benchmarks whose result has more than a line can show: how to print it as a table.
DETAIL_TABLES: dict[str, Callable[[dict], str]] = {
    "multiway_state": lambda result: multiway.format_rows(result["cases"]),
    "flink_arrival": flink_arrival.format_rows, "flink_map_order": flink_map_order.format_rows}


def machine(*, with_load: bool = False) -> dict:
    """The machine a benchmark document was measured on; with the load average after the run, for benchmarks
    whose queries other jobs on the cores skew (Spark's)."""
    info: dict = {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}
    if with_load:
        info["load_average_after"] = load_average()
    return info


def run_benchmarks(config: BenchConfig, echo: Callable[[str], None] = lambda line: None) -> dict:
    """Run the named benchmarks (all without `config.only`) on the embedded runtime.

    Returns the document written to `config.out` (when set): the machine, the
    arguments and one result per benchmark. `echo` receives progress lines.
    """
    names = list(BENCHES) if not config.only else list(config.only)
    unknown = [n for n in names if n not in BENCHES]
    if unknown:
        raise BadInputError(f"unknown benchmark(s) {unknown}; known: {', '.join(BENCHES)}")
    flink_map_order.check_system(config.system, config.only)
    results = {}
    echo(f"machine: {machine_line()}")  # budgets are read beside the load they were measured under
    for name in names:
        echo(f"running {name} ...")
        results[name] = BENCHES[name](config)
        echo(DETAIL_TABLES[name](results[name]) if name in DETAIL_TABLES else f"  {json.dumps(results[name])}")
    doc = {"machine": {**machine(), "after": machine_line()},
           "args": {"events": config.events, "keys": config.keys, "examples": config.examples,
                    **({"system": config.system} if config.system else {})}, "results": results}
    if config.out is not None:
        config.out.write_text(json.dumps(doc, indent=1) + "\n")
    return doc


def results_table(results: dict[str, dict]) -> str:
    """The first three measures of each benchmark, one row each."""
    rows = [(name, *(f"{k}={v}" for k, v in list(r.items())[:3])) for name, r in results.items()]
    width = max(len(r) for r in rows)
    rows = [tuple(r) + ("",) * (width - len(r)) for r in rows]
    return format_table(("benchmark",) + tuple(f"measure {i}" for i in range(1, width)), rows)
