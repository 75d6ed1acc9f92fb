"""The multi-way planner's choice on hand-written chains (expected plans worked out from the rule by hand)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from converge.cli.main import main
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import Config, InputSpec, JoinSpec, Scenario
from converge.engine.model.scenario_json import scenario_to_dict
from converge.engine.operators.multi_join import StreamingMultiJoinOperator
from converge.engine.operators.normalize import ChangelogNormalizeOperator
from converge.engine.planner import PlanNode, plan

COLS = (("k", "BIGINT"), ("k2", "BIGINT"), ("v", "BIGINT"))


def chain(types: list[str], conditions: list[str], *, uks: dict | None = None, **config) -> Scenario:
    names = "abcdefg"[:len(types) + 1]
    uks = uks or {}
    specs = tuple(InputSpec(n, COLS, uks.get(n), "upsert" if uks.get(n) else "retract") for n in names)
    options = {k: v for k, v in config.items() if k.startswith("multi_join_")}
    cfg = Config(multi_join=config.get("multi_join", "on"), **options)  # type: ignore[arg-type]
    return Scenario("planner case", specs, JoinSpec(tuple(names), tuple(types), tuple(conditions)), cfg)


def shape(node: PlanNode | str) -> str:
    """A plan as text: Multi(...) for a multi-way join, the join type for a binary one, names for inputs."""
    if isinstance(node, str):
        return node
    op = node.operator
    if isinstance(op, ChangelogNormalizeOperator):
        return shape(node.inputs[0])
    kids = ", ".join(shape(c) for c in node.inputs)
    if isinstance(op, StreamingMultiJoinOperator):
        return f"Multi({kids})"
    return f"{op.spec.join_type}({kids})"  # type: ignore[attr-defined]


def shape_of(s: Scenario) -> str:
    return shape(plan(s).root)


def test_off_by_default_as_in_flink() -> None:
    s = chain(["inner", "left"], ["a.k = b.k", "a.k = c.k"], multi_join="off")
    assert Config().multi_join == "off"
    assert shape_of(s) == "left(inner(a, b), c)"


def test_star_chain_is_one_multi_way_join() -> None:
    s = chain(["inner", "left", "left"], ["a.k = b.k", "a.k = c.k AND c.v > b.v", "a.k = d.k"])
    p = plan(s)
    assert shape(p.root) == "Multi(a, b, c, d)"
    assert p.explain().splitlines()[0] == (
        "MultiJoin(commonJoinKey=[a.k], joinTypes=[INNER, LEFT, LEFT], "
        "inputUniqueKeys=[noUniqueKey, noUniqueKey, noUniqueKey, noUniqueKey], "
        "inputSpecs=[InputSideHasNoUniqueKey, InputSideHasNoUniqueKey, InputSideHasNoUniqueKey, "
        "InputSideHasNoUniqueKey], joinConditions=[a.k = b.k, (a.k = c.k AND c.v > b.v), a.k = d.k], "
        "stateTtl=[none, none, none, none])")


def test_transitive_key_through_the_chain() -> None:
    s = chain(["inner", "inner", "left"], ["a.k = b.k", "b.k = c.k", "c.k = d.k"])
    assert shape_of(s) == "Multi(a, b, c, d)"
    assert plan(s).root.operator.spec.common_key == ("a.k",)  # type: ignore[attr-defined]


def test_composite_common_key() -> None:
    s = chain(["inner", "inner"], ["a.k = b.k AND a.k2 = b.k2", "b.k2 = c.k2 AND b.k = c.k"])
    assert plan(s).root.operator.spec.common_key == ("a.k", "a.k2")  # type: ignore[attr-defined]


def test_key_shared_by_part_of_the_chain_only_narrows_the_key() -> None:
    s = chain(["inner", "inner"], ["a.k = b.k AND a.k2 = b.k2", "a.k = c.k"])
    assert plan(s).root.operator.spec.common_key == ("a.k",)  # type: ignore[attr-defined]


def test_flip_example_without_common_key_falls_back_to_binary_joins() -> None:
    # A JOIN B ON A.key1 = B.key1 JOIN C ON B.key2 = C.key2: no single key partitions A, B and C
    s = chain(["inner", "inner"], ["a.k = b.k", "b.k2 = c.k2"])
    assert shape_of(s) == "inner(inner(a, b), c)"


def test_a_join_without_the_key_splits_the_chain() -> None:
    # a-b-c share k; d joins on k2 only; e and f join a.k again: the first group ends at c,
    # d is a binary join, and e, f join the result in a second group
    s = chain(["inner", "left", "inner", "inner", "left"],
              ["a.k = b.k", "a.k = c.k", "c.k2 = d.k2", "a.k = e.k", "a.k = f.k"])
    assert shape_of(s) == "Multi(inner(Multi(a, b, c), d), e, f)"


def test_a_two_input_remainder_is_a_binary_join() -> None:
    s = chain(["inner", "inner", "inner"], ["a.k = b.k", "a.k = c.k", "c.k2 = d.k2"])
    assert shape_of(s) == "inner(Multi(a, b, c), d)"


@pytest.mark.parametrize("jtype", ["full", "semi", "anti", "right"])
def test_unsupported_join_types_run_as_binary_joins(jtype: str) -> None:
    s = chain(["inner", jtype, "inner", "left"], ["a.k = b.k", "a.k = c.k", "a.k = d.k", "a.k = e.k"])
    assert shape_of(s) == f"Multi({jtype}(inner(a, b), c), d, e)"


def test_max_tables_splits_a_long_chain() -> None:
    conds = [f"a.k = {n}.k" for n in "bcdefg"]
    s = chain(["inner"] * 6, conds, multi_join_max_tables=3)
    assert shape_of(s) == "Multi(Multi(Multi(a, b, c), d, e), f, g)"
    s = chain(["inner"] * 4, conds[:4], multi_join_max_tables=4)
    assert shape_of(s) == "inner(Multi(a, b, c, d), e)"


def test_min_tables_two_runs_a_binary_chain_as_one_operator() -> None:
    assert shape_of(chain(["left"], ["a.k = b.k"])) == "left(a, b)"
    assert shape_of(chain(["left"], ["a.k = b.k"], multi_join_min_tables=2)) == "Multi(a, b)"


def test_null_safe_link_from_a_padded_input_is_not_a_common_key() -> None:
    # b may be NULL-padded; b.k IS NOT DISTINCT FROM c.k would then match c rows whose k is NULL,
    # which live in another partition than a's key
    s = chain(["left", "inner"], ["a.k = b.k", "b.k IS NOT DISTINCT FROM c.k"])
    assert shape_of(s) == "inner(left(a, b), c)"
    s = chain(["left", "inner"], ["a.k = b.k", "b.k = c.k"])
    assert shape_of(s) == "Multi(a, b, c)"
    s = chain(["inner", "inner"], ["a.k = b.k", "b.k IS NOT DISTINCT FROM c.k"])
    assert shape_of(s) == "Multi(a, b, c)"


def test_right_join_rewrite_is_opt_in() -> None:
    conds = ["a.k = b.k", "b.k = c.k", "b.k = d.k"]
    assert shape_of(chain(["right", "inner", "left"], conds)) == "Multi(right(a, b), c, d)"
    p = plan(chain(["right", "inner", "left"], conds, multi_join_rewrite_right=True))
    assert shape(p.root) == "Multi(b, a, c, d)"
    assert p.root.operator.spec.output_order == (1, 0, 2, 3)  # type: ignore[attr-defined]
    assert p.output_columns[:3] == ("a.k", "a.k2", "a.v")


def test_state_views_follow_each_input_unique_key() -> None:
    s = chain(["inner", "inner"], ["a.k = b.k", "a.k = c.k"], uks={"a": ("k",), "b": ("k2",)})
    spec = plan(s).root.operator.spec  # type: ignore[attr-defined]
    assert [i.side.kind for i in spec.inputs] == [
        "JoinKeyContainsUniqueKey", "InputSideHasUniqueKey", "InputSideHasNoUniqueKey"]


@pytest.mark.parametrize("extra, message", [
    ({"multi_join_max_tables": 1}, "multi_join_max_tables"),
    ({"multi_join_max_tables": "3"}, "multi_join_max_tables"),
    ({"multi_join_min_tables": True}, "multi_join_min_tables"),
    ({"multi_join_rewrite_right": "yes"}, "multi_join_rewrite_right"),
])
def test_bad_options_are_rejected(extra: dict, message: str) -> None:
    with pytest.raises(BadInputError, match=message):
        chain(["inner", "inner"], ["a.k = b.k", "a.k = c.k"], **extra)


def test_a_condition_on_a_hidden_input_names_the_join() -> None:
    s = chain(["inner", "semi", "inner"], ["a.k = b.k", "a.k = c.k", "c.k = d.k"])
    with pytest.raises(BadInputError, match=r"join.conditions\[2\]"):
        plan(s)


def test_explain_command_prints_the_tree(tmp_path: Path, capsys) -> None:
    s = chain(["inner", "full", "inner", "inner"], ["a.k = b.k", "a.k = c.k", "c.k = d.k", "c.k = e.k"])
    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenario_to_dict(s)))
    assert main(["explain", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("MultiJoin(commonJoinKey=[c.k], joinTypes=[INNER, INNER]")
    assert lines[1].startswith("  Join(joinType=[FullOuterJoin]")
    assert lines[2].startswith("    Join(joinType=[InnerJoin]")
    assert [line.strip() for line in lines if "Source" in line] == [
        f"Source(table=[{n}], changelogMode=[retract])" for n in "abcde"]
