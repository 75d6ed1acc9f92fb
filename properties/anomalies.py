"""The documented join anomalies: checks that pin each one down, and searches that find them.

Each anomaly has two sides (docs/anomalies.md):

* *reproduced*: in the Flink-faithful mode a fixed witness stream
  (properties/witnesses.py) shows it, on every run; a seeded search (Hypothesis
  `find`) looks for new witnesses once per campaign and reports "not found
  within budget" as a warning, never as a divergence.
* *fixed*: under the fix, a for-all check holds on every stream.

| anomaly | Flink-faithful mode | fix |
|---|---|---|
| MapState order (the state-views write-up) | `map_state_order` rocksdb / hashmap | `arrival` |
| lost unique key: two versions in state | `unique_key_lost`, raw upsert | `dedupe_before_join` |
| FLINK-40681: replaced row counted as a new association | `semantics: flink` | `semantics: correct` |
| per-key disorder (a different keyBy upstream) | `per_key_order: disordered` | none: strict mode rejects it |
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from random import Random
from typing import Any

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from converge.engine.materialize import clean, fold, fold_history
from converge.engine.model.changelog import ACCUMULATE_KINDS, Change
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import ChangeEvent, InputSpec, Scenario
from converge.engine.model.scenario_json import event_to_json
from converge.engine.runtime.local import RunResult, run_scenario
from converge.generators.anomalies import (
    as_upsert_tables,
    lost_key_scenarios,
    order_item_scenarios,
    replacing_scenarios,
)
from converge.generators.disorder import disordered_scenarios
from converge.generators.scenarios import regular_join_scenarios
from converge.oracle import presence_intervals
from converge.oracle.shared import shared_oracle
from converge.properties.determinism import process_independent_generation
from converge.properties.divergence import fail, require
from converge.properties.reference import inputs_as_joined
from converge.properties.regular import compare_histories
from converge.properties.witnesses import (
    disorder_witness,
    flink_40681_witness,
    lost_key_witness,
    mapstate_order_witness,
)


def describe_example(scenario: Scenario, result: RunResult | None = None) -> str:
    """A shrunk example as a few readable lines: config, then each event and what it emitted."""
    cfg = scenario.config
    lines = [f"{scenario.name}: {scenario.join.types[0]} join ON {scenario.join.conditions[0]}",
             f"  map_state_order={cfg.map_state_order} semantics={cfg.semantics} "
             f"normalize={cfg.changelog_normalize} {cfg.optional_settings() or ''}".rstrip()]
    for spec in scenario.inputs:
        lines.append(f"  {spec.name}{list(spec.column_names)} unique_key={spec.unique_key} {spec.changelog_mode}")
    result = result or run_scenario(scenario)
    for i, (event, items) in enumerate(zip(scenario.events, result.per_event, strict=False)):
        j = event_to_json(event)
        what = f"{j['input']} {j['kind']} {j['row']}" if "kind" in j else str(j)
        emitted = " ".join(f"{c.kind}{list(c.row)}" for c in items if isinstance(c, Change))
        lines.append(f"  {i:>2}: {what:<28} -> {emitted or '(nothing)'}")
    return "\n".join(lines)


# ---------------------------------------------------------------- arrival order model


@dataclass
class _SideModel:
    """What one join input holds, as the join's state view keys it, with arrival stamps."""

    spec: InputSpec                       # as the join sees it (unique key known or not)
    declared: InputSpec
    normalized: bool                      # an upsert input behind ChangelogNormalize
    entries: dict = field(default_factory=dict)    # view key -> [stamp, count, row]
    last: dict = field(default_factory=dict)       # normalize: unique key -> current row

    def view_key(self, row: tuple) -> tuple:
        if self.spec.unique_key:
            return tuple(row[self.spec.index_of(c)] for c in self.spec.unique_key)
        return row

    def join_changes(self, kind: str, row: tuple) -> list[tuple[str, tuple]]:
        """The changes this event puts into the join (ChangelogNormalize emulated for upsert inputs)."""
        if not self.normalized:
            return [(kind, row)]
        uk = tuple(row[self.declared.index_of(c)] for c in self.declared.unique_key or ())
        current = self.last.get(uk)
        if kind == "-D":
            if current is None:
                return []
            del self.last[uk]
            return [("-D", current)]
        self.last[uk] = row
        if current is None:
            return [("+I", row)]
        return [] if current == row else [("-U", current), ("+U", row)]

    def apply(self, kind: str, row: tuple, stamp: int) -> None:
        key = self.view_key(row)
        entry = self.entries.get(key)
        if kind in ACCUMULATE_KINDS:
            if self.spec.unique_key or entry is None:
                self.entries[key] = [stamp, 1, row]   # a new record or a replacing version: to the end
            else:
                entry[1] += 1                         # another copy keeps its place
            return
        if self.spec.unique_key:
            self.entries.pop(key, None)
        elif entry is not None:
            entry[1] -= 1
            if entry[1] == 0:
                del self.entries[key]

    def stored(self, row: tuple) -> tuple | None:
        """The row a unique-key view holds under `row`'s key (the one a replacement retracts)."""
        entry = self.entries.get(self.view_key(row)) if self.spec.unique_key else None
        return None if entry is None else entry[2]

    def ranks(self) -> dict:
        order = sorted(self.entries.items(), key=lambda kv: kv[1][0])
        return {k: i for i, (k, _) in enumerate(order)}


@dataclass(frozen=True)
class OrderViolation:
    event_index: int
    kind: str
    emitted: tuple           # the other side's records, in the order they were emitted
    arrival_ranks: tuple     # their positions in arrival order

    def __str__(self) -> str:
        return (f"event {self.event_index}: {self.kind} rows emitted for records {list(self.emitted)} "
                f"(arrival positions {list(self.arrival_ranks)})")


def order_violations(scenario: Scenario, result: RunResult | None = None) -> list[OrderViolation]:
    """Every event whose emitted rows visit the other side's records out of arrival order.

    For an event on one input, the rows it emits that carry its own record are
    grouped by row kind (an event emits padding retractions, joined rows and
    re-emitted padding as separate kinds); within a group the other side's
    records must appear in the order they arrived (a replacing version counts
    from its own arrival; another copy of a row keeps the first copy's place).
    SEMI/ANTI: a right change emits left records, which must be in left arrival order.
    """
    require(len(scenario.join.inputs) == 2, "order", "a binary join")
    require(not scenario.config.dedupe_before_join, "order", "no dedupe before the join")
    require(scenario.config.state_ttl_ms is None, "order", "no state TTL")
    result = result or run_scenario(scenario)
    seen = inputs_as_joined(scenario)
    cfg = scenario.config
    sides = [_SideModel(s, scenario.input(s.name), s.changelog_mode == "upsert" and cfg.changelog_normalize)
             for s in seen]
    semi = scenario.join.types[0] in ("semi", "anti")
    left_width = len(seen[0].columns)
    stamp = 0
    out: list[OrderViolation] = []
    for index, (event, items) in enumerate(zip(scenario.events, result.per_event, strict=False)):
        if not isinstance(event, ChangeEvent):
            continue
        s = 0 if event.input == seen[0].name else 1
        me, other = sides[s], sides[1 - s]
        own_rows = {event.row}
        changes = me.join_changes(event.kind, event.row)
        for _kind, row in changes:
            own_rows.add(row)
            replaced = me.stored(row)  # retracted in this event too (correct semantics, key-only -D)
            if replaced is not None:
                own_rows.add(replaced)
        ranks = other.ranks()
        groups: dict[str, list[tuple[tuple, int]]] = {}
        for c in items:
            if not isinstance(c, Change):
                continue
            if semi:
                if s == 0:
                    continue
                mine, theirs = None, c.row
            else:
                mine, theirs = (c.row[:left_width], c.row[left_width:]) if s == 0 else \
                    (c.row[left_width:], c.row[:left_width])
                if mine not in own_rows:
                    continue
            rank = ranks.get(other.view_key(theirs))
            if rank is not None:
                groups.setdefault(c.kind, []).append((theirs, rank))
        for kind, seq in groups.items():
            rs = [r for _, r in seq]
            if rs != sorted(rs):
                out.append(OrderViolation(index, kind, tuple(t for t, _ in seq), tuple(rs)))
        for kind, row in changes:
            stamp += 1
            me.apply(kind, row, stamp)
    return out


def emitted_in_arrival_order(scenario: Scenario) -> None:
    """Fixed: with map_state_order=arrival every event emits a key's records in arrival order."""
    prop = "emitted_in_arrival_order"
    require(scenario.config.map_state_order == "arrival", prop, "map_state_order=arrival")
    result = run_scenario(scenario)
    bad = order_violations(scenario, result)
    if bad:
        fail(prop, scenario, f"emitted out of arrival order: {bad[0]}", event_index=bad[0].event_index)


# ---------------------------------------------------------------- searches


@dataclass(frozen=True)
class SearchOutcome:
    """One seeded search's result: a witness, or none within the budget (a warning, never a divergence)."""

    name: str
    seed: int
    budget: int
    what: str
    found: Any = None

    def warning(self) -> str | None:
        if self.found is not None:
            return None
        return f"search {self.name}: not found within budget ({self.budget} examples, seed {self.seed}): {self.what}"


def try_search(strategy: st.SearchStrategy, shows: Callable[[Any], bool], *, seed: int, budget: int,
               shrink: bool = True) -> Any | None:
    """The (shrunk) example of `strategy` for which `shows` holds, or None within `budget`.

    Hypothesis `find` driven by `Random(seed)` and no example database, outside any running test: the
    same seed gives the same example in any process (tests/properties/test_existential.py runs it in two)."""
    phases = [Phase.generate] + ([Phase.shrink] if shrink else [])
    try:
        with process_independent_generation():
            return find(strategy, shows, random=Random(seed),
                        # a search, not a test: `find` turns every health check off whatever it is given
                        settings=settings(max_examples=budget, database=None, deadline=None, phases=phases,
                                          suppress_health_check=list(HealthCheck)))
    except NoSuchExample:
        return None


def search(strategy: st.SearchStrategy, shows: Callable[[Any], bool], *, seed: int, budget: int,
           prop: str, what: str, fallback: Callable[[Any], Scenario], shrink: bool = True) -> Any:
    """`try_search`, for callers that need a witness: PropertyFailure when none is found (the last
    example tried is the evidence)."""
    last: list = []

    def predicate(example: Any) -> bool:
        last[:] = [example]
        return shows(example)

    found = try_search(strategy, predicate, seed=seed, budget=budget, shrink=shrink)
    if found is not None:
        return found
    scenario = fallback(last[0]) if last else None
    if scenario is None:
        raise BadInputError(f"{prop}: the search drew no example at all")
    fail(prop, scenario, f"not reproduced: no example among {budget} (seed {seed}) shows {what}")


def _final(scenario: Scenario) -> Counter:
    return clean(fold(run_scenario(scenario).changes))


# ---------------------------------------------------------------- lost unique key / dedupe


def duplicate_versions(scenario: Scenario, result: RunResult | None = None) -> list[tuple[int, tuple, list]]:
    """(event, other key, versions): one event joined several versions of one key of the other side,
    whose declared unique key the join lost: a one-to-one join became one-to-many."""
    result = result or run_scenario(scenario)
    left, right = scenario.chain
    width = len(left.columns)
    lost = set(scenario.config.unique_key_lost)
    out = []
    for index, (event, items) in enumerate(zip(scenario.events, result.per_event, strict=False)):
        if not isinstance(event, ChangeEvent):
            continue
        other = right if event.input == left.name else left
        if other.name not in lost or other.unique_key is None:
            continue
        versions: dict[tuple, dict] = {}  # key -> versions in the order they were emitted
        for c in items:
            if isinstance(c, Change) and c.kind in ACCUMULATE_KINDS:
                part = c.row[width:] if other is right else c.row[:width]
                if all(v is None for v in part):
                    continue  # null padding, not a version
                key = tuple(part[other.index_of(col)] for col in other.unique_key)
                versions.setdefault(key, {})[part] = None
        for key, parts in versions.items():
            if len(parts) > 1:
                out.append((index, key, list(parts)))
    return out


def deduplicated_batch(scenario: Scenario) -> Scenario:
    """The batch reading of a dedupe pipeline: each deduped input keeps its last row per dedupe key."""
    keys = {spec.name: spec.unique_key for spec in inputs_as_joined(scenario)
            if spec.name in scenario.config.dedupe_before_join}
    return as_upsert_tables(scenario, keys)


def dedupe_matches_batch(scenario: Scenario) -> None:
    """Fixed: with a dedupe before the join the answer after every event is the batch answer over
    the deduplicated inputs, and no event joins two versions of one key."""
    prop = "dedupe_matches_batch"
    require(bool(scenario.config.dedupe_before_join), prop, "config.dedupe_before_join")
    result = run_scenario(scenario)
    dup = duplicate_versions(scenario, result)
    if dup:
        index, key, parts = dup[0]
        fail(prop, scenario, f"event {index} joined {len(parts)} versions of key {key}: {parts}",
              event_index=index)
    got = fold_history(result.per_event)
    want = shared_oracle().history(deduplicated_batch(scenario))
    compare_histories(prop, scenario, got, want, "differs from the batch answer over the deduplicated inputs")


# ---------------------------------------------------------------- FLINK-40681


def missing_padding(scenario: Scenario) -> Counter:
    """Null-padded rows the batch answer has and the final output lacks."""
    want = shared_oracle().final(as_upsert_tables(scenario))
    got = _final(scenario)
    return Counter({r: n - got.get(r, 0) for r, n in want.items()
                    if any(v is None for v in r) and n > got.get(r, 0)})


def correct_matches_batch(scenario: Scenario) -> None:
    """Fixed: under semantics=correct a replaced row is retracted first, so the answer after every
    event is the batch answer over the inputs keeping their last row per unique key."""
    prop = "correct_matches_batch"
    require(scenario.config.semantics == "correct", prop, "semantics=correct")
    got = fold_history(run_scenario(scenario).per_event)
    want = shared_oracle().history(as_upsert_tables(scenario))
    compare_histories(prop, scenario, got, want, "differs from the batch answer (last row per unique key)")


# ---------------------------------------------------------------- per-key disorder


def disorder_diverges(source: Scenario, arrived: Scenario) -> bool:
    """The engine takes the swapped stream as Flink does and ends away from the batch answer."""
    return _final(arrived) != shared_oracle().final(source)


def disorder_guarded(source: Scenario, arrived: Scenario) -> None:
    """For every swap: the disordered mode runs it without error (Flink's state views take what
    comes, no crash), and the strict per-key order that every other family runs in rejects every
    swap that breaks the changelog (a retraction before the row it retracts, in the batch reading
    of the inputs): BadInputError at an event between the swap and that retraction.

    A swap that leaves a valid changelog, such as a no-op update `-U r, +U r` arriving as
    `+U r, -U r`, cannot be told apart from a source that sent it; `disorder_diverges` shows
    where that leads."""
    prop = "disorder_guarded"
    require(arrived.config.per_key_order == "disordered", prop, "an arrived, disordered stream")
    first, _ = arrived.meta["disorder_swapped"]
    run_scenario(arrived)  # must not raise: Flink does not crash on disorder either
    strict = replace(arrived, config=replace(arrived.config, semantics="correct", per_key_order="kept"))
    try:
        presence_intervals(strict)
        return  # a valid changelog: nothing for the strict mode to reject
    except BadInputError as exc:
        broken = exc.event_index
    try:
        run_scenario(strict)
    except BadInputError as exc:
        if exc.event_index is not None and first <= exc.event_index <= broken:
            return
        fail(prop, strict, f"strict per-key order rejected the swapped stream at event {exc.event_index}, "
              f"outside events {first}..{broken}: {exc}", extra={"source": source})
    fail(prop, strict, f"strict per-key order accepted a stream whose event {broken} retracts a row the "
          f"input does not hold", event_index=broken, extra={"source": source})


# ---------------------------------------------------------------- the searches, and the fix on each witness

SEARCH_BUDGET = 1000
SEARCH_OPS = 8


def _with(scenario: Scenario, **config: Any) -> Scenario:
    return replace(scenario, config=replace(scenario.config, **config))


def find_order_anomaly(order: str, *, seed: int, shrink: bool = True, budget: int = SEARCH_BUDGET) -> Scenario:
    """The state-views write-up's case under a Flink-faithful MapState order: an order change re-emits its items
    out of arrival order."""
    return search(order_item_scenarios(map_state_orders=(order,), max_ops=SEARCH_OPS),
                  lambda s: bool(order_violations(s)), seed=seed, budget=budget, shrink=shrink,
                  prop=f"mapstate_order_{order}", what="items emitted out of arrival order", fallback=lambda s: s)


def _shows(prop: str, witness: Scenario, shown: bool, what: str) -> None:
    if not shown:
        fail(prop, witness, f"not reproduced: the fixed witness no longer shows {what}")


def mapstate_order_reproduced() -> None:
    """Reproduced: rocksdb and hashmap order each emit some key's items out of arrival order on their fixed
    witness, and the same stream with map_state_order=arrival does not."""
    for order in ("rocksdb", "hashmap"):
        witness = mapstate_order_witness(order)
        _shows("mapstate_order_reproduced", witness, bool(order_violations(witness)), "items out of arrival order")
        emitted_in_arrival_order(_with(witness, map_state_order="arrival"))


def mapstate_order_search(seed: int, budget: int = SEARCH_BUDGET) -> list[SearchOutcome]:
    """Once per campaign: a seeded search for a new witness per order; the fix must remove each one found."""
    out = []
    for order in ("rocksdb", "hashmap"):
        found = try_search(order_item_scenarios(map_state_orders=(order,), max_ops=SEARCH_OPS),
                           lambda s: bool(order_violations(s)), seed=seed, budget=budget, shrink=False)
        if found is not None:
            emitted_in_arrival_order(_with(found, map_state_order="arrival"))
        out.append(SearchOutcome(f"mapstate_order_{order}", seed, budget, "items emitted out of arrival order",
                                 found))
    return out


def find_lost_key_anomaly(*, seed: int, shrink: bool = True, budget: int = SEARCH_BUDGET) -> Scenario:
    """An upsert input whose unique key the join lost keeps two versions of a row: one event joins both."""
    return search(lost_key_scenarios(max_ops=SEARCH_OPS), lambda s: bool(duplicate_versions(s)), seed=seed,
                  budget=budget, shrink=shrink, prop="unique_key_lost", what="two versions of one key joined",
                  fallback=lambda s: s)


def _dedupe_fix(witness: Scenario) -> None:
    dedupe_matches_batch(_with(witness, dedupe_before_join=dict.fromkeys(witness.config.unique_key_lost)))


def lost_key_reproduced() -> None:
    """Reproduced: the one-to-one join becomes one-to-many on the fixed witness; a dedupe before the join
    removes it."""
    witness = lost_key_witness()
    _shows("lost_unique_key_reproduced", witness, bool(duplicate_versions(witness)), "two versions of one key")
    _dedupe_fix(witness)


def lost_key_search(seed: int, budget: int = SEARCH_BUDGET) -> list[SearchOutcome]:
    found = try_search(lost_key_scenarios(max_ops=SEARCH_OPS), lambda s: bool(duplicate_versions(s)), seed=seed,
                       budget=budget, shrink=False)
    if found is not None:
        _dedupe_fix(found)
    return [SearchOutcome("unique_key_lost", seed, budget, "two versions of one key joined", found)]


def _flink_40681_strategy() -> st.SearchStrategy[Scenario]:
    return replacing_scenarios(semantics="flink", join_types=("left", "right", "full"), residuals=(None,),
                               shapes=("join_key", "own"), modes=("upsert", "retract"), max_ops=SEARCH_OPS)


def find_flink_40681(*, seed: int, shrink: bool = True, budget: int = SEARCH_BUDGET) -> Scenario:
    """Under semantics=flink a replaced row counted as a new association: a padded row never comes back."""
    return search(_flink_40681_strategy(), lambda s: bool(missing_padding(s)), seed=seed, budget=budget,
                  shrink=shrink, prop="flink_40681", what="a null-padded row missing from the final answer",
                  fallback=lambda s: s)


def flink_40681_reproduced() -> None:
    """Reproduced: the divergence exists on the fixed witness under semantics=flink; the same stream
    under correct has none."""
    witness = flink_40681_witness()
    _shows("flink_40681_reproduced", witness, bool(missing_padding(witness)), "a missing null-padded row")
    correct_matches_batch(_with(witness, semantics="correct"))


def flink_40681_search(seed: int, budget: int = SEARCH_BUDGET) -> list[SearchOutcome]:
    found = try_search(_flink_40681_strategy(), lambda s: bool(missing_padding(s)), seed=seed, budget=budget,
                       shrink=False)
    if found is not None:
        correct_matches_batch(_with(found, semantics="correct"))
    return [SearchOutcome("flink_40681", seed, budget, "a null-padded row missing from the final answer", found)]


def _disorder_strategy() -> st.SearchStrategy[tuple[Scenario, Scenario]]:
    return disordered_scenarios(regular_join_scenarios(modes=("insert_only", "retract"), min_ops=2,
                                                       max_ops=SEARCH_OPS))


def find_disorder_divergence(*, seed: int, shrink: bool = True, budget: int = SEARCH_BUDGET
                             ) -> tuple[Scenario, Scenario]:
    """Two same-key changes swapped on the way to the join: the final answer leaves the batch answer."""
    return search(_disorder_strategy(), lambda pair: disorder_diverges(*pair), seed=seed, budget=budget,
                  shrink=shrink, prop="per_key_disorder", what="a final answer away from the batch answer",
                  fallback=lambda pair: pair[1])


def disorder_reproduced() -> None:
    """Reproduced: the engine takes the fixed swapped stream as Flink does (no crash) and diverges;
    strict per-key order, which every other family runs in, rejects that stream."""
    source, arrived = disorder_witness()
    _shows("per_key_disorder_reproduced", arrived, disorder_diverges(source, arrived),
           "a final answer away from the batch answer")
    disorder_guarded(source, arrived)


def disorder_search(seed: int, budget: int = SEARCH_BUDGET) -> list[SearchOutcome]:
    found = try_search(_disorder_strategy(), lambda pair: disorder_diverges(*pair), seed=seed, budget=budget,
                       shrink=False)
    if found is not None:
        disorder_guarded(*found)
    return [SearchOutcome("per_key_disorder", seed, budget, "a final answer away from the batch answer", found)]
