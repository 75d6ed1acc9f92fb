"""Properties of regular and SEMI/ANTI joins: each check raises PropertyFailure with evidence.

Checks take a scenario (from a generator, a file, or a shrinker) and decide;
they never skip their own hard cases. Where a check needs a precondition (no
TTL, per-key order) the generator that feeds it guarantees it, and the check
asserts it rather than silently passing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from converge.engine.materialize import clean, fold, fold_history
from converge.engine.model.scenario import Scenario, require_scenario
from converge.engine.runtime.local import LocalRuntime, run_scenario
from converge.oracle.shared import shared_oracle
from converge.properties.batch import require_batch, scenario_of_batch
from converge.properties.divergence import fail, require
from converge.properties.evidence import final_answer
from converge.properties.history_check import check_history, check_history_batch, engine_outputs, engine_up_to
from converge.properties.ttl_model import TtlJoinModel


def _no_ttl(scenario: Scenario) -> bool:
    ttl = scenario.config.state_ttl_ms
    return ttl is None or (isinstance(ttl, dict) and not ttl)


def compare_histories(prop: str, scenario: Scenario, got: Sequence[Counter], want: Sequence[Counter],
                      what: str, **evidence: Any) -> None:
    """Fail at the first event after which the two histories differ; `evidence` goes into the Divergence
    (what the property has besides: the engine's `emitted` output, an `expected_final`, the `oracle_sql`)."""
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if g != w:
            fail(prop, scenario, what, event_index=i, engine=g, expected=w, **evidence)


def prefix_consistency(scenario: Scenario) -> None:
    """After every event the materialized output equals the batch answer on the input so far."""
    prop = "prefix_consistency"
    require_scenario(scenario, prop)
    require(_no_ttl(scenario) and scenario.config.semantics == "correct", prop,
             "needs no TTL and semantics=correct")
    check_history(prop, scenario, lambda: engine_outputs(scenario),
                  "materialized output differs from the DuckDB answer")


def prefix_consistency_batch(scenarios: list[Scenario]) -> None:
    """`prefix_consistency` of every scenario of a batch, the oracle asked once for all of one shape."""
    prop = "prefix_consistency"
    batch = require_batch(scenarios, prop)
    for scenario in batch:
        require(_no_ttl(scenario) and scenario.config.semantics == "correct", prop,
                "needs no TTL and semantics=correct")
    check_history_batch(prop, batch, engine_outputs, "materialized output differs from the DuckDB answer")


def final_convergence(scenario: Scenario) -> None:
    """At the end the output equals the batch answer, and no row's count was ever negative."""
    prop = "final_convergence"
    require_scenario(scenario, prop)
    require(_no_ttl(scenario), prop, "needs no TTL")
    _final_matches(prop, scenario, _engine_final(prop, scenario), shared_oracle().final(scenario))


def final_convergence_batch(scenarios: list[Scenario]) -> None:
    """`final_convergence` of every scenario of a batch, the oracle asked once for all of one shape."""
    prop = "final_convergence"
    batch = require_batch(scenarios, prop)
    for scenario in batch:
        require(_no_ttl(scenario) and scenario.join.interval is None, prop, "needs no TTL and no interval join")
    bags = []
    for scenario in batch:
        with scenario_of_batch(scenario, last=False):
            bags.append(_engine_final(prop, scenario))
    for scenario, bag, want in zip(batch, bags, shared_oracle().finals(batch), strict=True):
        with scenario_of_batch(scenario):
            _final_matches(prop, scenario, bag, want)


def _engine_final(prop: str, scenario: Scenario) -> Counter:
    """The engine's final bag; a row whose count ever went negative fails `prop` at that event."""
    bag: Counter = Counter()
    for i, items in enumerate(engine_outputs(scenario)):
        changes = [c for c in items if not hasattr(c, "watermark")]
        fold(changes, bag)
        # Only rows changed now can have turned negative (the check stops at the first negative count).
        negative = {row: bag[row] for _, row in changes if bag[row] < 0}
        if negative:
            fail(prop, scenario, f"output multiplicity went negative: {negative}", event_index=i,
                  engine=clean(bag), expected=Counter(), emitted=engine_up_to(engine_outputs(scenario), i)[1])
    return clean(bag)


def _final_matches(prop: str, scenario: Scenario, bag: Counter, want: Counter) -> None:
    if bag != want:
        fail(prop, scenario, "final output differs from the DuckDB answer",
              event_index=len(scenario.events) - 1, engine=bag, expected=want,
              emitted=engine_up_to(engine_outputs(scenario), len(scenario.events) - 1)[1],
              oracle_sql=shared_oracle().sql_for(scenario, "final"), expected_final=final_answer(scenario, want))


def interleaving_invariance(scenario: Scenario, reordered: Scenario) -> None:
    """Any interleaving that keeps each key's own order gives the same final answer."""
    prop = "interleaving_invariance"
    base = clean(fold(run_scenario(scenario).changes))
    other = clean(fold(run_scenario(reordered).changes))
    if base != other:
        fail(prop, reordered, "a per-key-order-preserving reordering changed the final answer",
              engine=other, expected=base, extra={"original": scenario})


def unique_key_views_agree(scenario: Scenario, stripped: Scenario) -> None:
    """Unique-key state views and no-unique-key views give the same answer at every prefix."""
    prop = "unique_key_views_agree"
    emitted = run_scenario(scenario).per_event
    with_uk = fold_history(emitted)
    without = fold_history(run_scenario(stripped).per_event)
    compare_histories(prop, scenario, with_uk, without,
                      "the unique-key views and the no-unique-key views disagree", emitted=emitted)


def tlp_partition(scenario: Scenario, key_sql: str, residual: str) -> None:
    """INNER joins: p, NOT p and p IS NULL partition the unconditioned result (ternary logic partitioning)."""
    prop = "tlp_partition"
    require(scenario.join.types == ("inner",), prop, "TLP holds for INNER joins only")

    def final_with(cond: str) -> Counter:
        s = replace(scenario, join=replace(scenario.join, conditions=(cond,)))
        return clean(fold(run_scenario(s).changes))

    whole = final_with(key_sql)
    parts = (final_with(f"{key_sql} AND ({residual})") + final_with(f"{key_sql} AND NOT ({residual})")
             + final_with(f"{key_sql} AND (({residual}) IS NULL)"))
    if parts != whole:
        fail(prop, scenario, f"p / NOT p / p IS NULL with p = {residual} do not add up to the join on the key",
              engine=parts, expected=whole)


def ttl_longer_than_stream(scenario: Scenario) -> None:
    """A TTL longer than the stream's processing-time span changes nothing: the batch answer."""
    prop = "ttl_longer_than_stream"
    ttl = scenario.config.state_ttl_ms
    span = max([getattr(e, "processing_time", 0) for e in scenario.events], default=0)
    require(isinstance(ttl, int) and ttl > span, prop, "needs a TTL longer than the stream")
    check_history(prop, scenario, lambda: engine_outputs(scenario),
                  "with a TTL longer than the stream the answer changed")


def ttl_matches_model(scenario: Scenario) -> None:
    """With a short TTL the output is what the TTL-aware reference model emits, at every event."""
    prop = "ttl_matches_model"
    require(scenario.config.state_ttl_ms is not None, prop, "needs a TTL")
    require(all(i.changelog_mode in ("insert_only", "retract") for i in scenario.inputs), prop,
             "the model takes retract / insert-only inputs")
    emitted = run_scenario(scenario).per_event
    got = fold_history(emitted)
    want = TtlJoinModel(scenario).run(scenario)
    compare_histories(prop, scenario, got, want, "output differs from the TTL-aware model", emitted=emitted,
                      expected_final=want[-1] if want else None)


def snapshot_restore(scenario: Scenario, cut: int, *, prop: str = "snapshot_restore") -> None:
    """Snapshot after any event, restore into a fresh runtime, continue: the same output, the end of the input
    included (an operator that buffers, such as a mini-batch bundle, flushes there)."""
    events = scenario.events
    cut = min(cut, len(events))
    whole = LocalRuntime(scenario).run().per_event
    first = LocalRuntime(scenario)
    head = [first.process_event(e) for e in events[:cut]]
    snap = first.snapshot()
    second = LocalRuntime(scenario)
    second.restore(snap)
    rest = second.run(events[cut:]).per_event if cut < len(events) else []
    if cut == len(events) and head:
        head[-1] = head[-1] + second.finish()
    restored = head + rest
    for i, (a, b) in enumerate(zip(whole, restored, strict=True)):
        if a != b:
            fail(prop, scenario, f"output differs after restoring a snapshot taken after event {cut - 1}: "
                  f"uninterrupted {a}, restored {b}", event_index=i, emitted=restored)
