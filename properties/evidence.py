"""The oracle's part of a failure's evidence: the final answer a scenario must end with, and its query.

A report writes the evidence down; it never asks an oracle or runs the
engine itself. Properties that compare against the oracle fill
`Divergence.expected_final` and `oracle_sql` as they fail; for the others,
`with_oracle_final` asks the oracle once, after Hypothesis has shrunk the
failure, so a replayable file still carries `expect_final`.
"""

from __future__ import annotations

from collections import Counter

from converge.engine.model.scenario import Scenario
from converge.oracle import DuckDBOracle
from converge.properties.divergence import Divergence

__all__ = ["final_answer", "final_is_batch_answer", "with_oracle_final"]


def final_is_batch_answer(s: Scenario) -> bool:
    """Whether the scenario must end with the batch answer of its inputs (then a file can expect it)."""
    ttl = s.config.state_ttl_ms
    span = max([getattr(e, "processing_time", 0) for e in s.events], default=0)
    if s.join.interval is not None or s.config.semantics != "correct":
        return False
    if ttl is not None and not (isinstance(ttl, int) and ttl > span):
        return False
    # with upsert inputs and no normalization the output is an upsert stream, not a bag
    return s.config.changelog_normalize or all(i.changelog_mode != "upsert" for i in s.inputs)


def final_answer(s: Scenario, answer: Counter) -> Counter | None:
    """`answer` (the oracle's, after the last event) as the scenario's expected final answer, where it is one."""
    return answer if final_is_batch_answer(s) else None


def with_oracle_final(d: Divergence) -> Divergence:
    """Fill `d.expected_final` (and, when the property ran no oracle query, `d.oracle_sql`) from DuckDB's
    final answer, when the property gave none and the scenario's answer is the batch answer."""
    if not isinstance(d.scenario, Scenario):
        return d  # another case type (native-join cases): their own properties carry their evidence
    if d.expected_final is not None or not final_is_batch_answer(d.scenario):
        return d
    oracle = DuckDBOracle()  # the process-wide connection, as every DuckDBOracle() without one
    try:
        d.expected_final = oracle.final(d.scenario)
        if d.oracle_sql is None:
            d.oracle_sql = oracle.sql_for(d.scenario, "final")
    except Exception:  # noqa: BLE001 - no oracle for this shape: the file expects nothing rather than a guess
        d.expected_final = None
    return d
