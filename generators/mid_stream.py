"""Changelogs that start mid-stream: what a CDC source started late sends to a join.

A scenario drawn by any changelog generator is valid from its first event (a
model table on each input, every retraction names a present row). Cutting it
at event `start` gives the stream a source started there would send: the
first `start` events built the tables, none of them is sent, and a later
`-U`/`-D` of a row inserted before the start retracts a row the join never
saw (a *raw* retraction). Every suffix of a valid changelog is such a stream,
so a shrunk example stays one: Hypothesis shrinks the scenario and `start`
(towards 0, the whole stream, where nothing is raw) independently.
`mid_stream_cuts` gives both parts as scenarios, so a failure report and
`converge replay` hold the stream that was sent and the one that was not.

`semantics: flink` joins raw retractions as Flink's operators do;
`semantics: correct` refuses the first one (docs/semantics.md, "Raw
changelogs"). `raw_retractions` says which events are raw, from the events
alone (a per-input table of held rows, apart from the engine's state views).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from hypothesis import strategies as st

from converge.engine.model.changelog import ACCUMULATE_KINDS
from converge.engine.model.errors import ApiMisuseError
from converge.engine.model.scenario import ChangeEvent, InputSpec, Scenario


def mid_stream(scenario: Scenario, start: int) -> Scenario:
    """The stream a source started at event `start` sends: the events before it are not sent."""
    if not 0 <= start <= len(scenario.events):
        raise ApiMisuseError(f"mid_stream: start {start} is outside the scenario's {len(scenario.events)} events")
    if start == 0:
        return scenario
    return replace(scenario, name=f"{scenario.name}, started at event {start}", events=scenario.events[start:])


def sent_before(scenario: Scenario, start: int) -> Scenario:
    """The events a source started at `start` does not send (they built the tables it starts from)."""
    return replace(scenario, name=f"{scenario.name}, before event {start}", events=scenario.events[:start])


@st.composite
def mid_stream_cuts(draw: st.DrawFn, scenarios: st.SearchStrategy[Scenario]) -> tuple[Scenario, Scenario]:
    """(the stream a source started mid-way sends, the events it does not send) of one drawn scenario."""
    scenario = draw(scenarios)
    start = draw(st.integers(0, len(scenario.events)))
    return mid_stream(scenario, start), sent_before(scenario, start)


class _HeldRows:
    """The rows one input has sent so far and not retracted: a bag, or one row per unique key."""

    def __init__(self, spec: InputSpec) -> None:
        self.spec = spec
        self.uk = None if not spec.unique_key else tuple(spec.index_of(c) for c in spec.unique_key)
        self.bag: Counter = Counter()
        self.by_key: dict[tuple, tuple] = {}

    def apply(self, kind: str, row: tuple) -> bool:
        """Apply one change; False when it retracts a row that is not held (it then changes nothing)."""
        if self.uk is None:
            if kind in ACCUMULATE_KINDS:
                self.bag[row] += 1
                return True
            if self.bag[row] <= 0:
                return False
            self.bag[row] -= 1
            return True
        key = tuple(row[i] for i in self.uk)
        if kind in ACCUMULATE_KINDS:
            self.by_key[key] = row          # a new row, or one replacing the key's row
            return True
        if self.by_key.get(key) != row:
            return False
        del self.by_key[key]
        return True


def raw_retractions(scenario: Scenario, inputs: Sequence[str] | None = None) -> list[int]:
    """Indexes of the events that retract a row their input has not sent (or already retracted).

    Only inputs whose retractions reach the join as they are sent count (`inputs`; default: every input
    that is not `upsert`, whose ChangelogNormalize drops a delete of an unknown key)."""
    names = set(inputs) if inputs is not None else {s.name for s in scenario.inputs if s.changelog_mode != "upsert"}
    held = {s.name: _HeldRows(s) for s in scenario.inputs if s.name in names}
    out: list[int] = []
    for i, event in enumerate(scenario.events):
        if (isinstance(event, ChangeEvent) and event.input in held
                and not held[event.input].apply(event.kind, tuple(event.row))):
            out.append(i)
    return out
