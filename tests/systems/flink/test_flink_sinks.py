"""The upsert sink and parallelism on real Flink (the session's adapter): one small case each by default, campaigns
with --run-slow. Expected tables are written by hand from SQL semantics, not computed by converge."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from converge.engine.model.scenario_json import scenario_from_dict
from converge.properties.systems.sinks import sink_table, upsert_sink_equals_oracle
from converge.systems.adapter.client import AdapterSystem
from tests.support.paths import ROOT

pytestmark = [pytest.mark.flink, pytest.mark.xdist_group("flink")]
CHECKOUT = ROOT


def _left_join(config: dict, items: list) -> dict:
    """orders LEFT JOIN items ON k; items is unique on the join key, so the output is unique on orders.id."""
    return {"name": "orders LEFT JOIN items", "config": config,
            "inputs": [{"name": "orders", "columns": [["id", "BIGINT"], ["k", "BIGINT"]], "unique_key": ["id"],
                        "changelog_mode": "upsert"},
                       {"name": "items", "columns": [["k", "BIGINT"], ["v", "BIGINT"]], "unique_key": ["k"],
                        "changelog_mode": "upsert"}],
            "join": {"inputs": ["orders", "items"], "types": ["left"], "conditions": ["orders.k = items.k"]},
            "events": [{"input": "orders", "kind": "+I", "row": [1, 10]},
                       {"input": "orders", "kind": "+I", "row": [2, 20]}, *items]}


ITEMS = [{"input": "items", "kind": "+I", "row": [10, 1]}, {"input": "items", "kind": "+I", "row": [20, 5]},
         {"input": "items", "kind": "-D", "row": [20, 5]}]
# order 1's padding is retracted when its item arrives; order 2's comes back when its item is deleted
WANT = Counter({(1, 10, 10, 1): 1, (2, 20, None, None): 1})


@pytest.mark.parametrize("materialize", ["auto", "force", "none"])
def test_a_left_join_through_an_upsert_sink_retracts_its_padding(flink_system: AdapterSystem,
                                                                 materialize: str) -> None:
    config = {"sink": "upsert", "sink_key": ["orders.id"], "upsert_materialize": materialize}
    scenario = scenario_from_dict(_left_join(config, ITEMS))
    (result,) = flink_system.run_cases([scenario])
    assert result.status == "ok", result.message
    assert sink_table(result, (0,)) == WANT
    upsert_sink_equals_oracle(flink_system, [scenario])  # the property agrees, on the same answer


def test_a_case_at_parallelism_2_gives_the_answer_and_each_keys_changelog_of_parallelism_1(
        flink_system: AdapterSystem) -> None:
    one, two = (scenario_from_dict(_left_join({"parallelism": p}, ITEMS)) for p in (1, 2))
    r1, r2 = flink_system.run_cases([one])[0], flink_system.run_cases([two])[0]
    assert r2.status == "ok", r2.message
    assert r2.folded() == WANT
    if r2.changelog is not None:  # an adapter that answers changelogs: each order's changes, in order, as at 1
        for key in (1, 2):
            assert [c for c in r2.changelog if c.row[0] == key] == [c for c in r1.changelog if c.row[0] == key]


def test_an_unknown_materializer_mode_is_refused_at_load() -> None:
    from converge.engine.model.errors import BadInputError

    with pytest.raises(BadInputError, match="upsert_materialize"):
        scenario_from_dict(_left_join({"sink": "upsert", "sink_key": ["orders.id"], "upsert_materialize": "x"},
                                      ITEMS))


@pytest.mark.slow
@pytest.mark.parametrize("family", ["sinks", "parallel"])
def test_a_flink_campaign_of_the_job_options(flink_system: AdapterSystem, family: str, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    from converge.cli.main import main
    from converge.systems.flink.system_type import FlinkSystemType
    from tests.support.shared_adapter import Borrowed

    monkeypatch.setattr(FlinkSystemType, "open", lambda kind, **_: Borrowed(flink_system))
    code = main(["run", "--system", "flink", "--family", family, "--examples", "40", "--seed", "1",
                 "--reports-dir", str(tmp_path)])
    out = capsys.readouterr().out
    summary = json.loads((tmp_path / "latest" / "summary.json").read_text())
    assert summary["system"].startswith("flink"), out
    assert "not applicable" not in out, out
    assert code == 0, out  # the parallel family once met docs/flink-findings.md #12, the adapter's (withdrawn)


@pytest.mark.slow
def test_the_upsert_sink_padding_finding_reproduces_on_flink_and_is_known(flink_system: AdapterSystem) -> None:
    """docs/flink-findings.md #10 (FLINK-40681): the upsert sink ends without the padded order on Flink 2.3.0, and
    the built-in entry recognises the divergence. When a release fixes it this test fails: narrow the entry then.
    Slow: in 1 of 6 measured runs (a pytest session on a machine at load 17) the sink kept the first joined row
    instead of nothing (the padding lost all the same), which the entry does not match; not explained yet."""
    from converge.engine.model.scenario_json import load_scenario
    from converge.properties.divergence import PropertyFailure
    from converge.properties.systems.known import Recogniser, builtin_known

    scenario = load_scenario(CHECKOUT / "tests/scenarios/systems/flink_upsert_sink_left_padding_lost.json")
    with pytest.raises(PropertyFailure) as failure:
        upsert_sink_equals_oracle(flink_system, [scenario])
    d = failure.value.divergence
    assert d.engine == Counter() and d.expected == Counter({(1, 10, None, None): 1})
    recognise = Recogniser(tuple(builtin_known()), "flink", flink_system.version, "sinks", "upsert_sink_equals_oracle")
    assert recognise(d) is not None and recognise(d).id == "flink-upsert-sink-outer-padding-lost"
