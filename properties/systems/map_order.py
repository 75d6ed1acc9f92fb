"""The MapState order on a real system: for one record that meets several stored rows, the order of its outputs.

Flink's regular join keeps a side without a usable unique key in a MapState and visits it in the state
backend's own order (docs/anomalies.md, "On real Flink"). Measured on Flink 1.19-2.3 with the adapter's
paced arrival (every case's changelog repeats from run to run), and modelled by converge's engine:

* `rocksdb` (EmbeddedRocksDBStateBackend): the byte order of the serialized map keys, converge's
  `map_state_order: rocksdb` (engine/keycodec.py). The adapter's case id, the first column of every
  stored row, is one value within a join key and does not change that order.
* `hashmap` (HashMapStateBackend): a `java.util.HashMap` per key, converge's `map_state_order: hashmap`
  (engine/java_hashmap.py, engine/state.py): buckets in index order of BinaryRowData.hashCode, the capacity
  growing with the map, insertion order inside a bucket. The case id does change this order: Flink hashes
  the row as the adapter stores it, with the case id (an INTEGER) in front, so the engine runs with that
  column as its `hash_prefix` (order_model.py, `case_prefix`).

The check runs converge's engine with the backend's order for the per-event outputs, cuts the system's
changelog into the same per-event pieces, and compares the order of every piece of two or more rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hypothesis import strategies as st

from converge.engine.model.scenario import Scenario
from converge.engine.model.system import Capabilities, CaseResult, System
from converge.generators.map_order import map_order_scenarios
from converge.properties import exercise
from converge.properties.divergence import require
from converge.properties.systems.answers import require_applicable, system_diverged
from converge.properties.systems.case_id import adapter_case_ids
from converge.properties.systems.checks import Judged, Known
from converge.properties.systems.order_model import (
    compare_orders,
    model_per_event,
    show,
    stored_visits,
)

__all__ = ["adapter_case_ids", "compare_orders", "draws", "emission_order_matches_model", "model_per_event",
           "stored_visits", "why_not_ordered"]


def why_not_ordered(caps: Capabilities, name: str) -> str | None:
    """Why the system's answers carry no emission order to compare (None: they do)."""
    if caps.output != "changelog":
        return f"{name} answers the final table only (capabilities.output = {caps.output!r}), no order"
    if not caps.deterministic_order:
        return f"{name}'s emission order is not deterministic (capabilities.deterministic_order false)"
    return None


def draws(caps: Capabilities, name: str) -> tuple[Callable[[], st.SearchStrategy[Scenario]], str | None]:
    """The property's templates (generators/map_order.py) and why it cannot run on the system (None: it can)."""
    reason = why_not_ordered(caps, name)
    if reason is None and name.startswith("reference"):
        reason = (f"{name} orders its MapState by config.map_state_order, not by config.state_backend: it makes no "
                  "claim about a backend's order")
    if reason is None and not {"inner", "left"} <= set(caps.join_types):
        reason = f"{name} does not run both INNER and LEFT joins"
    if reason is None and not {"insert_only", "retract"} <= set(caps.changelog_modes):
        reason = f"{name} does not take both insert_only and retract inputs"
    if reason is None and not caps.honours("state_backend"):
        reason = f"{caps.why_ignored('state_backend', name)}, so the property would not exercise it"
    return map_order_scenarios, reason


def emission_order_matches_model(system: System, cases: Sequence[Scenario], *, prop: str = "map_state_order",
                                 system_spec: str | None = None, known: Known | None = None) -> None:
    """For every event that emits two or more rows, the system emits them in the order its state backend's
    rule predicts (a case without such an event compares nothing and is counted as skipped)."""
    reason = why_not_ordered(system.capabilities, system.name)
    require(reason is None, prop, reason or "")
    for scenario in cases:
        require_applicable(prop, system, scenario)
    results = system.run_cases(list(cases))
    ids = adapter_case_ids(cases, results, system.capabilities.max_batch)
    for scenario, result, case_id in zip(cases, results, ids, strict=False):
        if result.status == "unsupported":
            exercise.unsupported(result.message or f"{system.name} gave no reason")
            continue
        with Judged(known) as case:
            _judge(prop, system, scenario, result, case_id, system_spec, case)


def _judge(prop: str, system: System, scenario: Scenario, result: CaseResult, case_id: int,
           system_spec: str | None, case: Judged) -> None:
    backend = scenario.config.state_backend or "hashmap"
    if result.status == "error" or result.changelog is None:
        system_diverged(prop, system, scenario, f"{system.name} gave no changelog: {result.message}",
                        f"error: {result.message}", None, system_spec=system_spec)
    report = compare_orders(result.changelog, model_per_event(scenario, case_id), stored_visits(scenario))
    if report.unsplit is not None:
        case.compared()
        system_diverged(prop, system, scenario, f"{system.name}'s changelog does not follow the reference "
                        f"engine's per-event outputs ({backend}): {report.unsplit}",
                        show(result.changelog), None, system_spec=system_spec)
    if report.ordered == 0:
        exercise.skipped("no event visits two or more stored rows: no order to compare")
        return
    case.compared()
    if report.mismatch is not None:
        system_diverged(prop, system, scenario, f"{system.name} ({backend} state backend) visits one record's "
                        f"stored matches out of the backend's order: {report.mismatch}",
                        show(result.changelog), None, system_spec=system_spec)
