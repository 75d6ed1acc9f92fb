"""The documented anomalies: the dedupe operator, the pipeline options, the checkers on hand-derived
files, and fixed-seed searches that find each anomaly and print it shrunk."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from converge.cli.commands.run import verdict_of
from converge.cli.main import main
from converge.engine.model.changelog import Change
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import InputSpec
from converge.engine.model.scenario_json import dump_scenario, load_scenario, scenario_from_dict
from converge.engine.operators.base import OperatorContext
from converge.engine.operators.dedupe import DeduplicateKeepLastRowOperator
from converge.engine.planner import plan
from converge.engine.runtime.local import run_scenario
from converge.engine.state import KeyedStateBackend
from converge.properties import anomalies
from converge.properties.divergence import PropertyFailure
from converge.properties.registry import select
from tests.support.paths import SCENARIOS

FILES = SCENARIOS / "anomalies"


def _load(name: str):
    return load_scenario(FILES / f"{name}.json")


# ---------------------------------------------------------------- the dedupe operator


def _dedupe(mode: str = "retract", *, emit_identical: bool = False):
    spec = InputSpec("p", (("k", "BIGINT"), ("v", "BIGINT")), None, mode)  # type: ignore[arg-type]
    op = DeduplicateKeepLastRowOperator(spec, ["k"], emit_identical=emit_identical)
    ctx = OperatorContext(KeyedStateBackend())
    op.open(ctx)

    def send(kind: str, row: tuple) -> list[tuple]:
        ctx.state.current_key = op.key_of(0, row)
        return [(c.kind, c.row) for c in op.process(0, Change(kind, row), ctx)]

    return send


def test_dedupe_keeps_the_last_row_per_key_and_emits_a_retract_stream() -> None:
    send = _dedupe()
    assert send("+I", (1, 10)) == [("+I", (1, 10))]
    assert send("+I", (1, 11)) == [("-U", (1, 10)), ("+U", (1, 11))]      # a duplicate +I replaces
    assert send("+U", (1, 11)) == []                                      # unchanged on a changelog input
    assert send("+I", (2, 20)) == [("+I", (2, 20))]                       # another key, its own state
    assert send("-D", (1, None)) == [("-D", (1, 11))]                     # key-only delete: the full image
    assert send("-D", (1, 11)) == []                                      # an unknown key: nothing
    assert send("-U", (2, 99)) == [("-D", (2, 20))]                       # -U always becomes -D of what is held
    assert send("+U", (2, 21)) == [("+I", (2, 21))]


def test_dedupe_on_insert_only_input_and_with_ttl_emits_identical_rows() -> None:
    for send in (_dedupe("insert_only"), _dedupe(emit_identical=True)):
        send("+I", (1, 10))
        assert send("+I", (1, 10)) == [("-U", (1, 10)), ("+U", (1, 10))]


# ---------------------------------------------------------------- pipeline options


def _payments(config: dict, *, join: dict | None = None, uk=("order_id",)) -> dict:
    return {
        "name": "options",
        "inputs": [
            {"name": "orders", "columns": [["order_id", "BIGINT"], ["t", "BIGINT"]], "unique_key": ["order_id"]},
            {"name": "payments", "columns": [["order_id", "BIGINT"], ["t", "BIGINT"]],
             "unique_key": list(uk) if uk else None},
        ],
        "join": join or {"inputs": ["orders", "payments"], "types": ["inner"],
                         "conditions": ["orders.order_id = payments.order_id"]},
        "config": config,
    }


@pytest.mark.parametrize("config, needle", [
    ({"dedupe_before_join": ["nope"]}, "config.dedupe_before_join: 'nope' is not an input of the join chain"),
    ({"dedupe_before_join": "payments"}, "expected a list of input names"),
    ({"dedupe_before_join": {"payments": ["amount"]}}, "config.dedupe_before_join.payments: ['amount'] are not all columns of 'payments'"),
    ({"dedupe_before_join": {"payments": []}}, "must be a non-empty list"),
    ({"unique_key_lost": ["orders", "orders"]}, "config.unique_key_lost: expected a list of distinct input names"),
    ({"per_key_order": "random"}, "config.per_key_order: 'random' is not one of kept, disordered"),
])
def test_bad_pipeline_options_are_rejected_by_name(config: dict, needle: str) -> None:
    with pytest.raises(BadInputError) as info:
        plan(scenario_from_dict(_payments(config)))
    assert needle in str(info.value)


def test_dedupe_and_lost_key_need_a_key_to_work_with() -> None:
    with pytest.raises(BadInputError, match="input 'payments' has no unique key; name the key columns"):
        plan(scenario_from_dict(_payments({"dedupe_before_join": ["payments"]}, uk=None)))
    with pytest.raises(BadInputError, match="input 'payments' declares no unique key to lose"):
        plan(scenario_from_dict(_payments({"unique_key_lost": ["payments"]}, uk=None)))
    interval = {"inputs": ["orders", "payments"], "types": ["inner"],
                "conditions": ["orders.order_id = payments.order_id"],
                "interval": {"left_time": "orders.t", "right_time": "payments.t", "lower_ms": 0, "upper_ms": 1}}
    with pytest.raises(BadInputError, match="an interval join takes append-only inputs"):
        plan(scenario_from_dict(_payments({"dedupe_before_join": ["payments"]}, join=interval)))


def test_dedupe_restores_the_unique_key_the_join_lost() -> None:
    lost = plan(scenario_from_dict(_payments({"unique_key_lost": ["payments"]}))).explain()
    assert "rightInputSpec=[InputSideHasNoUniqueKey]" in lost and "Deduplicate" not in lost
    both = _payments({"unique_key_lost": ["payments"], "dedupe_before_join": {"payments": ["order_id", "t"]}})
    text = plan(scenario_from_dict(both)).explain()
    assert "rightInputSpec=[InputSideHasUniqueKey]" in text  # the dedupe key (order_id, t) is the unique key now
    assert "Deduplicate(keep=[LastRow], key=[order_id, t]" in text


def test_pipeline_options_survive_a_dump_and_load(tmp_path: Path) -> None:
    scenario = _load("lost_unique_key_dedupe")
    again = load_scenario(dump_scenario(scenario, tmp_path / "again.json"))
    assert again.config.unique_key_lost == ("payments",)
    assert again.config.dedupe_before_join == {"payments": None}
    assert run_scenario(again).per_event == run_scenario(scenario).per_event


def test_strict_per_key_order_rejects_the_swapped_update() -> None:
    arrived = _load("per_key_disorder_flink")
    strict = replace(arrived, config=replace(arrived.config, per_key_order="kept", semantics="correct"))
    with pytest.raises(BadInputError) as info:
        run_scenario(strict)
    assert info.value.event_index == 3 and "retracts row [1, 300], which is not in the join state" in str(info.value)


# ---------------------------------------------------------------- the checkers, on hand-derived files


def test_order_checker_on_the_hand_derived_files() -> None:
    bad = anomalies.order_violations(_load("mapstate_order_rocksdb"))
    # items arrived 2, 256, 1 (positions 0, 1, 2); RocksDB re-emits 256, 1, 2 for the -U and the +U
    assert [(v.event_index, v.kind, [r[1] for r in v.emitted], list(v.arrival_ranks)) for v in bad] == [
        (4, "-U", [256, 1, 2], [1, 2, 0]), (5, "+U", [256, 1, 2], [1, 2, 0])]
    assert anomalies.order_violations(_load("mapstate_order_arrival")) == []


def test_lost_key_checker_on_the_hand_derived_files() -> None:
    found = anomalies.duplicate_versions(_load("lost_unique_key_rocksdb"))
    assert found == [(2, (1,), [(1, 5), (1, 300)]), (4, (1,), [(1, 5), (1, 300)])]
    assert anomalies.duplicate_versions(_load("lost_unique_key_dedupe")) == []
    anomalies.dedupe_matches_batch(_load("lost_unique_key_dedupe"))


def test_flink_40681_checkers_on_the_hand_derived_files() -> None:
    for name in ("flink_40681_upsert", "flink_40681_duplicate_insert"):
        flink, correct = _load(f"{name}_flink"), _load(f"{name}_correct")
        assert list(anomalies.missing_padding(flink)) == [tuple(correct.expect_final[0])]
        assert not anomalies.missing_padding(correct)
        anomalies.correct_matches_batch(correct)


def test_correct_matches_batch_can_fail(monkeypatch) -> None:
    """The for-all check is not vacuous: Flink's behaviour, run through it, is caught."""
    from converge.engine.operators import regular_join

    flink = _load("flink_40681_upsert_flink")
    with pytest.raises(BadInputError, match="semantics=correct"):
        anomalies.correct_matches_batch(flink)  # it never silently checks another mode
    correct = replace(flink, config=replace(flink.config, semantics="correct"), expect_final=None)
    anomalies.correct_matches_batch(correct)
    original = regular_join.StreamingJoinOperator.__init__

    def flink_inside(self, spec):  # an engine whose `correct` mode forgot to retract replaced rows
        original(self, spec)
        self._replace_retracts = False

    monkeypatch.setattr(regular_join.StreamingJoinOperator, "__init__", flink_inside)
    with pytest.raises(PropertyFailure, match="after event 2"):
        anomalies.correct_matches_batch(correct)


# ---------------------------------------------------------------- fixed-seed searches, shrunk examples


def test_rocksdb_and_hashmap_order_are_found_and_arrival_removes_them() -> None:
    for order in ("rocksdb", "hashmap"):
        witness = anomalies.find_order_anomaly(order, seed=2026)
        print(f"\n--- shrunk {order} example ---\n{anomalies.describe_example(witness)}")
        bad = anomalies.order_violations(witness)
        assert bad and len(witness.events) <= 4, "shrinks to two items and one order change"
        fixed = replace(witness, config=replace(witness.config, map_state_order="arrival"))
        assert anomalies.order_violations(fixed) == []


def test_lost_unique_key_is_found_and_dedupe_removes_it() -> None:
    witness = anomalies.find_lost_key_anomaly(seed=2026)
    print(f"\n--- shrunk lost-unique-key example ---\n{anomalies.describe_example(witness)}")
    assert anomalies.duplicate_versions(witness) and len(witness.events) <= 3
    config = replace(witness.config, dedupe_before_join={"payments": None})
    anomalies.dedupe_matches_batch(replace(witness, config=config))


def test_flink_40681_is_found_under_flink_and_gone_under_correct() -> None:
    witness = anomalies.find_flink_40681(seed=2026)
    print(f"\n--- shrunk FLINK-40681 example ---\n{anomalies.describe_example(witness)}")
    assert anomalies.missing_padding(witness) and len(witness.events) <= 6  # a minimal witness has 4
    fixed = replace(witness, config=replace(witness.config, semantics="correct"))
    assert not anomalies.missing_padding(fixed)
    anomalies.correct_matches_batch(fixed)


def test_per_key_disorder_is_found_and_strict_mode_guards_it() -> None:
    source, arrived = anomalies.find_disorder_divergence(seed=2026)
    print(f"\n--- shrunk disorder example ---\nsource:\n{anomalies.describe_example(source)}\n"
          f"arrived:\n{anomalies.describe_example(arrived)}")
    assert anomalies.disorder_diverges(source, arrived) and not anomalies.disorder_diverges(source, source)
    anomalies.disorder_guarded(source, arrived)


def test_a_search_that_finds_nothing_is_a_property_failure() -> None:
    from hypothesis import strategies as st

    with pytest.raises(PropertyFailure, match="not reproduced: no example among 5"):
        anomalies.search(st.just(_load("mapstate_order_arrival")), lambda s: bool(anomalies.order_violations(s)),
                         seed=1, budget=5, prop="p", what="disorder", fallback=lambda s: s)


# ---------------------------------------------------------------- the campaign's verdicts


def test_every_anomaly_property_has_a_verdict() -> None:
    specs = select("anomalies")
    assert {s.verdict for s in specs} == {"reproduced", "fixed", "guarded"}
    assert sum(s.verdict == "reproduced" for s in specs) == 4


def test_converge_run_shows_the_verdict_column(capsys, tmp_path: Path) -> None:
    code = main(["run", "--family", "anomalies", "--property", "emitted_in_arrival_order", "--examples", "5",
                 "--seed", "3", "--no-reports"])
    out = capsys.readouterr().out
    assert code == 0
    header = next(line for line in out.splitlines() if line.startswith("family"))
    assert header.split()[-1] == "verdict"
    assert any(line.startswith("anomalies") and line.rstrip().endswith("fixed") for line in out.splitlines())
    spec = select("anomalies", "emitted_in_arrival_order")[0]

    class Failed:
        ok = False

    assert verdict_of(spec, Failed()) == "NOT fixed"
    assert verdict_of(select("regular")[0], Failed()) == ""


def test_scenario_files_say_why(tmp_path: Path) -> None:
    for path in sorted(FILES.glob("*.json")):
        data = json.loads(path.read_text())
        assert data["description"].strip(), path.name
        assert all("expect" in e for e in data["events"]), f"{path.name}: every event has exact expected emits"
