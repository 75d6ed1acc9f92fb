"""converge's model of a system's emission order, event by event: each event's outputs in the order its state
backend visits the stored rows, and the comparison of a system's changelog with it.

`model_per_event` runs converge's engine on the scenario with the MapState order of the scenario's
`config.state_backend` (`BACKEND_ORDER`: rocksdb, hashmap) and the Flink adapter's case id hashed in front
of every stored row (`case_prefix`, engine/java_hashmap.py), as Flink stores them. `compare_orders` cuts a
system's changelog into the same per-event pieces and compares, per piece of two or more outputs, the
order in which it visits the stored rows (`stored_visits`: the other input's part of a binary join's output
row); how one stored row's outputs interleave (an outer row's retraction and its padding) is counted apart,
as `same_sequence`. Used by the order property (map_order.py), the changelog property (checks.py) and the
agreement measurement (`converge bench --only flink_map_order`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from converge.engine.model.changelog import Change
from converge.engine.model.scenario import ChangeEvent, MapStateOrder, Scenario, StateBackend
from converge.engine.runtime.local import run_scenario

# converge's model of each backend's MapState order.
BACKEND_ORDER: dict[StateBackend, MapStateOrder] = {"rocksdb": "rocksdb", "hashmap": "hashmap"}


def case_prefix(case_id: int) -> tuple[tuple, tuple]:
    """The columns the Flink adapter stores in front of every row and unique key of a case: its case id."""
    return (case_id,), ("INTEGER",)


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
            return (f"outputs {at}..{at + len(want) - 1} (event {n}) are {show(piece)}, the model emits "
                    f"{show(want)}")
        pieces.append(piece)
        at += len(want)
    if at != len(changelog):
        return f"{len(changelog) - at} outputs after the last event's: {show(changelog[at:at + 4])}"
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
            report.mismatch = f"event {n}: emitted {show(piece)}, the model's order is {show(want)}"
    return report


def show(changes: Sequence[Change]) -> str:
    """Changes as `+I[1, 2], -D[3, 4]` for a message."""
    return ", ".join(f"{c.kind}{list(c.row)}" for c in changes) or "nothing"


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


def model_per_event(scenario: Scenario, case_id: int, order: MapStateOrder | None = None) -> list[list[Change]]:
    """converge's per-event outputs for the case the Flink adapter runs as `case_id`, in the order of
    `order` (None: the model of the scenario's `config.state_backend`, hashmap when unset)."""
    backend = scenario.config.state_backend or "hashmap"
    order = order or BACKEND_ORDER[backend]
    run = run_scenario(replace(scenario, config=replace(scenario.config, map_state_order=order)),
                       hash_prefix=case_prefix(case_id))
    return [[c for c in items if isinstance(c, Change)] for items in run.per_event]
