"""A system's changelog judged as a changelog: its row kinds per key, and its rows event by event.

A final answer says nothing about the row kinds a system emits on the way, and a
downstream consumer (an upsert sink, a materializer) acts on them. So a system
that answers its changelog in a repeatable order (`output: "changelog"`,
`deterministic_order`: Flink with paced arrival) is held to two more things:

* **well formed** (`violations`): no -U/-D of a row that is not there (rule
  "retract"), and, where the changelog's key guarantees that every update is a
  -U/+U pair of that key (`update_key`), no +U that does not follow a -U of its
  key (rule "update": a +U as the first row of its key is FLINK-34380's
  symptom);
* **the model's rows, event by event** (`first_event_difference`): converge's
  engine with `semantics: flink` run on the same events in the same order; each
  event's output compared as a multiset of (row kind, row) (SEMI/ANTI joins where
  Flink runs its semi-join operator: `semi_anti_refusal`);
* **in the backend's order** (`order_difference`): with a case id (the Flink
  adapter's), the model runs with the MapState order of the case's
  `config.state_backend` and the case id hashed in front of every stored row
  (order_model.py), and each event of two or more outputs must visit the other
  side's stored rows in the model's order. Not compared: how the outputs of
  one stored row interleave (an outer row's retraction and its padding, which
  depends on the Flink release: `config.flink_version`, docs/anomalies.md),
  except in a mini-batch join: there every event's outputs must come in the
  model's exact sequence (`minibatch_order_refusal` says where not), the
  bundle walked in Flink's hash order (engine/operators/bundle_order.py) and
  the release's interleaving, as measured on every release converge runs
  (docs/anomalies.md, "On real Flink").

The key of the "update" rule (docs/flink.md, "What a campaign compares"): the
output row's identity, made of each input's unique-key columns (an insert-only
input without one: all its columns). Flink's non-mini-batch join passes an
input's row kind on to the rows it joins (INNER) and writes outer padding as
+I/-D, so its -U/+U come in pairs of one output identity exactly when an
update's before and after images meet the same rows of the other side and
nothing arrives between them. `update_key` claims the rule only for such cases:
a binary INNER/LEFT/RIGHT/FULL join on column equalities alone, every input
with updates keyed by a unique key that holds its join-key columns (so an update
keeps its join key), each -U/+U of a retract input adjacent in the arrival
order with the same unique key. Elsewhere a +U without a -U is what Flink does
by design (a residual condition that an update starts to meet), and the rule is
not claimed: the case's verdict says so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import get_args

import sqlglot
from sqlglot import exp

from converge.engine.model.changelog import Change
from converge.engine.model.errors import ConvergeError
from converge.engine.model.scenario import ChangeEvent, FlinkVersion, Scenario, Semantics
from converge.engine.runtime.local import run_scenario
from converge.properties.reference import equality_keys, has_residual
from converge.properties.systems.case_id import with_case_id, without_case_id
from converge.properties.systems.order_model import BACKEND_ORDER, case_prefix, show, split_like, stored_visits, visits

# The systems converge's engine has a model of: their changelogs are compared with it under these semantics; any
# other system (converge's own reference engine) with the engine's default, semantics=correct.
MODELLED: dict[str, Semantics] = {"flink": "flink"}
# The systems whose adapter puts a case id in front of every row and key (properties/systems/case_id.py)
CASE_IDS = frozenset({"flink"})


@dataclass(frozen=True)
class Violation:
    """One change that breaks a rule: where it is in the changelog, the rule, and what it breaks."""

    index: int
    change: Change
    rule: str          # "retract" or "update"
    message: str


def output_inputs(scenario: Scenario) -> list[tuple[int, int]]:
    """(chain index, first output position) of each input whose columns the output carries (SEMI/ANTI add none)."""
    out, offset = [], 0
    for i, spec in enumerate(scenario.chain):
        if i and scenario.join.types[i - 1] in ("semi", "anti"):
            continue
        out.append((i, offset))
        offset += len(spec.columns)
    return out


def update_key(scenario: Scenario) -> tuple[tuple[int, ...] | None, str | None]:
    """The output positions of the key the "update" rule is judged on, or (None, why the rule is not claimed)."""
    chain = scenario.chain
    if len(chain) != 2 or scenario.join.interval is not None:
        return None, "only a binary regular join's key is derived"
    if scenario.join.types[0] not in ("inner", "left", "right", "full"):
        return None, f"a {scenario.join.types[0].upper()} join's key is not derived"
    left, right = chain
    condition = scenario.join.conditions[0]
    keys = equality_keys(condition, [left.name], right.name)
    if not keys or has_residual(condition, [left.name], right.name) or any(k[3] for k in keys):
        return None, ("the condition is not column equalities alone: an update's before and after images may "
                      "meet different rows, and Flink then forwards a +U without a -U by design")
    join_columns = ({k[1] for k in keys}, {k[2] for k in keys})
    positions: list[int] = []
    for (i, offset), spec in zip(output_inputs(scenario), chain, strict=False):
        names = [c for c, _ in spec.columns]
        if spec.unique_key is None:
            if spec.changelog_mode != "insert_only":
                return None, f"input {spec.name} has updates but no unique key: an update's rows have no identity"
            positions.extend(offset + j for j in range(len(names)))
            continue
        if spec.changelog_mode != "insert_only" and not join_columns[i] <= set(spec.unique_key):
            return None, f"an update of {spec.name} may change its join key (not all in its unique key)"
        positions.extend(offset + names.index(c) for c in spec.unique_key)
    reason = _unpaired_update(scenario)
    return (None, reason) if reason else (tuple(positions), None)


def _unpaired_update(scenario: Scenario) -> str | None:
    """Why some update of a retract input is not a -U directly followed by the +U of its unique key, if one is."""
    events = [e for e in scenario.events if isinstance(e, ChangeEvent)]
    for n, event in enumerate(events):
        spec = scenario.input(event.input)
        if spec.changelog_mode != "retract":
            continue  # insert-only: none; upsert: ChangelogNormalize writes the pair itself
        uk = [j for j, (c, _) in enumerate(spec.columns) if spec.unique_key and c in spec.unique_key]
        before = events[n - 1] if n else None
        if event.kind == "+U" and not (before is not None and before.input == event.input and before.kind == "-U"
                                       and [before.row[j] for j in uk] == [event.row[j] for j in uk]):
            return f"a +U of input {event.input} (event {n}) does not directly follow the -U of its unique key"
    return None


def violations(changelog: Sequence[Change], key: Sequence[int] | None) -> list[Violation]:
    """The changes that break the rules: "retract" always (a -U/-D of a row with none emitted), "update" only
    with a `key` (a +U with no unanswered -U of its key before it)."""
    live: Counter = Counter()
    open_befores: Counter = Counter()
    out: list[Violation] = []
    for i, change in enumerate(changelog):
        kind, row = change.kind, tuple(change.row)
        ident = None if key is None else tuple(row[j] for j in key)
        if kind in ("-U", "-D"):
            if live[row] <= 0:
                out.append(Violation(i, change, "retract", f"{kind}{list(row)} at output {i} retracts a row "
                                     f"that is not there (no +I/+U of it before)"))
                continue
            live[row] -= 1
            if kind == "-U" and ident is not None:
                open_befores[ident] += 1
            continue
        live[row] += 1
        if kind == "+U" and ident is not None:
            if open_befores[ident] <= 0:
                first = "the first row of its key" if not any(identity(c, key) == ident for c in changelog[:i]) \
                    else "no -U of its key before it"
                out.append(Violation(i, change, "update", f"+U{list(row)} at output {i} is {first} "
                                     f"{list(ident)}: an update-after without an update-before"))
                continue
            open_befores[ident] -= 1
    return out


def identity(change: Change, key: Sequence[int] | None) -> tuple | None:
    """The change's values at the key's positions (None without a key)."""
    return None if key is None else tuple(change.row[j] for j in key)


def modelled_release(system: object) -> FlinkVersion | None:
    """The `config.flink_version` of the system's release (1.20.1 -> "1.20"), None for one converge has no model
    of (the scenario's own flink_version then stands)."""
    minor = ".".join(str(getattr(system, "version", "")).split(".")[:2])
    return next((v for v in get_args(FlinkVersion) if v == minor), None)


def model_events(scenario: Scenario, semantics: Semantics = "flink", case_id: int | None = None,
                 release: FlinkVersion | None = None) -> list[list[Change]] | str:
    """Each event's output on converge's engine with `semantics` (Flink's: "flink"; the end of input's flush
    with the last event), or why the model cannot be compared event by event with a paced system.

    `case_id`: the id the Flink adapter gave the case (properties/systems/case_id.py). With it the model visits
    the stored rows in the MapState order of the case's state backend (hashmap by default), the id hashed in
    front of every stored row as Flink stores it; and a mini-batch join, which walks a bundle in the hash order
    of its keys (which hold that id), runs on the rows as the adapter sends them. An outer join's paddings
    depend on the bundle order, so without the id a mini-batch outer join is not compared. `release`: the Flink
    release modelled (`config.flink_version`; ChangelogNormalize and the outer padding differ by release)."""
    cfg = scenario.config
    if scenario.join.interval is not None:
        return "an interval join's output moves with watermarks, which the system derives on its own"
    decorrelated = semi_anti_refusal(scenario)
    if decorrelated:
        return decorrelated
    if not scenario.events or not all(isinstance(e, ChangeEvent) for e in scenario.events):
        return "the scenario has events that are no records (a system is fed its records only)"
    if cfg.mini_batch_size is not None and any(s.changelog_mode == "upsert" for s in scenario.chain):
        return ("a mini-batch case with an upsert input: Flink's ChangelogNormalize buffers a bundle of its own, "
                "so the join's bundles need not be the scenario's")
    widened = None if case_id is None or cfg.mini_batch_size is None else with_case_id(scenario, case_id)
    if cfg.mini_batch_size is not None and any(t != "inner" for t in scenario.join.types) and widened is None:
        return ("a mini-batch outer join whose case id is not known (a system other than Flink's adapter, or a "
                "chain of three inputs): Flink walks a bundle in the hash order of its keys, which hold the "
                "adapter's case id, and that order decides which padding rows it emits and retracts on the way")
    changed = replace(cfg, semantics=semantics)
    if release is not None:
        changed = replace(changed, flink_version=release)
    prefix: tuple[tuple, tuple] = ((), ())
    if case_id is not None:
        changed = replace(changed, map_state_order=BACKEND_ORDER[cfg.state_backend or "hashmap"])
        if widened is None:      # a widened scenario's rows hold the case id column already
            prefix = case_prefix(case_id)
    run_on = scenario if widened is None else widened
    try:
        run = run_scenario(replace(run_on, config=changed), hash_prefix=prefix)
    except ConvergeError as exc:
        return f"the model rejects the case: {type(exc).__name__}: {exc}"
    per_event = [[item for item in items if isinstance(item, Change)] for items in run.per_event]
    return per_event if widened is None else [without_case_id(scenario, changes) for changes in per_event]


def semi_anti_refusal(scenario: Scenario) -> str | None:
    """Why a SEMI/ANTI link does not run on Flink's StreamingSemiAntiJoinOperator, if one does not.

    Flink's SubQueryDecorrelator (flink-table-planner, `analyzeCorConditions`) takes an EXISTS condition in
    conjunctive normal form and refuses every conjunct that holds a correlated column under an OR; a refused
    EXISTS is decorrelated by Calcite's general rule instead: an INNER join with a GroupAggregate of the
    correlated columns (docs/flink.md, "What a campaign compares"), whose changelog is the aggregate's. An
    IS [NOT] DISTINCT FROM is an OR there (`a = b OR (a IS NULL AND b IS NULL)`). Without such an OR the plan is
    a LeftSemiJoin / LeftAntiJoin: the operator the model runs."""
    for jtype, condition in zip(scenario.join.types, scenario.join.conditions, strict=False):
        if jtype in ("semi", "anti") and disjunctive(condition):
            return (f"a {jtype.upper()} join whose condition holds an OR once in conjunctive normal form "
                    f"({condition}; IS NOT DISTINCT FROM is one): Flink's planner decorrelates the EXISTS into an "
                    f"INNER join over a GroupAggregate, not its semi-join operator (docs/flink.md)")
    return None


@lru_cache(maxsize=512)
def disjunctive(condition: str) -> bool:
    """Whether the condition's conjunctive normal form holds an OR (one sqlglot cannot read: taken to hold one)."""
    try:
        return _has_disjunction(sqlglot.parse_one(condition), negated=False)
    except sqlglot.errors.SqlglotError:
        return True


def _has_disjunction(node: exp.Expr, negated: bool) -> bool:
    """NOT pushed inward: an OR, a negated AND or BETWEEN (De Morgan), or a null-safe (in)equality, anywhere."""
    if isinstance(node, exp.Paren):
        return _has_disjunction(node.this, negated)
    if isinstance(node, exp.Not):
        return _has_disjunction(node.this, not negated)
    if isinstance(node, (exp.NullSafeEQ, exp.NullSafeNEQ)):
        return True
    if isinstance(node, (exp.Or, exp.And)):   # NOT (x OR y) is NOT x AND NOT y; NOT (x AND y) an OR
        if isinstance(node, exp.Or) != negated:
            return True
        return _has_disjunction(node.left, negated) or _has_disjunction(node.right, negated)
    if isinstance(node, exp.Between) and negated:
        return True
    return any(_has_disjunction(child, negated) for child in node.iter_expressions())


def kinded(changes: Sequence[Change]) -> Counter:
    """Changes as a multiset of (row kind, value, ...), so that a comparison sees the row kinds."""
    return Counter((c.kind, *c.row) for c in changes)


@dataclass(frozen=True)
class EventDifference:
    event: int
    system: Counter      # the system's rows for that event, kinded
    model: Counter


def first_event_difference(changelog: Sequence[Change], per_event: Sequence[Sequence[Change]]
                           ) -> EventDifference | None:
    """The first event whose output differs: the system's changelog is cut into consecutive runs as long as each
    event's model output (the events before agree, so the cut is where that event's output starts)."""
    pos = 0
    for n, expected in enumerate(per_event):
        got = changelog[pos:pos + len(expected)]
        if kinded(got) != kinded(expected):
            return EventDifference(n, kinded(got), kinded(expected))
        pos += len(expected)
    if pos < len(changelog):
        return EventDifference(len(per_event) - 1, kinded(changelog[pos:]), Counter())
    return None


@dataclass(frozen=True)
class OrderDifference:
    event: int
    system: str          # the event's outputs as the system emitted them
    model: str           # ... and in the model's order
    sequence: bool = False   # the exact output sequence compared (a mini-batch event), not the stored rows' visits


def minibatch_order_refusal(scenario: Scenario) -> str | None:
    """Why a mini-batch join's output order is not compared, if it is not: a condition that holds an OR once in
    conjunctive normal form. Flink's planner pulls an equality common to every branch of such an OR into the join
    key (measured: `(a.k = b.k AND ..) OR (a.k = b.k AND ..)` is bundled under (case id, k), docs/minibatch.md),
    where converge's planner keys on top-level equalities only, so the bundle's HashMap order would be another."""
    if disjunctive(scenario.join.conditions[0]):
        return (f"a mini-batch join whose condition holds an OR ({scenario.join.conditions[0]}): Flink may key its "
                f"bundle on an equality common to the branches, converge does not, so its order is not compared")
    return None


def order_difference(scenario: Scenario, changelog: Sequence[Change], per_event: Sequence[Sequence[Change]]
                     ) -> OrderDifference | None:
    """The first event whose outputs visit the other side's stored rows out of the model's order, or, in a
    mini-batch join, come in another sequence than the model's (the model's rows agree, first_event_difference);
    None when every event agrees or there is no order to compare (a chain of three inputs; a mini-batch join
    `minibatch_order_refusal` refuses)."""
    mini_batch = scenario.config.mini_batch_size is not None
    if len(scenario.chain) != 2 or (mini_batch and minibatch_order_refusal(scenario)):
        return None
    pieces = split_like(changelog, per_event)
    if isinstance(pieces, str):
        return None      # the rows differ: first_event_difference reports it
    for n, (piece, want, visit) in enumerate(zip(pieces, per_event, stored_visits(scenario), strict=False)):
        if mini_batch and list(piece) != list(want):
            return OrderDifference(n, show(piece), show(want), sequence=True)
        if not mini_batch and visit is not None and visits(piece, visit) != visits(want, visit):
            return OrderDifference(n, show(piece), show(want))
    return None
