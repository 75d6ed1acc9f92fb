"""Upsert sinks: the final table a sink with a primary key holds equals the batch answer.

The system sends what its upsert sink received (its changelog) or the table it holds (its final answer,
folded by the adapter the same way). The changelog is folded by the sink key: +I/+U write the row of
its key, -D deletes the key, and -U deletes it too, as Flink's upsert connectors treat UPDATE_BEFORE;
Flink sends -U to an upsert sink when upsert_materialize is none and the key is not the query's upsert
key (docs/flink.md, "Upsert sink"). A case whose batch answer holds two rows of one sink key is no
upsert-sink case: the check refuses it as bad input and never passes it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from converge.engine.model.scenario import Scenario
from converge.engine.model.system import CaseResult, System
from converge.properties.divergence import require
from converge.properties.systems.answers import oracle_decides, oracle_final, system_diverged
from converge.properties.systems.checks import Judged, Known, _run
from converge.properties.systems.upsert import output_columns, sink_key_positions, upsert_fold


def key_positions(scenario: Scenario) -> tuple[int, ...]:
    columns = output_columns(scenario)
    missing = [c for c in scenario.config.sink_key if c not in columns]
    require(not missing, "upsert_sink_equals_oracle", f"sink_key {missing} is not an output column")
    return sink_key_positions(scenario)


def duplicate_keys(answer: Counter, positions: tuple[int, ...]) -> list[tuple]:
    """Sink keys that hold more than one row of `answer`."""
    seen: Counter = Counter()
    for row, n in answer.items():
        seen[tuple(row[p] for p in positions)] += n
    return sorted((k for k, n in seen.items() if n > 1), key=repr)


def sink_table(result: CaseResult, positions: tuple[int, ...]) -> Counter:
    if result.changelog is not None:
        return upsert_fold([(c.kind, c.row) for c in result.changelog], positions)
    return result.folded()


def upsert_sink_equals_oracle(system: System, cases: Sequence[Scenario], *, prop: str = "upsert_sink_equals_oracle",
                              system_spec: str | None = None, known: Known | None = None) -> None:
    """Every case's upsert sink, folded by its key, holds the batch answer."""
    positions = []
    for scenario in cases:
        reason = oracle_decides(scenario)
        require(reason is None, prop, reason or "")
        require(scenario.config.sink == "upsert", prop, "an upsert-sink case needs config.sink=upsert")
        where = key_positions(scenario)
        twice = duplicate_keys(oracle_final(scenario), where)
        require(not twice, prop, f"not an upsert-sink case: the batch answer has two rows of sink key {twice[:1]} "
                f"({list(scenario.config.sink_key)})")
        positions.append(where)
    for scenario, where, result in zip(cases, positions, _run(prop, system, cases), strict=False):
        with Judged(known) as case:
            if result.status == "unsupported":
                continue
            want = oracle_final(scenario)
            if result.status == "error":
                system_diverged(prop, system, scenario, f"{system.name} failed on this case: {result.message}",
                                f"error: {result.message}", want, oracle=want, system_spec=system_spec)
            case.compared()
            got = sink_table(result, where)
            if got != want:
                system_diverged(prop, system, scenario, f"{system.name}'s upsert sink (key "
                                f"{', '.join(scenario.config.sink_key)}) holds another table than the batch answer",
                                got, want, oracle=want, system_spec=system_spec)
