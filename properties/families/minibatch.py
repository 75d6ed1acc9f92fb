"""The mini-batch family: the bundled join against the record-by-record one and against DuckDB, a snapshot
with a partly filled bundle, and Flink's two known mini-batch anomalies (docs/minibatch.md)."""

from __future__ import annotations

from hypothesis import strategies as st

from converge.generators.minibatch import flink_34380_cases, minibatch_variants, suppressed_padding_cases
from converge.properties import minibatch, wellformed
from converge.properties.spec import PropertySpec

MINIBATCH = "minibatch"


def _single(strategy: st.SearchStrategy) -> st.SearchStrategy[tuple]:
    return strategy.map(lambda s: (s,))


@st.composite
def _snapshot(draw: st.DrawFn) -> tuple:
    scenario = draw(st.one_of(minibatch_variants(purpose="any"), minibatch_variants(semantics="flink", purpose="any")))
    return scenario, draw(st.integers(0, len(scenario.events)))


PROPERTIES: list[PropertySpec] = [
    PropertySpec(MINIBATCH, "equals_off", lambda: _single(minibatch_variants()), minibatch.minibatch_equals_off,
                 200, "mini-batch on = off: the same materialized output after every bundle and at the end"),
    PropertySpec(MINIBATCH, "prefix_consistency", lambda: _single(minibatch_variants(purpose="oracle")),
                 minibatch.minibatch_prefix_consistency, 150,
                 "after every bundle the materialized output equals DuckDB's answer on the input so far"),
    PropertySpec(MINIBATCH, "snapshot_restore", _snapshot, minibatch.minibatch_snapshot_restore, 100,
                 "a snapshot with a partly filled bundle, restored and continued: identical output"),
    PropertySpec(MINIBATCH, "changelog_wellformed", lambda: _single(minibatch_variants(purpose="oracle")),
                 wellformed.changelog_wellformed, 150,
                 "the bundled output never retracts a row it does not hold; no padding beside a match"),
    PropertySpec(MINIBATCH, "flink_34380", flink_34380_cases, minibatch.flink_34380, 100,
                 "+I, -U, +U of one key in one bundle: +U under semantics=flink (FLINK-34380), +I under correct",
                 suite_examples=20, verdict="reproduced"),
    PropertySpec(MINIBATCH, "suppressed_padding", suppressed_padding_cases, minibatch.suppressed_padding, 100,
                 "a -U/+U pair that stops matching: flink suppresses the padding that must come back, correct "
                 "emits it", suite_examples=20, verdict="reproduced"),
]
