"""The Spark runtime: the same operators inside Spark Structured Streaming (transformWithState).

Importing this package starts nothing: pyspark is imported when a job is
built, so the embedded default never needs a JVM.
"""

from __future__ import annotations

from typing import Any

__all__ = ["run_scenario_on_spark"]


def run_scenario_on_spark(scenario: Any, **options: Any) -> Any:
    """Run a scenario on Spark; returns an engine.runtime.local.RunResult (see job.run_scenario_on_spark)."""
    from converge.engine.runtime.spark import job  # lazy: pyspark is imported only when Spark is asked for

    return job.run_scenario_on_spark(scenario, **options)
