"""A diff's legend names whose output it is: the system under test's title on a system's divergence, converge's
engine otherwise (issue 41 row 7: the report said "engine" for Flink's output)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from converge.engine.model.scenario_json import scenario_from_dict
from converge.properties.divergence import Divergence
from converge.reports.failure import write_failure_report
from tests.support.small_scenarios import AB

CASE = scenario_from_dict({
    "name": "one match", "inputs": AB, "join": {"inputs": ["a", "b"], "types": ["inner"], "conditions": ["a.k = b.k"]},
    "config": {}, "events": [{"input": "a", "kind": "+I", "row": [1, 1]}, {"input": "b", "kind": "+I", "row": [1, 2]}]})
GOT, WANT = Counter({(1, 1, 1, 3): 1}), Counter({(1, 1, 1, 2): 1})


def test_a_systems_divergence_names_the_system_in_its_legends(tmp_path: Path) -> None:
    d = Divergence("final_equals_oracle", CASE, "differs", engine=GOT, expected=WANT,
                   extra={"system": "Flink 2.3.0", "system_name": "flink"})
    assert "(+ Flink 2.3.0 only, - expected only)" in d.describe() and "engine" not in d.describe()
    md = write_failure_report(d, tmp_path, seed=1, family="systems")[1].read_text()
    assert "## Output after the final answer: Flink 2.3.0 vs expected" in md, md
    assert "`+` only in Flink 2.3.0's output, `-` only in the expected answer; 0 row(s) agree." in md, md
    assert "engine vs expected" not in md and "only in the engine's output" not in md


def test_the_engines_own_divergence_still_says_engine(tmp_path: Path) -> None:
    d = Divergence("prefix_consistency", CASE, "differs", engine=GOT, expected=WANT)
    assert "(+ engine only, - expected only)" in d.describe()
    md = write_failure_report(d, tmp_path, seed=1, family="regular")[1].read_text()
    assert "## Output after the final answer: engine vs expected" in md
    assert "`+` only in the engine's output" in md
