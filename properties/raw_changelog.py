"""Properties of joins fed a changelog that starts mid-stream (raw retractions; docs/semantics.md).

Flink's join operators accept a retraction of a row their state does not
hold: they join it against the other side and leave their own state as the
view's retract leaves it. Flink's own words for where such a retraction comes
from are "a CDC source started mid-stream" and "state lost to TTL"; for the
operator both are one case, a row the state does not hold. So:

* `lost_state_equals_never_sent` (`semantics: flink`): the stream a source
  started mid-way sends, run alone, emits event for event exactly what the
  same events emit after the events it did not send were sent and then all
  expired (TTL 1, the clock moved to 1 before the rest; nothing sent later
  expires before the end). The first run starts with empty state, the second
  with state that TTL emptied: any difference is the engine treating "never
  held" and "no longer held" apart;
* `correct_refuses_first_raw_retraction` (`semantics: correct`): the run
  stops with bad input at the first raw retraction, found from the events
  alone (generators/mid_stream.py, not the engine's views), and the message
  names the input and the row; a stream without one runs to its end.
"""

from __future__ import annotations

from dataclasses import replace

from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import ChangeEvent, ProcessingTimeEvent, Scenario
from converge.engine.runtime.local import run_scenario
from converge.generators.mid_stream import raw_retractions
from converge.properties.divergence import fail, require


def _plain(scenario: Scenario, prop: str) -> None:
    """Preconditions both properties share: nothing but changes, no TTL of the scenario's own."""
    require(all(isinstance(e, ChangeEvent) for e in scenario.events), prop,
            "the scenario has events other than changes")
    require(scenario.config.state_ttl_ms is None, prop, "the scenario sets its own TTL")
    require(scenario.join.interval is None, prop, "an interval join takes append-only inputs")


def lost_state_equals_never_sent(started: Scenario, before: Scenario) -> None:
    """semantics=flink: the stream `started` sent alone = the same events after `before`'s state expired."""
    prop = "lost_state_equals_never_sent"
    _plain(started, prop)
    require(replace(before, name=started.name, events=started.events) == started, prop,
            "the two parts must be cut from one scenario")
    require(started.config.semantics == "flink", prop, "semantics must be flink")
    require(started.config.mini_batch_size is None, prop, "a mini-batch bundle would span the expiry")
    require(all(s.changelog_mode != "upsert" for s in started.inputs), prop,
            "ChangelogNormalize keeps its state without TTL (docs/semantics.md), so an upsert input is excluded")
    require(all(isinstance(e, ChangeEvent) for e in before.events), prop, "the first part has non-change events")
    late = run_scenario(started).per_event
    start = len(before.events)
    expired = replace(started, config=replace(started.config, state_ttl_ms=1),
                      events=before.events + (ProcessingTimeEvent(1),) + started.events)
    after_expiry = run_scenario(expired).per_event[start + 1:]
    for i, (got, want) in enumerate(zip(late, after_expiry, strict=True)):
        if got != want:
            fail(prop, started, f"the stream started after {start} unsent events emits {got}; the same event "
                 f"after the unsent events' state expired emits {want}", event_index=i, emitted=late[:i + 1])


def correct_refuses_first_raw_retraction(started: Scenario) -> None:
    """semantics=correct: bad input at exactly the first raw retraction of `started`, naming input and row."""
    prop = "correct_refuses_first_raw_retraction"
    _plain(started, prop)
    require(started.config.semantics == "correct", prop, "semantics must be correct")
    require(started.config.per_key_order == "kept", prop, "disordered changes are not checked")
    raw = raw_retractions(started)
    try:
        run_scenario(started)
    except BadInputError as exc:
        if not raw:
            fail(prop, started, f"no event retracts a row its input has not sent, yet the run stopped: {exc}",
                 event_index=exc.event_index)
        first = started.events[raw[0]]
        assert isinstance(first, ChangeEvent)
        if exc.event_index != raw[0]:
            fail(prop, started, f"the first raw retraction is event {raw[0]}, the run stopped at "
                 f"{exc.event_index}: {exc}", event_index=raw[0])
        for part in (f"on input {first.input!r}", f"retracts row {list(first.row)}"):
            if part not in str(exc):
                fail(prop, started, f"the refusal does not say {part!r}: {exc}", event_index=raw[0])
        return
    if raw:
        fail(prop, started, f"event {raw[0]} retracts a row its input has not sent, and the run accepted it",
             event_index=raw[0])
