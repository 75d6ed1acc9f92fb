"""The raw-changelog family: streams that start mid-stream, so retractions name rows the join never saw.

Under `semantics: flink` the engine joins them as Flink's operators do; under
`semantics: correct` it refuses the first one (docs/semantics.md, "Raw
changelogs"; properties/raw_changelog.py). The streams are cuts of the
regular and multi-way generators' valid changelogs (generators/mid_stream.py).
"""

from __future__ import annotations

from hypothesis import strategies as st

from converge.generators.mid_stream import mid_stream_cuts
from converge.generators.minibatch import minibatch_variants
from converge.generators.multiway import multiway_scenarios
from converge.generators.scenarios import regular_join_scenarios
from converge.properties import minibatch, raw_changelog, regular
from converge.properties.spec import PropertySpec

RAW = "raw_changelog"

# Every join type and state view; upsert inputs go through ChangelogNormalize, which drops a delete of a key it
# does not know, so they add no raw retraction (and keep normalize state TTL cannot expire: excluded).
_MODES = ("insert_only", "retract", "all")


def _flink_streams() -> st.SearchStrategy:
    return st.one_of(regular_join_scenarios(modes=_MODES, semantics="flink"),
                     multiway_scenarios(modes=_MODES, extra_configs=({"semantics": "flink"},)))


def _correct_streams() -> st.SearchStrategy:
    return st.one_of(regular_join_scenarios(), multiway_scenarios())


@st.composite
def _started_snapshot(draw: st.DrawFn, scenarios: st.SearchStrategy) -> tuple:
    started, _ = draw(mid_stream_cuts(scenarios))
    return started, draw(st.integers(0, len(started.events)))


PROPERTIES: list[PropertySpec] = [
    PropertySpec(RAW, "lost_state_equals_never_sent", lambda: mid_stream_cuts(_flink_streams()),
                 raw_changelog.lost_state_equals_never_sent, 150,
                 "flink semantics: a stream started mid-way emits what the same events emit after the earlier "
                 "ones' state expired"),
    PropertySpec(RAW, "correct_refuses_first_raw_retraction", lambda: mid_stream_cuts(_correct_streams()).map(lambda cut: cut[:1]),
                 raw_changelog.correct_refuses_first_raw_retraction, 150,
                 "correct semantics: bad input at exactly the first retraction of a row never sent, naming it"),
    PropertySpec(RAW, "snapshot_restore", lambda: _started_snapshot(_flink_streams()), regular.snapshot_restore,
                 100, "flink semantics, started mid-way: snapshot, restore, continue: identical output"),
    PropertySpec(RAW, "minibatch_snapshot_restore",
                 lambda: _started_snapshot(minibatch_variants(semantics="flink", purpose="any")),
                 minibatch.minibatch_snapshot_restore, 100,
                 "flink semantics, mini-batch, started mid-way: a snapshot with a partly filled bundle, restored"),
]
