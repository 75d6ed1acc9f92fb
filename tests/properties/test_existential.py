"""Existential properties never fail by chance: fixed witnesses every run, a seeded search once per campaign."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import pytest
from hypothesis import strategies as st

from converge.engine.model.scenario_json import scenario_to_dict
from converge.properties import anomalies, witnesses
from converge.properties.campaign import run_property
from converge.properties.divergence import Divergence, PropertyFailure
from converge.properties.registry import select
from converge.properties.spec import PropertySpec

REPRODUCED = [s for s in select("anomalies") if s.verdict == "reproduced"]


def _with(scenario, **config):
    return replace(scenario, config=replace(scenario.config, **config))


def test_every_reproduce_property_has_a_fixed_witness_and_a_campaign_search() -> None:
    assert len(REPRODUCED) == 4
    for spec in REPRODUCED:
        assert spec.search is not None and spec.search_budget >= 100, spec.name
        result = run_property(spec, seed=2026, max_examples=3000)
        assert result.ok, result.failure or result.error
        assert result.examples == 1, "the fixed witness is one example, however many are asked for"
        assert result.warnings == [], "seed 2026's searches find a witness within their budget"


def test_each_witness_shows_its_anomaly_only_in_the_flink_faithful_mode() -> None:
    for order in ("rocksdb", "hashmap"):
        witness = witnesses.mapstate_order_witness(order)
        assert anomalies.order_violations(witness)
        assert not anomalies.order_violations(_with(witness, map_state_order="arrival"))
    lost = witnesses.lost_key_witness()
    assert anomalies.duplicate_versions(lost)
    assert not anomalies.duplicate_versions(_with(lost, unique_key_lost=()))
    flink = witnesses.flink_40681_witness()
    assert anomalies.missing_padding(flink) and not anomalies.missing_padding(_with(flink, semantics="correct"))
    source, arrived = witnesses.disorder_witness()
    assert anomalies.disorder_diverges(source, arrived) and not anomalies.disorder_diverges(source, source)


def test_a_witness_that_stops_showing_its_anomaly_fails_the_property(monkeypatch) -> None:
    monkeypatch.setattr(anomalies, "flink_40681_witness",
                        lambda: _with(witnesses.flink_40681_witness(), semantics="correct"))
    with pytest.raises(PropertyFailure, match="fixed witness no longer shows"):
        anomalies.flink_40681_reproduced()


def test_a_search_that_finds_nothing_is_a_warning_with_its_budget_not_a_divergence() -> None:
    base = select("anomalies", "flink_40681_reproduced")[0]
    spec = replace(base, search=anomalies.flink_40681_search, search_budget=2)
    result = run_property(spec, seed=1)
    assert result.ok
    assert result.warnings == ["search flink_40681: not found within budget (2 examples, seed 1): "
                               "a null-padded row missing from the final answer"]


def test_a_found_witness_on_which_the_fix_fails_is_a_failure(monkeypatch) -> None:
    def broken_fix(scenario):
        raise PropertyFailure(Divergence("correct_matches_batch", scenario, "the fix did not hold"))

    monkeypatch.setattr(anomalies, "correct_matches_batch", broken_fix)
    spec = PropertySpec("anomalies", "p", lambda: st.just(()), lambda: None, 1,
                        search=anomalies.flink_40681_search, search_budget=1000)
    result = run_property(spec, seed=2026)
    assert not result.ok and "the fix did not hold" in str(result.failure)


_SEARCH_SCRIPT = """
import json, sys
from converge.engine.model.scenario_json import scenario_to_dict
from converge.properties import anomalies
found = anomalies.flink_40681_search(int(sys.argv[1]))[0].found
print(json.dumps(None if found is None else scenario_to_dict(found), sort_keys=True))
"""


@pytest.mark.parametrize("seed", [2026, 5])
def test_a_seeded_search_gives_the_same_witness_in_any_process(seed: int) -> None:
    # warm this process up first: other Hypothesis runs must not move the search
    run_property(select("regular", "prefix_consistency")[0], seed=3, max_examples=20)
    here = anomalies.flink_40681_search(seed)[0].found
    assert here is not None
    mine = json.dumps(scenario_to_dict(here), sort_keys=True)
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", _SEARCH_SCRIPT, str(seed)], capture_output=True, text=True,
                             check=True, timeout=120)
        assert out.stdout.strip() == mine


_RUN_SCRIPT = """
import json
from converge.properties.campaign import run_property
from converge.properties.registry import select
r = run_property(select("interval", "no_late_equals_oracle")[0], seed=5, max_examples=40)
print(json.dumps(sorted(r.coverage.items())))
"""


def test_a_seeded_run_draws_the_same_examples_in_any_process() -> None:
    """A failure's seed finds it again in any process (a pytest worker that imported the suite, or a fresh
    `converge run`), which Hypothesis's local-constants pool would otherwise prevent."""
    import converge.cli.main  # noqa: F401  - load many more local modules than the subprocess has

    here = run_property(select("interval", "no_late_equals_oracle")[0], seed=5, max_examples=40)
    out = subprocess.run([sys.executable, "-c", _RUN_SCRIPT], capture_output=True, text=True, check=True,
                         timeout=120)
    assert json.loads(out.stdout) == [list(p) for p in sorted(here.coverage.items())]
