"""`converge bench --runtime spark --final-check`: a large stream's final answer checked on Spark, end to end.

The stream (the inner-join benchmark stream, with its -U/+U retractions)
runs through the Spark runtime (SparkJoinJob); its changelog is also written
to Parquet, one file per input, and the Spark SQL oracle folds it and joins
the final tables (oracle/spark_sql.py, materialize="spark"). The check
happens on Spark as well: the runtime's sink is decoded by Spark's Python
workers and folded to a multiplicity per output row
(engine/runtime/spark/output.py), the oracle's rows are counted, and a full
outer join on the rows (NULL-safe) keeps the rows whose counts differ. No
phase collects more than a sample to the driver, except the stream itself,
which the driver builds.

Phases timed: input generation (the stream in Python), runtime (source
files, then the streaming query), oracle (changelog files, then the oracle
query written to Parquet), comparison (decode, fold, join, count).
"""

from __future__ import annotations

import json
import resource
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from pyspark.sql import functions as F

from converge.cli.bench import machine
from converge.cli.benches.regular import inner_join_stream
from converge.engine.model.scenario import Scenario
from converge.engine.runtime.spark.job import SparkJoinJob
from converge.engine.runtime.spark.output import signed_counts, sink_changes
from converge.engine.runtime.spark.session import get_spark
from converge.oracle.spark_inputs import changelog_table, scenario_changelog, write_parquet
from converge.oracle.spark_sql import SparkSQLOracle
from converge.oracle.sql import seq_column_name
from converge.reports.options import BenchConfig

__all__ = ["compare_counts", "output_types", "run_final_check"]

SAMPLE = 5


def output_types(scenario: Scenario) -> list[str]:
    """The join's output column types, in output order (SEMI/ANTI inputs add none)."""
    types = list(scenario.chain[0].column_types)
    for spec, jtype in zip(scenario.chain[1:], scenario.join.types, strict=False):
        if jtype not in ("semi", "anti"):
            types.extend(spec.column_types)
    return types


def compare_counts(runtime_counts: Any, oracle_rows: Any, width: int) -> tuple[int, list[dict]]:
    """Rows whose multiplicity differs between the runtime (o0..on, n) and the oracle (o0..on, one row per
    instance): how many, and a sample (row, runtime count, oracle count)."""
    cols = [f"o{i}" for i in range(width)]
    expected = oracle_rows.groupBy(*cols).agg(F.count(F.lit(1)).alias("m"))
    expected = expected.select(*[F.col(c).alias(f"e{i}") for i, c in enumerate(cols)], "m")
    on = [F.col(f"o{i}").eqNullSafe(F.col(f"e{i}")) for i in range(width)]
    joined = runtime_counts.join(expected, on=on, how="full_outer")
    diff = joined.where(F.coalesce(F.col("n"), F.lit(0)) != F.coalesce(F.col("m"), F.lit(0)))
    diff = diff.select(*[F.coalesce(F.col(f"o{i}"), F.col(f"e{i}")).alias(f"c{i}") for i in range(width)],
                       F.coalesce(F.col("n"), F.lit(0)).alias("runtime"),
                       F.coalesce(F.col("m"), F.lit(0)).alias("oracle"))
    diff = diff.cache()
    try:
        count = diff.count()
        sample = [{"row": [r[f"c{i}"] for i in range(width)], "runtime": r["runtime"], "oracle": r["oracle"]}
                  for r in diff.limit(SAMPLE).collect()]
    finally:
        diff.unpersist()
    return count, sample


def _oracle_logs(scenario: Scenario, folder: Path) -> dict[str, str]:
    paths = {}
    for i, spec in enumerate(scenario.chain):
        table = changelog_table(spec, scenario_changelog(scenario, spec))
        paths[spec.name] = str(write_parquet(table, folder / f"input-{i}" / "log.parquet").parent)
    return paths


def final_check(spark: Any, scenario: Scenario, work: Path, *, batches: int, buckets: int | None = None,
                echo: Any = print) -> dict:
    """Run the scenario on the Spark runtime and check its final answer against the Spark SQL oracle."""
    phases: dict[str, float] = {}
    t0 = time.perf_counter()
    job = SparkJoinJob([scenario], spark=spark, work_dir=work / "runtime", batches=batches,
                      buckets=buckets)
    job.write_batches()
    t1 = time.perf_counter()
    phases["runtime_source_files"] = t1 - t0
    echo(f"  runtime: source files {t1 - t0:.1f} s; running the streaming query ...")
    job.run()
    t2 = time.perf_counter()
    phases["runtime_query"] = t2 - t1
    echo(f"  runtime query {t2 - t1:.1f} s; oracle: changelog files ...")

    oracle = SparkSQLOracle(spark, materialize="spark")
    logs = _oracle_logs(scenario, work / "oracle-logs")
    t3 = time.perf_counter()
    phases["oracle_changelog_files"] = t3 - t2
    sid = seq_column_name(scenario)
    frames = {spec.name: oracle.changelog_frame(spec, logs[spec.name], sid=False)
              .withColumn(sid, F.lit(0).cast("bigint")) for spec in scenario.chain}
    types = output_types(scenario)
    width = len(types)
    answer = oracle.join_frame(scenario, frames)
    answer = answer.toDF(sid, *[f"o{i}" for i in range(width)]).drop(sid)
    answer.write.mode("overwrite").parquet(str(work / "oracle-answer"))
    t4 = time.perf_counter()
    phases["oracle_query"] = t4 - t3
    echo(f"  oracle query {t4 - t3:.1f} s; comparing on Spark ...")

    oracle_rows = spark.read.parquet(str(work / "oracle-answer"))
    # decoded once (the Python workers unpickle every item), then read by every later step
    sink_changes(spark, job.sink_dir, types).write.mode("overwrite").parquet(str(work / "runtime-changes"))
    changes = spark.read.parquet(str(work / "runtime-changes"))
    errors = changes.where(~F.col("kind").isin("+I", "-U", "+U", "-D"))
    error_count = errors.count()
    error_sample = [(r["seq"], r["kind"], r["message"]) for r in errors.limit(SAMPLE).collect()]
    mismatches, sample = compare_counts(signed_counts(changes, width), oracle_rows, width)
    answer_rows = oracle_rows.count()
    t5 = time.perf_counter()
    phases["comparison"] = t5 - t4
    return {"events": len(scenario.events), "micro_batches": job.files_written,
            "oracle_answer_rows": answer_rows, "runtime_errors": error_count, "runtime_error_sample": error_sample,
            "mismatched_rows": mismatches, "mismatch_sample": sample, "matches": mismatches == 0 and error_count == 0,
            "phase_seconds": {k: round(v, 2) for k, v in phases.items()}}


def run_final_check(config: BenchConfig) -> int:
    """Print and write (config.out) the phase times; exit code 1 if the runtime's answer differs."""
    batches = max(1, config.batches)
    start = time.perf_counter()
    print(f"generating the inner-join stream: {config.events} events, {config.keys} keys ...", flush=True)
    scenario = inner_join_stream(config.events, config.keys, unique_keys=True)
    generated = time.perf_counter() - start
    print(f"  {generated:.1f} s", flush=True)
    spark = get_spark(cores=2, shuffle_partitions=2, driver_memory="3g")
    spark.conf.set("spark.sql.shuffle.partitions", "2")
    work = Path(tempfile.mkdtemp(prefix="converge-final-check-"))
    try:
        result = final_check(spark, scenario, work, batches=batches, buckets=config.buckets,
                             echo=lambda line: print(line, flush=True))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result["phase_seconds"] = {"input_generation": round(generated, 2), **result["phase_seconds"]}
    total = time.perf_counter() - start
    peak_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
               + resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) // 1024
    doc = {"machine": machine(with_load=True),
           "args": {"events": config.events, "keys": config.keys, "micro_batches": batches},
           "total_seconds": round(total, 1), "peak_rss_mb_driver_plus_children": peak_mb,
           "results": {"spark_final_check": result}}
    for phase, seconds in result["phase_seconds"].items():
        print(f"{phase:<24} {seconds:>9.1f} s")
    print(f"{'total':<24} {total:>9.1f} s")
    verdict = "MATCHES" if result["matches"] else "DIFFERS"
    print(f"{verdict}: {result['oracle_answer_rows']} oracle rows; {result['mismatched_rows']} rows differ, "
          f"{result['runtime_errors']} runtime errors")
    for item in result["mismatch_sample"] + result["runtime_error_sample"]:
        print(f"  {item}")
    if config.out is not None:
        config.out.write_text(json.dumps(doc, indent=1, default=str) + "\n")
        print(f"written: {config.out}")
    return 0 if result["matches"] else 1

