"""The same query as a native-join case, in Flink's semantics: an event-time interval join `Scenario`.

A native-join case describes a Spark query (docs/spark.md, "Spark's native
joins as a system"); "Spark vs Flink for the same query" there compares it
with what Flink does for the same SQL over the same micro-batches. This
module writes that Flink query as a converge interval scenario, so converge's
Flink-semantics engine runs the Flink side of each difference:

* `right.t BETWEEN left.t + a AND left.t + b` is converge's
  `l.t BETWEEN r.t + L AND r.t + U` with L = -b, U = -a; the equi keys use
  `=` (NULL never matches) and the residual is ANDed to the condition.
* INNER, LEFT, RIGHT, FULL keep their type. LEFT SEMI and LEFT ANTI have no
  interval form in Flink (its planner turns them into regular joins with
  retractions), so they get none here (`flink_form` returns None).
* Watermarks: each input is declared `WATERMARK FOR t AS t - INTERVAL delay`.
  Flink SQL's generated watermark is the largest value of that expression so
  far, `max(t) - delay`, with no `- 1` (the `- 1 ms` belongs to the
  DataStream API's `forBoundedOutOfOrderness`, not to a SQL watermark). Flink
  emits it periodically; here it is emitted once after each micro-batch's
  rows, for every input that has had a row (every row counts, NULL keys
  included: the watermark is computed in the source). An input with no row
  yet sends no watermark, so it holds the combined (MIN) watermark back.
  Spark's `max` policy has no Flink counterpart: the operator always takes
  the minimum. Within a micro-batch the left rows arrive before the right
  rows. After the last micro-batch both bounded inputs end, which sends
  Long.MAX_VALUE (it flushes the outer rows still cached), as Flink does.

Each input gets one more column, `row_id`, holding the case's hidden id, so
output rows map back to the case's `(left id, right id)` pairs; it is never
part of the condition.
"""

from __future__ import annotations

from dataclasses import dataclass

from converge.engine.model.errors import BadInputError
from converge.engine.model.native_join_case import SIDES, NativeJoinCase, Side
from converge.engine.model.scenario import (
    LONG_MAX,
    ChangeEvent,
    Event,
    InputSpec,
    IntervalSpec,
    JoinSpec,
    Scenario,
    WatermarkEvent,
)

ID_COLUMN = "row_id"          # a case column of that name is refused (BadInputError), never shadowed
INPUT_NAMES: dict[Side, str] = {"left": "l", "right": "r"}
FLINK_INTERVAL_JOINS = frozenset({"inner", "left", "right", "full"})
END = "end"                   # the batch label of what the end-of-input watermark emits


@dataclass(frozen=True)
class FlinkForm:
    """The scenario and, for each of its events, the micro-batch it belongs to (`END` for the final watermarks)."""

    scenario: Scenario
    batch_of_event: tuple[int | str, ...]


def flink_form(case: NativeJoinCase) -> FlinkForm | None:
    """The Flink interval join for the case's query, or None when Flink has no interval form of its join type."""
    if case.join not in FLINK_INTERVAL_JOINS:
        return None
    inputs = tuple(_input(case, side) for side in SIDES)
    left, right = INPUT_NAMES["left"], INPUT_NAMES["right"]
    condition = " AND ".join(f"{left}.{lk} = {right}.{rk}" for lk, rk in case.keys)
    if case.residual is not None:
        condition += f" AND {left}.{case.residual.left} {case.residual.op} {right}.{case.residual.right}"
    interval = IntervalSpec(f"{left}.{case.left.time}", f"{right}.{case.right.time}", -case.upper_ms, -case.lower_ms)
    events: list[Event] = []
    batch_of_event: list[int | str] = []
    ids = {side: 0 for side in SIDES}
    max_time: dict[Side, int | None] = {side: None for side in SIDES}
    for j, batch in enumerate(case.batches):
        for side in SIDES:
            t_index = case.input(side).time_index
            for row in batch[side]:
                events.append(ChangeEvent(INPUT_NAMES[side], "+I", tuple(row) + (ids[side],)))
                batch_of_event.append(j)
                ids[side] += 1
                seen = max_time[side]
                max_time[side] = row[t_index] if seen is None else max(seen, row[t_index])
        for side in SIDES:
            seen = max_time[side]
            if seen is not None:
                events.append(WatermarkEvent(INPUT_NAMES[side], seen - case.input(side).delay_ms))
                batch_of_event.append(j)
    for side in SIDES:
        events.append(WatermarkEvent(INPUT_NAMES[side], LONG_MAX))
        batch_of_event.append(END)
    scenario = Scenario(
        name=f"{case.name} (Flink interval join)",
        inputs=inputs,
        join=JoinSpec((left, right), (case.join,), (condition,), interval),
        events=tuple(events),
        description=f"Flink's event-time interval join for the native-join case {case.name!r}",
    )
    return FlinkForm(scenario, tuple(batch_of_event))


def _input(case: NativeJoinCase, side: Side) -> InputSpec:
    spec = case.input(side)
    if ID_COLUMN in spec.columns:
        raise BadInputError(f"the column name {ID_COLUMN!r} is kept for the row id of the Flink form",
                            path=f"{side}.columns")
    columns = tuple((c, "BIGINT") for c in spec.columns) + ((ID_COLUMN, "BIGINT"),)
    return InputSpec(INPUT_NAMES[side], columns, None, "insert_only", spec.time)
