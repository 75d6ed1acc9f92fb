"""The two measurements of Flink's behaviour are `converge bench` entries (the default suite: no JVM here; the
live runs are `converge bench --only flink_arrival` and `--only flink_map_order`, docs/flink.md, docs/anomalies.md)."""

from __future__ import annotations

import pytest

from converge.cli import bench
from converge.cli.benches import flink_arrival, flink_map_order
from converge.engine.model.errors import UsageError
from converge.engine.model.scenario import ChangeEvent
from converge.engine.model.scenario_json import scenario_from_dict
from converge.reports.options import BenchConfig


def _not_installed(*_: object, **__: object) -> list[str]:
    raise UsageError("no Flink environment is installed: converge systems install flink")


@pytest.mark.parametrize("name", ["flink_arrival", "flink_map_order"])
def test_each_is_a_benchmark_with_its_table(name: str) -> None:
    assert name in bench.BENCHES and name in bench.DETAIL_TABLES


def test_without_flink_both_are_skipped_with_the_reason(monkeypatch) -> None:
    monkeypatch.setattr(flink_arrival.environment, "adapter_command", _not_installed)
    monkeypatch.setattr(flink_map_order, "open_system", _not_installed)
    doc = bench.run_benchmarks(BenchConfig(only=("flink_arrival", "flink_map_order"), out=None))
    reason = "no Flink environment is installed: converge systems install flink"
    assert doc["results"] == {"flink_arrival": {"skipped": reason}, "flink_map_order": {"skipped": reason}}
    assert reason in bench.DETAIL_TABLES["flink_arrival"](doc["results"]["flink_arrival"])


def test_the_arrival_cases_are_scenarios_whose_changelogs_are_their_events() -> None:
    """What the adapter is sent: a scenario it could read, and per input the changes of its events in order."""
    for case in flink_arrival.cases():
        scenario = scenario_from_dict(case["scenario"])
        for name in scenario.join.inputs:
            changes = [[e.kind, *e.row] for e in scenario.events if isinstance(e, ChangeEvent) and e.input == name]
            assert case["changelogs"][name] == changes, (case["id"], name)


def test_the_tables_have_a_row_per_arrival_and_case_and_per_backend() -> None:
    one = {"distinct_changelogs": 1, "counts": [2], "distinct_finals": 1, "median_s": 0.5, "max_s": 0.6,
           "batch_s": 1.0, "batch_distinct_changelogs": 1, "batch_distinct_multisets": 1, "batch_copies_same_twice": 3,
           "load": [0.0, 0.0, 0.0]}
    arrival = {"runs": 2, "batch": 3, "arrivals": {a: {"hello_s": 1.0, "load": [0.0] * 3, "cases": {"left": one}}
                                                   for a in flink_arrival.ARRIVALS}}
    table = flink_arrival.format_rows(arrival).splitlines()
    assert len([line for line in table if "left" in line]) == 2 and "1 of 2" in table[-1] and "3 of 3" in table[-1]
    order = {"system": "flink", "cases_per_row": 2, "seed": 1,
             "rows": {"inner_left rocksdb": {"cases": 2, "ordered cases": 1, "mismatches": ["event 1: .."],
                                             "other_sequences": ["event 1: .."]},
                      "semi_anti hashmap": {"cases": 2}}}
    table = flink_map_order.format_rows(order).splitlines()
    assert "ordered cases" in table[0] and "mismatches" not in table[0] and "other_sequences" not in table[0]
    assert [line.split()[:2] for line in table[-2:]] == [["inner_left", "rocksdb"], ["semi_anti", "hashmap"]]


@pytest.mark.parametrize(("system", "only", "message"), [
    ("pathway", ("flink_map_order",), "flink_map_order measures Flink: flink or flink:VERSION"),
    ("flink:2.1.0", ("inner_join_unique_keys",), "add --only flink_map_order"),
    ("flink:2.1.0", None, "add --only flink_map_order"),
    ("flink:1.18.0", ("flink_map_order",), "converge models Flink 1.19, 1.20, 2.0, 2.1, 2.2, 2.3"),
])
def test_a_system_the_measurement_cannot_take_is_refused_before_any_benchmark_runs(system, only, message) -> None:
    with pytest.raises(UsageError, match=message):
        bench.run_benchmarks(BenchConfig(system=system, only=only, out=None))


def test_a_named_flink_that_is_not_installed_is_an_error_not_a_skip(monkeypatch) -> None:
    """Without --system a machine without Flink skips the measurement; a version asked for must be there."""
    monkeypatch.setattr(flink_map_order, "open_system", _not_installed)
    with pytest.raises(UsageError, match="no Flink environment is installed"):
        bench.run_benchmarks(BenchConfig(system="flink:2.2.0", only=("flink_map_order",), out=None))


@pytest.mark.parametrize(("version", "modelled"), [("1.20.1", "1.20"), ("2.1.0", "2.1"), ("2.3.0", "2.3")])
def test_the_model_follows_the_measured_release(version, modelled) -> None:
    """The outer joins' retract/pad interleaving is modelled per release (config.flink_version)."""
    assert flink_map_order.model_version(version) == modelled


def test_the_bench_command_takes_the_system_and_refuses_it_with_spark(tmp_path, capsys) -> None:
    from converge.cli.main import main

    assert main(["bench", "--runtime", "spark", "--system", "flink:2.1.0", "--only", "flink_map_order",
                 "--out", str(tmp_path / "b.json")]) == 2
    assert "--system applies to --only flink_map_order on the local runtime, not --runtime spark" in (
        capsys.readouterr().err)
