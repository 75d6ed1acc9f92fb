"""`converge explain FILE`: the plan the reference engine chooses for a scenario file."""

from __future__ import annotations

import argparse
from pathlib import Path

from converge.cli.arguments import Subparsers
from converge.engine.calc import core_scenario
from converge.engine.model.errors import UsageError
from converge.engine.planner import plan
from converge.properties.replay import load_scenario_file


def register(subparsers: Subparsers) -> None:
    """The `explain` parser: one scenario file."""
    e = subparsers.add_parser("explain", help="print the plan chosen for a scenario")
    e.add_argument("scenario")
    e.set_defaults(handler=cmd_explain)


def cmd_explain(args: argparse.Namespace) -> int:
    """Print the plan, one operator a line."""
    path = Path(args.scenario)
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    scenario = load_scenario_file(path)
    if scenario.has_views():  # the Calcs around the join, then the join's own plan (engine/calc.py)
        for spec in scenario.chain:
            if spec.has_calc:
                print(f"Calc in front of {spec.name}: project {list(spec.project or ())}; where {spec.where}")
        if scenario.join.has_calc:
            print(f"Calc after the join: select {list(scenario.join.select or ())}; where {scenario.join.where}")
        scenario = core_scenario(scenario)
    print(plan(scenario).explain())
    return 0
