"""`converge bench`: throughput of the engine and of the property campaign, printed and written as JSON.

Speed targets live here, never as timed assertions in tests.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Callable


BENCHES: dict[str, Callable[[argparse.Namespace], dict]] = {}


def bench(name: str):
    """Register a benchmark; modules in properties/benches/ register theirs on import."""
    def register(fn: Callable[[argparse.Namespace], dict]) -> Callable[[argparse.Namespace], dict]:
        BENCHES[name] = fn
        return fn
    return register


def _load_benches() -> None:
    import importlib
    import pkgutil

    import properties.benches as pkg

    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: (m.name != "regular", m.name)):
        importlib.import_module(f"properties.benches.{info.name}")


def run_bench(args: argparse.Namespace) -> int:
    if args.runtime == "spark":
        from properties.spark_bench import run_spark_bench  # lazy: only this starts a JVM
        return run_spark_bench(args)
    _load_benches()
    names = list(BENCHES) if not args.only else [n.strip() for n in args.only.split(",")]
    unknown = [n for n in names if n not in BENCHES]
    if unknown:
        from engine.errors import BadInputError
        raise BadInputError(f"unknown benchmark(s) {unknown}; known: {', '.join(BENCHES)}")
    results = {}
    for name in names:
        print(f"running {name} ...", flush=True)
        results[name] = BENCHES[name](args)
        print(f"  {json.dumps(results[name])}", flush=True)
    doc = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
           "args": {"events": args.events, "keys": args.keys, "examples": args.examples}, "results": results}
    Path(args.out).write_text(json.dumps(doc, indent=1) + "\n")
    from properties.cli import format_table
    rows = [(name, *(f"{k}={v}" for k, v in list(r.items())[:3])) for name, r in results.items()]
    width = max(len(r) for r in rows)
    rows = [tuple(r) + ("",) * (width - len(r)) for r in rows]
    print(format_table(("benchmark",) + tuple(f"measure {i}" for i in range(1, width)), rows))
    print(f"written: {args.out}")
    return 0
