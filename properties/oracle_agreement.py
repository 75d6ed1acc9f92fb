"""Two batch oracles, one answer: the Spark SQL oracle agrees with DuckDB's on every scenario of a batch.

The Spark SQL oracle runs the DuckDB oracle's query translated to Spark's
dialect, over other input files and another materialization path, so a
translation that changes a meaning (a division, a NULL-safe equality, a
cast) shows as a difference here. Both answer every scenario the same way:
the same bag of rows, or the same error class (an overflow that DuckDB
raises must raise in Spark too). Spark's cost is per query, so a batch of
scenarios of one shape is asked at once (SparkSQLOracle.final_many); on a
difference the smallest differing scenario is reported, and Hypothesis
shrinks the batch down to it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from converge.engine.model.errors import ConvergeError
from converge.engine.model.scenario import Scenario
from converge.oracle.duckdb_oracle import DuckDBOracle
from converge.properties.divergence import Divergence, PropertyFailure

__all__ = ["canonical_bag", "duckdb_final", "oracles_agree"]

_NAN = ("NaN",)


def canonical_bag(bag: Counter) -> Counter:
    """The bag with every NaN replaced by one marker (NaN != NaN would make equal bags differ)."""
    out: Counter = Counter()
    for row, n in bag.items():
        out[tuple(_NAN if isinstance(v, float) and math.isnan(v) else v for v in row)] += n
    return out


def duckdb_final(scenario: Scenario, oracle: DuckDBOracle | None = None) -> Counter | ConvergeError:
    try:
        return (oracle or DuckDBOracle()).final(scenario)
    except ConvergeError as exc:
        return exc


def _same(a: Counter | ConvergeError, b: Counter | ConvergeError) -> bool:
    if isinstance(a, ConvergeError) or isinstance(b, ConvergeError):
        return type(a) is type(b)
    return canonical_bag(a) == canonical_bag(b)


def oracles_agree(scenarios: Sequence[Scenario], spark_oracle: Any, *,
                  expected: Sequence[Counter | ConvergeError] | None = None) -> None:
    """Raise PropertyFailure for the smallest scenario whose Spark SQL answer is not DuckDB's.

    ``expected`` (DuckDB's answers, computed here when None) lets a test plant a wrong answer."""
    got = spark_oracle.final_many(list(scenarios))
    want = list(expected) if expected is not None else [duckdb_final(s) for s in scenarios]
    differing = [i for i, (g, w) in enumerate(zip(got, want, strict=True)) if not _same(g, w)]
    if not differing:
        return
    i = min(differing, key=lambda j: (len(scenarios[j].events), j))
    g, w = got[i], want[i]
    message = f"Spark SQL: {g!r}; DuckDB: {w!r}" if isinstance(g, ConvergeError) or isinstance(w, ConvergeError) \
        else "the Spark SQL oracle's final answer differs from DuckDB's"
    raise PropertyFailure(Divergence(
        "spark_sql_oracle_equals_duckdb", scenarios[i], message, event_index=len(scenarios[i].events) - 1,
        engine=None if isinstance(g, ConvergeError) else g, expected=None if isinstance(w, ConvergeError) else w,
        extra={"spark_sql": getattr(spark_oracle, "last_sql", None), "batch_size": len(scenarios)}))
