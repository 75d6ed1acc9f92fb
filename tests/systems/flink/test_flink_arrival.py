"""Real Flink's changelog repeats when the adapter paces arrival (converge/systems/flink/program/arrival.py).

Slow: an adapter of its own (the arrival of its environment, a second MiniCluster) and a few
seconds per run. With `CONVERGE_FLINK_ARRIVAL=free` in the environment the adapter feeds each input
from its own source, as it did before, and the LEFT join test fails (checked once by hand: docs/flink.md).
The default suite exercises the paced arrival through every other Flink test (it is the default).
"""

from __future__ import annotations

import json
import os

import pytest

from converge.engine.model.scenario_json import load_scenario
from converge.engine.model.system_cases import case_to_json
from converge.systems.adapter.client import AdapterProcess
from tests.support.flink_client import ProtocolClient, bigint_input, case
from tests.support.paths import SCENARIOS

pytestmark = [pytest.mark.flink, pytest.mark.slow, pytest.mark.xdist_group("flink")]
RUNS = 5


@pytest.fixture(scope="module")
def changelogs(flink_command: list[str]):
    """An adapter answering changelogs; the arrival is the environment's CONVERGE_FLINK_ARRIVAL (default paced)."""
    arrival = os.environ.get("CONVERGE_FLINK_ARRIVAL", "paced")
    process = AdapterProcess(["env", f"CONVERGE_FLINK_ARRIVAL={arrival}",
                              *flink_command], label="flink-changelog")
    client = ProtocolClient(process)
    try:
        hello = client.ask({"type": "hello", "protocol": "converge-adapter", "versions": [1]}, timeout=300)
        assert hello["capabilities"]["output"] == "changelog", hello
        yield client
        process.shutdown(30.0)
    finally:
        process.kill()


def _runs(client: ProtocolClient, one: dict) -> list[list]:
    answers = []
    for _ in range(RUNS):
        (result,) = client.run([one], timeout=300)
        assert result["status"] == "ok", result
        answers.append(result["changelog"])
    return answers


def test_mini_batch_suppressed_padding_emits_the_scenarios_changelog_every_time(changelogs):
    """Flink 2.x's suppressed padding (docs/minibatch.md): bundles [+I order, +I voucher] and [-U, +U voucher].
    The emits are the scenario file's, written by hand."""
    path = SCENARIOS / "minibatch" / "suppressed_padding_flink.json"
    raw = json.loads(path.read_text())
    expected = [[e["kind"], *e["row"]] for event in raw["events"] for e in event["expect"]["emits"]]
    assert expected == [["+I", 1, 5, 1, 3], ["-U", 1, 5, 1, 3]]
    one = case_to_json("suppressed-padding", load_scenario(path))
    assert _runs(changelogs, one) == [expected] * RUNS


def test_left_join_with_update_pairs_repeats_its_changelog(changelogs):
    """Updates on both sides of a LEFT join with a residual: padding flips back and forth, so every
    interleaving of the two inputs emits a different changelog (the final answer is the same)."""
    a, b = bigint_input("a", ["k", "x"]), bigint_input("b", ["k", "y"])
    events = [("a", "+I", 1, 5), ("b", "+I", 1, 3), ("a", "+I", 2, 7), ("b", "-U", 1, 3), ("b", "+U", 1, 9),
              ("a", "-U", 1, 5), ("a", "+U", 1, 15), ("b", "+I", 2, 1), ("b", "-D", 2, 1), ("a", "+I", 1, 4),
              ("b", "+I", 1, 2), ("a", "-D", 2, 7), ("b", "-U", 1, 9), ("b", "+U", 1, 20)]
    logs: dict[str, list] = {"a": [], "b": []}
    for name, kind, *row in events:
        logs[name].append([kind, *row])
    one = case("left-updates", [a, b], ["left"], ["a.k = b.k AND a.x > b.y"], logs,
               events=[{"input": n, "kind": k, "row": r} for n, k, *r in events])
    answers = _runs(changelogs, one)
    assert all(answer == answers[0] for answer in answers), [json.dumps(a) for a in answers]
    # the batch answer by hand: a = (1,15), (1,4); b = (1,20), (1,2); 15 > 2 and 4 > 2 match, 15/4 > 20 do not
    bag: dict[str, int] = {}
    for kind, *row in answers[0]:
        bag[json.dumps(row)] = bag.get(json.dumps(row), 0) + (1 if kind[0] == "+" else -1)
    assert {row: n for row, n in bag.items() if n} == {"[1, 15, 1, 2]": 1, "[1, 4, 1, 2]": 1}
    # the first events, one at a time: the order's padding, then the match that retracts it
    assert answers[0][:3] == [["+I", 1, 5, None, None], ["-D", 1, 5, None, None], ["+I", 1, 5, 1, 3]]


def test_mini_batch_retracts_the_padding_it_suppressed(changelogs):
    """tests/scenarios/systems/flink_minibatch_suppressed_padding_retracted.json: the order's delete retracts
    a padded row Flink never emitted (its -U/+U bundle suppressed it); the same changelog every run."""
    path = SCENARIOS / "systems" / "flink_minibatch_suppressed_padding_retracted.json"
    one = case_to_json("suppressed-then-deleted", load_scenario(path))
    expected = [["+I", 1, 5, 1, 3], ["-U", 1, 5, 1, 3], ["-D", 1, 5, None, None]]
    assert _runs(changelogs, one) == [expected] * RUNS
