"""A case as the adapter protocol sends it: the scenario, and each input's changelog in its own order (v1) or the
join as data (v2, engine/condition_tree.py).

A real engine with one source per input cannot be told how the inputs
interleave; `changelogs` is what it can honour. The interleaving, watermarks
and processing-time events stay in the scenario, for engines that can.
"""

from __future__ import annotations

import json
from typing import Any

from converge.engine.model.errors import InternalError
from converge.engine.model.scenario import ChangeEvent, Config, Scenario
from converge.engine.model.scenario_json import scenario_to_dict

# Options that steer converge's own engine model (its state layout, planner and the anomalies it injects), not
# the join: a real engine has its own and ignores them (docs/flink.md), so a case that sets one is never sent as
# a divergence check: the reference engine would be modelling something the system is not told about.
ENGINE_MODEL_OPTIONS = ("map_state_order", "semantics", "unique_key_lost", "per_key_order", "flink_version",
                        "min_cleanup_interval_ms", "changelog_normalize", "multi_join_max_tables",
                        "multi_join_min_tables", "multi_join_rewrite_right")
_DEFAULTS = Config()

# What a case's scenario never carries: the answer (expectations) and converge's own provenance (meta).
_LEFT_OUT = ("expect_final", "expect_changelog", "meta")


def engine_model_settings(scenario: Scenario) -> dict[str, Any]:
    """The ENGINE_MODEL_OPTIONS the scenario sets away from their defaults (empty: a case any system can take)."""
    return {key: getattr(scenario.config, key) for key in ENGINE_MODEL_OPTIONS
            if getattr(scenario.config, key) != getattr(_DEFAULTS, key)}


def changelogs_of(scenario: Scenario) -> dict[str, list[list[Any]]]:
    """Every declared input's changes, in that input's own order, as [kind, value, ...]."""
    out: dict[str, list[list[Any]]] = {spec.name: [] for spec in scenario.inputs}
    for event in scenario.events:
        if isinstance(event, ChangeEvent):
            out[event.input].append([event.kind, *event.row])
    return out


def scenario_for_case(scenario: Scenario) -> dict[str, Any]:
    """The scenario object of a CASE: the scenario file format without expectations and meta."""
    obj = scenario_to_dict(scenario)
    for key in _LEFT_OUT:
        obj.pop(key, None)
    for event in obj["events"]:
        event.pop("expect", None)
    return obj


def case_to_json(case_id: str, scenario: Scenario, version: int = 1, *,
                 plan: dict[str, Any] | None = None) -> dict[str, Any]:
    """The CASE object of a run request (docs/adapter-protocol.md) in protocol `version`.

    Version 1 sends each input's changelog beside the scenario (a copy of its change events); version 2 drops
    that copy, so `scenario.events` is the one source of the changes, and adds the join as data: `plan`, which
    the caller computes (engine/condition_tree.py `condition_plan`: the engine's parse, a layer above this one;
    converge/systems/adapter/protocol.py `case_object` does both)."""
    if version == 1 and plan is None:
        return {"id": case_id, "scenario": scenario_for_case(scenario), "changelogs": changelogs_of(scenario)}
    if version == 2 and plan is not None:
        return {"id": case_id, "scenario": scenario_for_case(scenario), "plan": plan}
    raise InternalError(f"a version {version!r} CASE {'with' if plan is not None else 'without'} a plan (a v2 CASE "
                        f"needs engine/condition_tree.py's plan: use converge/systems/adapter/protocol.py case_object)")


def shape_key(scenario: Scenario) -> str:
    """What one batch of cases shares: inputs, join and config (everything but the events and the name)."""
    obj = scenario_for_case(scenario)
    return json.dumps({k: obj[k] for k in ("inputs", "join", "config")}, sort_keys=True)
