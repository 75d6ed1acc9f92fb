"""The MapState order on real Flink: the state backend option, the later-before-earlier anomaly on RocksDB, the
dedupe that removes it, the hashmap backend's HashMap order, and the order property's campaign (--run-slow).

Every expected changelog here is worked out by hand from the backend's rule (docs/anomalies.md, "On real
Flink"): RocksDB iterates the byte order of the serialized rows (5 = 05 00 .. before 300 = 2C 01 ..); the hashmap
backend a java.util.HashMap (buckets of BinaryRowData.hashCode, the Java values in
tests/engine/test_javahash.py). The order needs the adapter's changelog output with paced arrival,
which the session's adapter answers.
"""

from __future__ import annotations

import json

import pytest

from converge.cli.benches.flink_map_order import (
    BATCH,
    FAMILIES,
    GENERATED,
    MULTIWAY_SINCE,
    SEED,
    draw_cases,
    measure,
    model_version,
)
from converge.engine.model.changelog import Change
from converge.engine.model.scenario import (
    ChangeEvent,
    Config,
    InputSpec,
    IntervalSpec,
    JoinSpec,
    Scenario,
    WatermarkEvent,
)
from converge.engine.model.scenario_json import scenario_from_dict
from converge.generators.map_order import BACKENDS, END_OF_INPUT
from converge.properties.campaign import run_property
from converge.properties.systems.order_model import model_per_event
from converge.properties.systems.specs import SYSTEM_PROPERTIES, bind
from converge.systems.adapter.client import AdapterSystem
from tests.support.paths import SCENARIOS

pytestmark = [pytest.mark.flink, pytest.mark.xdist_group("flink")]



@pytest.fixture(scope="module")
def ordered_flink(flink_system: AdapterSystem) -> AdapterSystem:
    caps = flink_system.capabilities
    assert caps.output == "changelog" and caps.deterministic_order, caps
    return flink_system


def _load(name: str, folder: str = "systems") -> Scenario:
    return scenario_from_dict(json.loads((SCENARIOS / folder / name).read_text()))


def _run(system: AdapterSystem, scenario: Scenario) -> list[Change]:
    [result] = system.run_cases([scenario])
    assert result.status == "ok", result.message  # an error here includes a job on the wrong backend
    assert result.changelog is not None
    return list(result.changelog)


def _c(kind: str, *row: object) -> Change:
    return Change(kind, tuple(row))


def test_rocksdb_emits_the_later_payment_before_the_earlier(ordered_flink: AdapterSystem) -> None:
    """Default suite: the state_backend option reaches Flink (the adapter fails a job that ran on another
    backend) and the source documents' anomaly shows: 5 arrived after 300 and comes first, every time."""
    scenario = _load("flink_later_before_earlier_rocksdb.json")
    assert scenario.config.state_backend == "rocksdb"
    assert _run(ordered_flink, scenario) == [
        _c("+I", 1, "new", 1, 5), _c("+I", 1, "new", 1, 300),
        _c("-U", 1, "new", 1, 5), _c("-U", 1, "new", 1, 300),
        _c("+U", 1, "paid", 1, 5), _c("+U", 1, "paid", 1, 300)]


@pytest.mark.slow
def test_dedupe_before_the_join_leaves_only_the_last_payment(ordered_flink: AdapterSystem) -> None:
    scenario = _load("flink_later_before_earlier_dedupe.json")
    assert _run(ordered_flink, scenario) == [_c("+I", 1, "new", 1, 5), _c("-U", 1, "new", 1, 5),
                                             _c("+U", 1, "paid", 1, 5)]


@pytest.mark.slow
def test_the_hashmap_backend_follows_the_hashmap_buckets(ordered_flink: AdapterSystem) -> None:
    # stored rows (case id 0, 1, amount): 300 in bucket 3, 5 in bucket 15: 300 first (here arrival order)
    assert _run(ordered_flink, _load("flink_later_before_earlier_hashmap.json")) == [
        _c("+I", 1, "new", 1, 300), _c("+I", 1, "new", 1, 5),
        _c("-U", 1, "new", 1, 300), _c("-U", 1, "new", 1, 5),
        _c("+U", 1, "paid", 1, 300), _c("+U", 1, "paid", 1, 5)]


@pytest.mark.slow
@pytest.mark.parametrize(("backend", "order"), [("rocksdb", (256, 1, 2)),    # byte order: 00 01 .., 01 .., 02 ..
                                                 ("hashmap", (256, 2, 1))])  # buckets 0, 1, 2
def test_an_order_update_re_emits_the_items_in_the_backends_order(ordered_flink: AdapterSystem, backend: str,
                                                                  order: tuple[int, ...]) -> None:
    base = json.loads((SCENARIOS / "anomalies" / "mapstate_order_rocksdb.json").read_text())
    base["config"] = {"state_backend": backend}
    base.pop("expect_final", None)
    for event in base["events"]:
        event.pop("expect", None)
    got = _run(ordered_flink, scenario_from_dict(base))
    assert [c.row[3] for c in got if c.kind == "+I"] == [2, 256, 1]          # arrival order, one at a time
    assert tuple(c.row[3] for c in got if c.kind == "-U") == order
    assert tuple(c.row[3] for c in got if c.kind == "+U") == order


@pytest.mark.slow
def test_the_order_property_holds_on_flink_for_both_backends(ordered_flink: AdapterSystem) -> None:
    prop = next(p for p in SYSTEM_PROPERTIES if p.name == "emission_order_matches_backend")
    result = run_property(bind(prop, ordered_flink, batch=10), max_examples=30, seed=3, shrink=False)
    assert result.ok, result.failure or result.error
    assert result.exercised.compared >= 10, result.exercised


def test_converges_hashmap_model_emits_what_flink_emits_on_the_hashmap_backend(ordered_flink: AdapterSystem) -> None:
    """Default suite: converge's `map_state_order: hashmap`, run with the adapter's case id hashed in front of
    every stored row, gives Flink's own changelog, order included (300 before 5: buckets 3 and 15)."""
    scenario = _load("flink_later_before_earlier_hashmap.json")
    got = _run(ordered_flink, scenario)
    assert got == [c for piece in model_per_event(scenario, 0) for c in piece]
    assert [c.row[3] for c in got if c.kind == "+U"] == [300, 5]


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_ordered_event_agrees_with_the_model(ordered_flink: AdapterSystem, family: str) -> None:
    """The agreement measurement (converge bench --only flink_map_order) on 12 cases per backend: every event
    that visits two or more stored rows visits them in converge's order for the backend."""
    for backend in BACKENDS:
        counts = measure(ordered_flink, draw_cases(backend, 12, SEED, FAMILIES[family]), BATCH)
        assert counts.get("ordered events", 0) > 0, (backend, counts)
        assert counts["events agreeing"] == counts["ordered events"], (backend, counts)


@pytest.mark.slow
def test_every_ordered_multiway_event_agrees_with_the_model(ordered_flink: AdapterSystem) -> None:
    """The measurement's multi-way family on 12 cases per backend: every event's outputs come in the model's exact
    sequence (on RocksDB from 2.1 on; on the heap backend from 2.3 on, where the state key's hash is a
    BinaryRowData's: docs/anomalies.md, "The multi-way join's state, per release")."""
    release = tuple(int(p) for p in model_version(ordered_flink.version).split("."))
    if release < MULTIWAY_SINCE:
        pytest.skip(f"Flink {ordered_flink.version} has no multi-way join operator")
    for backend in BACKENDS if release >= (2, 3) else ("rocksdb",):
        counts = measure(ordered_flink, draw_cases(backend, 12, SEED, multiway=True), BATCH)
        assert counts.get("ordered events", 0) > 0, (backend, counts)
        assert counts["events agreeing"] == counts["ordered events"], (backend, counts)


def test_the_interval_joins_end_pads_each_cache_in_its_backends_order(ordered_flink: AdapterSystem) -> None:
    """Default suite, one small job per backend: three left rows at times 17, 1 and 16 that never join (a.t BETWEEN
    b.t AND b.t + 16, the right row at 1000) are padded when the input ends, in the cache's order: RocksDB the
    Long keys' big-endian bytes (1, 16, 17), the HashMap its buckets (Long.hashCode is the time: 16 in bucket 0,
    17 then 1 in bucket 1); the right row's padding last (its cache's timer, 1017, fires after the left one's, 18).
    The same order as tests/properties/systems/test_order_families.py works out for converge's model."""
    a = InputSpec("a", (("k", "BIGINT"), ("t", "BIGINT"), ("x", "BIGINT")), None, "insert_only", "t")
    b = InputSpec("b", (("k", "BIGINT"), ("t", "BIGINT"), ("y", "BIGINT")), None, "insert_only", "t")
    events = (ChangeEvent("a", "+I", (1, 17, 0)), ChangeEvent("a", "+I", (1, 1, 1)),
              ChangeEvent("a", "+I", (1, 16, 2)), ChangeEvent("b", "+I", (1, 1000, 0)),
              WatermarkEvent("a", END_OF_INPUT), WatermarkEvent("b", END_OF_INPUT))
    join = JoinSpec(("a", "b"), ("full",), ("a.k = b.k",), IntervalSpec("a.t", "b.t", 0, 16, "event"))
    for backend, order in (("rocksdb", (1, 16, 17)), ("hashmap", (16, 17, 1))):
        got = _run(ordered_flink, Scenario("interval end", (a, b), join, Config(state_backend=backend), events))
        padded = {1: (1, 1, 1), 16: (1, 16, 2), 17: (1, 17, 0)}
        assert got == [*(_c("+I", *padded[t], None, None, None) for t in order),
                       _c("+I", None, None, None, 1, 1000, 0)], backend


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(GENERATED))
def test_every_mini_batch_and_interval_event_comes_in_the_models_sequence(ordered_flink: AdapterSystem,
                                                                          family: str) -> None:
    """The measurement's mini-batch and interval families on 12 cases per backend: every event of two or more rows
    comes in the exact sequence of converge's model (measured on 1.20.1 to 2.3.0: docs/anomalies.md)."""
    for backend in BACKENDS:
        counts = measure(ordered_flink, draw_cases(backend, 12, SEED, family=family), BATCH)
        assert counts.get("ordered events", 0) > 0, (backend, counts)
        assert counts["events agreeing"] == counts["ordered events"], (backend, counts)
        assert "not split per event" not in counts, (backend, counts)
