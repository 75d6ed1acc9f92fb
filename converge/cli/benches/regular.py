"""Regular-join benchmarks: engine events/s with and without unique keys, and prefix-property examples/s."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from hypothesis import strategies as st

from converge.cli.bench_machine import machine_line
from converge.engine.model.errors import InternalError
from converge.engine.model.scenario import ChangeEvent, Config, InputSpec, JoinSpec, Scenario
from converge.engine.runtime.local import LocalRuntime
from converge.generators.scenarios import BATCH_SCENARIOS, regular_join_batches, regular_join_scenarios
from converge.oracle.shared import shared_oracle
from converge.properties import regular
from converge.properties.campaign import run_property
from converge.properties.registry import PropertySpec
from converge.reports.options import BenchConfig


def inner_join_stream(n_events: int, n_keys: int, *, unique_keys: bool) -> Scenario:
    """An inner join with one match per key: per key +I on each side, then -U/+U updates, round-robin."""
    a = InputSpec("a", (("k", "BIGINT"), ("x", "BIGINT")), ("k",) if unique_keys else None, "retract")
    b = InputSpec("b", (("k", "BIGINT"), ("y", "BIGINT")), ("k",) if unique_keys else None, "retract")
    events: list[ChangeEvent] = []
    for k in range(n_keys):
        events.append(ChangeEvent("a", "+I", (k, 0)))
        events.append(ChangeEvent("b", "+I", (k, 0)))
    version = 0
    while len(events) < n_events:
        side = "a" if version % 2 == 0 else "b"
        old, new = version // 2, version // 2 + 1
        for k in range(n_keys):
            if len(events) + 2 > n_events:
                break
            events.append(ChangeEvent(side, "-U", (k, old)))
            events.append(ChangeEvent(side, "+U", (k, new)))
        version += 1
    return Scenario("bench inner join", (a, b), JoinSpec(("a", "b"), ("inner",), ("a.k = b.k",)),
                    Config(), tuple(events))


def engine_events_per_second(scenario: Scenario) -> dict:

    rt = LocalRuntime(scenario)
    process = rt.process_event
    emitted = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    for event in scenario.events:
        emitted += len(process(event))
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    return {"events": len(scenario.events), "seconds": round(seconds, 3),
            "events_per_second": round(len(scenario.events) / seconds),
            "events_per_cpu_second": round(len(scenario.events) / cpu_seconds), "emitted": emitted,
            "state_entries": rt.state_entries()}


def _bench_uk(config: BenchConfig) -> dict:
    return engine_events_per_second(inner_join_stream(config.events, config.keys, unique_keys=True))


def _bench_no_uk(config: BenchConfig) -> dict:
    return engine_events_per_second(inner_join_stream(config.events, config.keys, unique_keys=False))


RATIO_BUDGET = 0.5  # issue 29: prefix consistency at half of what drawing the examples alone costs, or faster
BATCH_RATIO_BUDGET = 0.7  # issue 43: with batches (one oracle query for many scenarios), per scenario


def _prefix_property_speed(config: BenchConfig, encoding: str) -> dict:
    """Scenarios/s of prefix consistency with streams of 16-30 operations (over 20 events on average), beside
    the generation-only ceiling: the same strategy and seed, the scenarios drawn and not checked.

    Every round replays the same seed, so rounds do the same work and differ
    only by the machine's noise: the median is the figure to quote, the best
    what the code does undisturbed (timeit's reasoning). Property and ceiling
    rounds alternate, so both see the same load. With the packed encoding the
    batched property (the registered one: a batch of scenarios of one shape
    per example, one oracle query per batch) is measured in the same rounds,
    beside the one-scenario-per-example form it replaced.
    """
    def single() -> st.SearchStrategy:
        return regular_join_scenarios(
            min_ops=16, max_ops=30, encoding=encoding).map(lambda s: (s,))  # type: ignore[arg-type]

    def batched() -> st.SearchStrategy:
        return regular_join_batches(min_ops=16, max_ops=30).map(lambda b: (b,))

    forms: dict[str, tuple[Callable[[], st.SearchStrategy], Callable[..., None], int]] = {
        "single": (single, regular.prefix_consistency, 1)}
    if encoding == "packed":
        forms["batched"] = (batched, regular.prefix_consistency_batch, BATCH_SCENARIOS)
    shared_oracle()  # connection set-up is not per example
    measured = {}
    for strategy, check, batch in forms.values():
        run_property(PropertySpec("regular", "prefix_consistency", strategy, check, 5, batch=batch),
                     max_examples=5, seed=4321)  # nor are the first queries' and imports' costs (either run's)
    rounds: dict[str, list] = {form: [] for form in forms}
    for _ in range(max(1, config.rounds)):
        for form, (strategy, check, batch) in forms.items():
            rounds[form].append(_property_and_ceiling(strategy, check, batch, config.examples))
    for form in forms:
        measured[form] = _speed_figures(rounds[form])
    out = dict(measured["single"])
    out["budget_ratio"], out["within_budget"] = RATIO_BUDGET, out["ratio_to_ceiling"] >= RATIO_BUDGET
    if "batched" in measured:
        b = measured["batched"]
        b["budget_ratio"], b["within_budget"] = BATCH_RATIO_BUDGET, b["ratio_to_ceiling"] >= BATCH_RATIO_BUDGET
        b["speedup_over_single"] = round(b["examples_per_second"] / out["examples_per_second"], 2)
        b["speedup_over_single_cpu"] = round(statistics.median(b["rounds_examples_per_cpu_second"])
                                             / statistics.median(out["rounds_examples_per_cpu_second"]), 2)
        out["batched"] = b
    out["machine"] = machine_line()
    return out


def _property_and_ceiling(strategy: Callable[[], st.SearchStrategy], check: Callable[..., None], batch: int,
                          examples: int) -> tuple:
    """One round: the generation-only run, then the property on the same scenarios (the same seed)."""
    sizes: list[int] = []

    def record(args: tuple) -> None:
        items = args[0] if isinstance(args[0], list) else args
        sizes.extend(len(s.events) for s in items)

    def checked(*args: object) -> None:
        record(args)
        check(*args)

    ceiling = run_property(PropertySpec("regular", "generation_only", strategy, lambda *a: record(a), examples,
                                        batch=batch), max_examples=examples, seed=1234)
    drawn = list(sizes)
    sizes.clear()
    result = run_property(PropertySpec("regular", "prefix_consistency", strategy, checked, examples, batch=batch),
                          max_examples=examples, seed=1234)
    for r in (ceiling, result):
        if not r.ok:
            raise r.failure or r.error  # type: ignore[misc]
    if drawn != sizes:  # the ratio compares the same scenarios or nothing
        raise InternalError("the generation-only run drew other scenarios than the property run")
    return result, ceiling, sizes


def _speed_figures(rounds: list[tuple]) -> dict:
    results, ceilings = [r for r, _, _ in rounds], [c for _, c, _ in rounds]
    sizes = rounds[-1][2]
    rates = sorted(r.examples_per_second for r in results)
    ceiling_rates = sorted(c.examples_per_second for c in ceilings)
    return {"examples_per_second": round(statistics.median(rates), 1),
            "ceiling_examples_per_second": round(statistics.median(ceiling_rates), 1),
            "ratio_to_ceiling": round(statistics.median(rates) / statistics.median(ceiling_rates), 3),
            "mean_events_per_example": round(sum(sizes) / max(len(sizes), 1), 1),
            "examples_per_second_best": round(rates[-1], 1),
            "examples": results[0].examples,
            "rounds_examples_per_second": [round(r.examples_per_second, 1) for r in results],
            "rounds_ceiling_examples_per_second": [round(c.examples_per_second, 1) for c in ceilings],
            "rounds_examples_per_cpu_second": [round(r.examples_per_cpu_second, 1) for r in results],
            "rounds_ceiling_examples_per_cpu_second": [round(c.examples_per_cpu_second, 1) for c in ceilings],
            # on a loaded machine the wall-clock ratio is the load's as much as the code's; CPU time is not
            "ratio_to_ceiling_cpu": round(statistics.median(r.examples_per_cpu_second for r in results)
                                          / statistics.median(c.examples_per_cpu_second for c in ceilings), 3)}


def _bench_property(config: BenchConfig) -> dict:
    """The default generator (one packed byte string per stream): the one the registered properties use."""
    return _prefix_property_speed(config, "packed")


def _bench_property_ops(config: BenchConfig) -> dict:
    """The list-of-operations generator (one draw per operation)."""
    return _prefix_property_speed(config, "ops")


BENCHES: dict[str, Callable[[BenchConfig], dict]] = {
    "inner_join_unique_keys": _bench_uk,
    "inner_join_no_unique_keys": _bench_no_uk,
    "prefix_consistency_examples": _bench_property,
    "prefix_consistency_examples_ops": _bench_property_ops,
}
