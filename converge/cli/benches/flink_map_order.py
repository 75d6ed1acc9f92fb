"""`converge bench --only flink_map_order`: how often converge's model of the MapState order agrees with real
Flink's emission order, per join family (the binary join's join types; the multi-way join) and state backend,
on the Flink release `--system flink:VERSION` names (default: the newest installed).

A measurement of Flink's behaviour (docs/anomalies.md cites it), not a test. It draws `--examples` scenarios per
family and backend from generators/map_order.py (Hypothesis, seed 1), sends them grouped by shape, at most 20 a request
(one job each), and for each case with an event that emits two or more rows compares the order in which the
system visits the stored rows with converge's model of the backend (properties/systems/map_order.py:
`map_state_order` rocksdb, byte order; hashmap, java.util.HashMap order of BinaryRowData.hashCode, with the
adapter's case id hashed in front of every row). An event agrees when it visits its stored rows in the model's
order, a case when every such event does; how many events also have the engine's exact output sequence (an
outer row's retraction and padding interleaved the same way) is counted apart. A multi-way event (a 3-way
chain, generators/map_order.py) agrees when its outputs come in the model's exact sequence: it walks the stored
rows of every other input in turn. The mini-batch family (MiniBatchStreamingJoinOperator) and the event-time
interval family (RowTimeIntervalJoin) compare the exact sequence too: a mini-batch flush walks a bundle in its
HashMaps' order and then the state, the interval join's end of input expires both caches in their MapState's
order. Skipped, with the reason, when no Flink is installed (without `--system`) or its adapter gives no order
to measure.

It also counts the agreeing events that a copy-on-write copy of the map would have reordered
(`copy_would_reorder`): while a snapshot of the HashMapStateBackend is open, CopyOnWriteStateMap hands the
operator a copy of a map it touches, made by MapSerializer.copy as `new HashMap<>(size)` filled in the
original's iteration order, whose smaller table orders the same keys otherwise (engine/java_hashmap.py). The
adapter's paced arrival takes a checkpoint between every two rounds; an agreeing event such a copy would
have reordered shows that no copy was in place when Flink processed it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import get_args

from hypothesis import HealthCheck, given, seed, settings

from converge.engine.java_hashmap import binary_row_hash, spread
from converge.engine.model.changelog import Change
from converge.engine.model.errors import UsageError
from converge.engine.model.scenario import ChangeEvent, FlinkVersion, InputSpec, Scenario
from converge.engine.model.system import System
from converge.generators.map_order import (
    BACKENDS,
    OUTER_AND_INNER,
    interval_order_scenarios,
    map_order_scenarios,
    minibatch_order_scenarios,
    multiway_order_scenarios,
)
from converge.generators.scenarios import LAYOUTS
from converge.properties.systems.case_id import adapter_case_ids
from converge.properties.systems.changelogs import model_events
from converge.properties.systems.map_order import why_not_ordered
from converge.properties.systems.order_model import (
    compare_orders,
    model_per_event,
    show,
    split_like,
    stored_visits,
    visits,
)
from converge.reports.options import BenchConfig
from converge.reports.terminal import format_table
from converge.systems.adapter.client import Timeouts
from converge.systems.registry import open_system

SYSTEM = "flink"   # the newest Flink installed; `converge bench --system flink:VERSION` picks another
SEED = 1     # the same scenarios every time, as docs/anomalies.md measured them
BATCH = 20   # cases a request (one job each)


# The binary join's families, by join type: the operator (StreamingJoinOperator, or StreamingSemiAntiJoinOperator
# for SEMI/ANTI: a conjunction of equalities, planned as a LeftSemiJoin) and the state views are the same, the
# records an event visits differ (an outer side's padding; SEMI/ANTI emit the left rows themselves).
FAMILIES: dict[str, tuple[str, ...]] = {"inner_left": ("inner", "left"), "right_full": ("right", "full"),
                                        "semi_anti": ("semi", "anti")}
# The multi-way join (StreamingMultiJoinOperator, `table.optimizer.multi-join.enabled`): a 3-way INNER/LEFT
# chain on one key (generators/map_order.py), measured on the releases that have the operator.
MULTIWAY = "multiway"
MULTIWAY_SINCE = (2, 1)
# The mini-batch join (MiniBatchStreamingJoinOperator: a bundle walked in its BufferBundle's HashMap order, then the
# state views) and the event-time interval join (RowTimeIntervalJoin: per side a MapState<Long time, List<row>>),
# INNER/LEFT/RIGHT/FULL each (generators/map_order.py); an event agrees when its outputs come in the model's exact
# sequence. The processing-time interval join is not measured: the adapter refuses it, since a row's time would
# be its arrival's wall-clock millisecond, so the cache's keys (their HashMap order) and which rows a cleanup
# timer expires would change from run to run.
MINIBATCH = "minibatch"
INTERVAL = "interval"
GENERATED = {MINIBATCH: minibatch_order_scenarios, INTERVAL: interval_order_scenarios}


def check_system(spec: str | None, only: tuple[str, ...] | None) -> None:
    """Refuse, before any benchmark runs, a `--system` this measurement cannot take or that no benchmark run uses."""
    if spec is None:
        return
    if not only or "flink_map_order" not in only:
        raise UsageError(f"--system {spec} applies to the measurement of Flink's order: add --only flink_map_order")
    scheme, _, version = spec.partition(":")
    if scheme != "flink":
        raise UsageError(f"--system {spec!r}: flink_map_order measures Flink: flink or flink:VERSION "
                         f"(`converge systems list` names the installed versions)")
    if version:
        model_version(version)


def model_version(version: str) -> FlinkVersion:
    """The `config.flink_version` converge models a Flink release with (its major.minor); a usage error for a
    release converge has no model of."""
    minor = ".".join(version.split(".")[:2])
    for known in get_args(FlinkVersion):
        if known == minor:
            return known
    raise UsageError(f"Flink {version}: converge models Flink {', '.join(get_args(FlinkVersion))} "
                     f"(config.flink_version), not this release")


def draw_cases(backend: str, n: int, seed_value: int, join_types: tuple[str, ...] = FAMILIES["inner_left"], *,
               multiway: bool = False, family: str | None = None) -> list[Scenario]:
    """`n` distinct scenarios of `backend` and `join_types` from the generator (`multiway`: the 3-way chain's,
    INNER and LEFT; `family` MINIBATCH or INTERVAL: that family's, INNER/LEFT/RIGHT/FULL), the same ones for the
    same seed."""
    drawn: list[Scenario] = []
    if family is not None:
        strategy = GENERATED[family](backends=(backend,), join_types=OUTER_AND_INNER)
    elif multiway:
        strategy = multiway_order_scenarios(backends=(backend,), layouts=LAYOUTS[:1])
    else:
        strategy = map_order_scenarios(backends=(backend,), join_types=join_types, layouts=LAYOUTS[:1])

    @seed(seed_value)
    @settings(max_examples=n * 4, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(scenario: Scenario) -> None:
        if len(drawn) < n and scenario not in drawn:
            drawn.append(scenario)

    collect()
    return drawn


def _map_key(spec: InputSpec, row: tuple, case_id: int) -> tuple[tuple, tuple] | None:
    """(values, types) of the HashMap key under which Flink's join stores `row` of `spec` as the adapter sends
    it (case id in front; the unique key `id` or the whole row), None for a ValueState (unique key = join key)."""
    types = tuple(t for _, t in spec.columns)
    if spec.unique_key:
        if set(spec.unique_key) <= {"k"}:
            return None
        at = [spec.index_of(c) for c in spec.unique_key]
        return (case_id, *(row[i] for i in at)), ("INTEGER", *(types[i] for i in at))
    return (case_id, *row), ("INTEGER", *types)


def copied_order(keys: list[tuple[tuple, tuple]]) -> list[int]:
    """The iteration order (indexes into `keys`, given in the map's iteration order) of `new HashMap<>(n)` filled
    with them in that order: a table of tableSizeFor(n) that grows past 3/4 full as HashMap.resize grows it."""
    n = len(keys)
    capacity = 1
    while capacity < n:
        capacity *= 2
    threshold = int(capacity * 0.75)
    hashes = [spread(binary_row_hash(*k)) for k in keys]
    for size in range(1, n + 1):
        if size > threshold:
            threshold = threshold * 2 if capacity >= 16 else int(capacity * 2 * 0.75)
            capacity *= 2
    return sorted(range(n), key=lambda i: (hashes[i] & (capacity - 1), i))


def copy_would_reorder(scenario: Scenario, changelog: list[Change], per_event: list[list[Change]],
                       case_id: int) -> int:
    """How many events that visit two or more stored rows in the model's order (a map without a copy) a
    snapshot's copy of the map would have visited in another order."""
    pieces = split_like(changelog, per_event)
    if isinstance(pieces, str) or scenario.config.state_backend != "hashmap" or visits_of(scenario) is None:
        return 0
    count = 0
    left, right = scenario.chain
    for event, piece, want, visit in zip(scenario.events, pieces, per_event, stored_visits(scenario), strict=False):
        if visit is None or not isinstance(event, ChangeEvent) or visits(piece, visit) != visits(want, visit):
            continue
        stored = right if event.input == left.name else left
        keys = [_map_key(stored, row, case_id) for row in visits(want, visit)]
        if len(keys) >= 2 and None not in keys:
            count += copied_order(keys) != list(range(len(keys)))  # type: ignore[arg-type]
    return count


def measure(system: System, cases: list[Scenario], batch: int) -> dict:
    """Counts over `cases` (of one backend): ordered cases, and how many agree with converge's model of Flink
    (`semantics: flink`) in the system's release (`config.flink_version`: an outer join's retract/pad
    interleaving and the multi-way join's state keys depend on it)."""
    release = model_version(system.version)
    counts: Counter = Counter()
    mismatches: list[str] = []      # every disagreeing event, for the JSON results (not the table)
    sequences: list[str] = []       # per case, the first ordered event whose exact output sequence differs
    # one shape per request (the adapter's case ids count per shape), at most `batch` cases each
    shapes: dict[str, list[Scenario]] = {}
    for s in cases:
        shapes.setdefault(repr((s.inputs, s.join)), []).append(s)
    groups = [g[i:i + batch] for g in shapes.values() for i in range(0, len(g), batch)]
    for group in groups:
        if group:
            results = system.run_cases(group)
            ids = adapter_case_ids(group, results, system.capabilities.max_batch)
            for scenario, result, case_id in zip(group, results, ids, strict=False):
                counts["cases"] += 1
                if result.status != "ok" or result.changelog is None:
                    counts[f"status {result.status}"] += 1
                    continue
                model = modelled_events(scenario, case_id, release)
                if isinstance(model, str):
                    counts["model refuses"] += 1
                    mismatches.append(f"case {case_id} of {scenario.name!r}: the model refuses it: {model}")
                    continue
                rule = compare_orders(result.changelog, model, visits_of(scenario))
                if rule.unsplit is not None:
                    counts["not split per event"] += 1
                    mismatches.append(f"case {case_id} of {scenario.name!r}: not split per event: {rule.unsplit}")
                    continue
                if rule.ordered == 0:
                    continue
                counts["ordered cases"] += 1
                counts["ordered events"] += rule.ordered
                counts["cases agreeing"] += rule.ordered == rule.agreed
                if rule.mismatch is not None:
                    mismatches.append(f"case {case_id} of {scenario.name!r}: {rule.mismatch}")
                counts["events agreeing"] += rule.agreed
                counts["events with the engine's output sequence"] += rule.same_sequence
                if rule.same_sequence < rule.ordered:
                    sequences.append(f"case {case_id} of {scenario.name!r}: "
                                     f"{first_other_sequence(result.changelog, model, rule.pieces)}")
                counts["copy_would_reorder"] += copy_would_reorder(scenario, list(result.changelog), model, case_id)
    return {**counts, **({"mismatches": mismatches} if mismatches else {}),
            **({"other_sequences": sequences} if sequences else {})}


def modelled_events(scenario: Scenario, case_id: int, release: FlinkVersion) -> list[list[Change]] | str:
    """converge's engine, `semantics: flink` in `release`, on the case as the adapter runs it as `case_id`: the
    MapState order of its backend with the case id hashed in front of every stored row; a mini-batch join on the
    rows with the case id column (its bundles hash keys that hold it: changelogs.model_events, the very model
    `changelog_rowkinds` compares with). Why not, as a string, for a case the model refuses."""
    if scenario.config.mini_batch_size is not None:
        return model_events(scenario, "flink", case_id, release)
    return model_per_event(replace(scenario, config=replace(scenario.config, flink_version=release,
                                                            semantics="flink")), case_id)


def visits_of(scenario: Scenario) -> list | None:
    """What an event's order is read from: a binary join's stored rows (the other input's part of each output);
    for the multi-way, mini-batch and interval joins the outputs themselves (a multi-way event walks every other
    input's state in turn, a mini-batch flush a bundle and then the state, an interval join's final watermark both
    caches)."""
    if scenario.config.multi_join == "on" or scenario.config.mini_batch_size is not None or scenario.join.interval:
        return None
    return stored_visits(scenario)


def first_other_sequence(changelog: Sequence[Change], per_event: list[list[Change]], ordered: list[int]) -> str:
    """The first ordered event whose outputs agree in visit order but not in their exact sequence (an outer
    row's retraction and padding interleaved otherwise): both sequences, for the JSON results."""
    pieces = split_like(changelog, per_event)
    for n in ordered:
        if not isinstance(pieces, str) and pieces[n] != per_event[n]:
            return f"event {n}: emitted {show(pieces[n])}, the model emits {show(per_event[n])}"
    return "none"


def _bench_flink_map_order(config: BenchConfig) -> dict:
    """`--examples` scenarios per family and backend, the same ones every time (seed SEED), on `--system` (the
    newest Flink installed without it: skipped, with the reason, when there is none; a named one must start)."""
    try:
        # a measurement on a loaded machine: a JVM's start and a job may take minutes
        system = open_system(config.system or SYSTEM, timeouts=Timeouts(hello=600.0, run_base=300.0))
    except UsageError as exc:
        if config.system is not None:
            raise
        return {"skipped": str(exc)}
    with system:
        reason = why_not_ordered(system.capabilities, system.name)
        if reason is not None:
            return {"skipped": f"no order to measure: {reason}"}
        rows = {f"{family} {backend}": measure(system, draw_cases(backend, config.examples, SEED, types), BATCH)
                for family, types in FAMILIES.items() for backend in BACKENDS}
        rows.update({f"{family} {backend}": measure(system, draw_cases(backend, config.examples, SEED,
                                                                       family=family), BATCH)
                     for family in GENERATED for backend in BACKENDS})
        release = model_version(system.version)
        has_multiway = tuple(int(p) for p in release.split(".")) >= MULTIWAY_SINCE
        if has_multiway:
            rows.update({f"{MULTIWAY} {backend}": measure(system, draw_cases(backend, config.examples, SEED,
                                                                             multiway=True), BATCH)
                         for backend in BACKENDS})
        title = system.title
    return {**{f"{row.replace(' ', '_')}_events_agreeing": f"{c.get('events agreeing', 0)} of "
                                                            f"{c.get('ordered events', 0)}"
               for row, c in rows.items()},
            "system": title, "flink_version_modelled": release, "cases_per_row": config.examples, "seed": SEED,
            **({} if has_multiway else {"not_measured": f"{MULTIWAY}: Flink {release} has no multi-way join "
                                                        f"operator (2.1+)"}),
            "rows": rows}


def format_rows(result: dict) -> str:
    """One row per family and backend: its counts; a skipped benchmark's reason."""
    if "rows" not in result:
        return f"  {json.dumps(result)}"
    counts = result["rows"]
    columns = list(dict.fromkeys(key for c in counts.values() for key in c
                                 if key not in ("mismatches", "other_sequences")))
    return format_table(("family backend", *columns), [(b, *(c.get(k, 0) for k in columns))
                                                      for b, c in counts.items()])


BENCHES = {"flink_map_order": _bench_flink_map_order}
