"""`converge bench --only flink_arrival`: how repeatable real Flink's changelog is, with the adapter's two
arrivals, "free" (one source per input) and "paced" (one checkpoint-gated source in the scenario's order;
converge/systems/flink/program/arrival.py).

A measurement of Flink's behaviour (docs/flink.md cites it), not a test. For each arrival it starts one adapter
(one MiniCluster; it answers changelogs), sends each of three interleaving-sensitive cases `--rounds` times,
one case per request, and counts the distinct changelogs (the emitted rows with their kinds, in order) and
distinct final answers; then one request of `--examples` copies of each case (distinct ids, so one job),
twice: how many distinct changelogs (and multisets of changelog rows) the copies emitted, and how many copies
emitted the same changelog both times. Times are wall seconds per request (the batch: its first run).
Skipped, with the reason, when the Flink environment is not installed (`converge systems install flink`).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections import Counter
from typing import Any

from converge.cli.bench_machine import load_average
from converge.engine.model.errors import SystemUnderTestError, UsageError
from converge.reports.options import BenchConfig
from converge.reports.terminal import format_table
from converge.systems.flink import environment

ARRIVALS = ("free", "paced")


def _input(name: str, columns: list[str], mode: str = "retract", key: list[str] | None = None) -> dict:
    return {"name": name, "columns": [[c, "BIGINT"] for c in columns], "unique_key": key, "changelog_mode": mode}


def _case(case_id: str, inputs: list[dict], types: list[str], conditions: list[str], events: list[tuple],
          config: dict | None = None) -> dict:
    """A CASE whose changelogs are the projection of `events` ((input, kind, values...) in global order)."""
    chain = [spec["name"] for spec in inputs]
    changelogs: dict[str, list[list[Any]]] = {name: [] for name in chain}
    for name, kind, *row in events:
        changelogs[name].append([kind, *row])
    scenario = {"name": case_id, "inputs": inputs, "config": config or {},
                "join": {"inputs": chain, "types": types, "conditions": conditions},
                "events": [{"input": name, "kind": kind, "row": list(row)} for name, kind, *row in events]}
    return {"id": case_id, "scenario": scenario, "changelogs": changelogs}


def cases() -> list[dict]:
    """A LEFT join with -U/+U pairs on both sides, a 3-way retract chain (multi-way operator), a mini-batch case."""
    left = _case("left_updates", [_input("a", ["k", "x"]), _input("b", ["k", "y"])], ["left"],
                 ["a.k = b.k AND a.x > b.y"],
                 [("a", "+I", 1, 5), ("b", "+I", 1, 3), ("a", "+I", 2, 7), ("b", "-U", 1, 3), ("b", "+U", 1, 9),
                  ("a", "-U", 1, 5), ("a", "+U", 1, 15), ("b", "+I", 2, 1), ("b", "-D", 2, 1), ("a", "+I", 1, 4),
                  ("b", "+I", 1, 2), ("a", "-D", 2, 7), ("b", "-U", 1, 9), ("b", "+U", 1, 20)])
    chain = _case("retract_chain", [_input("a", ["k", "x"]), _input("b", ["k", "y"]), _input("c", ["k", "z"])],
                  ["left", "inner"], ["a.k = b.k AND a.x > b.y", "c.k = a.k"],
                  [("a", "+I", 1, 5), ("c", "+I", 1, 0), ("b", "+I", 1, 3), ("a", "+I", 1, 2), ("b", "-D", 1, 3),
                   ("c", "+I", 1, 1), ("b", "+I", 1, 1), ("a", "-D", 1, 5), ("c", "-D", 1, 0), ("b", "+I", 1, 0),
                   ("a", "+I", 1, 9), ("b", "-D", 1, 1)], {"multi_join": "on"})
    bundle = _case("minibatch", [_input("o", ["id", "amount"], "insert_only"),
                                 _input("v", ["id", "low"], "retract", ["id"])],
                   ["left"], ["o.id = v.id AND o.amount > v.low"],
                   [("o", "+I", 1, 5), ("v", "+I", 1, 3), ("v", "-U", 1, 3), ("v", "+U", 1, 9), ("o", "+I", 2, 4),
                    ("v", "+I", 2, 1), ("o", "+I", 1, 8), ("v", "-U", 2, 1), ("v", "+U", 2, 6)], {"mini_batch_size": 2})
    return [left, chain, bundle]


class Adapter:
    """One adapter process speaking raw protocol lines."""

    def __init__(self, arrival: str) -> None:
        env = dict(os.environ, CONVERGE_FLINK_ARRIVAL=arrival)
        started = time.perf_counter()
        self.process = subprocess.Popen(environment.adapter_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, env=env, start_new_session=True)
        self.requests = 0
        hello = self.ask({"type": "hello", "protocol": "converge-adapter", "versions": [1]})
        assert hello["capabilities"]["output"] == "changelog", hello
        self.hello_s = time.perf_counter() - started

    def ask(self, message: dict) -> dict:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise SystemUnderTestError(f"the adapter exited with {self.process.poll()}")
        return json.loads(line)

    def run(self, batch: list[dict]) -> tuple[list[dict], float]:
        self.requests += 1
        started = time.perf_counter()
        answer = self.ask({"type": "run", "request": self.requests, "cases": batch})
        return answer["results"], time.perf_counter() - started

    def close(self) -> None:
        try:
            assert self.process.stdin is not None
            self.process.stdin.write('{"type": "shutdown"}\n')  # no answer comes: the adapter exits
            self.process.stdin.flush()
            self.process.wait(60)
        finally:
            if self.process.poll() is None:
                self.process.kill()


def _fold(changelog: list[list[Any]]) -> str:
    bag: Counter[str] = Counter()
    for kind, *row in changelog:
        bag[json.dumps(row)] += 1 if kind[0] == "+" else -1
    return json.dumps(sorted((row, n) for row, n in bag.items() if n))


def measure(arrival: str, runs: int, batch: int) -> dict:
    """One adapter with `arrival`: each case `runs` times alone, then `batch` copies of it in one request, twice."""
    adapter = Adapter(arrival)
    out: dict[str, Any] = {"hello_s": round(adapter.hello_s, 1), "load": load_average(),
                           "cases": {}}
    try:
        for case in cases():
            seen: Counter[str] = Counter()
            finals: Counter[str] = Counter()
            times = []
            for _ in range(runs):
                (result,), seconds = adapter.run([case])
                if result["status"] != "ok":
                    raise SystemUnderTestError(f"case {case['id']} ({arrival} arrival): {result}")
                seen[json.dumps(result["changelog"])] += 1
                finals[_fold(result["changelog"])] += 1
                times.append(seconds)
            copies = [dict(case, id=f"{case['id']}-{n}") for n in range(batch)]
            results, batch_s = adapter.run(copies)
            again, _ = adapter.run(copies)
            in_batch = Counter(json.dumps(r["changelog"]) for r in results)
            # copies differ in their case id only; rows one input record emits come in the order of the
            # join's state, which hashes the case id, so compare each copy with itself across two runs
            same_twice = sum(r["changelog"] == a["changelog"] for r, a in zip(results, again, strict=False))
            permutations = Counter(json.dumps(sorted(map(json.dumps, r["changelog"]))) for r in results)
            times.sort()
            out["cases"][case["id"]] = {
                "distinct_changelogs": len(seen), "counts": sorted(seen.values(), reverse=True),
                "distinct_finals": len(finals), "median_s": round(times[len(times) // 2], 2),
                "max_s": round(times[-1], 2), "batch_s": round(batch_s, 2),
                "batch_distinct_changelogs": len(in_batch), "batch_distinct_multisets": len(permutations),
                "batch_copies_same_twice": same_twice, "load": load_average()}
    finally:
        adapter.close()
    return out


def _bench_flink_arrival(config: BenchConfig) -> dict:
    """Both arrivals, each case `--rounds` times alone and `--examples` copies in one request."""
    try:
        environment.adapter_command()
    except UsageError as exc:
        return {"skipped": str(exc)}
    arrivals = {arrival: measure(arrival, config.rounds, config.examples) for arrival in ARRIVALS}
    return {**{f"{arrival}_max_distinct_changelogs": max(c["distinct_changelogs"] for c in a["cases"].values())
               for arrival, a in arrivals.items()},
            "runs": config.rounds, "batch": config.examples, "arrivals": arrivals}


def format_rows(result: dict) -> str:
    """One row per arrival and case; a skipped benchmark's reason."""
    if "arrivals" not in result:
        return f"  {json.dumps(result)}"
    rows = [(arrival, name, f"{c['distinct_changelogs']} of {result['runs']}", c["distinct_finals"], c["median_s"],
             f"{c['batch_distinct_changelogs']} of {result['batch']}", c["batch_distinct_multisets"],
             f"{c['batch_copies_same_twice']} of {result['batch']}", c["batch_s"])
            for arrival, a in result["arrivals"].items() for name, c in a["cases"].items()]
    return format_table(("arrival", "case", "changelogs", "finals", "median s", "batch changelogs",
                         "batch multisets", "same twice", "batch s"), rows)


BENCHES = {"flink_arrival": _bench_flink_arrival}
