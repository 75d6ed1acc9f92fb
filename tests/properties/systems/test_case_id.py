"""The scenario as the Flink adapter runs it (its case id column), the ids it gives, and finding #12 classified with it
(since withdrawn: the -U ahead of its +U was the adapter's arrival, docs/flink-findings.md #12)."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from dataclasses import replace

import pytest

from converge.engine.model.changelog import Change
from converge.engine.model.scenario import ChangeEvent, Config, InputSpec, JoinSpec, ProcessingTimeEvent, Scenario
from converge.engine.model.scenario_json import scenario_from_dict
from converge.engine.model.system import CaseResult
from converge.engine.runtime.local import run_scenario
from converge.properties.systems.case_id import adapter_case_ids, adapter_shape, with_case_id, without_case_id
from tests.support.paths import SCENARIOS

A = InputSpec("a", (("k", "BIGINT"), ("x", "BIGINT")), ("k",), "retract")
B = InputSpec("b", (("k", "BIGINT"), ("cid", "BIGINT")), None, "insert_only")


def _scenario(a: InputSpec = A, b: InputSpec = B, condition: str = "a.k = b.k") -> Scenario:
    return Scenario("t", (a, b), JoinSpec(("a", "b"), ("left",), (condition,)), Config(mini_batch_size=2),
                    (ChangeEvent("a", "+I", (1, 5)), ChangeEvent("b", "+I", (1, 7))))


def test_the_case_id_leads_every_row_key_and_condition_and_leaves_the_outputs() -> None:
    s = _scenario()
    w = with_case_id(s, 3)
    assert w is not None
    a, b = w.inputs
    assert a.columns[0] == ("cid_", "INTEGER") and a.unique_key == ("cid_", "k")   # b has a column "cid"
    assert b.columns[0] == ("cid_", "INTEGER") and b.unique_key is None
    assert w.join.conditions == ("a.cid_ = b.cid_ AND (a.k = b.k)",)
    assert [e.row for e in w.events if isinstance(e, ChangeEvent)] == [(3, 1, 5), (3, 1, 7)]
    out = [c for items in run_scenario(w).per_event for c in items if isinstance(c, Change)]
    assert without_case_id(s, out) == [Change("+I", (1, 5, 1, 7))]
    three = replace(s, inputs=(*s.inputs, replace(B, name="c")),
                    join=JoinSpec(("a", "b", "c"), ("left", "inner"), ("a.k = b.k", "a.k = c.k")))
    assert with_case_id(three, 0) is None


def test_the_adapter_numbers_each_job_shapes_cases_per_request() -> None:
    renamed = replace(_scenario(), inputs=(replace(A, columns=(("key", "BIGINT"), ("x", "BIGINT")), unique_key=("key",)),
                                           B), join=JoinSpec(("a", "b"), ("left",), ("a.key = b.k",)))
    other = replace(_scenario(), join=JoinSpec(("a", "b"), ("inner",), ("a.k = b.k",)))
    assert adapter_shape(renamed) == adapter_shape(_scenario()) != adapter_shape(other)   # names by position
    ok, unsupported = CaseResult("ok", changelog=()), CaseResult("unsupported", message="no")
    cases = [_scenario(), other, renamed, _scenario(), other]
    results = [ok, ok, unsupported, ok, ok]
    assert adapter_case_ids(cases, results, 20) == [0, 0, 1, 1, 1]     # the unsupported case takes no id
    assert adapter_case_ids(cases, results, 2) == [0, 0, 0, 0, 0]       # one request per two cases


# ---------------------------------------------------------------- finding #12 (docs/flink-findings.md; withdrawn)

FINDING_12 = "flink_2_3_minibatch_left_keyless_intermittent.json"
FLINK_FIRST = Change("-D", (0, 2, 1, None, None, None, None, None))     # what Flink 2.3.0 emitted first
FLINK_KEPT = (0, 2, 1, None, 0, 3, None, "ab")                            # and the joined row it kept


def _bundled(events: list, cuts: set[int]) -> list[Change]:
    """The finding's case with a bundle ending after each event in `cuts` (a latency flush), on converge's
    semantics=flink model of the adapter's rows (case id 0): the exact order inside every bundle."""
    base = scenario_from_dict(json.loads((SCENARIOS / "systems" / FINDING_12).read_text()))
    timed: list = []
    for i, event in enumerate(events):
        timed.append(event)
        if i in cuts:
            timed.append(ProcessingTimeEvent(len(timed)))
    s = replace(base, events=tuple(timed), config=replace(base.config, semantics="flink", mini_batch_size=100,
                                                           mini_batch_latency_ms=1))
    widened = with_case_id(s, 0)
    assert widened is not None
    out = [c for items in run_scenario(widened).per_event for c in items if isinstance(c, Change)]
    return without_case_id(s, out)


def _final(changes: list[Change]) -> Counter:
    live: Counter = Counter()
    for c in changes:
        live[c.row] += 1 if c.kind in ("+I", "+U") else -1
    return +live


def _flinks_output(out: list[Change]) -> bool:
    return bool(out) and out[0] == FLINK_FIRST and Change("+I", FLINK_KEPT) in out


def _events() -> tuple[list, Counter]:
    data = json.loads((SCENARIOS / "systems" / FINDING_12).read_text())
    s = scenario_from_dict(data)
    return list(s.events), Counter(tuple(r) for r in data["expect_final"])


def _splits(n: int, exhaustive: bool) -> list[set[int]]:
    if exhaustive:
        return [set(c) for r in range(n) for c in itertools.combinations(range(n - 1), r)]
    return [set(), {3}, {3, 7}] + [{i} for i in range(n - 1)]             # {3, 7}: the adapter's bundles of 4


@pytest.mark.parametrize("exhaustive", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_finding_12_is_no_order_inside_a_bundle_but_a_retraction_that_overtook_its_insert(exhaustive: bool) -> None:
    """As sent, no split of the events into bundles gives Flink's output: a's +U (0,2,1,NULL) and its -U share a
    hash list of InputSideHasNoUniqueKeyBundle when they share a bundle and cancel in either order, and apart they
    are joined in arrival order; every split gives the batch answer. With the -U ahead of its +U (arrived
    reordered), the split after the first three events gives exactly Flink's first output and kept row."""
    events, batch = _events()
    for cuts in _splits(len(events), exhaustive):
        out = _bundled(events, cuts)
        assert _final(out) == batch and not _flinks_output(out), cuts
    overtaken = events[:2] + [events[4], events[3], events[2]] + events[5:]
    assert _flinks_output(_bundled(overtaken, {2}))
