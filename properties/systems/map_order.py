"""The MapState order on a real system: for one record that meets several stored rows, the order of its outputs.

Flink's regular join keeps a side without a usable unique key in a MapState and visits it in the state
backend's own order (docs/anomalies.md, "On real Flink"). Measured on Flink 1.19-2.3 with the adapter's
paced arrival (every case's changelog repeats from run to run):

* `rocksdb` (EmbeddedRocksDBStateBackend): the byte order of the serialized map keys, which is converge's
  `map_state_order: rocksdb` model (engine/keycodec.py). The adapter's case id, the first column of every
  stored row, is one value within a join key and does not change that order.
* `hashmap` (HashMapStateBackend): a `java.util.HashMap` per key: buckets in index order, `(h ^ h >>> 16) &
  (capacity - 1)` with `h` = BinaryRowData.hashCode (Murmur3 over the row's 4-byte words, seed 42), the
  capacity 16 doubled past 3/4 full; within a bucket, insertion order. converge's `heap` model (a keyed
  blake2b, a stand-in) does not predict it, so the property holds Flink to this rule (`hashmap_rank`),
  computed on the rows as the adapter stores them: with the case id in front (`case_ids`).

The check runs converge's reference engine for the per-event outputs (`rocksdb` for rocksdb; `arrival` for
hashmap, whose outputs are then ordered by the HashMap rule, stably, so ties keep insertion order), cuts the
system's changelog into the same per-event pieces, and compares the order of every piece of two or more rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from hypothesis import strategies as st

from converge.engine.java_hashmap import bucket, row_hash
from converge.engine.model.changelog import Change
from converge.engine.model.scenario import ChangeEvent, InputSpec, MapStateOrder, Scenario, StateBackend
from converge.engine.model.system import Capabilities, CaseResult, System
from converge.engine.runtime.local import run_scenario
from converge.generators.map_order import map_order_scenarios
from converge.properties import exercise
from converge.properties.divergence import require
from converge.properties.systems.answers import require_applicable, system_diverged
from converge.properties.systems.checks import Judged, Known

# The reference engine's model of each backend's order ("arrival" + the HashMap rule for hashmap).
ENGINE_ORDER: dict[StateBackend, MapStateOrder] = {"rocksdb": "rocksdb", "hashmap": "arrival"}
# converge's own `map_state_order` for each backend, whose agreement with Flink docs/anomalies.md reports.
CONVERGE_MODEL: dict[StateBackend, MapStateOrder] = {"rocksdb": "rocksdb", "hashmap": "heap"}
java_row_hash = row_hash    # BinaryRowData.hashCode, shared with the mini-batch join's bundle order


def hashmap_capacity(entries: int) -> int:
    """The table size of a java.util.HashMap that grew from 16 to hold `entries` (resized past 3/4 full)."""
    capacity = 16
    while entries > capacity * 3 // 4:
        capacity *= 2
    return capacity


def hashmap_bucket(h: int, capacity: int) -> int:
    """java.util.HashMap's bucket of a key whose hashCode is `h` (engine/java_hashmap.py)."""
    return bucket(h, capacity)


def flink_map_key(spec: InputSpec, row: tuple, case_id: int, join_columns: Sequence[str]) -> tuple | None:
    """(values, types) of the map key under which Flink's join state holds `row` of `spec` as the adapter sends
    it (its case id, an INTEGER, in front of every row and unique key), or None when the side is a ValueState
    (its unique key inside the join key: one row per join key, nothing to order)."""
    types = [t for _, t in spec.columns]
    if spec.unique_key:
        if set(spec.unique_key) <= set(join_columns):
            return None
        positions = sorted(spec.index_of(c) for c in spec.unique_key)   # a projection in column order
        return (case_id, *(row[i] for i in positions)), ("INTEGER", *(types[i] for i in positions))
    return (case_id, *row), ("INTEGER", *types)


@dataclass
class OrderReport:
    """How a system's per-event outputs compare with a model's, over one case."""

    ordered: int = 0                   # pieces that visit two or more stored rows (an order to compare)
    agreed: int = 0                    # of those, visiting them in the model's order
    same_sequence: int = 0             # of those, with the very same output sequence (interleaving included)
    mismatch: str | None = None        # the first piece that visits the stored rows out of the model's order
    unsplit: str | None = None         # the changelog does not cut into the model's per-event pieces
    pieces: list[int] = field(default_factory=list)


Visit = Callable[[Change], object]    # the stored row an output carries (None: none, e.g. a padded output)


def split_like(changelog: Sequence[Change], per_event: Sequence[Sequence[Change]]) -> list[list[Change]] | str:
    """`changelog` cut into consecutive pieces holding the same changes as each of `per_event` (any order);
    the reason as a string when it cannot be."""
    pieces: list[list[Change]] = []
    at = 0
    for n, want in enumerate(per_event):
        piece = list(changelog[at:at + len(want)])
        if Counter(piece) != Counter(want):
            return (f"outputs {at}..{at + len(want) - 1} (event {n}) are {_show(piece)}, the model emits "
                    f"{_show(want)}")
        pieces.append(piece)
        at += len(want)
    if at != len(changelog):
        return f"{len(changelog) - at} outputs after the last event's: {_show(changelog[at:at + 4])}"
    return pieces


def visits(piece: Sequence[Change], visit: Visit | None) -> list:
    """The stored rows a piece's outputs carry, in the order they are first met (the MapState's visit order);
    without `visit`, the outputs themselves."""
    if visit is None:
        return list(piece)
    seen: list = []
    for change in piece:
        row = visit(change)
        if row is not None and row not in seen:
            seen.append(row)
    return seen


def compare_orders(got: Sequence[Change], per_event: Sequence[Sequence[Change]],
                   visit_of: Sequence[Visit | None] | None = None) -> OrderReport:
    """Compare, for each event, the order in which `got` visits the stored rows with the model's per-event
    outputs (`visit_of[n]`: event n's stored row of an output; None: compare the outputs themselves).

    The visit order is what the MapState decides; how a system interleaves the outputs of one stored row (an
    outer row's retraction and its padding) is counted apart (`same_sequence`), not as an order mismatch."""
    report = OrderReport()
    pieces = split_like(got, per_event)
    if isinstance(pieces, str):
        report.unsplit = pieces
        return report
    for n, (piece, want) in enumerate(zip(pieces, per_event, strict=False)):
        visit = None if visit_of is None else visit_of[n]
        expected = visits(want, visit)
        if len(expected) < 2:
            continue
        report.ordered += 1
        report.pieces.append(n)
        report.same_sequence += list(piece) == list(want)
        if visits(piece, visit) == expected:
            report.agreed += 1
        elif report.mismatch is None:
            report.mismatch = f"event {n}: emitted {_show(piece)}, the model's order is {_show(want)}"
    return report


def _show(changes: Sequence[Change]) -> str:
    return ", ".join(f"{c.kind}{list(c.row)}" for c in changes) or "nothing"


def _join_columns(scenario: Scenario) -> dict[str, tuple[str, ...]]:
    """Each input's equi-join columns, read from a condition of `a.c = b.c` conjuncts (the generator's)."""
    left, right = scenario.join.inputs
    cols: dict[str, list[str]] = {left: [], right: []}
    for part in scenario.join.conditions[0].split(" AND "):
        sides = [s.strip().strip("()") for s in part.split("=")]
        if len(sides) != 2:
            continue
        for side in sides:
            name, _, column = side.partition(".")
            if name in cols:
                cols[name].append(column)
    return {k: tuple(v) for k, v in cols.items()}


def stored_visits(scenario: Scenario) -> list[Visit | None]:
    """For each event of a binary join: the stored row (the other input's part) an output carries."""
    left = scenario.chain[0]
    width = len(left.columns)

    def part(stored_is_right: bool) -> Visit:
        def visit(change: Change) -> object:
            row = change.row[width:] if stored_is_right else change.row[:width]
            return None if all(v is None for v in row) else row
        return visit

    return [part(event.input == left.name) if isinstance(event, ChangeEvent) else None
            for event in scenario.events]


def hashmap_per_event(scenario: Scenario, case_id: int) -> list[list[Change]]:
    """The reference engine's per-event outputs ordered as Flink's HashMapStateBackend visits its MapState:
    each event's outputs, in arrival order from the engine, sorted stably by the HashMap bucket of the stored
    row each output carries (the other input's part of the row)."""
    run = run_scenario(replace(scenario, config=replace(scenario.config, map_state_order="arrival")))
    left, right = scenario.chain
    width = len(left.columns)
    join_cols = _join_columns(scenario)
    out: list[list[Change]] = []
    for event, items in zip(scenario.events, run.per_event, strict=False):
        changes = [c for c in items if isinstance(c, Change)]
        if len(changes) < 2 or not isinstance(event, ChangeEvent):
            out.append(changes)
            continue
        stored = right if event.input == left.name else left
        keys = []
        for c in changes:
            part = c.row[width:] if stored is right else c.row[:width]
            key = None if all(v is None for v in part) else flink_map_key(stored, part, case_id,
                                                                          join_cols[stored.name])
            keys.append(key)
        distinct = {k for k in keys if k is not None}
        capacity = hashmap_capacity(len(distinct))
        ranks = [(-1 if k is None else hashmap_bucket(java_row_hash(*k), capacity)) for k in keys]
        order = sorted(range(len(changes)), key=lambda i: ranks[i])
        out.append([changes[i] for i in order])
    return out


def model_per_event(scenario: Scenario, case_id: int, model: str = "flink") -> list[list[Change]]:
    """The per-event outputs in the order predicted for the scenario's `config.state_backend`: `model="flink"`
    the measured rule of each backend (module docstring), `model="converge"` converge's own `map_state_order`
    model of the backend (rocksdb / heap), as docs/anomalies.md compares them."""
    backend = scenario.config.state_backend or "hashmap"
    if model == "flink" and backend == "hashmap":
        return hashmap_per_event(scenario, case_id)
    order = ENGINE_ORDER[backend] if model == "flink" else CONVERGE_MODEL[backend]
    run = run_scenario(replace(scenario, config=replace(scenario.config, map_state_order=order)))
    return [[c for c in items if isinstance(c, Change)] for items in run.per_event]


def case_ids(results: Sequence[CaseResult]) -> list[int]:
    """The case id the Flink adapter gave each case of one run request of one shape: its position among the
    cases it planned (an unsupported case is not planned)."""
    ids, n = [], 0
    for r in results:
        ids.append(n)
        if r.status != "unsupported":
            n += 1
    return ids


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
    for scenario, result, case_id in zip(cases, results, case_ids(results), strict=False):
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
                        _show(result.changelog), None, system_spec=system_spec)
    if report.ordered == 0:
        exercise.skipped("no event visits two or more stored rows: no order to compare")
        return
    case.compared()
    if report.mismatch is not None:
        system_diverged(prop, system, scenario, f"{system.name} ({backend} state backend) visits one record's "
                        f"stored matches out of the backend's order: {report.mismatch}",
                        _show(result.changelog), None, system_spec=system_spec)
