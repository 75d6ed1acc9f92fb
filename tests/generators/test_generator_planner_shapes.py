"""The generators draw the shapes behind real Flink planner and multi-way bugs (issue 25, docs/generators.md).

Composite keys whose columns pair up in another order on the two inputs, key columns of two types, equalities
inside an OR, chains that mix changelog modes, key columns that hold one value or different ones in one row,
and a -U/+U pair inside one bundle that starts or stops a match. Each shape is recognised here by the test's own
reading of the scenario (not by properties/coverage.py), and a planted key-column swap is caught by an
engine-versus-oracle comparison within a bounded number of examples.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace

from hypothesis import HealthCheck, Phase, find, given, settings

from converge.engine.materialize import clean
from converge.engine.model.scenario import ChangeEvent, Config, InputSpec, JoinSpec, Scenario
from converge.engine.model.system import Capabilities
from converge.engine.runtime.local import run_scenario
from converge.generators.changelog import build_events, ops_strategy
from converge.generators.interval import interval_join_scenarios
from converge.generators.minibatch import match_flip_cases
from converge.generators.multiway import multiway_scenarios
from converge.generators.scenarios import regular_join_scenarios
from converge.generators.shapes import same_shape
from converge.oracle import DuckDBOracle
from converge.properties.systems import specs

SHRUNK = settings(max_examples=400, database=None, deadline=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))
FIND = settings(SHRUNK, phases=[Phase.generate])  # the first example found: these tests ask whether, not which
_KEY = re.compile(r"\b(\w+)\.(\w+) (?:=|IS NOT DISTINCT FROM) (\w+)\.(\w+)")


def _top_level_pairs(condition: str, left: str, right: str) -> list[tuple[str, str]]:
    """(left column, right column) of the equalities ANDed at the top of `condition` (depth-0 text only)."""
    depth, top = 0, []
    for ch in condition:
        depth += ch == "("
        top.append(ch if depth == 0 else " ")
        depth -= ch == ")"
    flat = "".join(top)
    return [(m[2], m[4]) if m[1] == left else (m[4], m[2]) for m in _KEY.finditer(flat)
            if {m[1], m[3]} == {left, right}]


def _crossed(s: Scenario) -> bool:
    """Some join pairs two or more key columns in another order of positions on its two inputs."""
    names = list(s.join.inputs)
    specs_by_name = {i.name: i for i in s.inputs}
    for i, cond in enumerate(s.join.conditions):
        for left in names[: i + 1]:
            pairs = _top_level_pairs(cond, left, names[i + 1])
            lpos = [specs_by_name[left].index_of(c) for c, _ in pairs]
            rpos = [specs_by_name[names[i + 1]].index_of(c) for _, c in pairs]
            if len(pairs) >= 2 and [r for _, r in sorted(zip(lpos, rpos, strict=False))] != sorted(rpos):
                return True
    return False


def _final(s: Scenario) -> Counter:
    bag: Counter = Counter()
    for change in run_scenario(s).changes:
        bag[change.row] += 1 if change.kind in ("+I", "+U") else -1
    return clean(bag)


# ---------------------------------------------------------------- the shapes are drawn


def test_a_composite_key_is_drawn_with_its_columns_in_another_order_on_each_side() -> None:
    s = find(regular_join_scenarios(), _crossed, settings=FIND)
    assert len(_top_level_pairs(s.join.conditions[0], "a", "b")) >= 2


def test_a_multiway_chain_is_drawn_with_crossed_key_positions_and_mixed_modes() -> None:
    def wanted(s: Scenario) -> bool:
        return _crossed(s) and len({i.changelog_mode for i in s.inputs}) >= 2 and "upsert" in {
            i.changelog_mode for i in s.inputs}

    s = find(multiway_scenarios(modes=("insert_only", "retract", "upsert")), wanted, settings=FIND)
    assert len(s.inputs) >= 3


def test_bigint_and_varchar_key_columns_are_drawn_together() -> None:
    def mixed(s: Scenario) -> bool:
        a = dict(s.inputs[0].columns)
        return len({a[c] for c, _ in _top_level_pairs(s.join.conditions[0], "a", "b")}) == 2

    find(regular_join_scenarios(), mixed, settings=FIND)


def test_equalities_inside_an_or_are_drawn_in_every_family() -> None:
    inside_or = re.compile(r"\w\.\w+ = \w\.\w+ OR |OR \(?\w\.\w+ = \w\.\w+")
    for strategy in (regular_join_scenarios(), multiway_scenarios(), interval_join_scenarios()):
        s = find(strategy, lambda s: any(inside_or.search(c) for c in s.join.conditions), settings=FIND)
        assert " OR " in " ".join(s.join.conditions)


def test_key_columns_hold_one_value_in_some_rows_and_different_ones_in_others() -> None:
    """The wide multi-way domain draws k and id apart, and the tie flag sets them equal on purpose."""
    spec = InputSpec("a", (("k", "BIGINT"), ("id", "BIGINT"), ("v", "BIGINT")))
    wide = (0, 1, 2, 3, 4, None)

    def both(ops: list) -> bool:
        rows = [e.row for e in build_events([spec], [("k", "id")], ops, key_domain=wide, tie_keys=True)]
        return any(r[0] is not None and r[0] == r[1] for r in rows) and any(
            None not in r[:2] and r[0] != r[1] for r in rows)

    find(ops_strategy(1, [3], max_ops=6, allow_advance=False), both, settings=FIND)


def test_shrinking_falls_back_to_the_plain_key() -> None:
    """A property that holds on everything but joins shrinks to the simplest key form and the default layout."""
    s = find(regular_join_scenarios(), lambda s: True, settings=SHRUNK)
    assert s.join.conditions[0] == "a.k = b.k"
    assert [c for c, _ in s.inputs[1].columns] == ["k", "id", "y", "s"]


# ---------------------------------------------------------------- engine and oracle read the new forms alike


def _binary(condition: str, jtype: str, rows_a: list, rows_b: list) -> Scenario:
    a = InputSpec("a", (("k", "BIGINT"), ("id", "BIGINT"), ("x", "BIGINT"), ("s", "VARCHAR")))
    b = InputSpec("b", (("s", "VARCHAR"), ("y", "BIGINT"), ("id", "BIGINT"), ("k", "BIGINT")))
    events = tuple(ChangeEvent("a", "+I", r) for r in rows_a) + tuple(ChangeEvent("b", "+I", r) for r in rows_b)
    return Scenario("hand", (a, b), JoinSpec(("a", "b"), (jtype,), (condition,)), Config(), events)


A_ROWS = [(1, 2, 5, "p"), (3, 3, 0, "q")]
B_ROWS = [("p", 9, 1, 2), ("q", 0, 3, 7), ("r", 4, 2, 1)]  # columns s, y, id, k


def test_crossed_key_by_hand() -> None:
    """a.k = b.id AND a.id = b.k: a(1, 2) meets b(id 1, k 2); a(3, 3) meets nothing (b(id 3, k 7))."""
    s = _binary("a.k = b.id AND a.id = b.k", "left", A_ROWS, B_ROWS)
    want = Counter({(1, 2, 5, "p", "p", 9, 1, 2): 1, (3, 3, 0, "q", None, None, None, None): 1})
    assert _final(s) == want and DuckDBOracle().final(s) == want


def test_or_without_a_common_key_by_hand() -> None:
    """(a.k = b.k OR a.k = b.id): a(k 1) meets b(k 1) and b(id 1); a(k 3) meets b(id 3)."""
    s = _binary("(a.k = b.k OR a.k = b.id)", "inner", A_ROWS, B_ROWS)
    want = Counter({(1, 2, 5, "p", "p", 9, 1, 2): 1, (1, 2, 5, "p", "r", 4, 2, 1): 1,
                    (3, 3, 0, "q", "q", 0, 3, 7): 1})
    assert _final(s) == want and DuckDBOracle().final(s) == want


def test_or_with_a_common_factor_by_hand() -> None:
    """((a.k = b.k AND a.x > b.y) OR (a.k = b.k AND a.s = b.s)): a(k 1, x 5, p) and b(k 1, y 4, r) match by
    x > y; nothing else shares k."""
    s = _binary("((a.k = b.k AND a.x > b.y) OR (a.k = b.k AND a.s = b.s))", "full", A_ROWS, B_ROWS)
    want = Counter({(1, 2, 5, "p", "r", 4, 2, 1): 1, (3, 3, 0, "q", None, None, None, None): 1,
                    (None, None, None, None, "p", 9, 1, 2): 1, (None, None, None, None, "q", 0, 3, 7): 1})
    assert _final(s) == want and DuckDBOracle().final(s) == want


# ---------------------------------------------------------------- a planted key-column swap is caught


def _paired_by_position(s: Scenario) -> Scenario:
    """The mutant: a planner that pairs the key columns of the two sides by their positions, not their names."""
    cond = s.join.conditions[0]
    pairs = _top_level_pairs(cond, "a", "b")
    a, b = s.inputs
    partner: dict[str, str] = {}
    for ctype in {dict(a.columns)[c] for c, _ in pairs}:  # (a wrong pairing still compares like types)
        lefts = [c for _, c in sorted((a.index_of(c), c) for c, _ in pairs if dict(a.columns)[c] == ctype)]
        rights = [c for _, c in sorted((b.index_of(c), c) for _, c in pairs if dict(b.columns)[c] == ctype)]
        partner.update(zip(lefts, rights, strict=False))
    for left, right in pairs:  # (a placeholder, so a rewritten equality is not rewritten again)
        cond = cond.replace(f"a.{left} = b.{right}", f"a.{left} = b.@{partner[left]}")
    return replace(s, join=replace(s.join, conditions=(cond.replace("b.@", "b."),)))


def test_a_planted_key_column_swap_is_caught_within_400_examples() -> None:
    oracle = DuckDBOracle()

    def caught(s: Scenario) -> bool:
        return _final(_paired_by_position(s)) != oracle.final(s)

    s = find(regular_join_scenarios(join_types=("inner", "left"), modes=("insert_only",)), caught, settings=FIND)
    assert _crossed(s)  # only a crossed key tells the mutant apart: by name and by position agree otherwise


# ---------------------------------------------------------------- the targeted mini-batch draw


def _matches(jcond: str, a: tuple, b: tuple) -> bool:
    """a.k = b.k [AND a.x > b.y], over rows (k, id, x|y, s), evaluated by hand."""
    return a[0] == b[0] and (jcond == "a.k = b.k" or a[2] > b[2])


@settings(max_examples=80, database=None, deadline=None)
@given(match_flip_cases())
def test_a_flip_case_updates_a_row_across_the_match_inside_one_bundle(s: Scenario) -> None:
    fixed, insert, before, after = s.events
    assert (before.kind, after.kind) == ("-U", "+U") and insert.row == before.row
    assert 2 // s.config.mini_batch_size == 3 // s.config.mini_batch_size  # elements 3 and 4 share a bundle
    cond = s.join.conditions[0]
    def rows(other):
        return ((other, fixed.row) if after.input == "a" else (fixed.row, other))
    assert _matches(cond, *rows(before.row)) != _matches(cond, *rows(after.row))
    assert s.config.semantics == "correct"
    assert _final(s) == DuckDBOracle().final(s)


def test_a_system_minibatch_campaign_draws_flip_cases_and_more_streams_of_their_shape() -> None:
    caps = Capabilities(("regular",), ("inner", "left", "right", "full"), ("insert_only", "retract"),
                        ("BIGINT", "VARCHAR"), ("processing_time",), False, "changelog", False, 20, ("mini_batch",))
    factory, reason = specs._minibatch(caps, "probe")
    assert reason is None
    s = find(factory(), lambda s: "starts matching" in s.name or "stops matching" in s.name, settings=FIND)
    more = find(same_shape(s), lambda t: len(t.events) > 0, settings=FIND)
    assert more.inputs == s.inputs and more.join == s.join and more.config == s.config
