"""Properties of the mini-batch join (docs/minibatch.md): each check raises PropertyFailure with evidence.

Where a bundle ends is derived here from the scenario alone, not asked of the
engine. The count trigger counts the elements that reach the join operator,
so this module keeps its own model of what each change event sends there
(`join_elements`): one element from an insert-only, retract or raw upsert
input; from an upsert input behind ChangelogNormalize (which keeps the last
row per unique key and has no TTL, docs/semantics.md) 1 for a new key, 2 (a
-U/+U pair) for a known key, 0 for an unchanged row (2 when the input has
TTL: then Flink forwards it to refresh the state), 1 for a delete of a known
key and 0 for one of an unknown key. A bundle ends after every
`mini_batch_size`-th element; where that falls between the two elements of
one event the output after that event is a mix no record-by-record run shows,
so only the events that end exactly on a bundle end are compared (and the end
of the input, which ends the last bundle).

State TTL is taken as long as nothing expires during the stream (state
then carries expiry times, and ChangelogNormalize forwards unchanged rows);
raw upsert input (no normalize) and state that expires are refused, for the
reasons `_checkable` gives (docs/minibatch.md shows a case of each).

Outputs are folded into bags here too (a retract changelog's meaning:
accumulate +1, retract -1), without the engine's materializer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from converge.engine.model.changelog import Change, sign
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import ChangeEvent, ProcessingTimeEvent, Scenario, Semantics, require_scenario
from converge.engine.runtime.local import LocalRuntime
from converge.oracle.shared import shared_oracle
from converge.properties.divergence import fail, require
from converge.properties.regular import final_convergence, snapshot_restore


def _add(bag: Counter, items: Iterable[object]) -> None:
    for item in items:
        if isinstance(item, Change):
            bag[item.row] += sign(item.kind)


def _clean(bag: Counter) -> Counter:
    return Counter({row: n for row, n in bag.items() if n})


def join_elements(scenario: Scenario) -> list[int]:
    """Per event, how many elements reach the join operator (the module docstring's model)."""
    cfg = scenario.config
    normalized = {s.name: s for s in scenario.inputs if s.changelog_mode == "upsert" and cfg.changelog_normalize}
    last: dict[tuple[str, tuple], tuple] = {}
    out: list[int] = []
    for event in scenario.events:
        if not isinstance(event, ChangeEvent):
            out.append(0)
            continue
        spec = normalized.get(event.input)
        if spec is None:
            out.append(1)
            continue
        row = tuple(event.row)
        where = (event.input, tuple(row[spec.index_of(c)] for c in spec.unique_key or ()))
        old = last.get(where)
        if event.kind == "-D":
            out.append(0 if last.pop(where, None) is None else 1)
            continue
        last[where] = row
        if old is None:
            out.append(1)
        elif old == row and cfg.ttl_for(event.input) is None:
            out.append(0)
        else:
            out.append(2)
    return out


def bundle_ends(scenario: Scenario) -> list[int]:
    """Indexes of the events whose last element filled a bundle (the count trigger flushed it right
    there), plus the last event (the end of the input flushes the rest)."""
    size = scenario.config.mini_batch_size
    assert size is not None
    ends: list[int] = []
    total = 0
    for i, n in enumerate(join_elements(scenario)):
        total += n
        if n and total % size == 0:
            ends.append(i)
    last = len(scenario.events) - 1
    if last >= 0 and (not ends or ends[-1] != last):
        ends.append(last)
    return ends


def _checkable(prop: str, scenario: Scenario) -> None:
    require_scenario(scenario, prop)
    cfg = scenario.config
    require(cfg.mini_batch_size is not None and cfg.mini_batch_latency_ms is None, prop,
            "needs mini_batch_size and no latency trigger")
    require(len(scenario.join.inputs) == 2 and scenario.join.types[0] in ("inner", "left", "right", "full"), prop,
            "needs one INNER / LEFT / RIGHT / FULL join")
    require(not cfg.dedupe_before_join, prop, "needs no dedupe")
    require(all(s.changelog_mode != "upsert" for s in scenario.inputs) or cfg.changelog_normalize, prop,
            "needs no raw upsert input: a raw +U replaces the key's earlier version without a -U, so a bundle "
            "that cancels it against a later -D leaves that version in the state (docs/minibatch.md)")
    span = max([e.processing_time for e in scenario.events if isinstance(e, ProcessingTimeEvent)], default=0)
    require(all(ttl is None or ttl > span for ttl in (cfg.ttl_for(s.name) for s in scenario.inputs)), prop,
            "needs no state that expires during the stream: the fold cancels a retraction against an accumulate "
            "without looking at the state, so a retraction of an expired row is not the no-op it is record by "
            "record (docs/minibatch.md)")
    require(all(isinstance(e, (ChangeEvent, ProcessingTimeEvent)) for e in scenario.events), prop,
            "needs change and processing-time events only")


def applicable(scenario: Scenario) -> list[tuple[str, Callable[[Scenario], None]]]:
    """The properties that decide a mini-batch scenario file with no written expectations.

    The record-by-record histories do not apply: between bundle ends a mini-batch join holds back what a
    record-by-record one has emitted. With semantics=correct: mini-batch equals record-by-record at every bundle
    end, the DuckDB answer at every bundle end (no TTL) and at the end of the input (the last bundle flushed),
    each where its preconditions (`_checkable`) hold. semantics=flink folds like Flink, anomalies included
    (FLINK-34380, the suppressed padding): no oracle decides it, so nothing applies."""
    if scenario.config.semantics != "correct":
        return []
    props: list[tuple[str, Callable[[Scenario], None]]] = []
    checkable = _why_not(scenario) is None
    if checkable:
        props.append(("minibatch_equals_off", minibatch_equals_off))
    if all(scenario.config.ttl_for(s.name) is None for s in scenario.inputs):
        if checkable:
            props.append(("minibatch_prefix_consistency", minibatch_prefix_consistency))
        if _why_not(replace(scenario, config=replace(scenario.config, mini_batch_latency_ms=None))) is None:
            props.append(("final_convergence", final_convergence))
    return props


def _why_not(scenario: Scenario) -> str | None:
    """Why the mini-batch properties do not apply to `scenario` (None when they do)."""
    try:
        _checkable("minibatch", scenario)
    except BadInputError as exc:
        return str(exc)
    return None


def _bags_at(per_event: Sequence[Sequence[object]], positions: Sequence[int]) -> list[Counter]:
    bag: Counter = Counter()
    out: list[Counter] = []
    wanted = set(positions)
    for i, items in enumerate(per_event):
        _add(bag, items)
        if i in wanted:
            out.append(_clean(bag))
    return out


def minibatch_equals_off(scenario: Scenario) -> None:
    """Mini-batch on and off give the same materialized output after every bundle and at the end."""
    prop = "minibatch_equals_off"
    _checkable(prop, scenario)
    ends = bundle_ends(scenario)
    on = LocalRuntime(scenario).run().per_event
    off_scenario = replace(scenario, config=replace(scenario.config, mini_batch_size=None))
    off = LocalRuntime(off_scenario).run().per_event
    for i, got, want in zip(ends, _bags_at(on, ends), _bags_at(off, ends), strict=True):
        if got != want:
            fail(prop, scenario, "mini-batch output differs from the record-by-record join at a bundle end",
                 event_index=i, engine=got, expected=want)


def minibatch_prefix_consistency(scenario: Scenario) -> None:
    """After every bundle (and at the end) the materialized output equals DuckDB's answer on the input so far."""
    prop = "minibatch_prefix_consistency"
    _checkable(prop, scenario)
    require(scenario.config.semantics == "correct", prop, "needs semantics=correct")
    require(not scenario.config.state_ttl_ms, prop, "needs no TTL (DuckDB's answer has none)")
    ends = bundle_ends(scenario)
    got = _bags_at(LocalRuntime(scenario).run().per_event, ends)
    history = shared_oracle().history(scenario)
    for i, bag in zip(ends, got, strict=True):
        if bag != history[i]:
            fail(prop, scenario, "materialized output at a bundle end differs from the DuckDB answer",
                 event_index=i, engine=bag, expected=history[i])


def minibatch_snapshot_restore(scenario: Scenario, cut: int) -> None:
    """A snapshot taken with a partly filled bundle, restored into a fresh runtime, continues identically."""
    prop = "minibatch_snapshot_restore"
    require_scenario(scenario, prop)
    snapshot_restore(scenario, cut, prop=prop)


# ---------------------------------------------------------------- the known anomalies, case by case


def _kinds(per_event: Sequence[Sequence[object]]) -> list[tuple[str, tuple]]:
    return [(c.kind, c.row) for items in per_event for c in items if isinstance(c, Change)]


def flink_34380(scenario: Scenario, joined: tuple) -> None:
    """A key with nothing in state gets +I a, -U a, +U b in one bundle; `joined` is b's one joined row
    (the other side holds one matching row). semantics=flink emits it as +U (FLINK-34380), correct as +I;
    the materialized answer is the same."""
    prop = "minibatch_flink_34380"
    require_scenario(scenario, prop)
    require(scenario.join.types == ("inner",), prop, "an INNER join forwards the input's row kind")
    emitted_as: tuple[tuple[Semantics, str], ...] = (("flink", "+U"), ("correct", "+I"))
    for semantics, kind in emitted_as:
        s = replace(scenario, config=replace(scenario.config, semantics=semantics))
        out = _kinds(LocalRuntime(s).run().per_event)
        if out != [(kind, joined)]:
            fail(prop, s, f"semantics={semantics}: expected exactly [{kind} {list(joined)}], got "
                 f"{[f'{k} {list(r)}' for k, r in out]}", event_index=len(s.events) - 1)


def suppressed_padding(scenario: Scenario, padded: tuple) -> None:
    """An outer row matched only by the old version of a unique key: its update to a row that no longer
    matches arrives as a -U/+U pair in one bundle. semantics=flink suppresses the padding that must come back
    (the row `padded` is missing at the end); semantics=correct emits it."""
    prop = "minibatch_suppressed_padding"
    require_scenario(scenario, prop)
    results = {}
    for semantics in ("flink", "correct"):
        s = replace(scenario, config=replace(scenario.config, semantics=semantics))
        bag: Counter = Counter()
        _add(bag, (c for items in LocalRuntime(s).run().per_event for c in items))
        results[semantics] = _clean(bag)
    want = shared_oracle().final(scenario)
    if results["correct"] != want:
        fail(prop, scenario, "semantics=correct: the final answer differs from DuckDB's",
             event_index=len(scenario.events) - 1, engine=results["correct"], expected=want)
    if want.get(padded) != 1 or results["flink"].get(padded, 0) != 0:
        fail(prop, scenario, f"semantics=flink: expected the padded row {list(padded)} to be lost",
             event_index=len(scenario.events) - 1, engine=results["flink"], expected=want)
