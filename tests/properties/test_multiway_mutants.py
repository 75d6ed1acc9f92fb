"""Seeded bugs in the multi-way join: each must make a multiway property fail, shrunk to a tiny scenario."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from converge.engine.model.scenario import ChangeEvent
from converge.engine.model.scenario_json import load_scenario
from converge.engine.operators.multi_join import StreamingMultiJoinOperator
from converge.properties.campaign import run_property
from converge.properties.registry import select
from converge.properties.replay import replay_path
from converge.reports.failure import failure_reporter

_original_has_other_match = StreamingMultiJoinOperator._has_other_match


def _never_first_match(self, j, rows, r, accumulate):
    """Bug: an accumulate always 'finds' another partner, so the padding is not retracted on a first match."""
    return True if accumulate else _original_has_other_match(self, j, rows, r, accumulate)


def _counts_itself(self, j, rows, r, accumulate):
    """Bug: a retracted record counts as its own partner, so the padding never comes back."""
    return True if not accumulate else _original_has_other_match(self, j, rows, r, accumulate)


def _changes(scenario) -> list[ChangeEvent]:
    return [e for e in scenario.events if isinstance(e, ChangeEvent)]


def test_padding_not_retracted_on_first_match_is_caught(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(StreamingMultiJoinOperator, "_has_other_match", _never_first_match)
    (spec,) = select("multiway", "prefix_consistency")
    result = run_property(spec, max_examples=400, seed=516, on_failure=failure_reporter(tmp_path))
    assert result.failure is not None, "the broken association count went unnoticed"
    d = result.failure.divergence
    changes = _changes(d.scenario)
    # shrunk to a few inserts (multi-way mutants are held to at most 6 events), the last one being the first partner on
    # a LEFT-joined input. How few depends on the chain length Hypothesis settles on, which varies with the
    # constants Hypothesis collects from the modules loaded in the process (2-3 alone, 4 under xdist).
    assert len(changes) <= 6 and all(e.kind == "+I" for e in changes)
    left_inputs = {n for n, t in zip(d.scenario.join.inputs[1:], d.scenario.join.types, strict=False) if t == "left"}
    assert changes[-1].input in left_inputs | {d.scenario.join.inputs[0]}
    extra = d.engine - d.expected
    assert extra and all(None in row for row in extra), "the leftover row must be the stale NULL padding"
    (report,) = [p for p in tmp_path.glob("*.json")]
    assert load_scenario(report).events == d.scenario.events
    (broken,) = replay_path(report)
    assert not broken.ok
    monkeypatch.undo()
    (fixed,) = replay_path(report)
    assert fixed.ok, fixed.problems


def test_padding_not_reemitted_after_last_match_is_caught(monkeypatch) -> None:
    monkeypatch.setattr(StreamingMultiJoinOperator, "_has_other_match", _counts_itself)
    (spec,) = select("multiway", "matches_binary_chain")
    result = run_property(spec, max_examples=600, seed=516)
    assert result.failure is not None, "the broken association count went unnoticed"
    d = result.failure.divergence
    changes = _changes(d.scenario)
    # shrunk to a row, a partner, and the partner's retraction (a delete, or the -U of an update)
    assert len(changes) <= 4 and any(e.kind in ("-D", "-U") for e in changes[2:])
    assert Counter(d.expected) - Counter(d.engine), "the re-emitted padding must be missing"


def test_state_that_keeps_retracted_records_is_caught(monkeypatch) -> None:
    original = StreamingMultiJoinOperator.process

    def keeps_retracted(self, input_index, change, ctx):
        if change.kind in ("-U", "-D"):
            out: list = []
            self._join(input_index, change.kind, change.row, False, out)
            return out
        return original(self, input_index, change, ctx)

    monkeypatch.setattr(StreamingMultiJoinOperator, "process", keeps_retracted)
    (spec,) = select("multiway", "state_is_live_inputs")
    result = run_property(spec, max_examples=300, seed=516)
    assert result.failure is not None
    assert len(_changes(result.failure.divergence.scenario)) <= 3


@pytest.mark.slow
def test_mutants_are_caught_with_any_seed(monkeypatch) -> None:
    for bug, name in ((_never_first_match, "prefix_consistency"), (_counts_itself, "prefix_consistency"),
                      (_never_first_match, "matches_binary_chain"), (_counts_itself, "matches_binary_chain")):
        monkeypatch.setattr(StreamingMultiJoinOperator, "_has_other_match", bug)
        (spec,) = select("multiway", name)
        for seed in range(5):
            result = run_property(spec, max_examples=1000, seed=seed, shrink=False)
            assert result.failure is not None, (bug.__name__, name, seed)
