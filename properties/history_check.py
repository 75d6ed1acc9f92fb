"""Comparing the engine's output after every event with the oracle's, in time linear in the stream.

Two ways to the same verdict:

* short streams (the examples Hypothesis draws): the engine's output folded
  into one bag per event, against the oracle's snapshot history, bag by bag.
  On a few dozen events this is the faster form (tens of microseconds less
  per example than the interval query; see `converge bench`).
* long streams: both sides as *changes*. Per event, the engine's changes net
  per row, against the oracle's net changes at that position (the interval
  form, streamed by position). Two histories agree at every position before
  p and differ at p exactly when their net changes first differ at p, so the
  first difference found is the first divergence; only then are the two bags
  at that one position built (the engine replayed up to it, the oracle's
  intervals that cover it). Neither side ever holds a bag per event.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence

from converge.engine.materialize import clean, fold, fold_history
from converge.engine.model.changelog import Change, sign
from converge.engine.model.scenario import Scenario
from converge.engine.planner import Plan
from converge.engine.runtime.local import LocalRuntime
from converge.oracle import DuckDBOracle
from converge.oracle.history_intervals import IntervalOracle, bulk_connection
from converge.properties.batch import scenario_of_batch
from converge.properties.divergence import fail
from converge.properties.evidence import final_answer

__all__ = ["SNAPSHOT_MAX_EVENTS", "check_histories", "check_history", "check_history_batch", "engine_outputs", "engine_up_to",
           "first_divergence", "history_form"]

SNAPSHOT_MAX_EVENTS = 200
"""Streams up to this long are compared in the snapshot form, longer ones in the change form.

The snapshot query grows with events x live rows; at 200 events of the
generators' streams it is still a few thousand rows, where it is faster
than the interval query's sorts and windows."""

Outputs = Iterable[Sequence[object]]

_SNAPSHOTS = DuckDBOracle()  # the process-wide oracle connection, as every DuckDBOracle() without one


def history_form(scenario: Scenario) -> str:
    """Which comparison a scenario gets: "snapshots" (short streams) or "changes" (long ones)."""
    return "snapshots" if len(scenario.events) <= SNAPSHOT_MAX_EVENTS else "changes"


def engine_outputs(scenario: Scenario, plan: Plan | None = None) -> Iterator[list]:
    """The engine's output items per event, produced one event at a time (never all kept).

    The end of the input goes with the last event, as in `LocalRuntime.run`: an operator that buffers (a
    mini-batch bundle) emits what it holds there, so the folded output is the whole run's."""
    runtime = LocalRuntime(scenario, plan)
    last = len(scenario.events) - 1
    for i, event in enumerate(scenario.events):
        out = runtime.process_event(event)
        if i == last:
            out = out + runtime.finish()
        yield out


def _net(items: Sequence[object]) -> dict[tuple, int]:
    """One event's changes, netted per row (rows whose changes cancel are left out)."""
    net: Counter = Counter()
    for item in items:
        if isinstance(item, Change):
            net[item.row] += sign(item.kind)
    return {row: d for row, d in net.items() if d}


def first_divergence(want: Iterator[tuple[int, int, tuple]], got: Outputs,
                     seen: set[tuple] | None = None) -> int | None:
    """The first position where the engine's net changes (`got`, per event) differ from `want`
    ((position, delta, row) by position); None when they agree everywhere.

    `seen`, when given, collects every row the oracle's answer ever holds.
    """
    pending = next(want, None)
    for position, items in enumerate(got):
        expected: dict[tuple, int] = {}
        while pending is not None and pending[0] == position:
            _, delta, row = pending
            expected[row] = expected.get(row, 0) + delta
            if seen is not None and delta > 0:
                seen.add(row)
            pending = next(want, None)
        if _net(items) != {row: d for row, d in expected.items() if d}:
            return position
    return None if pending is None else pending[0]  # the oracle changes where the engine output ended


def engine_up_to(outputs: Outputs, position: int) -> tuple[Counter, list[list]]:
    """The engine's bag after event `position`, and its output per event up to there: a failure's evidence,
    taken from a second run, so that a passing check keeps no output (the engine is deterministic)."""
    bag: Counter = Counter()
    emitted: list[list] = []
    for i, items in enumerate(outputs):
        emitted.append(list(items))
        fold([c for c in items if isinstance(c, Change)], bag)
        if i == position:
            break
    return clean(bag), emitted


def check_history(prop: str, scenario: Scenario, run: Callable[[], Outputs], what: str,
                  seen: set[tuple] | None = None) -> None:
    """Fail `prop` at the first event after which the engine's output (`run()`, per event) differs
    from the oracle's answer on the input so far, with both bags at that event.

    `run` is called again to rebuild the engine's bag at a divergence, so it
    must replay the same output. `seen` collects every row of the oracle's answer.
    """
    check_histories(prop, scenario, [(run, what)], seen)


def check_histories(prop: str, scenario: Scenario, runs: Sequence[tuple[Callable[[], Outputs], str]],
                    seen: set[tuple] | None = None) -> None:
    """`check_history` for several outputs (each with its message) against one oracle answer."""
    if history_form(scenario) == "snapshots":
        _check_snapshots(prop, scenario, runs, _SNAPSHOTS.history(scenario), seen)
        return
    _check_changes(prop, scenario, runs, seen)


def check_history_batch(prop: str, scenarios: Sequence[Scenario], run: Callable[[Scenario], Outputs],
                        what: str) -> None:
    """`check_history` of each scenario (its engine output: `run(scenario)`), the short streams answered by one
    oracle query per shape (oracle/batch.py); a failure names its scenario alone (properties/batch.py)."""
    short = [s for s in scenarios if history_form(s) == "snapshots"]
    answers = iter(_SNAPSHOTS.histories(short))
    for scenario in scenarios:
        runs = [(lambda s=scenario: run(s), what)]
        with scenario_of_batch(scenario):
            if history_form(scenario) == "snapshots":
                _check_snapshots(prop, scenario, runs, next(answers), None)
            else:
                _check_changes(prop, scenario, runs, None)


def _check_snapshots(prop: str, scenario: Scenario, runs: Sequence[tuple[Callable[[], Outputs], str]],
                     expected: Sequence[Counter], seen: set[tuple] | None) -> None:
    for run, what in runs:
        for i, (g, w) in enumerate(zip(fold_history(run()), expected, strict=True)):
            if g != w:
                fail(prop, scenario, what, event_index=i, engine=g, expected=w,
                     emitted=engine_up_to(run(), i)[1],
                     oracle_sql=_SNAPSHOTS.sql_for(scenario, "history"),
                     expected_final=final_answer(scenario, expected[-1]))
    if seen is not None:
        seen.update(row for bag in expected for row in bag)


def _check_changes(prop: str, scenario: Scenario, runs: Sequence[tuple[Callable[[], Outputs], str]],
                   seen: set[tuple] | None) -> None:
    oracle = IntervalOracle(bulk_connection())
    for k, (run, what) in enumerate(runs):
        position = first_divergence(oracle.changes(scenario), run(), seen if k == 0 else None)
        if position is not None:
            bag, emitted = engine_up_to(run(), position)
            fail(prop, scenario, what, event_index=position, engine=bag, expected=oracle.answer_at(scenario, position),
                 emitted=emitted, oracle_sql=oracle.sql_for(scenario, "changes"))
