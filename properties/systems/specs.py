"""The properties of a system campaign, each with what it needs from a system and what feeds it.

A property is bound to one open system: its strategy draws one shape (a
template scenario from the family's generator, restricted to what the system
declares) and more cases of that shape (generators/shapes.py), all sent in
one run request. A property whose needs the system does not meet is "not
applicable" with the reason, and never runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypedDict

from hypothesis import reject
from hypothesis import strategies as st

from converge.engine.model.errors import ApiMisuseError
from converge.engine.model.scenario import Scenario, StateBackend
from converge.engine.model.system import Capabilities, Setting, System
from converge.generators.interval import interval_join_scenarios
from converge.generators.job_options import upsert_sink_scenarios, with_parallelism
from converge.generators.minibatch import flink_34380_cases, match_flip_cases, minibatch_scenarios
from converge.generators.multiway import multiway_scenarios
from converge.generators.restarts import restarted
from converge.generators.scenarios import regular_join_scenarios
from converge.generators.shapes import same_shape
from converge.generators.wall_clock import MAX_OPS as WALL_CLOCK_MAX_OPS
from converge.generators.wall_clock import wall_clock_cases
from converge.properties.divergence import FailedCall, PropertyFailure, require
from converge.properties.spec import PropertySpec
from converge.properties.systems import checks, map_order, sinks
from converge.properties.systems.answers import engine_model_reason
from converge.properties.systems.known import KnownDivergence, Recogniser
from converge.properties.systems.quota import CaseQuota, FreshShapes
from converge.properties.systems.reduce import Reducer, Reduction, case_key
from converge.properties.systems.restarts import restart_changes_nothing
from converge.properties.systems.sent import Sent, shape_of
from converge.properties.systems.time_attributes import time_attribute_chain_draws, time_attribute_draws
from converge.properties.systems.ttl import ttl_matches_model

OUTER = ("inner", "left", "right", "full")


class _ModelDefaults(TypedDict):
    """The generators' keyword arguments MODEL_DEFAULTS sets (a TypedDict, so each is checked against them)."""
    map_state_orders: tuple[str, ...]


# The engine-model options (engine.systems.cases.ENGINE_MODEL_OPTIONS) stay at their defaults in every case drawn:
# the system is not told about them, so the reference engine must not model them either.
MODEL_DEFAULTS: _ModelDefaults = {"map_state_orders": ("rocksdb",)}
PLAIN_MODES = ("insert_only", "retract")
DEFAULT_BATCH = 20
# At most this many cases of one shape in a batch: a batch of more holds several shapes (batches()), so a campaign's
# 200 cases send at least 20 shapes whatever its batch size (issue 39); a batch of 80 is eight shapes of 10.
CASES_PER_SHAPE = 10
# The generators' column types: regular and multi-way inputs have BIGINT and VARCHAR columns, interval inputs BIGINT.
GENERATED_TYPES = {"regular": ("BIGINT", "VARCHAR"), "multiway": ("BIGINT", "VARCHAR"), "interval": ("BIGINT",)}


def _common(caps: Capabilities, name: str, family: str) -> str | None:
    if family not in caps.families:
        return f"{name} does not run {family} joins"
    missing = [t for t in GENERATED_TYPES[family] if t not in caps.column_types]
    if missing:
        return f"the generated {family} cases have {' and '.join(missing)} columns, which {name} does not take"
    return None


def _pick(wanted: tuple[str, ...], declared: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(v for v in wanted if v in declared)


def _ignored(caps: Capabilities, name: str, setting: Setting) -> str | None:
    """Why a property about `setting` says nothing on this system (None: the system honours it): the system's own
    sentence when its hello gave one (`lacks`: "Flink 1.19.0 has no multi-way join operator ..."), else what the
    setting asks for."""
    if caps.honours(setting):
        return None
    return f"{caps.why_ignored(setting, name)}, so the property would not exercise it"


# ---------------------------------------------------------------- what each property draws, from the capabilities


def _plain_binary(wanted: tuple[str, ...], none_of: str) -> Callable[[Capabilities, str], tuple]:
    """The draws of a binary-join property over insert-only and retract inputs, for the join types `wanted`."""
    def draws(caps: Capabilities, name: str) -> tuple[Callable[[], st.SearchStrategy[Scenario]], str | None]:
        reason = _common(caps, name, "regular")
        types, modes = _pick(wanted, caps.join_types), _pick(PLAIN_MODES, caps.changelog_modes)
        if reason is None and not types:
            reason = f"{name} runs {none_of}"
        if reason is None and not modes:
            reason = f"{name} takes neither insert_only nor retract inputs"
        return (lambda: regular_join_scenarios(join_types=types, modes=modes, **MODEL_DEFAULTS)), reason

    return draws


_regular = _plain_binary(OUTER, "none of INNER, LEFT, RIGHT, FULL")
_semi_anti = _plain_binary(("semi", "anti"), "neither SEMI nor ANTI joins")


def _upsert(caps: Capabilities, name: str):
    reason = _common(caps, name, "regular")
    types = _pick(OUTER + ("semi", "anti"), caps.join_types)
    if reason is None and "upsert" not in caps.changelog_modes:
        reason = f"{name} takes no upsert inputs"
    if reason is None and not types:
        reason = f"{name} runs no binary join type"
    return (lambda: regular_join_scenarios(join_types=types, modes=("upsert",), uk_shapes=("join_key", "own"),
                                           **MODEL_DEFAULTS)), reason


def _multiway(caps: Capabilities, name: str):
    reason = _common(caps, name, "multiway")
    types, modes = _pick(("inner", "left"), caps.join_types), _pick(("insert_only", "retract", "upsert"),
                                                                    caps.changelog_modes)
    if reason is None and not types:
        reason = f"{name} runs neither INNER nor LEFT joins"
    if reason is None and not modes:
        reason = f"{name} takes no changelog mode the generator draws"

    plans = ("on", "off") if caps.honours("multi_join") else ("off",)  # "on" would be ignored: never claim it

    def strategy() -> st.SearchStrategy[Scenario]:
        return st.one_of(*(multiway_scenarios(num_inputs=(3, 4), join_types=types, modes=modes, multi_join=m,
                                              **MODEL_DEFAULTS)
                           for m in plans))

    return strategy, reason


def _multiway_on(caps: Capabilities, name: str):
    reason = _multiway(caps, name)[1] or _ignored(caps, name, "multi_join")
    types, modes = _pick(("inner", "left"), caps.join_types), _pick(("insert_only", "retract", "upsert"),
                                                                    caps.changelog_modes)
    return (lambda: multiway_scenarios(num_inputs=(3, 4), join_types=types, modes=modes, multi_join="on",
                                              **MODEL_DEFAULTS)), reason


def _interval(caps: Capabilities, name: str):
    reason = _common(caps, name, "interval")
    types = _pick(OUTER, caps.join_types)
    if reason is None and "event_time" not in caps.time_domains:
        reason = f"{name} does not run event-time interval joins"
    if reason is None and "insert_only" not in caps.changelog_modes:
        reason = f"{name} takes no insert_only inputs (an interval join's inputs are append-only)"
    if reason is None and not types:
        reason = f"{name} runs none of INNER, LEFT, RIGHT, FULL"
    return (lambda: interval_join_scenarios(time="event", late_share=(0, 0), join_types=types,
                                            above_every_watermark=True, cleanup_intervals=(0,),
                                            **MODEL_DEFAULTS)), reason


def _minibatch(caps: Capabilities, name: str):
    """Binary INNER/LEFT/RIGHT/FULL joins with config.mini_batch_size (Flink's table.exec.mini-batch.*): bundles
    fold retractions away before the join, which must not change the final answer. A third of the templates are
    match_flip_cases (where folding decides a match), when the system takes retract inputs."""
    reason = _common(caps, name, "regular")
    modes = _pick(("insert_only", "retract", "upsert"), caps.changelog_modes)
    if reason is None and not set(OUTER) <= set(caps.join_types):
        reason = f"{name} does not run all of INNER, LEFT, RIGHT, FULL (the mini-batch generator draws them all)"
    if reason is None and not modes:
        reason = f"{name} takes no changelog mode the generator draws"
    reason = reason or _ignored(caps, name, "mini_batch")

    def strategy() -> st.SearchStrategy[Scenario]:
        drawn = minibatch_scenarios(modes=modes, **MODEL_DEFAULTS)
        if "retract" not in modes:
            return drawn
        # a third of the templates: a -U/+U pair in one bundle that starts or stops a match (what bundles fold)
        return st.one_of(drawn, drawn, match_flip_cases(modes=modes))

    return strategy, reason


def _any(caps: Capabilities, name: str):
    drawn = [make(caps, name) for make in (_regular, _semi_anti, _upsert, _multiway, _interval)]
    usable = [strategy for strategy, reason in drawn if reason is None]
    reason = None if usable else "; ".join(r for _, r in drawn if r)
    return (lambda: st.one_of(*(s() for s in usable))), reason


def _changelog(draws: Callable[[Capabilities, str], tuple]) -> Callable[[Capabilities, str], tuple]:
    """`draws`, for a property that reads the changelog itself: the system must answer it in a repeatable order."""
    def changelog_draws(caps: Capabilities, name: str) -> tuple:
        strategy, reason = draws(caps, name)
        if reason is None and not (caps.output == "changelog" and caps.deterministic_order):
            reason = f"{name} does not answer its changelog in a repeatable order (output, deterministic_order)"
        return strategy, reason

    return changelog_draws


def _regular_changelogs(caps: Capabilities, name: str):
    """Binary joins of every type and input mode the system takes (the plain, SEMI/ANTI and upsert draws), on a
    state backend drawn per batch where the system honours it: the changelog check compares each event's order
    with the backend's MapState order (checks.changelog_rowkinds)."""
    drawn = [make(caps, name) for make in (_regular, _semi_anti, _upsert)]
    usable = [strategy for strategy, reason in drawn if reason is None]
    reason = None if usable else "; ".join(r for _, r in drawn if r)
    if not caps.honours("state_backend"):
        return (lambda: st.one_of(*(s() for s in usable))), reason
    return (lambda: with_backend(st.one_of(*(s() for s in usable)))), reason


def with_backend(templates: st.SearchStrategy[Scenario]) -> st.SearchStrategy[Scenario]:
    """Each template on a drawn state backend (hashmap, rocksdb)."""
    backends: tuple[StateBackend, ...] = ("hashmap", "rocksdb")
    return st.tuples(templates, st.sampled_from(backends)).map(
        lambda pair: replace(pair[0], config=replace(pair[0].config, state_backend=pair[1])))


def _minibatch_changelogs(caps: Capabilities, name: str):
    """The mini-batch draws, and (where the system takes retract inputs) a third of the templates an INNER join of
    a keyed input whose +I, -U and +U of one unique key share a bundle (generators.minibatch.flink_34380_cases):
    the fold that decides the row kind of the key's first row. They carry converge's default semantics: the system
    is not told about semantics, and the changelog property models Flink's on its own."""
    strategy, reason = _minibatch(caps, name)

    def drawn() -> st.SearchStrategy[Scenario]:
        if "retract" not in caps.changelog_modes or "inner" not in caps.join_types:
            return strategy()
        folds = flink_34380_cases().map(lambda made: replace(made[0], config=replace(made[0].config,
                                                                                      semantics="correct")))
        return st.one_of(strategy(), strategy(), folds)

    return drawn, reason


def _restarts(caps: Capabilities, name: str):
    """Regular (plain, SEMI/ANTI, upsert), mini-batch and multi-way cases with config.restart_after, on every
    state backend the system honours (properties/systems/restarts.py says what is compared, and why)."""
    drawn = [make(caps, name) for make in (_regular, _semi_anti, _upsert, _minibatch, _multiway)]
    usable = [strategy for strategy, reason in drawn if reason is None]
    reason = _ignored(caps, name, "restart") or (None if usable else "; ".join(r for _, r in drawn if r))
    backends: tuple[StateBackend | None, ...] = ("hashmap", "rocksdb") if caps.honours("state_backend") else (None,)
    return (lambda: restarted(st.one_of(*(s() for s in usable)), backends=backends)), reason


def _upsert_sink(caps: Capabilities, name: str):
    """Binary joins of upsert inputs through an upsert sink (generators/job_options.py), materializer drawn, and
    the parallelism (1, 2 or 4) where the system honours it (docs/flink.md "Parallelism": the sink keeps each key's
    order at any parallelism)."""
    reason = _common(caps, name, "regular")
    types = _pick(("inner", "left", "right", "semi", "anti"), caps.join_types)
    if reason is None and "upsert" not in caps.changelog_modes:
        reason = f"{name} takes no upsert inputs"
    if reason is None and not types:
        reason = f"{name} runs no join type with an upsert sink key"
    reason = reason or _ignored(caps, name, "upsert_sink")
    parallel = "parallelism" in caps.settings

    def strategy() -> st.SearchStrategy[Scenario]:
        drawn = upsert_sink_scenarios(join_types=types, **MODEL_DEFAULTS)
        return with_parallelism(drawn, (1, 2, 4)) if parallel else drawn

    return strategy, reason


def _parallel(caps: Capabilities, name: str):
    """The binary, multi-way and mini-batch draws at parallelism 2 or 4."""
    drawn = [make(caps, name) for make in (_regular, _upsert, _multiway, _minibatch)]
    usable = [strategy for strategy, reason in drawn if reason is None]
    reason = None if usable else "; ".join(r for _, r in drawn if r)
    reason = reason or _ignored(caps, name, "parallelism")
    return (lambda: with_parallelism(st.one_of(*(s() for s in usable)))), reason


def _ttl(caps: Capabilities, name: str):
    """Binary INNER/LEFT/RIGHT/FULL joins of insert-only and retract inputs with a short state TTL, laid on a wall
    clock (generators/wall_clock.py), on a state backend drawn per batch where the system honours it."""
    strategy, reason = _regular(caps, name)
    if reason is None and not caps.state_ttl:
        reason = f"{name} does not drive state TTL (capabilities.state_ttl)"
    if reason is None and not (caps.output == "changelog" and caps.deterministic_order):
        reason = f"{name} does not answer its changelog in a repeatable order (output, deterministic_order)"
    types, modes = _pick(OUTER, caps.join_types), _pick(PLAIN_MODES, caps.changelog_modes)

    def drawn() -> st.SearchStrategy[Scenario]:
        cases = wall_clock_cases(regular_join_scenarios(join_types=types, modes=modes, ttl="short",
                                                        max_ops=WALL_CLOCK_MAX_OPS,
                                                        **MODEL_DEFAULTS))
        return with_backend(cases) if caps.honours("state_backend") else cases

    return drawn, reason


@dataclass(frozen=True)
class SystemProperty:
    family: str
    name: str
    description: str
    draws: Callable[[Capabilities, str], tuple]   # (template strategy factory, reason it cannot run or None)
    check: Callable[..., None]
    examples: int = 200                             # cases per `converge run --system` (default; exactly so many)

    @property
    def key(self) -> str:
        return f"{self.family}/{self.name}"


SYSTEM_PROPERTIES: tuple[SystemProperty, ...] = (
    SystemProperty("regular", "final_equals_oracle",
                   "INNER/LEFT/RIGHT/FULL over insert-only and retract changelogs: final answer = batch answer",
                   _regular, checks.final_equals_oracle),
    SystemProperty("regular", "semi_anti_equals_oracle", "SEMI/ANTI joins: final answer = batch answer",
                   _semi_anti, checks.final_equals_oracle),
    SystemProperty("regular", "upsert_equals_oracle", "upsert inputs (behind changelog normalize): final answer = "
                   "batch answer", _upsert, checks.final_equals_oracle),
    SystemProperty("minibatch", "final_equals_oracle", "mini-batch join (bundles of 1..6 records): final answer = "
                   "batch answer", _minibatch, checks.final_equals_oracle),
    SystemProperty("regular", "changelog_rowkinds", "binary joins: the changelog well formed per key and, event by "
                   "event, converge's semantics=flink model's rows and row kinds, visiting the stored rows in the "
                   "drawn state backend's MapState order (not compared: how one stored row's outputs interleave, "
                   "an outer row's retraction and padding; SEMI/ANTI joins whose condition holds an OR in "
                   "conjunctive normal form, IS NOT DISTINCT FROM included, which Flink plans as a join with an "
                   "aggregate)", _changelog(_regular_changelogs),
                   checks.changelog_rowkinds),
    SystemProperty("minibatch", "changelog_rowkinds", "mini-batch join: the changelog well formed per key (no +U "
                   "as a key's first row, FLINK-34380) and, bundle by bundle, the semantics=flink model's rows, the "
                   "bundle walked in Flink's hash order with the adapter's case id (the rows' order itself is not "
                   "compared)",
                   _changelog(_minibatch_changelogs), checks.changelog_rowkinds),
    SystemProperty("multiway", "final_equals_oracle", "3- and 4-way INNER/LEFT chains, multi-way plan on or off: "
                   "final answer = batch answer", _multiway, checks.final_equals_oracle),
    SystemProperty("multiway", "multiway_equals_binary_chain", "multi_join on and off give the same final answer on "
                   "the system", _multiway_on, checks.multiway_equals_binary_chain),
    SystemProperty("interval", "no_late_equals_oracle", "event-time interval joins without late records: final "
                   "answer = batch interval join", _interval, checks.final_equals_oracle),
    SystemProperty("regular", "emission_order_matches_backend", "one record meeting several stored rows: the "
                   "system emits them in its state backend's MapState order (hashmap, rocksdb; docs/anomalies.md)",
                   map_order.draws, map_order.emission_order_matches_model),
    SystemProperty("time", "final_equals_oracle", "rowtime columns on regular and multi-way join inputs (some compared "
                   "in a condition): final answer = batch answer", time_attribute_draws, checks.final_equals_oracle),
    SystemProperty("time", "multiway_equals_binary_chain", "rowtime columns on 3- and 4-way chains: multi_join on "
                   "and off give the same final answer", time_attribute_chain_draws,
                   checks.multiway_equals_binary_chain),
    SystemProperty("sinks", "upsert_sink_equals_oracle", "INNER/LEFT/RIGHT/SEMI/ANTI joins through an upsert sink "
                   "(materializer auto, force or none; parallelism 1, 2 or 4): the sink's table, folded by its key = "
                   "batch answer",
                   _upsert_sink, sinks.upsert_sink_equals_oracle),
    SystemProperty("parallel", "final_equals_oracle", "binary, upsert, multi-way and mini-batch joins at parallelism "
                   "2 or 4: final answer = batch answer", _parallel, checks.final_equals_oracle),
    SystemProperty("reference", "system_equals_reference", "every family the system runs: its final answer = "
                   "converge's reference engine's", _any, checks.system_equals_reference),
    SystemProperty("restart", "restart_changes_nothing", "stopped with a savepoint after a drawn change and "
                   "restored (config.restart_after): the same changelog as without, and the batch answer",
                   _restarts, restart_changes_nothing, examples=20),
    SystemProperty("ttl", "ttl_matches_model", "binary joins with a short state TTL, driven on the system's clock: "
                   "each change's rows those of converge's engine and the fold the TTL model's; a case whose clock "
                   "slipped near an expiry boundary is not decided (skipped), never passed",
                   _ttl, ttl_matches_model, examples=20),
)


def not_applicable(prop: SystemProperty, system: System) -> str | None:
    """Why the property cannot run on the system (None: it can)."""
    return prop.draws(system.capabilities, system.name)[1]


def batches(template: st.SearchStrategy[Scenario], batch: int, quota: CaseQuota | None = None,
            fresh: FreshShapes | None = None) -> st.SearchStrategy[tuple]:
    """Up to `batch` cases in shapes of at most CASES_PER_SHAPE cases each (shape_sizes): per shape a template,
    then more cases of it (shrinking drops them). With a `quota` (a campaign's exact number of cases), exactly
    `quota.next_size()` cases, nothing drawn for the size. With `fresh`, a batch holding a shape the campaign has
    sent already (or one shape twice) is rejected once drawn (quota.py FreshShapes: the choices drawn never
    depend on it, only whether the batch is used)."""
    @st.composite
    def draw(draw_: st.DrawFn) -> tuple:
        size = quota.next_size() if quota is not None else draw_(st.integers(1, batch))
        cases: list[Scenario] = []
        shapes = []
        for count in shape_sizes(size):
            first = draw_(template)
            same = same_shape(first)
            cases += [first] + [draw_(same) for _ in range(count - 1)]
            shapes.append(shape_of(first))
        if fresh is not None and not fresh.admit(shapes):
            reject()
        return (cases,)

    return draw()


def shape_sizes(size: int) -> list[int]:
    """A batch of `size` cases as the sizes of its shapes: as few shapes as CASES_PER_SHAPE allows, as even as can
    be (25 cases: 9, 8 and 8)."""
    if size < 1:
        raise ApiMisuseError(f"shape_sizes({size!r}): a batch holds at least one case")
    count = -(-size // CASES_PER_SHAPE)
    each, extra = divmod(size, count)
    return [each + 1] * extra + [each] * (count - extra)


def bind(prop: SystemProperty, system: System, *, batch: int = DEFAULT_BATCH,
         system_spec: str | None = None, known: Sequence[KnownDivergence] = (),
         reduce_budget: float | None = None,
         on_reduction: Callable[[Reduction], None] | None = None, quota: CaseQuota | None = None,
         sent: Sent | None = None) -> PropertySpec:
    """The property as a PropertySpec for run_property, checking `system`; it must be applicable. A case
    whose divergence one of `known` matches is counted as known inside the check, so it never fails an
    example (nothing is shrunk for it) and the rest of its batch is still judged (checks.Judged).

    With `reduce_budget` (seconds), the first diverging case of a failing batch is reduced on the system at
    once (properties/systems/reduce.py) and the example fails with the reduced case alone; the caller then
    runs Hypothesis without its shrinker. The reduction is remembered, so Hypothesis's replay of the failing
    batch does not reduce it again. `on_reduction` is told after every round. With a `quota`
    (properties/systems/quota.py), every batch holds the quota's next size and is counted in it: run the spec
    with max_examples=quota.planned_batches to send exactly quota.total cases. `sent` counts every batch checked
    (properties/systems/sent.py: its shapes, modes, join types and retractions)."""
    factory, reason = prop.draws(system.capabilities, system.name)
    if reason is not None:
        raise ApiMisuseError(f"{prop.key} does not apply to {system.name}: {reason}")
    size = max(1, min(batch, system.capabilities.max_batch))
    recognise = Recogniser(tuple(known), system.name, system.version, prop.family, prop.name) if known else None

    def judge(on: System, cases: list[Scenario]) -> None:
        for scenario in cases:  # the generators draw none; a case that sets one would check converge, not the system
            reason = engine_model_reason(scenario)
            require(reason is None, prop.name, reason or "")
        prop.check(on, cases, prop=prop.name, system_spec=system_spec, known=recognise)

    fresh = FreshShapes(quota, sent) if quota is not None and sent is not None else None
    reducer = None if reduce_budget is None else Reducer(system, judge, budget=reduce_budget, on_round=on_reduction)
    reduced: dict[str, PropertyFailure] = {}  # the diverging case (as sent) -> the failure of its reduced case

    def checked(cases: list[Scenario]) -> None:
        try:
            judge(system, cases)
        except PropertyFailure as failure:
            if reducer is None:
                raise
            key = case_key(failure.divergence.scenario)
            seen = reduced.get(key)
            if seen is None:
                done = reducer.reduce(failure)
                seen = done.failure  # replayed with the reduced case alone; run_property keeps this call
                seen.call = FailedCall(([seen.divergence.scenario],), reduction=done,
                                       shrink_stopped=reduce_budget if done.stopped else None)
                reduced[key] = seen
            raise seen from None

    return PropertySpec(prop.family, prop.name, lambda: batches(factory(), size, quota, fresh),
                        _counted(checked, quota, sent), prop.examples, prop.description)


def _counted(checked: Callable[[list[Scenario]], None], quota: CaseQuota | None,
             sent: Sent | None) -> Callable[[list[Scenario]], None]:
    """`checked`, every batch counted in `sent` and in the `quota` (as passed or not)."""
    def check(cases: list[Scenario]) -> None:
        if sent is not None:
            sent.add(cases)
        if quota is None:
            return checked(cases)
        try:
            checked(cases)
        except BaseException:
            quota.checked(len(cases), ok=False)
            raise
        quota.checked(len(cases), ok=True)

    return check
