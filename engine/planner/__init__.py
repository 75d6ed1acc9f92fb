"""From a scenario's join chain to a plan of operators.

A plan is a tree of nodes: each node is one keyed operator whose inputs are
scenario inputs (possibly behind a ChangelogNormalize node) or other nodes.
Runtimes walk this tree; operators never see it. `base` holds what every
planner shares; `binary`, `interval` and `multi` are the three planners.
"""

from __future__ import annotations

from converge.engine.model.errors import UnsupportedError
from converge.engine.model.scenario import Scenario
from converge.engine.planner.base import Plan, PlanNode
from converge.engine.planner.binary import plan_binary_chain
from converge.engine.planner.interval import plan_interval_join
from converge.engine.planner.multi import plan_multi_join

__all__ = ["Plan", "PlanNode", "plan", "plan_binary_chain", "plan_interval_join", "plan_multi_join"]


def plan(scenario: Scenario) -> Plan:
    """The plan the scenario asks for: join.interval and config.multi_join decide."""
    if scenario.has_views():
        raise UnsupportedError("this runtime plans the join only: a scenario with a projection, filter, SELECT "
                               "list or WHERE runs on the local runtime (engine/calc.py lowers it to its core)")
    if scenario.join.interval is not None:
        return plan_interval_join(scenario)
    if scenario.config.multi_join == "on":
        return plan_multi_join(scenario)
    return plan_binary_chain(scenario)
