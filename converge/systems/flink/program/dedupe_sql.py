"""`config.dedupe_before_join` in Flink SQL (part of the Flink adapter program; standard library only).

converge's dedupe keeps the last row per key by arrival and hands the join a retract stream keyed by the dedupe
key (docs/anomalies.md). Flink's own form of it is the deduplication query: ROW_NUMBER() over the key, ordered
by processing time descending, kept where it is 1; the planner turns it into a Deduplicate operator
(keep last row) whose output's unique key is the PARTITION BY. With the adapter's paced arrival the rows reach
it in the scenario's order, so "last by processing time" is "last by arrival". The case id leads the key, as it
leads every join key, so cases sharing a job never deduplicate each other's rows.
"""

from __future__ import annotations

from typing import Any


class DedupeError(ValueError):
    """The dedupe option names an input or a column the join does not have."""


def dedupe_keys(option: Any, chain: list[str], specs: dict[str, dict]) -> dict[int, list[int]]:
    """{position in the chain: the key's column positions} for the option's inputs: a list of input names (the
    key: each input's unique key) or {input: [columns] or null}."""
    if isinstance(option, list):
        option = dict.fromkeys(option)
    if not isinstance(option, dict):
        raise DedupeError("dedupe_before_join: a list of input names or {input: [key columns]}")
    keys: dict[int, list[int]] = {}
    for name, columns in option.items():
        if name not in chain:
            raise DedupeError(f"dedupe_before_join: {name!r} is not an input of the join chain")
        names = [c[0] for c in specs[name].get("columns") or []]
        columns = columns if columns is not None else specs[name].get("unique_key")
        if not columns or any(c not in names for c in columns):
            raise DedupeError(f"dedupe_before_join: input {name!r} needs key columns it has ({columns!r})")
        keys[chain.index(name)] = [names.index(c) for c in columns]
    return keys


def deduplicated(select: str, keys: dict[int, list[int]], widths: list[int]) -> str:
    """`select` with each deduplicated input's view {vK} replaced by its deduplication query."""
    for k, key in keys.items():
        cols = [f"t{k}cid"] + [f"t{k}c{j}" for j in range(widths[k])]
        listed = ", ".join(cols)
        partition = ", ".join([f"t{k}cid"] + [f"t{k}c{j}" for j in key])
        query = (f"(SELECT {listed} FROM (SELECT {listed}, ROW_NUMBER() OVER (PARTITION BY {partition} "
                 f"ORDER BY t{k}pt DESC) AS t{k}rn FROM (SELECT {listed}, PROCTIME() AS t{k}pt FROM {{v{k}}})) "
                 f"WHERE t{k}rn = 1)")
        select = select.replace(f"{{v{k}}}", query)
    return select
