"""Properties of an interval join whose window is empty (lower bound above upper bound).

Flink plans no join for it (StreamExecIntervalJoin.createNegativeWindowSizeJoin,
engine/operators/negative_window.py): an inner side is filtered away, an outer
side's every row is emitted padded as it arrives, late or not. The model here
is that sentence, per event, written without the engine's operator; the
oracle side is DuckDB's batch interval join over every row (a window that
holds no time difference joins nothing, and an outer join pads every row of
its outer sides), which a map that drops no late row meets exactly.
"""

from __future__ import annotations

from collections import Counter

from converge.engine.model.changelog import Change, OutputWatermark
from converge.engine.model.scenario import ChangeEvent, Scenario, WatermarkEvent, sources_of
from converge.engine.runtime.local import LocalRuntime
from converge.oracle.interval import batch_interval_join, interval_final_sql
from converge.properties.divergence import fail, require


def is_empty_window(scenario: Scenario) -> bool:
    iv = scenario.join.interval
    return iv is not None and iv.lower_ms > iv.upper_ms


def _expected(scenario: Scenario, event: object) -> list[tuple]:
    """What Flink's maps emit for one event: the padded row of an outer side's row, nothing else; a record of a
    stream both inputs read (a self-join) is a row of each side, the left first."""
    fed = sources_of(scenario)
    if not isinstance(event, ChangeEvent) or event.input not in fed:
        return []
    left, right = scenario.chain
    jtype = scenario.join.types[0]
    out = []
    for name in fed[event.input]:
        if name == left.name and jtype in ("left", "full"):
            out.append(tuple(event.row) + (None,) * len(right.columns))
        if name == right.name and jtype in ("right", "full"):
            out.append((None,) * len(left.columns) + tuple(event.row))
    return out


def empty_window_matches_flink(scenario: Scenario) -> None:
    """At every event: the padded row of an outer side's row and nothing else; no state, no timer; no output
    watermark above the inputs' (nothing is held back, nothing is ahead)."""
    prop = "empty_window_matches_flink"
    require(is_empty_window(scenario), prop, "needs an interval join whose lower bound is above its upper bound")
    rt = LocalRuntime(scenario)
    emitted: list[list] = []
    highest: dict[str, int] = {}
    for i, event in enumerate(scenario.events):
        out = rt.process_event(event)
        emitted.append(out)
        if isinstance(event, WatermarkEvent):
            highest[event.input] = max(highest.get(event.input, event.watermark), event.watermark)
        got = [c.row for c in out if isinstance(c, Change)]
        want = _expected(scenario, event)
        if got != want or any(c.kind != "+I" for c in out if isinstance(c, Change)):
            fail(prop, scenario, f"event {i} emitted {got}, Flink's maps emit {want}", event_index=i, emitted=emitted)
        ahead = [o.watermark for o in out if isinstance(o, OutputWatermark)
                 and o.watermark > max(highest.values(), default=o.watermark)]
        if ahead:
            fail(prop, scenario, f"event {i} emitted output watermark {ahead[0]} above every input's watermark",
                 event_index=i, emitted=emitted)
        if rt.state_entries() or rt.pending_timers():
            fail(prop, scenario, f"after event {i} the operator holds {rt.state_entries()} state entries and "
                 f"{rt.pending_timers()} timers: an empty window keeps nothing", event_index=i, emitted=emitted)


def empty_window_equals_oracle(scenario: Scenario) -> None:
    """The whole output equals DuckDB's batch interval join over every row, late rows included."""
    prop = "empty_window_equals_oracle"
    require(is_empty_window(scenario), prop, "needs an interval join whose lower bound is above its upper bound")
    result = LocalRuntime(scenario).run()
    got = Counter(c.row for c in result.changes)
    want = batch_interval_join(scenario)
    if got != want:
        fail(prop, scenario, "the output differs from the batch interval join (an empty window: every outer row "
             "padded, nothing joined)", event_index=len(scenario.events) - 1, engine=got, expected=want,
             emitted=result.per_event, oracle_sql=interval_final_sql(scenario))


__all__ = ["empty_window_equals_oracle", "empty_window_matches_flink", "is_empty_window"]
