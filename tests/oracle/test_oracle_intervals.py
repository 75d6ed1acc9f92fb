"""oracle.history_intervals: the interval form of the history agrees with the snapshot form.

The snapshot form is itself held to the final answer of every prefix
(tests/oracle/test_oracle.py); here the interval form is held to both, on the
oracle's own random chains and on the project's generators (regular, upsert,
multi-way).
"""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from converge.engine.model.scenario_json import scenario_from_dict
from converge.generators.multiway import ALL_TYPES, multiway_scenarios
from converge.generators.scenarios import regular_join_scenarios
from converge.oracle import DuckDBOracle
from converge.oracle.history_intervals import IntervalOracle
from tests.conftest import examples
from tests.support.oracle_scenarios import OPTIMIZED_CON, random_scenarios

SNAPSHOTS = DuckDBOracle()
INTERVALS = IntervalOracle()
INTERVALS_OPTIMIZED = IntervalOracle(OPTIMIZED_CON)


def _changes_from_history(history: list[Counter]) -> list[tuple[int, int, tuple]]:
    out = []
    before: Counter = Counter()
    for p, now in enumerate(history):
        for row in set(before) | set(now):
            d = now[row] - before[row]
            if d:
                out.append((p, d, row))
        before = now
    return sorted(out, key=repr)


def _agree(s) -> None:
    want = SNAPSHOTS.history(s)
    assert INTERVALS.history(s) == want
    assert sorted(INTERVALS.changes(s), key=repr) == _changes_from_history(want)
    if s.events:
        last = len(s.events) - 1
        assert INTERVALS.answer_at(s, last) == SNAPSHOTS.final(s)


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_scenarios())
def test_intervals_agree_with_snapshots_on_random_chains(obj: dict) -> None:
    s = scenario_from_dict(obj)
    _agree(s)
    assert INTERVALS_OPTIMIZED.history(s) == INTERVALS.history(s)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(regular_join_scenarios(), regular_join_scenarios(modes=("upsert",)),
                 multiway_scenarios(num_inputs=(3, 4), join_types=ALL_TYPES, breaks=(False, True))))
def test_intervals_agree_with_snapshots_on_generated_scenarios(s) -> None:
    _agree(s)
