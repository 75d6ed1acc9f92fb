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
from converge.generators.scenarios import regular_join_scenarios
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


def _prefix_property_speed(config: BenchConfig, encoding: str) -> dict:
    """Examples/s of prefix consistency with streams of 16-30 operations (over 20 events on average), beside
    the generation-only ceiling: the same strategy and seed, the examples drawn and not checked.

    Every round replays the same seed, so rounds do the same work and differ
    only by the machine's noise: the median is the figure to quote, the best
    what the code does undisturbed (timeit's reasoning). Property and ceiling
    rounds alternate, so both see the same load.
    """
    sizes: list[int] = []

    def check(scenario: Scenario) -> None:
        sizes.append(len(scenario.events))
        regular.prefix_consistency(scenario)

    def draw_only(scenario: Scenario) -> None:
        sizes.append(len(scenario.events))

    def strategy() -> st.SearchStrategy:
        return regular_join_scenarios(
            min_ops=16, max_ops=30, encoding=encoding).map(lambda s: (s,))  # type: ignore[arg-type]
    spec = PropertySpec("regular", "prefix_consistency", strategy, check, config.examples)
    ceiling = PropertySpec("regular", "generation_only", strategy, draw_only, config.examples)
    shared_oracle()  # connection set-up is not per example
    run_property(spec, max_examples=5, seed=4321)  # nor are the first queries' and imports' costs (either run's)
    rounds, ceilings, ceiling_sizes = [], [], []
    for _ in range(max(1, config.rounds)):
        sizes.clear()
        result = run_property(ceiling, max_examples=config.examples, seed=1234)
        if not result.ok:
            raise result.failure or result.error  # type: ignore[misc]
        ceilings.append(result)
        ceiling_sizes = list(sizes)
        sizes.clear()
        result = run_property(spec, max_examples=config.examples, seed=1234)
        if not result.ok:
            raise result.failure or result.error  # type: ignore[misc]
        rounds.append(result)
    if ceiling_sizes != sizes:  # the ratio compares the same examples or nothing
        raise InternalError("the generation-only run drew other examples than the property run")
    rates = sorted(r.examples_per_second for r in rounds)
    ceiling_rates = sorted(r.examples_per_second for r in ceilings)
    ratio = statistics.median(rates) / statistics.median(ceiling_rates)
    return {"examples_per_second": round(statistics.median(rates), 1),
            "ceiling_examples_per_second": round(statistics.median(ceiling_rates), 1),
            "ratio_to_ceiling": round(ratio, 3), "budget_ratio": RATIO_BUDGET, "within_budget": ratio >= RATIO_BUDGET,
            "mean_events_per_example": round(sum(sizes) / max(len(sizes), 1), 1),
            "examples_per_second_best": round(rates[-1], 1),
            "examples": rounds[0].examples,
            "rounds_examples_per_second": [round(r.examples_per_second, 1) for r in rounds],
            "rounds_ceiling_examples_per_second": [round(r.examples_per_second, 1) for r in ceilings],
            "rounds_examples_per_cpu_second": [round(r.examples_per_cpu_second, 1) for r in rounds],
            "rounds_ceiling_examples_per_cpu_second": [round(r.examples_per_cpu_second, 1) for r in ceilings],
            # on a loaded machine the wall-clock ratio is the load's as much as the code's; CPU time is not
            "ratio_to_ceiling_cpu": round(statistics.median(r.examples_per_cpu_second for r in rounds)
                                          / statistics.median(r.examples_per_cpu_second for r in ceilings), 3),
            "machine": machine_line()}


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
