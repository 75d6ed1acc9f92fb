"""`converge bench --runtime spark`: rows/s of our Spark runtime and of Spark's native join, on the same data.

Both queries run in the same SparkSession, read the same events from Parquet
files in the same micro-batches (one file per batch, `maxFilesPerTrigger=1`)
and write their output through the same kind of sink (`foreachBatch` into
Parquet, one folder per batch id). The time measured is the query's wall
time from start to termination (query planning, the Python workers, state
store commits and the sink included); preparing the input files is timed
separately and not counted.

* ours: the inner-join benchmark stream (converge.cli.benches.regular,
  unique keys: JoinKeyContainsUniqueKey views) through the Spark runtime,
  with its -U/+U retractions; checked against the local runtime's answer.
* native: Spark's stream-stream inner join on the same events, each side
  with a watermark on the event's time (its position, in ms) and a time
  range of one update round, so state can be dropped; the ratio is against
  this one. For context also the plain equi-join without watermark (state
  kept forever), the variant measured before this runtime was written.
  Native joins cannot retract, so every -U/+U row is just another row to
  them: the work is comparable, the answers are not.

Both run after an untimed warm-up of each on a small stream, so neither pays
for the JVM's first queries. One run measures all of them with `--batches`
micro-batches (default five) and with one, and prints each ratio against the
budget of issue 17 (ours / native with watermarks >= 0.5 with many
micro-batches, >= 0.8 with one) and the machine's load average, since other
jobs on the cores skew every query.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import functions as F

from converge.cli.bench import machine
from converge.cli.benches.regular import inner_join_stream
from converge.engine.materialize import clean, fold
from converge.engine.runtime.local import run_scenario
from converge.engine.runtime.spark.job import IdempotentParquetSink, SparkJoinJob
from converge.engine.runtime.spark.session import get_spark
from converge.engine.runtime.spark.source import batch_bounds, mtime_base
from converge.reports.options import BenchConfig
from converge.reports.terminal import format_table

NATIVE_SCHEMA = "k long, v long, side int, seq long, ts timestamp"


def _spark() -> Any:

    spark = get_spark(cores=2, shuffle_partitions=2, driver_memory="2g")
    spark.conf.set("spark.sql.shuffle.partitions", "2")   # also when a session was already active
    return spark


def run_ours(spark: Any, scenario: Any, batches: int, work: Path, *, expected: Any = None,
             buckets: int | None = None) -> dict:
    """Our runtime on Spark; with `expected` (the local runtime's folded answer), checked against it."""
    t0 = time.perf_counter()
    job = SparkJoinJob([scenario], spark=spark, work_dir=work, batches=batches, buckets=buckets)
    job.write_batches()
    prepared = time.perf_counter()
    job.run()
    ran = time.perf_counter()
    result = job.result()
    read = time.perf_counter()
    seconds = ran - prepared
    out = {"events": len(scenario.events), "micro_batches": job.files_written, "buckets_per_node": job.buckets,
           "seconds": round(seconds, 2), "rows_per_second": round(len(scenario.events) / seconds),
           "prepare_seconds": round(prepared - t0, 2), "read_back_seconds": round(read - ran, 2),
           "output_changes": len(result.changes), "load_average_1min": round(os.getloadavg()[0], 2),
           "batch_ms": [p["durationMs"].get("triggerExecution") for p in job.progress]}
    if expected is not None:
        out["matches_local_runtime"] = clean(fold(result.changes)) == expected
    return out


def _native_files(scenario: Any, batches: int, folder: Path) -> int:
    """The same events as typed rows (k, v, side, seq, ts = seq ms), one Parquet file per micro-batch."""



    events = scenario.events
    side = {"a": 0, "b": 1}
    epoch = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    base = mtime_base()
    folder.mkdir(parents=True, exist_ok=True)
    staging = folder.parent / "native-staging"
    staging.mkdir(parents=True, exist_ok=True)
    bounds = batch_bounds(len(events), batches=batches)
    for b, (start, end) in enumerate(bounds):
        chunk = events[start:end]
        table = pa.table({
            "k": pa.array([e.row[0] for e in chunk], pa.int64()),
            "v": pa.array([e.row[1] for e in chunk], pa.int64()),
            "side": pa.array([side[e.input] for e in chunk], pa.int32()),
            "seq": pa.array(range(start, end), pa.int64()),
            "ts": pa.array([epoch + dt.timedelta(milliseconds=i) for i in range(start, end)],
                           pa.timestamp("us", tz="UTC")),
        })
        path = staging / f"batch-{b:06d}.parquet"
        pq.write_table(table, path)
        os.utime(path, (base + b, base + b))
        os.replace(path, folder / path.name)
    return len(bounds)


def run_native(spark: Any, scenario: Any, batches: int, work: Path, round_ms: int | None) -> dict:
    """Spark's stream-stream inner join on k; with `round_ms`, watermarks and a time range of that size."""
    t0 = time.perf_counter()
    files = _native_files(scenario, batches, work / "source")
    prepared = time.perf_counter()
    src = spark.readStream.schema(NATIVE_SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(work / "source"))
    left = src.filter(F.col("side") == 0).select(F.col("k").alias("lk"), F.col("v").alias("lv"),
                                                 F.col("ts").alias("lt"))
    right = src.filter(F.col("side") == 1).select(F.col("k").alias("rk"), F.col("v").alias("rv"),
                                                  F.col("ts").alias("rt"))
    if round_ms is None:
        cond = F.expr("lk = rk")
    else:
        delay = f"{round_ms} milliseconds"
        left, right = left.withWatermark("lt", delay), right.withWatermark("rt", delay)
        cond = F.expr(f"lk = rk AND rt BETWEEN lt - INTERVAL {round_ms} MILLISECONDS "
                      f"AND lt + INTERVAL {round_ms} MILLISECONDS")
    sink = IdempotentParquetSink(work / "sink", columns=("lk", "lv", "lt", "rv", "rt"))
    query = (left.join(right, cond, "inner").writeStream.foreachBatch(sink)
             .option("checkpointLocation", str(work / "checkpoint")).trigger(availableNow=True).start())
    query.awaitTermination()
    seconds = time.perf_counter() - prepared

    counted = [pq.read_metadata(part).num_rows for part in (work / "sink").glob("batch_id=*/*.parquet")]
    return {"events": len(scenario.events), "micro_batches": files, "seconds": round(seconds, 2),
            "rows_per_second": round(len(scenario.events) / seconds), "prepare_seconds": round(prepared - t0, 2),
            "output_rows": sum(counted), "watermark_and_time_range_ms": round_ms,
            "load_average_1min": round(os.getloadavg()[0], 2),
            "batch_ms": [p["durationMs"].get("triggerExecution") for p in query.recentProgress]}


def warm_up(spark: Any, keys: int, work: Path) -> float:
    """Both kinds of query once on a small stream, untimed: JIT, Python workers and RocksDB start warm."""
    start = time.perf_counter()
    small = inner_join_stream(min(20_000, 10 * keys), max(1, min(keys, 2_000)), unique_keys=True)
    run_ours(spark, small, 1, work / "warm-ours")
    run_native(spark, small, 1, work / "warm-native", round_ms=4_000)
    return time.perf_counter() - start


BUDGETS = {"one micro-batch": 0.8, "many micro-batches": 0.5}   # ours / native with watermarks (issue 17)


def budget_for(batches: int) -> float:
    return BUDGETS["one micro-batch" if batches == 1 else "many micro-batches"]


def run_spark_bench(config: BenchConfig) -> int:
    """Measure both on the same data, with `config.batches` micro-batches and with one, in one session;
    print them, their ratios against the budgets and the load; write JSON to config.out."""
    counts = sorted({max(1, config.batches), 1}, reverse=True)
    print(f"building the inner-join stream: {config.events} events, {config.keys} keys ...", flush=True)
    scenario = inner_join_stream(config.events, config.keys, unique_keys=True)
    expected = None
    if config.verify:
        print("the local runtime's answer, to check ours against ...", flush=True)
        expected = clean(fold(run_scenario(scenario).changes))
    spark = _spark()
    work = Path(tempfile.mkdtemp(prefix="converge-spark-bench-"))
    runs: dict[int, dict] = {}
    try:
        print("warming up (both queries on a small stream, untimed) ...", flush=True)
        warm = warm_up(spark, config.keys, work)
        for n in counts:
            print(f"--- {n} micro-batch(es)", flush=True)
            print(f"our runtime on Spark ({config.buckets or 'default'} buckets per node) ...", flush=True)
            ours = run_ours(spark, scenario, n, work / f"ours-{n}", expected=expected, buckets=config.buckets)
            print(f"  {json.dumps(ours)}", flush=True)
            print("Spark's native join, inner, with watermarks ...", flush=True)
            native = run_native(spark, scenario, n, work / f"native-{n}", round_ms=2 * config.keys)
            print(f"  {json.dumps(native)}", flush=True)
            print("Spark's native join, inner, equi-join only (no watermark, state kept) ...",
                  flush=True)
            plain = run_native(spark, scenario, n, work / f"native-plain-{n}", round_ms=None)
            print(f"  {json.dumps(plain)}", flush=True)
            ratio = ours["rows_per_second"] / native["rows_per_second"]
            runs[n] = {"spark_runtime_inner_join": ours, "spark_native_inner_join": native,
                       "spark_native_equi_join_no_watermark": plain,
                       "ratio_ours_to_native": round(ratio, 3), "budget": budget_for(n),
                       "within_budget": ratio >= budget_for(n),
                       "ratio_ours_to_native_no_watermark": round(ours["rows_per_second"] / plain["rows_per_second"], 3)}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load = os.getloadavg()
    doc = {"machine": machine(with_load=True),
           "args": {"events": config.events, "keys": config.keys, "micro_batches": counts,
                    "buckets": config.buckets},
           "warm_up_seconds": round(warm, 1),
           "results": {f"{n}_micro_batches": run for n, run in runs.items()}}
    if config.out is not None:
        config.out.write_text(json.dumps(doc, indent=1) + "\n")

    rows = []
    for n, run in runs.items():
        for label, name in (("converge on Spark", "spark_runtime_inner_join"),
                            ("native join, watermarks", "spark_native_inner_join"),
                            ("native equi-join", "spark_native_equi_join_no_watermark")):
            r = run[name]
            rows.append((label, n, r["events"], r["seconds"], r["rows_per_second"], r["load_average_1min"]))
    print(format_table(("query", "micro-batches", "events", "seconds", "rows/s", "load (1 min)"), rows))
    for n, run in runs.items():
        verdict = "met" if run["within_budget"] else "MISSED"
        print(f"{n} micro-batch(es): ours / native with watermarks {run['ratio_ours_to_native']:.2f} "
              f"(budget >= {run['budget']}: {verdict}); ours / native equi-join "
              f"{run['ratio_ours_to_native_no_watermark']:.2f}")
    print(f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1/5/15 min) on {os.cpu_count()} cores: "
          f"other jobs on the cores skew every query")
    if config.out is not None:
        print(f"written: {config.out}")
    return 0
