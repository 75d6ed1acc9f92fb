"""Planning a join chain with FLIP-516 multi-way joins (`config.multi_join = "on"`).

Like Flink's JoinToMultiJoinRule, the chain is read left to right and INNER /
LEFT joins are merged into one multi-way group as long as every input of the
group can be partitioned by a common key; anything else ends the group:

* FULL, SEMI, ANTI and RIGHT joins run as binary joins (Flink does not flatten
  them). With `multi_join_rewrite_right`, `X RIGHT JOIN c` is planned as
  `c LEFT JOIN X` (the output columns put back in chain order) and starts a
  new group — an extension beyond Flink, off by default;
* a join that shares no key with the group closes it; the group's output
  becomes input 0 of the next group (the "split into several multi-way
  operators" of the FLIP);
* `multi_join_max_tables` caps the inputs of one group;
* a group of fewer than `multi_join_min_tables` inputs (default 3) runs as
  binary joins, as Flink's BinaryMultiJoinToJoinRule turns a two-input
  MultiJoin back into a Join.

The common key. Member 0 of a group defines the partition key; a *seed* is
one of its columns. Every later member must have an equality conjunct tying
one of its columns to a column already in the seed's class. A null-safe
conjunct (`IS NOT DISTINCT FROM`) counts only if its earlier side can never be
NULL-padded inside the group (member 0, or an INNER-joined member): a padded
NULL would match NULL keys that live in another partition. The common key is
every seed whose class reaches all members, so a match implies equal keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from converge.engine.condition import ColumnRef, EquiKey, compile_predicate, split_condition
from converge.engine.model.errors import BadInputError, InternalError
from converge.engine.model.scenario import Config, InputSpec, Scenario
from converge.engine.operators.multi_join import MultiJoinInput, MultiJoinSpec, StreamingMultiJoinOperator
from converge.engine.pipeline_options import join_inputs
from converge.engine.planner.base import (
    Part,
    Plan,
    PlanNode,
    binary_join_operator,
    build_binary_join,
    composite_ttl,
    join_description,
    link_parents,
    right_node,
    source_node,
    source_side_validates,
)
from converge.engine.views import JoinInputSideSpec, analyze_join_input

# The releases whose multi-way join keeps every input by its record (a MapState<row, count>), unique key or not:
# Flink 2.1.0's StreamExecMultiJoin analyses its inputs by their upsert keys (StreamPhysicalMultiJoin.
# getUpsertKeysForInputs), which came out empty for every input converge sent (the order measurement: 503 of 503
# RocksDB events in the record's byte order, docs/anomalies.md); 2.2 and 2.3 analyse them by their unique keys.
# Modelled under semantics=flink (converge's fix keeps the unique key); 2.0 and earlier have no such operator.
RECORD_KEYED_VERSIONS = frozenset({"1.19", "1.20", "2.0", "2.1"})


@dataclass(frozen=True)
class MultiJoinOptions:
    """The multi-way planner's options (typed `Config` fields, checked when the config is built)."""

    max_tables: int | None = None     # Flink's table.optimizer.multi-join.max-tables (None: no limit)
    min_tables: int = 3               # smaller groups run as binary joins
    rewrite_right: bool = False       # plan X RIGHT JOIN c as c LEFT JOIN X

    @classmethod
    def from_config(cls, config: Config) -> MultiJoinOptions:
        return cls(config.multi_join_max_tables, config.multi_join_min_tables, config.multi_join_rewrite_right)


@dataclass
class _Member:
    """One input of a multi-way group, in the operator's input order."""

    part: Part                       # the scenario inputs whose columns it carries (chain order)
    child: PlanNode | str
    join_type: str                    # "inner" for member 0
    condition: str                    # "" for member 0
    join_index: int | None            # the chain join it comes from (None for member 0)
    swapped: bool = False             # a rewritten RIGHT join: the condition's left side is this member


@dataclass(frozen=True)
class CommonKey:
    """Per member, the column refs of the common key (one per seed, in seed order)."""

    columns: tuple[tuple[ColumnRef, ...], ...]

    def names(self) -> tuple[str, ...]:
        return tuple(f"{r.input}.{r.column}" for r in self.columns[0])


def _equi_keys(member: _Member, earlier: list[InputSpec]) -> list[EquiKey]:
    """Equality conjuncts of the member's condition: left side in earlier members, right side in this one."""
    if member.swapped:
        # `X RIGHT JOIN c ON cond` planned as c LEFT JOIN X: split with the original sides, then swap
        (right,) = earlier
        split = split_condition(member.condition, member.part.inputs, right)
        return [EquiKey(k.right, k.left, k.null_safe) for k in split.equi_keys]
    (right,) = member.part.inputs
    return list(split_condition(member.condition, earlier, right).equi_keys)


def find_common_key(members: list[_Member]) -> CommonKey | None:
    """The common partition key of a group, or None when its inputs share none (see module docstring)."""
    owner: dict[str, int] = {}
    for m, member in enumerate(members):
        for spec in member.part.inputs:
            owner[spec.name] = m
    keys_per_member: list[list[EquiKey]] = [[]]
    earlier: list[InputSpec] = list(members[0].part.inputs)
    for member in members[1:]:
        keys_per_member.append(_equi_keys(member, earlier))
        earlier.extend(member.part.inputs)

    def never_padded(ref: ColumnRef) -> bool:
        m = owner[ref.input]
        return m == 0 or members[m].join_type == "inner"

    found: list[tuple[ColumnRef, ...]] = []
    for spec in members[0].part.inputs:
        for column in spec.column_names:
            seed = ColumnRef(spec.name, column)
            cls = {seed}
            cols = [seed]
            for keys in keys_per_member[1:]:
                linked = [k.right for k in keys if k.left in cls and (not k.null_safe or never_padded(k.left))]
                if not linked:
                    break
                cols.append(linked[0])
                cls.update(linked)
            else:
                found.append(tuple(cols))
    if not found:
        return None
    return CommonKey(tuple(zip(*found, strict=False)))


# ---------------------------------------------------------------- building nodes


def _member_input(scenario: Scenario, member: _Member, key: tuple[ColumnRef, ...]) -> MultiJoinInput:
    part = member.part
    spec = part.as_input()
    key_idx = tuple(part.offset(r.input) + scenario.input(r.input).index_of(r.column) for r in key)
    if len(part.inputs) == 1:
        side = analyze_join_input(spec, [r.column for r in key])
        if scenario.config.semantics == "flink" and scenario.config.flink_version in RECORD_KEYED_VERSIONS:
            side = JoinInputSideSpec("InputSideHasNoUniqueKey", None)
        return MultiJoinInput(spec, side, key_idx, scenario.config.ttl_for(spec.name),
                              source_side_validates(spec, scenario))
    return MultiJoinInput(spec, JoinInputSideSpec("InputSideHasNoUniqueKey", None), key_idx,
                          composite_ttl(part, scenario), False)


def _describe_multi(members: list[_Member], inputs: list[MultiJoinInput], key: CommonKey,
                    order: tuple[int, ...] | None) -> str:
    def uk(inp: MultiJoinInput) -> str:
        idx = inp.side.unique_key_indexes
        return "noUniqueKey" if idx is None else "(" + ", ".join(inp.spec.column_names[i] for i in idx) + ")"

    def ttl(inp: MultiJoinInput) -> str:
        return "none" if inp.ttl_ms is None else f"{inp.ttl_ms}ms"

    conds = []
    for member in members[1:]:
        text = member.condition
        conds.append(f"({text})" if " AND " in text or " OR " in text else text)
    out = (f"MultiJoin(commonJoinKey=[{', '.join(key.names())}], "
           f"joinTypes=[{', '.join(m.join_type.upper() for m in members[1:])}], "
           f"inputUniqueKeys=[{', '.join(uk(i) for i in inputs)}], "
           f"inputSpecs=[{', '.join(i.side.kind for i in inputs)}], "
           f"joinConditions=[{', '.join(conds)}], "
           f"stateTtl=[{', '.join(ttl(i) for i in inputs)}]")
    if order is not None:
        out += f", outputOrder=[{', '.join(str(i) for i in order)}]"
    return out + ")"


def _multi_node(scenario: Scenario, members: list[_Member], key: CommonKey, index: int) -> PlanNode:
    n = len(members)
    inputs = [_member_input(scenario, m, key.columns[d]) for d, m in enumerate(members)]
    conditions: list[Any] = [None]
    for d, member in enumerate(members[1:], start=1):
        layout = [tuple(m.part.inputs) for m in members[:d + 1]] + [()] * (n - d - 1)
        conditions.append(compile_predicate(member.condition, layout))
    order = None
    if members[1].swapped:
        order = (1, 0) + tuple(range(2, n))
    spec = MultiJoinSpec(
        inputs=tuple(inputs),
        join_types=tuple(m.join_type for m in members),
        conditions=tuple(conditions),
        condition_sql=tuple(m.condition for m in members),
        common_key=key.names(),
        output_order=order,
        semantics=scenario.config.semantics,
    )
    return PlanNode(f"multi_join[{index}]", StreamingMultiJoinOperator(spec), [m.child for m in members],
                    describe=_describe_multi(members, inputs, key, order))


@dataclass
class _Planner:
    scenario: Scenario
    options: MultiJoinOptions
    part: Part = field(init=False)
    current: PlanNode | str = field(init=False)
    group: list[_Member] | None = None
    group_part: Part | None = None       # `part` when the open group started
    group_child: PlanNode | str | None = None
    nodes: int = 0
    chain: tuple[InputSpec, ...] = field(init=False)

    def __post_init__(self) -> None:
        self.chain = join_inputs(self.scenario)  # the inputs as the join sees them (engine/pipeline_options.py)
        first = self.chain[0]
        self.part = Part((first,))
        self.current = source_node(self.scenario, first)

    # -- binary joins
    def binary(self, i: int) -> None:
        s = self.scenario
        right = self.chain[i + 1]
        jtype, cond = s.join.types[i], s.join.conditions[i]
        try:
            spec = build_binary_join(s, self.part, right, jtype, cond)
        except BadInputError as exc:
            raise BadInputError(f"join.conditions[{i}]: {exc}") from None
        op = binary_join_operator(s, spec)
        self.current = PlanNode(f"join[{i}]", op, [self.current, right_node(s, self.part, right, jtype, cond)],
                                describe=join_description(spec, op))
        if jtype not in ("semi", "anti"):
            self.part = Part(self.part.inputs + (right,))

    # -- groups
    def try_add(self, member: _Member, chain_part: Part) -> bool:
        assert self.group is not None
        limit = self.options.max_tables
        if limit is not None and len(self.group) >= limit:
            return False
        candidate = self.group + [member]
        try:
            key = find_common_key(candidate)
        except BadInputError as exc:
            raise BadInputError(f"join.conditions[{member.join_index}]: {exc}") from None
        if key is None:
            return False
        self.group.append(member)
        self.part = chain_part
        return True

    def close(self) -> None:
        """Turn the open group into a multi-way node, or into binary joins when it is too small."""
        group, self.group = self.group, None
        if group is None or len(group) < 2:
            return
        if len(group) < self.options.min_tables:
            self.part, self.current = self.group_part, self.group_child  # type: ignore[assignment]
            for i in sorted(m.join_index for m in group if m.join_index is not None):
                self.binary(i)
            return
        key = find_common_key(group)
        assert key is not None
        self.current = _multi_node(self.scenario, group, key, self.nodes)
        self.nodes += 1

    def open(self, first: _Member) -> None:
        self.group = [first]
        self.group_part, self.group_child = self.part, self.current

    def join(self, i: int) -> None:
        s = self.scenario
        jtype, cond = s.join.types[i], s.join.conditions[i]
        right = self.chain[i + 1]
        chain_part = Part(self.part.inputs + (right,))
        if jtype in ("inner", "left"):
            member = _Member(Part((right,)), source_node(s, right), jtype, cond, i)
            if self.group is None:
                self.open(_Member(self.part, self.current, "inner", "", None))
            if self.try_add(member, chain_part):
                return
            if len(self.group or ()) > 1:
                self.close()                       # the group ends here; its output starts a new one
                self.open(_Member(self.part, self.current, "inner", "", None))
                if self.try_add(member, chain_part):
                    return
            self.group = None
            self.binary(i)
            return
        self.close()
        if jtype == "right" and self.options.rewrite_right:
            self.open(_Member(Part((right,)), source_node(s, right), "inner", "", None))
            swapped = _Member(self.part, self.current, "left", cond, i, swapped=True)
            if self.try_add(swapped, chain_part):
                return
            self.group = None
        self.binary(i)

    def finish(self) -> Plan:
        self.close()
        root = self.current
        assert isinstance(root, PlanNode)
        entry: dict[str, tuple[PlanNode, int]] = {}
        link_parents(root, entry)
        cols = tuple(f"{spec.name}.{c}" for spec in self.part.inputs for c in spec.column_names)
        return Plan(root, self.scenario, entry, cols)


def plan_multi_join(scenario: Scenario) -> Plan:
    """The chain with eligible INNER/LEFT runs merged into multi-way joins (see module docstring)."""
    if scenario.join.interval is not None:
        raise InternalError("interval joins are planned by the interval-join planner")
    planner = _Planner(scenario, MultiJoinOptions.from_config(scenario.config))
    for i in range(len(scenario.join.types)):
        planner.join(i)
    return planner.finish()


def multi_join_nodes(plan: Plan) -> list[PlanNode]:
    """The multi-way nodes of a plan (for properties, benchmarks and explain)."""
    return [n for n in plan.nodes() if isinstance(n.operator, StreamingMultiJoinOperator)]
