"""One Spark run per distinct case, shared by every property (a query costs seconds; six properties check it);
`prefetch` runs a campaign's cases several queries at once before the properties ask for them.

The key is the case without its name and meta, so the same case drawn by
another property's Hypothesis run (the campaign gives each the same seed) or
retried while shrinking is not run again.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from converge.engine.model.errors import SystemUnderTestError
from converge.engine.model.native_join_case import NativeJoinCase, NativeRun
from converge.systems.spark.system import NativeJoinSystem

CACHE_SIZE = 2000


def case_key(case: NativeJoinCase) -> str:
    obj = case.to_json()
    obj.pop("name", None)
    obj.pop("meta", None)
    return json.dumps(obj, sort_keys=True)


@dataclass
class RunCache:
    """Runs of one system, by case; counts what they cost."""

    system: NativeJoinSystem
    runs: OrderedDict = field(default_factory=OrderedDict)
    spark_runs: int = 0
    hits: int = 0
    spark_seconds: float = 0.0

    def run(self, case: NativeJoinCase) -> NativeRun:
        key = case_key(case)
        if key in self.runs:
            self.hits += 1
            self.runs.move_to_end(key)
            return self.runs[key]
        started = time.perf_counter()
        result = self.system.run_native(case)
        self.spark_seconds += time.perf_counter() - started
        self.spark_runs += 1
        self._keep(key, result)
        return result

    def _keep(self, key: str, result: NativeRun) -> None:
        """Cache `result`, dropping the least recently used run past CACHE_SIZE."""
        self.runs[key] = result
        if len(self.runs) > CACHE_SIZE:
            self.runs.popitem(last=False)

    def prefetch(self, cases: Sequence[NativeJoinCase], concurrency: int) -> str | None:
        """Run the distinct cases not yet cached, `concurrency` queries at once; None, or why it stopped early.

        Spark failing here is not reported: the cases it did not answer stay uncached, and the property that
        draws one runs it alone and reports the failure as its own.
        """
        todo: dict[str, NativeJoinCase] = {}
        for case in cases:
            key = case_key(case)
            if key not in self.runs:
                todo.setdefault(key, case)
        keys, batch = list(todo), list(todo.values())
        for start in range(0, len(batch), CACHE_SIZE):  # never more than the cache keeps
            started = time.perf_counter()
            try:
                results = self.system.run_many(batch[start:start + CACHE_SIZE], concurrency=concurrency)
            except SystemUnderTestError as exc:
                return str(exc)
            finally:
                self.spark_seconds += time.perf_counter() - started
            self.spark_runs += len(results)
            for key, result in zip(keys[start:start + CACHE_SIZE], results, strict=False):
                self._keep(key, result)
        return None
