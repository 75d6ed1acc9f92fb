"""What every planner shares: the plan tree, the chain's left part, sources and binary join specs.

A plan is a tree of nodes: each node is one keyed operator whose inputs are
scenario inputs (possibly behind a ChangelogNormalize node) or other nodes.
Runtimes walk this tree; operators never see it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from converge.engine.condition import compile_predicate, right_columns, split_condition
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import InputSpec, Scenario
from converge.engine.operators.base import Operator
from converge.engine.operators.minibatch_join import MiniBatchStreamingJoinOperator
from converge.engine.operators.normalize import ChangelogNormalizeOperator
from converge.engine.operators.regular_join import (
    GROUPED_PADDING_VERSIONS,
    BinaryJoinSpec,
    JoinSide,
    StreamingJoinOperator,
)
from converge.engine.operators.semi_anti_join import StreamingSemiAntiJoinOperator
from converge.engine.pipeline_options import dedupe_source, per_key_order
from converge.engine.views import JoinInputSideSpec, analyze_join_input


@dataclass
class PlanNode:
    """One operator in the plan, and where each of its inputs comes from."""

    name: str
    operator: Operator
    inputs: list[PlanNode | str]            # a scenario input name, or a child node
    describe: str = ""
    parent: PlanNode | None = field(default=None, repr=False)
    parent_index: int = 0

    def walk(self):
        for child in self.inputs:
            if isinstance(child, PlanNode):
                yield from child.walk()
        yield self


@dataclass
class Plan:
    root: PlanNode
    scenario: Scenario
    # scenario input name -> (first node that consumes it, input index there)
    entry: dict[str, tuple[PlanNode, int]]
    output_columns: tuple[str, ...]

    def nodes(self) -> list[PlanNode]:
        return list(self.root.walk())

    def explain(self) -> str:
        lines: list[str] = []

        def visit(node: PlanNode | str, depth: int) -> None:
            pad = "  " * depth
            if isinstance(node, str):
                spec = self.scenario.input(node)
                lines.append(f"{pad}Source(table=[{node}], changelogMode=[{spec.changelog_mode}])")
                return
            lines.append(f"{pad}{node.describe or node.name}")
            for child in node.inputs:
                visit(child, depth + 1)

        visit(self.root, 0)
        return "\n".join(lines)


@dataclass(frozen=True)
class Part:
    """The left part of a chain so far: which inputs' columns it carries, in order."""

    inputs: tuple[InputSpec, ...]

    def offset(self, name: str) -> int:
        off = 0
        for spec in self.inputs:
            if spec.name == name:
                return off
            off += len(spec.columns)
        raise BadInputError(f"input {name!r} is not visible here (a SEMI/ANTI join hides its right input)")

    def as_input(self) -> InputSpec:
        if len(self.inputs) == 1:
            return self.inputs[0]
        cols = tuple((f"{s.name}.{c}", t) for s in self.inputs for c, t in s.columns)
        return InputSpec("_".join(s.name for s in self.inputs), cols, None, "retract")


def source_side_validates(spec: InputSpec, scenario: Scenario) -> bool:
    """Whether the join refuses a retraction of a row its state for this input does not hold.

    Under `semantics: flink` it never does: Flink's operators join such a retraction against the other
    side and leave their own state alone (a CDC source started mid-stream, state lost; docs/semantics.md)."""
    if scenario.config.semantics == "flink":
        return False
    if per_key_order(scenario) == "disordered":
        return False  # swapped changes of one key reach Flink's state views unchecked
    return spec.changelog_mode != "upsert" or scenario.config.changelog_normalize


def composite_ttl(part: Part, scenario: Scenario) -> int | None:
    ttls = [scenario.config.ttl_for(s.name) for s in part.inputs]
    known = [t for t in ttls if t is not None]
    return min(known) if known else None


def build_binary_join(scenario: Scenario, part: Part, right: InputSpec, join_type: str,
                      condition: str) -> BinaryJoinSpec:
    """Split the condition, pick the state views and compile the residual."""
    split = split_condition(condition, part.inputs, right)
    left_key_idx = tuple(part.offset(k.left.input) + part.inputs[[s.name for s in part.inputs].index(k.left.input)]
                         .index_of(k.left.column) for k in split.equi_keys)
    right_key_idx = tuple(right.index_of(k.right.column) for k in split.equi_keys)
    left_spec = part.as_input()
    if len(part.inputs) == 1:
        left_key_cols = [k.left.column for k in split.equi_keys]
        left_side = analyze_join_input(left_spec, left_key_cols)
        left_validates = source_side_validates(left_spec, scenario)
        left_ttl = scenario.config.ttl_for(left_spec.name)
    else:
        left_side = JoinInputSideSpec("InputSideHasNoUniqueKey", None)
        left_validates = False
        left_ttl = composite_ttl(part, scenario)
    right_side = analyze_join_input(right, [k.right.column for k in split.equi_keys])
    residual: Callable | None = None
    if split.residual_sql:
        residual = compile_predicate(split.residual_sql, [list(part.inputs), [right]])
    return BinaryJoinSpec(
        join_type=join_type,
        left=JoinSide(left_spec, left_side, left_key_idx, left_ttl, left_validates),
        right=JoinSide(right, right_side, right_key_idx, scenario.config.ttl_for(right.name),
                       source_side_validates(right, scenario)),
        filter_nulls=tuple(not k.null_safe for k in split.equi_keys),
        residual=residual,
        residual_sql=split.residual_sql,
        semantics=scenario.config.semantics,
        grouped_padding=scenario.config.flink_version in GROUPED_PADDING_VERSIONS,
    )


def binary_join_operator(scenario: Scenario, spec: BinaryJoinSpec) -> Operator:
    """The operator for one binary join: semi/anti, mini-batch (config.mini_batch_size) or the plain one.
    Flink has no mini-batch semi/anti join, so those stay record by record."""
    if spec.join_type in ("semi", "anti"):
        return StreamingSemiAntiJoinOperator(spec)
    size = scenario.config.mini_batch_size
    if size is not None:
        return MiniBatchStreamingJoinOperator(spec, size, scenario.config.mini_batch_latency_ms)
    return StreamingJoinOperator(spec)


# The Flink releases whose ChangelogNormalize compares a +U with the stored row's INSERT kind, so never drops it
# (DeduplicateFunctionHelper.processLastRowOnChangelog before areRowsWithSameContent, added in 2.2).
KIND_SENSITIVE_NORMALIZE_VERSIONS = frozenset({"1.19", "1.20", "2.0", "2.1"})


def source_node(scenario: Scenario, spec: InputSpec, reads: tuple[str, ...] | None = None) -> PlanNode | str:
    """The input as the join receives it; `reads`: the columns the planner keeps of it (all when None)."""
    spec = scenario.input(spec.name)  # as declared: the join may see it with another unique key
    if (dedupe := dedupe_source(scenario, spec)) is not None:
        return PlanNode(f"dedupe[{spec.name}]", dedupe, [spec.name], describe=dedupe.describe())
    if spec.changelog_mode == "upsert" and scenario.config.changelog_normalize:
        op = ChangelogNormalizeOperator(spec, emit_identical=scenario.config.ttl_for(spec.name) is not None,
                                        compared=reads, kind_sensitive=scenario.config.semantics == "flink"
                                        and scenario.config.flink_version in KIND_SENSITIVE_NORMALIZE_VERSIONS)
        return PlanNode(f"normalize[{spec.name}]", op, [spec.name],
                        describe=f"ChangelogNormalize(key=[{', '.join(spec.unique_key or ())}])")
    return spec.name


def right_node(scenario: Scenario, part: Part, right: InputSpec, join_type: str, condition: str) -> PlanNode | str:
    """A binary join's right input as the join receives it.

    Under `semantics: flink` a SEMI/ANTI join's right input is only tested, so Flink's planner keeps of it the
    columns the condition reads and its unique key (a Calc pushed below ChangelogNormalize, seen in
    `explain_sql` on 2.3.0): an upsert update that changes other columns only is dropped there (the normalizer's
    `compared`), and the semi-join operator never sees it."""
    declared = scenario.input(right.name)
    if join_type not in ("semi", "anti") or scenario.config.semantics != "flink" or not declared.unique_key:
        return source_node(scenario, right)
    reads = right_columns(condition, part.inputs, right) | set(declared.unique_key)
    return source_node(scenario, right, tuple(c for c in declared.column_names if c in reads))


def join_description(spec: BinaryJoinSpec, operator: Operator | None = None) -> str:
    names = {"inner": "InnerJoin", "left": "LeftOuterJoin", "right": "RightOuterJoin", "full": "FullOuterJoin",
             "semi": "LeftSemiJoin", "anti": "LeftAntiJoin"}
    lk = ", ".join(spec.left.spec.column_names[i] for i in spec.left.key_indexes)
    rk = ", ".join(spec.right.spec.column_names[i] for i in spec.right.key_indexes)
    name = "MiniBatchJoin" if isinstance(operator, MiniBatchStreamingJoinOperator) else "Join"
    return (f"{name}(joinType=[{names[spec.join_type]}], leftKeys=[{lk}], rightKeys=[{rk}], "
            f"where=[{spec.residual_sql or 'true'}], leftInputSpec=[{spec.left.side.kind}], "
            f"rightInputSpec=[{spec.right.side.kind}])")


def link_parents(node: PlanNode, entry: dict[str, tuple[PlanNode, int]]) -> None:
    for idx, child in enumerate(node.inputs):
        if isinstance(child, PlanNode):
            child.parent = node
            child.parent_index = idx
            link_parents(child, entry)
        else:
            entry[child] = (node, idx)
