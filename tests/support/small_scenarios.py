"""Small hand-built scenarios that tests in more than one folder use."""

from __future__ import annotations

from converge.engine.model.scenario_json import scenario_from_dict

AB = [{"name": "a", "columns": [["k", "BIGINT"], ["x", "BIGINT"]], "changelog_mode": "insert_only"},
       {"name": "b", "columns": [["k", "BIGINT"], ["y", "BIGINT"]], "changelog_mode": "insert_only"}]

# INNER join, a.x NULL: `a.x > b.y` is NULL, so p and NOT p are both not TRUE and only `p IS NULL` holds.
TLP = scenario_from_dict({
    "name": "tlp with a NULL", "inputs": AB,
    "join": {"inputs": ["a", "b"], "types": ["inner"], "conditions": ["a.k = b.k"]},
    "events": [{"input": "a", "kind": "+I", "row": [1, None]}, {"input": "b", "kind": "+I", "row": [1, 5]}],
})
