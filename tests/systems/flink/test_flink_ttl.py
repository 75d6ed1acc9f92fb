"""State TTL on real Flink, driven on the paced wall clock (converge/systems/flink/program/ttl_clock.py), through
the session's adapter.

The hand case (a LEFT join a.k = b.k, a TTL of 2 logical ms: an entry written at w is visible up to w + 1 and
gone at w + 2; Flink gets 1200 ms, and instant t reaches the join at about t * 800 ms):
a(1,10) at 0 emits its padding; b(1,20) at 2 meets nothing, a's entry expired (1600 ms >= 1200 ms); b(2,30) at 2
and a(2,40) at 3 meet (b's entry is 800 ms old); a's -D(1,10) at 3 meets b(1,20) (written at 2, visible) and
retracts the joined row it never emitted: StreamingJoinOperator retracts what the record joins with before it
looks at its own side's state, where a(1,10) has expired. Both backends must give that changelog, row for row.
The campaign test runs ttl/ttl_matches_model on generated cases on both backends.
"""

from __future__ import annotations

import pytest

from converge.systems.adapter.client import AdapterSystem
from tests.support.flink_client import ProtocolClient, bigint_input, case

pytestmark = [pytest.mark.flink, pytest.mark.xdist_group("flink")]

N = None
INPUTS = [bigint_input("a", ["k", "x"], mode="retract"), bigint_input("b", ["k", "y"], mode="insert_only")]
EVENTS = [{"input": "a", "kind": "+I", "row": [1, 10]}, {"processing_time": 2},
          {"input": "b", "kind": "+I", "row": [1, 20]}, {"input": "b", "kind": "+I", "row": [2, 30]},
          {"processing_time": 3}, {"input": "a", "kind": "+I", "row": [2, 40]},
          {"input": "a", "kind": "-D", "row": [1, 10]}]
CHANGELOGS = {"a": [["+I", 1, 10], ["+I", 2, 40], ["-D", 1, 10]], "b": [["+I", 1, 20], ["+I", 2, 30]]}
EXPECTED = [["+I", 1, 10, N, N], ["+I", 2, 40, 2, 30], ["-D", 1, 10, 1, 20]]


def test_an_expired_entry_is_not_met_on_either_backend(flink: ProtocolClient, flink_system: AdapterSystem) -> None:
    cases = [case(backend, INPUTS, ["left"], ["a.k = b.k"], CHANGELOGS, events=EVENTS,
                  config={"state_ttl_ms": 2, "state_backend": backend}) for backend in ("hashmap", "rocksdb")]
    results = flink.run(cases, timeout=300)
    undecided = [r for r in results if r["status"] == "unsupported" and "not decided" in r.get("message", "")]
    if undecided:  # the clock slipped near a boundary: the case says so and is never compared (ttl_clock.py)
        pytest.skip(f"the wall clock slipped on this loaded machine: {undecided[0]['message']}")
    assert [r["status"] for r in results] == ["ok", "ok"], results
    assert [r["changelog"] for r in results] == [EXPECTED, EXPECTED]
    assert "TTL job" in flink_system.process.stderr_tail()


def test_a_ttl_campaign_on_flink(flink_system: AdapterSystem) -> None:
    """ttl/ttl_matches_model on generated INNER/LEFT/RIGHT/FULL cases, both backends drawn (batches of 5)."""
    from converge.properties.campaign import run_property
    from converge.properties.systems.specs import SYSTEM_PROPERTIES, bind

    prop = next(p for p in SYSTEM_PROPERTIES if p.key == "ttl/ttl_matches_model")
    result = run_property(bind(prop, flink_system, batch=5), max_examples=3, seed=3)
    assert result.failure is None and result.error is None, result.failure or result.error
    assert result.exercised.compared >= 5, result.exercised.describe()
