"""Properties of FLIP-516 multi-way joins: same answer as the binary chain and DuckDB, no intermediate state.

Each check takes a scenario (from generators/multiway.py, a file or a
shrinker) and raises PropertyFailure with evidence. The multi-way plan is the
scenario's own plan (`config.multi_join = "on"`); the binary chain is the same
scenario with `multi_join = "off"`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from converge.engine.materialize import fold_history
from converge.engine.model.changelog import Change, sign
from converge.engine.model.scenario import Scenario
from converge.engine.operators.multi_join import StreamingMultiJoinOperator
from converge.engine.planner import Plan, PlanNode
from converge.engine.planner import plan as make_plan
from converge.engine.planner.multi import multi_join_nodes
from converge.engine.runtime.local import LocalRuntime, run_scenario
from converge.engine.state import KeyedStateBackend
from converge.oracle.materialize import presence_intervals
from converge.properties.divergence import fail, require
from converge.properties.history_check import check_histories, check_history, engine_outputs
from converge.properties.regular import _no_ttl, compare_histories


def binary_variant(scenario: Scenario) -> Scenario:
    """The same scenario planned as a chain of binary joins (Flink's default)."""
    return replace(scenario, config=replace(scenario.config, multi_join="off"))


def _member_columns(op: StreamingMultiJoinOperator, d: int) -> list[str]:
    """Qualified names ("a.k") of the columns of the operator's input d."""
    spec = op.spec.inputs[d].spec
    if "." in spec.column_names[0]:      # a composite input carries qualified names already
        return list(spec.column_names)
    return [f"{spec.name}.{c}" for c in spec.column_names]


def _partition_violation(plan: Plan, rows: Sequence[tuple]) -> str | None:
    """A correct answer row whose inputs of one multi-way node do not share that node's key.

    A multi-way node sees only records of one partition key at a time, so every
    combination it must produce has to agree on the key (padded inputs aside). An
    all-NULL input part counts as padded.
    """
    index = {name: i for i, name in enumerate(plan.output_columns)}
    for node in multi_join_nodes(plan):
        op = node.operator
        assert isinstance(op, StreamingMultiJoinOperator)
        members = []
        for d, inp in enumerate(op.spec.inputs):
            cols = [index[c] for c in _member_columns(op, d)]
            keys = [cols[i] for i in inp.key_indexes]
            members.append((cols, keys))
        for row in rows:
            base = tuple(row[i] for i in members[0][1])
            for d, (cols, keys) in enumerate(members[1:], start=1):
                if all(row[i] is None for i in cols):
                    continue
                key = tuple(row[i] for i in keys)
                if key != base:
                    return (f"{node.name}: the answer row {list(row)} joins input {d} with key {list(key)} "
                            f"to input 0 with key {list(base)}, so no single partition can produce it")
    return None


def prefix_consistency(scenario: Scenario) -> None:
    """Multi-way plan = binary chain = DuckDB after every event; the common key partitions every answer row."""
    prop = "prefix_consistency"
    require(_no_ttl(scenario) and scenario.config.semantics == "correct" and scenario.config.multi_join == "on",
             prop, "needs no TTL, semantics=correct and multi_join=on")
    plan = make_plan(scenario)
    answer_rows: set[tuple] = set()
    binary = binary_variant(scenario)
    check_histories(prop, scenario, [
        (lambda: engine_outputs(scenario, make_plan(scenario)), "the multi-way plan's output differs from the DuckDB answer"),
        (lambda: engine_outputs(binary), "the binary join chain's output differs from the DuckDB answer")],
        seen=answer_rows)
    problem = _partition_violation(plan, sorted(answer_rows, key=repr))
    if problem:
        fail(prop, scenario, f"the planner picked a key that does not partition the join: {problem}")


# ---------------------------------------------------------------- state


def state_records(op: StreamingMultiJoinOperator, backend: KeyedStateBackend) -> list[Counter]:
    """Per input of a multi-way operator: every record its state holds, over all keys (copies counted)."""
    saved = backend.current_key
    out: list[Counter] = [Counter() for _ in op.views]
    try:
        for key in sorted(backend.keys(), key=repr):
            backend.current_key = key
            for d, view in enumerate(op.views):
                out[d].update(view.records())
    finally:
        backend.current_key = saved
    return out


def _record_inputs(op: StreamingMultiJoinOperator) -> list[Counter]:
    """Wrap op.process so it folds every change it receives, per input: the live input records."""
    received: list[Counter] = [Counter() for _ in range(op.num_inputs)]
    inner = op.process

    def process(input_index: int, change: Change, ctx):
        out = inner(input_index, change, ctx)
        received[input_index][change.row] += sign(change.kind)
        return out

    op.process = process  # type: ignore[method-assign]
    return received


def _sources(plan: Plan, node: PlanNode) -> list[str | None]:
    """Per input of a node, the scenario input it reads (directly or behind ChangelogNormalize), or None."""
    out: list[str | None] = []
    for child in node.inputs:
        if isinstance(child, str):
            out.append(child)
        elif len(child.inputs) == 1 and isinstance(child.inputs[0], str):
            out.append(child.inputs[0])
        else:
            out.append(None)
    return out


def state_is_live_inputs(scenario: Scenario) -> None:
    """After every event each multi-way operator holds exactly its inputs' live records, and nothing else.

    Live records are counted twice, independently: by folding what each operator
    input received, and, for inputs that are scenario inputs, from the input's own
    materialized table. State names other than one view per input, or more map
    entries than records, mean intermediate state.
    """
    prop = "state_is_live_inputs"
    require(_no_ttl(scenario) and scenario.config.multi_join == "on", prop,
             "needs no TTL and multi_join=on")

    plan = make_plan(scenario)
    runtime = LocalRuntime(scenario, plan)
    backends = {id(node): backend for node, backend in runtime.node_backends()}
    watched = []
    for node in multi_join_nodes(plan):
        op = node.operator
        assert isinstance(op, StreamingMultiJoinOperator)
        watched.append((node, op, backends[id(node)], _record_inputs(op), _sources(plan, node)))
    intervals = presence_intervals(scenario)
    # inputs whose rows replace each other by unique key as they reach the operator (a raw `all` changelog, a
    # raw upsert stream): folding what was received as a bag does not give their records; their table does
    keyed = {spec.name for spec in scenario.inputs if spec.changelog_mode == "all" or (
        spec.changelog_mode == "upsert" and not scenario.config.changelog_normalize)}
    for i, event in enumerate(scenario.events):
        runtime.process_event(event)
        for node, op, backend, received, sources in watched:
            held = state_records(op, backend)
            names = {f"multi-join-input-{d}" for d in range(op.num_inputs)}
            entries = backend.live_entries()
            others = sorted(set(entries) - names)
            if others:
                fail(prop, scenario, f"{node.name} keeps state besides its input views: {others}", event_index=i)
            for d in range(op.num_inputs):
                live = Counter({r: n for r, n in received[d].items() if n > 0})
                if sources[d] not in keyed and held[d] != live:
                    fail(prop, scenario, f"{node.name} input {d}: state differs from the records it received",
                          event_index=i, engine=held[d], expected=live)
                name = sources[d]
                if name is not None:
                    table = Counter(row for start, end, row in intervals[name] if start <= i < end)
                    if held[d] != table:
                        fail(prop, scenario, f"{node.name} input {d} ({name}): state differs from the input table",
                              event_index=i, engine=held[d], expected=table)
            n_records = sum(sum(c.values()) for c in held)
            n_entries = sum(entries.values())
            if n_entries > n_records:
                fail(prop, scenario, f"{node.name} holds {n_entries} state entries for {n_records} live records",
                      event_index=i)


# ---------------------------------------------------------------- the planner's choice


@dataclass(frozen=True)
class _PlannerOptions:
    """The planner options the model reads, straight from the config (docs/multiway.md)."""

    max_tables: int | None
    min_tables: int


def _model_groups(scenario: Scenario, options: _PlannerOptions) -> list[list[str]]:
    """The multi-way groups a chain built by generators/multiway.py must get, from its construction record.

    An independent model of the rule on the generator's terms: join i links input
    i+1 to `target` on same-named `key_columns` (null-safe or not). A group keeps
    taking INNER/LEFT joins while some column of its first member reaches every
    member through such links (a null-safe link only from a never-padded input) and
    `max_tables` allows; otherwise the group closes and its output starts the next
    one. Groups of fewer than `min_tables` inputs are binary joins. Each group is
    listed by the inputs of its members after member 0.
    """
    meta = scenario.meta["generated_chain"]
    links = meta["links"]
    names = list(scenario.join.inputs)
    types = list(scenario.join.types)
    groups: list[list[str]] = []
    prefix = [names[0]]            # inputs whose columns member 0 carries
    members: list[tuple[str, str]] = []  # (input, join type) of members 1..

    def has_key(candidate: list[tuple[str, str]]) -> bool:
        padded = {x for x, t in candidate if t == "left"}
        for seed_input in prefix:
            for col in ("k", "id", "v", "s"):
                cls = {(seed_input, col)}
                ok = True
                for x, _ in candidate:
                    link = links[names.index(x) - 1]
                    t = link["target"]
                    hit = [c for c in link["key_columns"] if (t, c) in cls
                           and (not link["null_safe"] or t not in padded)]
                    if not hit:
                        ok = False
                        break
                    cls.update((x, c) for c in hit)
                if ok:
                    return True
        return False

    def close() -> None:
        nonlocal members
        if len(members) + 1 >= options.min_tables:
            groups.append([x for x, _ in members])
        prefix.extend(x for x, _ in members)
        members = []

    for i, jtype in enumerate(types):
        x = names[i + 1]
        if jtype not in ("inner", "left"):
            close()
            if jtype not in ("semi", "anti"):
                prefix.append(x)
            continue
        fits = options.max_tables is None or len(members) + 1 < options.max_tables
        if fits and has_key(members + [(x, jtype)]):
            members.append((x, jtype))
            continue
        close()
        if has_key([(x, jtype)]):
            members = [(x, jtype)]
        else:
            prefix.append(x)
    close()
    return groups


def plan_choice(scenario: Scenario) -> None:
    """The planner merges exactly the INNER/LEFT runs that share a common key, as the construction says."""
    prop = "plan_choice"
    require("generated_chain" in scenario.meta and scenario.config.multi_join == "on", prop,
             "needs a generated chain (meta.generated_chain) and multi_join=on")
    links = scenario.meta["generated_chain"]["links"]
    require(not any("IS NOT DISTINCT FROM" in (link["residual"] or "") for link in links), prop,
             "the model knows no equalities hidden in residuals")
    options = _PlannerOptions(scenario.config.multi_join_max_tables, scenario.config.multi_join_min_tables)
    require(not scenario.config.multi_join_rewrite_right, prop, "the model does not rewrite RIGHT joins")
    plan = make_plan(scenario)
    got = []
    for node in multi_join_nodes(plan):
        op = node.operator
        assert isinstance(op, StreamingMultiJoinOperator)
        got.append([op.spec.inputs[d].spec.name for d in range(1, op.num_inputs)])
    want = _model_groups(scenario, options)
    if got != want:
        fail(prop, scenario, f"multi-way groups {got}, but the chain's construction gives {want}\n"
              f"plan:\n{plan.explain()}")


# ---------------------------------------------------------------- TTL and restore


def ttl_longer_than_stream(scenario: Scenario) -> None:
    """Per-input TTLs longer than the stream's processing-time span change nothing: DuckDB's answer."""
    prop = "ttl_longer_than_stream"
    ttl = scenario.config.state_ttl_ms
    span = max([getattr(e, "processing_time", 0) for e in scenario.events], default=0)
    values = list(ttl.values()) if isinstance(ttl, dict) else [ttl]
    require(bool(values) and all(isinstance(t, int) and t > span for t in values), prop,
             "needs TTLs longer than the stream")
    check_history(prop, scenario, lambda: engine_outputs(scenario),
                  "with TTLs longer than the stream the multi-way answer changed")


def per_input_ttl(scenario: Scenario, ttl: int) -> Scenario:
    """The scenario with one TTL per chained input (Flink's STATE_TTL hint), growing along the chain."""
    ttls = {name: ttl + i for i, name in enumerate(scenario.join.inputs)}
    return replace(scenario, config=replace(scenario.config, state_ttl_ms=ttls))



def matches_binary_chain(scenario: Scenario) -> None:
    """The multi-way plan's output equals the binary chain's after every event (no oracle: cheap, so many
    examples; the binary chain itself is held to DuckDB by prefix_consistency)."""
    prop = "matches_binary_chain"
    require(_no_ttl(scenario) and scenario.config.semantics == "correct" and scenario.config.multi_join == "on",
             prop, "needs no TTL, semantics=correct and multi_join=on")
    multi = fold_history(run_scenario(scenario).per_event)
    binary = fold_history(run_scenario(binary_variant(scenario)).per_event)
    compare_histories(prop, scenario, multi, binary, "the multi-way plan's output differs from the binary chain's")
