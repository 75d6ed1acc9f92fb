"""The known divergence of Spark's native join (FULL OUTER pairs NULL keys, docs/spark.md), without a JVM: the
built-in entry recognises the failures its minimal cases give on a stand-in with that bug, and nothing near them;
a campaign's batch counts such a case as known instead of failing (and reducing it on Spark again).

The stand-in answers as Spark's documented semantics say (every kept pair and padded row once the sentinel's
watermark passes), except that with `null_keys_equal` a NULL key equals a NULL key, which is what Spark 4.3 was
measured to do for FULL OUTER joins. Every expectation comes from DuckDB and the rule's model."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest

from converge.engine.model.native_join_batch import merge_cases
from converge.engine.model.native_join_case import SIDES, Epoch, NativeJoinCase, NativeRun, load_case
from converge.oracle.native_join import batch_answer
from converge.oracle.native_join_model import model_case
from converge.properties import exercise
from converge.properties.divergence import Divergence, PropertyFailure
from converge.properties.native_join.checks import NATIVE_PROPERTIES, check_run
from converge.properties.native_join.known import NativeRecogniser, builtin_native_known, native_case_text, native_known
from converge.systems.spark.batch_specs import BatchTally, batch_spec
from tests.support.paths import NATIVE_CASES

PROPS = {p.name: p for p in NATIVE_PROPERTIES}
FINDING = NATIVE_CASES / "bug_full_outer_null_keys_match.json"
FROM_STATE = NATIVE_CASES / "bug_full_outer_null_keys_match_from_state.json"
ENTRY = "spark-full-outer-null-keys-match"
NULL_KEY = -7   # what the stand-in puts in place of a NULL key so that NULL meets NULL


def _null_keys_equal(case: NativeJoinCase) -> NativeJoinCase:
    def fix(side: str, row: tuple) -> tuple:
        keys = {k[0] if side == "left" else k[1] for k in case.keys}
        return tuple(NULL_KEY if v is None and c in keys else v for c, v in zip(case.input(side).columns, row,
                                                                                 strict=True))
    return case.with_batches([{s: [fix(s, r) for r in b[s]] for s in SIDES} for b in case.batches])


def _stand_in(case: NativeJoinCase, *, null_keys_equal: bool = True, drop_pairs: bool = False) -> NativeRun:
    model = model_case(case)
    kept = {s: {r.id for r in model.rows if r.side == s and not r.late and not r.sentinel} for s in SIDES}
    out = list(batch_answer(_null_keys_equal(case) if null_keys_equal else case, kept).elements())
    if drop_pairs:   # another bug: every pair lost
        out = [p for p in out if p[0] is None or p[1] is None]
    epochs = Counter(r.epoch for r in model.rows)
    last = len(case.batches) + 1
    return NativeRun("ok", tuple(Epoch(e, tuple(out) if e == last else (), model.watermark(e), None, epochs.get(e, 0))
                                 for e in range(last + 1)))


def _failure(case: NativeJoinCase, prop: str = "no_late_equals_batch", **bug) -> Divergence:
    with pytest.raises(PropertyFailure) as caught:
        check_run(PROPS[prop], case, _stand_in(case, **bug))
    return caught.value.divergence


def _recognise(prop: str = "no_late_equals_batch", version: str = "4.3.0") -> NativeRecogniser:
    return NativeRecogniser(tuple(builtin_native_known()), version, prop)


def test_the_built_in_entry_has_its_minimal_case_and_its_repro_command() -> None:
    (entry,) = builtin_native_known()
    assert entry.id == ENTRY and entry.system == "spark" and entry.versions == ("4.3.0",)
    assert entry.case is not None and load_case(entry.case).batches == load_case(FINDING).batches
    assert entry.link.startswith("converge repro ") and "--system spark" in entry.link


@pytest.mark.parametrize("path", [FINDING, FROM_STATE], ids=["one-micro-batch", "from-state"])
@pytest.mark.parametrize("prop", ["no_late_equals_batch", "within_batch_bounds"])
def test_the_entry_recognises_both_findings_under_each_property_that_fails(path, prop) -> None:
    d = _failure(load_case(path), prop)
    assert "extra: [NULL] = [NULL]" in native_case_text(d)
    entry = _recognise(prop)(d)
    assert entry is not None and entry.id == ENTRY


def test_the_entry_does_not_hold_for_another_version_or_system() -> None:
    d = _failure(load_case(FINDING))
    assert _recognise(version="4.4.0")(d) is None
    flink = [replace(k, system="flink") for k in builtin_native_known()]
    assert NativeRecogniser(tuple(flink), "4.3.0", "no_late_equals_batch")(d) is None


def test_nothing_near_the_finding_is_recognised() -> None:
    case = load_case(FINDING)
    # the same pairing in a LEFT join (Spark drops NULL right keys there; a stand-in that did not would be new)
    assert _recognise()(_failure(replace(case, join="left"))) is None
    # a FULL join with non-NULL keys that loses its pair: another bug
    keyed = case.with_batches([{"left": [(1, 10000)], "right": [(1, 10000)]}])
    assert _recognise()(_failure(keyed, null_keys_equal=False, drop_pairs=True)) is None
    # the NULL-key pairing plus a lost pair of non-NULL keys in the same case: not only the known difference
    both = case.with_batches([{"left": [(None, 10000), (1, 10000)], "right": [(None, 10000), (1, 10000)]}])
    assert _recognise()(_failure(both, drop_pairs=True)) is None


class _Cache:
    """The campaign's run cache with the stand-in for Spark."""

    spark_runs = 0

    def run(self, case: NativeJoinCase) -> NativeRun:
        self.spark_runs += 1
        return _stand_in(case)


def test_a_batch_counts_the_known_case_as_known_and_still_judges_the_others() -> None:
    finding = load_case(FINDING)
    clean = finding.with_batches([{"left": [(1, 10000)], "right": [(1, 10000)]}])
    batch = merge_cases([clean, finding, clean])
    prop = PROPS["no_late_equals_batch"]
    tally = BatchTally()
    spec = batch_spec(prop, _Cache(), tally, 1, 3, _recognise())  # type: ignore[arg-type]  # a stand-in cache
    with exercise.Recording() as recording:
        spec.check(batch)
    assert tally.known == {ENTRY: 1} and tally.failed == [] and tally.examples == 3
    assert recording.exercised.known == 1 and recording.exercised.compared == 2
    # without the entry the same batch fails on the finding's case, to be reduced on Spark
    tally = BatchTally()
    with pytest.raises(PropertyFailure), exercise.Recording():
        batch_spec(prop, _Cache(), tally, 1, 3).check(batch)  # type: ignore[arg-type]
    assert [index for _, index, _ in tally.failed] == [1]


def test_no_known_drops_the_built_in_entry(tmp_path) -> None:
    assert native_known(builtin=False) == []
    assert [k.id for k in native_known()] == [ENTRY]
