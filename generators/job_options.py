"""Job options drawn for real systems: an upsert sink with a key the batch answer is unique on, and parallelism.

A sink key is only drawn where the join's output is a table with that key (at most one row per key in
the batch answer, at every moment of a valid stream too), so no case is an invalid upsert-sink case:

* SEMI/ANTI: the output is the left input's rows: its unique key;
* INNER: the unique keys of both inputs together;
* LEFT (RIGHT): the preserved side's unique key, when the other side's unique key is made of columns the
  condition equates with the preserved side's (`a.k = b.k`, `IS NOT DISTINCT FROM`), outside any OR: each
  preserved row then meets at most one row of the other side. Its NULL-padded side cannot carry a key
  (Flink's primary key columns are NOT NULL).

FULL joins never have such a key. The generated inputs are upsert inputs, so their unique keys hold.
"""

from __future__ import annotations

import re
from dataclasses import replace

from hypothesis import strategies as st

from converge.engine.model.scenario import Scenario
from converge.generators.scenarios import regular_join_scenarios

MATERIALIZE = ("auto", "force", "none")
PARALLELISMS = (2, 4)
_EQUATES = re.compile(r"^\(?(\w+)\.(\w+) (?:=|IS NOT DISTINCT FROM) (\w+)\.(\w+)\)?$")


def equated(condition: str) -> set[tuple[str, str, str, str]]:
    """(left input, column, right input, column) of every equality ANDed at the top of `condition` (none
    inside an OR or parentheses: a top-level OR makes none of them certain)."""
    out = set()
    for part in _top_and(condition):
        m = _EQUATES.match(part.strip())
        if m:
            a, ac, b, bc = m.groups()
            out.update({(a, ac, b, bc), (b, bc, a, ac)})
    return out


def _top_and(condition: str) -> list[str]:
    parts, depth, start, i = [], 0, 0, 0
    upper = condition.upper()
    while i < len(condition):
        ch = condition[i]
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and upper.startswith(" OR ", i):
            return []
        if depth == 0 and upper.startswith(" AND ", i):
            parts.append(condition[start:i])
            start = i + 5
            i += 5
            continue
        i += 1
    parts.append(condition[start:])
    return parts


def sink_key(scenario: Scenario) -> tuple[str, ...] | None:
    """An upsert sink key for a binary join the batch answer is unique on ("input.column"), or None."""
    if len(scenario.join.inputs) != 2:
        return None
    a, b = scenario.chain
    jtype = scenario.join.types[0]
    uk_a, uk_b = a.unique_key or (), b.unique_key or ()
    pairs = equated(scenario.join.conditions[0])

    def covers(kept: str, other: str, uk: tuple[str, ...]) -> bool:
        return bool(uk) and all(any(p[0] == other and p[1] == c and p[2] == kept for p in pairs) for c in uk)

    if jtype in ("semi", "anti") and uk_a:
        return tuple(f"{a.name}.{c}" for c in uk_a)
    if jtype == "inner" and uk_a and uk_b:
        return tuple(f"{a.name}.{c}" for c in uk_a) + tuple(f"{b.name}.{c}" for c in uk_b)
    if jtype == "left" and uk_a and covers(a.name, b.name, uk_b):
        return tuple(f"{a.name}.{c}" for c in uk_a)
    if jtype == "right" and uk_b and covers(b.name, a.name, uk_a):
        return tuple(f"{b.name}.{c}" for c in uk_b)
    return None


def with_upsert_sink(scenario: Scenario, materialize: str) -> Scenario:
    key = sink_key(scenario)
    assert key is not None, "with_upsert_sink: draw only scenarios with a sink key"
    return replace(scenario, config=replace(scenario.config, sink="upsert", sink_key=key,
                                            upsert_materialize=materialize))


def upsert_sink_scenarios(*, join_types: tuple[str, ...] = ("inner", "left", "right", "semi", "anti"),
                          materialize: tuple[str, ...] = MATERIALIZE,
                          map_state_orders: tuple[str, ...] = ("rocksdb",)) -> st.SearchStrategy[Scenario]:
    """Binary joins of upsert inputs through an upsert sink keyed as the module says; half the LEFT/RIGHT ones are
    the shape of FLINK-40681 (the kept side's key alone, the other side unique on the join key)."""
    outer = [t for t in join_types if t in ("left", "right")]
    rest = [t for t in join_types if t not in ("left", "right", "full")]
    drawn = []
    if rest:
        drawn.append(regular_join_scenarios(join_types=rest, modes=("upsert",), uk_shapes=("join_key", "own"),
                                            map_state_orders=map_state_orders))
    if outer:
        drawn.append(regular_join_scenarios(join_types=outer, modes=("upsert",), uk_shapes=("join_key",),
                                            map_state_orders=map_state_orders))
    templates = st.one_of(*drawn).filter(lambda s: sink_key(s) is not None)
    return st.tuples(templates, st.sampled_from(materialize)).map(lambda d: with_upsert_sink(*d))


def with_parallelism(scenarios: st.SearchStrategy[Scenario],
                     parallelisms: tuple[int, ...] = PARALLELISMS) -> st.SearchStrategy[Scenario]:
    """The same scenarios with config.parallelism drawn from `parallelisms`."""
    return st.tuples(scenarios, st.sampled_from(parallelisms)).map(
        lambda d: replace(d[0], config=replace(d[0].config, parallelism=d[1])))
