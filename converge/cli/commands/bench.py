"""`converge bench`: the command line of the benchmarks (converge/cli/bench.py, and on Spark spark_bench.py and
spark_final_check.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from converge.cli.arguments import Subparsers, add_examples, add_runtime, output_file, positive_int
from converge.cli.bench import results_table, run_benchmarks
from converge.engine.model.errors import UsageError
from converge.reports.options import BenchConfig


def register(subparsers: Subparsers) -> None:
    """The `bench` parser; its defaults are BenchConfig's."""
    defaults = BenchConfig()
    b = subparsers.add_parser("bench", help="measure engine events/s and property examples/s")
    b.add_argument("--events", type=positive_int, default=defaults.events)
    b.add_argument("--keys", type=positive_int, default=defaults.keys)
    add_examples(b, defaults.examples)
    b.add_argument("--rounds", type=positive_int, default=defaults.rounds,
                   help="repeat the property benchmarks (same seed, same examples); median and best are reported")
    b.add_argument("--batches", type=positive_int, default=defaults.batches,
                   help="micro-batches of the Spark benchmark (--runtime spark); it also runs with one")
    b.add_argument("--buckets", type=positive_int, default=None,
                   help="key buckets per plan node of the Spark runtime (--runtime spark; default: the runtime's)")
    b.add_argument("--verify-records", type=positive_int, default=defaults.verify_records,
                   help="input records of the verify_1m capture (its budget, 90 s and 2 GB, is for 1000000)")
    add_runtime(b)
    b.add_argument("--only", default=None, help="comma-separated benchmark names")
    b.add_argument("--system", metavar="SPEC", default=None,
                   help="with --only flink_map_order: the Flink it measures, flink or flink:VERSION (default: the "
                        "newest installed; `converge systems list`)")
    b.add_argument("--final-check", action="store_true",
                   help="with --runtime spark: the stream's final answer on the Spark runtime checked against "
                        "the Spark SQL oracle, on Spark (--events, --keys, --batches)")
    b.add_argument("--out", type=output_file, default=str(defaults.out), help="where the JSON results go")
    b.set_defaults(handler=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:
    """Run the benchmarks the options pick and write their JSON results."""
    only = tuple(n.strip() for n in args.only.split(",")) if args.only else None
    config = BenchConfig(events=args.events, keys=args.keys, examples=args.examples, rounds=args.rounds,
                         runtime=args.runtime, only=only, out=Path(args.out), batches=args.batches,
                         buckets=args.buckets, verify_records=args.verify_records, system=args.system)
    if args.final_check:
        if config.runtime != "spark":
            raise UsageError("--final-check runs on Spark: add --runtime spark")
        from converge.cli.spark_final_check import run_final_check  # lazy: only this starts a JVM
        return run_final_check(config)
    if config.runtime == "spark":
        if config.system is not None:
            raise UsageError("--system applies to --only flink_map_order on the local runtime, not --runtime spark")
        from converge.cli.spark_bench import run_spark_bench  # lazy: only this starts a JVM
        return run_spark_bench(config)
    doc = run_benchmarks(config, echo=lambda line: print(line, flush=True))
    print(results_table(doc["results"]))
    print(f"written: {config.out}")
    return 0
