"""`converge check --plan-only` from a cold start: what an editor or a pre-commit hook waits for.

Each round starts a fresh `converge` process (the imports are most of the
cost: sqlglot, the planner, DuckDB's parser; Hypothesis and pandas must stay
out of this path) on a three-way join of an upsert, a retract and an
append-only table, and records its wall time and its CPU time. The CPU time
is the figure to compare on a shared machine; the wall time is what the user
waits for on an idle one.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from converge.cli.bench_machine import load_average
from converge.engine.model.errors import InternalError
from converge.reports.options import BenchConfig

QUERY = """CREATE TABLE orders (order_id BIGINT, customer_id INT, amount DECIMAL(10, 2),
  PRIMARY KEY (order_id) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', 'key.format' = 'json', 'value.format' = 'json');
CREATE TABLE payments (payment_id BIGINT, order_id BIGINT, paid DECIMAL(10, 2),
  PRIMARY KEY (payment_id) NOT ENFORCED) WITH ('connector' = 'kafka', 'format' = 'debezium-json');
CREATE TABLE shipments (shipment_id BIGINT, order_id BIGINT, carrier STRING)
  WITH ('connector' = 'kafka', 'format' = 'json');
SELECT o.order_id, o.amount, p.paid, s.carrier
FROM orders o JOIN payments p ON p.order_id = o.order_id LEFT JOIN shipments s ON s.order_id = o.order_id;
"""


def _bench_check_plan_only(config: BenchConfig) -> dict:
    walls, cpus = [], []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "query.sql"
        path.write_text(QUERY, encoding="utf-8")
        command = [sys.executable, "-m", "converge.cli.main", "check", str(path), "--plan-only"]
        for _ in range(max(config.rounds, 1)):
            before, started = os.times(), time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, timeout=120)
            wall, after = time.perf_counter() - started, os.times()
            if done.returncode != 0:
                raise InternalError(f"check --plan-only exited {done.returncode}: {done.stderr.strip()[-500:]}")
            walls.append(wall)
            cpus.append(after.children_user + after.children_system - before.children_user - before.children_system)
    return {"wall_seconds_median": round(statistics.median(walls), 3), "wall_seconds_best": round(min(walls), 3),
            "cpu_seconds_median": round(statistics.median(cpus), 3), "rounds": len(walls),
            "load_average": load_average()}


BENCHES = {"check_plan_only": _bench_check_plan_only}
