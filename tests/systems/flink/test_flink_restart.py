"""restart_after on real Flink (converge/systems/flink/program/restart.py), through the session's adapter.

One LEFT join case with a residual condition, stopped with a savepoint after 7 of its 15 changes and restored,
on each state backend. The final answer is worked out by hand (the data of test_flink_adapter.py); the adapter's
stderr must say that it restarted. The slow campaign compares restarted changelogs with straight runs."""

from __future__ import annotations

import pytest

from converge.systems.adapter.client import AdapterSystem
from tests.support.flink_cases import A_ROWS, AB, B_ROWS, N  # the adapter tests' two inputs
from tests.support.flink_client import ProtocolClient, bag, case, folded

pytestmark = [pytest.mark.flink, pytest.mark.xdist_group("flink")]

# b's and a's changes alternating (b's last one alone at the end); the restart after 7 changes falls just before
# a's -U(1,5): the update of a's key 1, matched against b's restored rows, is the first change after the restore
EVENTS = [{"input": name, "kind": row[0], "row": row[1:]}
          for pair in zip(B_ROWS, A_ROWS + [None], strict=False) for name, row in zip("ba", pair, strict=False) if row is not None]
LEFT = [[1, 15, 1, 1], [3, 1, N, N], [4, 9, N, N]]


def _case(case_id: str, config: dict) -> dict:
    return case(case_id, AB, ["left"], ["a.k = b.k AND a.x > b.y"], {"a": A_ROWS, "b": B_ROWS}, config=config,
                events=EVENTS)


def _final(result: dict) -> list[str]:
    """The folded answer of the adapter's changelog (+I/+U add, -U/-D remove; never below zero)."""
    return folded(result)


def test_a_case_restarted_mid_stream_gives_the_hand_worked_answer_on_both_backends(
        flink: ProtocolClient, flink_system: AdapterSystem) -> None:
    """One restarted job per backend (the changelog against the straight run: the slow campaign)."""
    assert len(EVENTS) == 15 and EVENTS[7] == {"input": "a", "kind": "-U", "row": [1, 5]}
    cases = [_case(backend, {"state_backend": backend, "restart_after": 7}) for backend in ("hashmap", "rocksdb")]
    results = flink.run(cases, timeout=300)
    assert [r["status"] for r in results] == ["ok", "ok"], results
    assert [_final(r) for r in results] == [bag(LEFT), bag(LEFT)]
    tail = flink_system.process.stderr_tail()
    for backend in ("hashmap", "rocksdb"):
        assert f"converge flink adapter: restarted after 7 changes on {backend}: job 1" in tail, tail


@pytest.mark.slow
def test_a_restart_campaign_on_flink(flink_system: AdapterSystem) -> None:
    """The restart property on generated regular, SEMI/ANTI, upsert, mini-batch and multi-way cases (batches of
    4; every backend the adapter honours): the restarted changelog equals the straight run's (the fold where the
    adapter answers finals) and the fold equals the oracle. Each example is one restarted and one straight job."""
    from converge.properties.campaign import run_property
    from converge.properties.systems.specs import SYSTEM_PROPERTIES, bind

    prop = next(p for p in SYSTEM_PROPERTIES if p.key == "restart/restart_changes_nothing")
    result = run_property(bind(prop, flink_system, batch=4), max_examples=12, seed=26)
    assert result.failure is None and result.error is None, result.failure or result.error
    assert result.exercised.compared >= 24, result.exercised.describe()
