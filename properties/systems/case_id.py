"""A scenario as the Flink adapter runs it: with its case id column, so the engine hashes the keys Flink hashes.

The Flink adapter runs the cases of one shape in one job and tells them apart by a case id (an INT) in
front of every input row, every primary key and every join condition (converge/systems/flink/program/
case_plan.py: `t0cid = t1cid AND (condition)`). Where Flink's output order follows Java hash codes of the
join key, unique key or row (the mini-batch join's bundles, engine/operators/bundle_order.py), that id is
part of what is hashed, so the engine predicts Flink's order only on the same rows: `with_case_id` adds
the column (first, as the adapter does) and the equality (first conjunct, so the join key is the
adapter's: case id, then the scenario's key columns), and `without_case_id` takes it out of the outputs.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from converge.engine.model.changelog import Change
from converge.engine.model.scenario import ChangeEvent, InputSpec, Scenario
from converge.engine.model.system import CaseResult
from converge.engine.model.system_cases import scenario_for_case


def case_id_column(scenario: Scenario) -> str:
    """A column name no input of the scenario has."""
    taken = {c for spec in scenario.inputs for c, _ in spec.columns}
    name = "cid"
    while name in taken:
        name += "_"
    return name


def with_case_id(scenario: Scenario, case_id: int) -> Scenario | None:
    """The binary join `scenario` with the adapter's case id column in front of every input (None for a chain of
    three or more inputs, whose padded case ids the adapter COALESCEs: not modelled here)."""
    if len(scenario.join.inputs) != 2:
        return None
    name = case_id_column(scenario)

    def widened(spec: InputSpec) -> InputSpec:
        key = None if spec.unique_key is None else (name, *spec.unique_key)
        return replace(spec, columns=((name, "INTEGER"), *spec.columns), unique_key=key)

    left, right = scenario.join.inputs
    condition = f"{left}.{name} = {right}.{name} AND ({scenario.join.conditions[0]})"
    events = tuple(replace(e, row=(case_id, *e.row), expect=None) if isinstance(e, ChangeEvent)
                   else replace(e, expect=None) for e in scenario.events)
    return replace(scenario, inputs=tuple(widened(s) for s in scenario.inputs),
                   join=replace(scenario.join, conditions=(condition,)), events=events,
                   expect_final=None, expect_changelog=None)


def without_case_id(scenario: Scenario, changes: Sequence[Change]) -> list[Change]:
    """Outputs of `with_case_id(scenario, ...)` with the two case id columns taken out (a binary join's output is
    the left input's columns, then the right's: the ids are at 0 and after the left's columns)."""
    width = len(scenario.chain[0].columns)
    return [Change(c.kind, c.row[1:width + 1] + c.row[width + 2:]) for c in changes]


def adapter_shape(scenario: Scenario) -> str:
    """What decides which of a request's cases the Flink adapter runs as one job (case_plan.py's shape key, which
    renames inputs and columns by position): the scenario's inputs, join and config with every name replaced by
    its position. Column references in conditions are replaced where they are qualified (`input.column`, as the
    generators write them)."""
    obj = scenario_for_case(scenario)
    chain = list(scenario.join.inputs)
    specs = {s.name: s for s in scenario.inputs}
    conditions = []
    for text in obj["join"]["conditions"]:
        for i, name in enumerate(chain):
            for j, (column, _) in enumerate(specs[name].columns):
                text = re.sub(rf"\b{re.escape(name)}\.{re.escape(column)}\b", f"t{i}c{j}", text)
        conditions.append(text)
    inputs = []
    for n in chain:
        spec = specs[n]
        time = spec.time_column
        inputs.append([[t for _, t in spec.columns], [spec.index_of(c) for c in spec.unique_key or ()],
                       spec.changelog_mode, None if time is None else spec.index_of(time)])
    config = {k: v for k, v in obj["config"].items() if k not in ("sink_key", "dedupe_before_join")}
    return json.dumps([inputs, obj["join"]["types"], conditions, obj["join"]["interval"], config], sort_keys=True)


def adapter_case_ids(cases: Sequence[Scenario], results: Sequence[CaseResult], max_batch: int) -> list[int]:
    """The case id the Flink adapter gave each case: the client sends `max_batch` cases a request, and the adapter
    numbers the cases it planned (not the unsupported ones) of one job shape from 0, in request order
    (converge/systems/flink/program/adapter.py `run`, session.py)."""
    ids: list[int] = []
    for start in range(0, len(cases), max(1, max_batch)):
        counters: Counter = Counter()
        for scenario, result in zip(cases[start:start + max_batch], results[start:start + max_batch], strict=False):
            shape = adapter_shape(scenario)
            ids.append(counters[shape])
            if result.status != "unsupported":
                counters[shape] += 1
    return ids
