"""Real Flink joins a retraction of a row its state does not hold as the scenario files say (docs/semantics.md,
"Raw changelogs"): each file of tests/scenarios/raw_retractions/ and the per-match order file, sent to Flink 2.3.0
with the changelog answer, must give the emits written by hand in the file, event by event.

Slow: an adapter of its own (`CONVERGE_FLINK_OUTPUT=changelog`, a second MiniCluster), about 190 s on a loaded
machine. The expectations are the files' own, derived from Flink's operator code, never from converge's engine.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from converge.engine.model.scenario_json import load_scenario
from converge.engine.model.system_cases import case_to_json
from converge.reports.systems.adapter.client import AdapterProcess
from tests.flink.client import ProtocolClient

pytestmark = [pytest.mark.flink, pytest.mark.slow, pytest.mark.xdist_group("flink")]
SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
FILES = sorted((SCENARIOS / "raw_retractions").glob("*.json")) + [
    SCENARIOS / "regular" / "full_padding_interleaved_per_match.json"]


@pytest.fixture(scope="module")
def changelogs(flink_command: list[str]):
    """An adapter answering changelogs in Flink's emission order (paced arrival)."""
    process = AdapterProcess(["env", "CONVERGE_FLINK_OUTPUT=changelog", *flink_command], label="flink-changelog")
    client = ProtocolClient(process)
    try:
        hello = client.ask({"type": "hello", "protocol": "converge-adapter", "versions": [1]}, timeout=300)
        assert hello["capabilities"]["output"] == "changelog", hello
        yield client
        process.shutdown(30.0)
    finally:
        process.kill()


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_flink_emits_the_hand_derived_changelog(changelogs, path: Path) -> None:
    scenario = load_scenario(path)
    (result,) = changelogs.run([case_to_json(path.stem, scenario)], timeout=300)
    assert result["status"] == "ok", result
    got = [(kind, tuple(row)) for kind, *row in result["changelog"]]
    at = 0
    for i, event in enumerate(scenario.events):
        assert event.expect is not None, f"{path.name}: event {i} has no expectation"
        want = [(e["kind"], tuple(e["row"])) for e in event.expect.emits]
        part, at = got[at:at + len(want)], at + len(want)
        if event.expect.ordered:
            assert part == want, f"{path.name}, event {i}"
        else:  # several joined rows of one event: Flink's heap MapState order is not the file's
            assert Counter(part) == Counter(want), f"{path.name}, event {i}"
    assert at == len(got), f"{path.name}: Flink emitted more than the file expects: {got[at:]}"
