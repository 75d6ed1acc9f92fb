"""Flink's default plan for a join chain: binary joins, left-deep, each keyed by its own join key."""

from __future__ import annotations

from converge.engine.model.errors import BadInputError, InternalError
from converge.engine.model.scenario import Scenario
from converge.engine.pipeline_options import join_inputs
from converge.engine.planner.base import (
    Part,
    Plan,
    PlanNode,
    binary_join_operator,
    build_binary_join,
    join_description,
    link_parents,
    right_node,
    source_node,
)


def plan_binary_chain(scenario: Scenario) -> Plan:
    """Binary joins, left-deep, each keyed by its own join key (Flink's default plan)."""
    if scenario.join.interval is not None:
        raise InternalError("interval joins are planned by the interval-join planner")
    chain = join_inputs(scenario)  # engine/pipeline_options.py: dedupe_before_join, unique_key_lost
    part = Part((chain[0],))
    current: PlanNode | str = source_node(scenario, chain[0])
    entry: dict[str, tuple[PlanNode, int]] = {}
    for i, (right, jtype, cond) in enumerate(zip(chain[1:], scenario.join.types, scenario.join.conditions, strict=False)):
        try:
            spec = build_binary_join(scenario, part, right, jtype, cond)
        except BadInputError as exc:
            raise BadInputError(f"join.conditions[{i}]: {exc}") from None
        op = binary_join_operator(scenario, spec)
        node = PlanNode(f"join[{i}]", op, [current, right_node(scenario, part, right, jtype, cond)],
                        describe=join_description(spec, op))
        current = node
        if jtype not in ("semi", "anti"):
            part = Part(part.inputs + (right,))
    assert isinstance(current, PlanNode)
    link_parents(current, entry)
    cols = tuple(f"{s.name}.{c}" for s in part.inputs for c in s.column_names)
    return Plan(current, scenario, entry, cols)
