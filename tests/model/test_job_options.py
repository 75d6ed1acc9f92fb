"""The job options of a scenario's config (how a real system runs the join): read, written back, refused with the path."""

from __future__ import annotations

import copy

import pytest

from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import JOB_OPTION_KEYS, Scenario
from converge.engine.model.scenario_json import scenario_from_dict, scenario_to_dict
from converge.engine.model.system import Capabilities, applicability, settings_used

BASE = {"name": "job", "inputs": [{"name": "a", "columns": [["k", "BIGINT"], ["x", "VARCHAR"]]},
                                  {"name": "b", "columns": [["k", "BIGINT"], ["y", "VARCHAR"]]},
                                  {"name": "c", "columns": [["k", "BIGINT"]]}],
        "join": {"inputs": ["a", "b", "c"], "types": ["left", "semi"], "conditions": ["a.k = b.k", "a.k = c.k"]},
        "events": []}


def scenario(**config) -> Scenario:
    obj = copy.deepcopy(BASE)
    obj["config"] = config
    return scenario_from_dict(obj)


def test_every_option_is_read_and_written_back():
    s = scenario(state_backend="rocksdb", parallelism=2, sink="upsert", sink_key=["a.k", "b.y"],
                 upsert_materialize="none", restart_after=3)
    written = scenario_to_dict(s)["config"]
    assert {k: written[k] for k in JOB_OPTION_KEYS} == {
        "state_backend": "rocksdb", "parallelism": 2, "sink": "upsert", "sink_key": ["a.k", "b.y"],
        "upsert_materialize": "none", "restart_after": 3}
    assert scenario_from_dict({**BASE, "config": written}) == s
    assert settings_used(s) == ("state_backend", "parallelism", "upsert_sink", "restart")


def test_defaults_are_not_written():
    assert not set(JOB_OPTION_KEYS) & set(scenario_to_dict(scenario())["config"])
    assert settings_used(scenario()) == ()


@pytest.mark.parametrize("config, path, words", [
    ({"state_backend": "rocks"}, "config.state_backend", "rocks"),
    ({"parallelism": 0}, "config.parallelism", "0"),
    ({"parallelism": 65}, "config.parallelism", "65"),
    ({"sink": "append"}, "config.sink", "append"),
    ({"sink": "upsert"}, "config.sink_key", "needs its primary key"),
    ({"sink_key": ["a.k"]}, "config.sink_key", "this sink is retract"),
    ({"sink": "upsert", "sink_key": ["k"]}, "config.sink_key", "input.column"),
    ({"sink": "upsert", "sink_key": ["a.k", "a.k"]}, "config.sink_key", "distinct"),
    ({"sink": "upsert", "sink_key": ["c.k"]}, "config.sink_key[0]", "not an output column"),
    ({"sink": "upsert", "sink_key": ["b.z"]}, "config.sink_key[0]", "not an output column"),
    ({"upsert_materialize": "force"}, "config.upsert_materialize", "upsert sink only"),
    ({"restart_after": -1}, "config.restart_after", "-1"),
    ({"restart_after": True}, "config.restart_after", "True"),
])
def test_a_bad_option_is_refused_with_its_path(config, path, words):
    with pytest.raises(BadInputError) as info:
        scenario(**config)
    assert info.value.path == path
    assert words in str(info.value)


def test_a_system_that_does_not_declare_an_option_is_never_sent_it():
    caps = Capabilities(("regular", "multiway"), ("inner", "left", "semi"), ("retract",), ("BIGINT", "VARCHAR"),
                        ("event_time",), False, "final", False, 10, ("mini_batch",))
    assert applicability(scenario(), caps, "engine x") is None
    reason = applicability(scenario(parallelism=2), caps, "engine x")
    assert reason == "engine x does not honour config.parallelism (the job's parallelism): it would ignore the setting"
