"""The table an upsert sink holds: its changelog folded by the sink key (config.sink=upsert, config.sink_key).

+I/+U write the row of its key, -D deletes the key, and -U deletes it too, as Flink's upsert connectors treat
UPDATE_BEFORE. Every check that folds a system's answer (answers.answer_of) folds an upsert-sink case this way:
folded as a multiset, a sink's +U that replaces its key's row would count as a second row.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from converge.engine.model.scenario import Scenario


def output_columns(scenario: Scenario) -> list[str]:
    """The join's output columns as "input.column", in the order of its rows (SEMI/ANTI keep the left side only)."""
    kept = [scenario.join.inputs[0]] + [name for name, jtype in zip(scenario.join.inputs[1:], scenario.join.types, strict=False)
                                        if jtype not in ("semi", "anti")]
    specs = {spec.name: spec for spec in scenario.chain}
    return [f"{name}.{column}" for name in kept for column, _ in specs[name].columns]


def sink_key_positions(scenario: Scenario) -> tuple[int, ...]:
    """Where the sink key's columns sit in an output row (the scenario's loader checked they are output columns)."""
    columns = output_columns(scenario)
    return tuple(columns.index(c) for c in scenario.config.sink_key)


def upsert_fold(changes: Sequence[tuple[str, tuple]], positions: tuple[int, ...]) -> Counter:
    """The table an upsert sink holds after `changes` ((kind, row) pairs), as a multiset of rows."""
    table: dict[tuple, tuple] = {}
    for kind, row in changes:
        key = tuple(row[p] for p in positions)
        if kind in ("+I", "+U"):
            table[key] = row
        else:  # -D, and -U (a delete to Flink's upsert connectors)
            table.pop(key, None)
    return Counter(table.values())
