"""More cases of one shape: fresh event streams for a drawn scenario's inputs, join and config.

A real engine pays per job, not per case, and one job can run many cases
only when they share a shape (schema, changelog modes, keys, join and
config): the Flink adapter adds a case id to every input and key. So a system
campaign draws one scenario from a family's strategy and then more streams
for exactly its shape, each built by construction as that family's
strategy builds them (a valid changelog; interval streams without late
records, every record above every watermark sent before it on either input,
since the system is not given the interleaving).
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from converge.engine.model.errors import ApiMisuseError
from converge.engine.model.scenario import Scenario
from converge.generators.changelog import INSERT, build_events, ops_strategy, packed_ops
from converge.generators.interval import STRATEGIES, _step_strategy, build_event_time_events
from converge.generators.multiway import KEY_DOMAINS, WIDE_KEY_DOMAIN
from converge.generators.scenarios import KEY_CONDITIONS
from converge.generators.time_attributes import META_KEY, retimed, time_draws, without_time_columns
from converge.generators.wall_clock import MAX_OPS as WALL_CLOCK_MAX_OPS
from converge.generators.wall_clock import on_wall_clock


def _regular_key_columns(condition: str) -> tuple[str, ...]:
    for key_sql, cols in sorted(KEY_CONDITIONS, key=lambda kc: -len(kc[0])):
        if condition == key_sql or condition.startswith(key_sql + " AND ("):
            return cols
    raise ApiMisuseError(f"same_shape: {condition!r} is not a condition regular_join_scenarios draws")


def _regular(template: Scenario, max_ops: int) -> st.SearchStrategy[Scenario]:
    cols = _regular_key_columns(template.join.conditions[0])
    specs = template.chain
    return packed_ops(2, [4, 4], max_ops=max_ops, allow_advance=False, actions=(INSERT, 1, 2)).map(
        lambda packed: template.with_events(build_events(specs, [cols, cols], packed[1], tie_keys=True)))


def _wall_clock(template: Scenario, max_ops: int) -> st.SearchStrategy[Scenario]:
    """A binary regular TTL template's fresh streams: changes and processing-time advances drawn as
    regular_join_scenarios(ttl=...) draws them, laid on the wall clock (generators/wall_clock.py)."""
    if len(template.join.inputs) != 2 or template.join.interval is not None \
            or not isinstance(template.config.state_ttl_ms, int):
        raise ApiMisuseError("same_shape: a template with a state TTL must be a binary regular join with one TTL "
                             "(its fresh streams are laid on the wall clock, generators/wall_clock.py)")
    cols = _regular_key_columns(template.join.conditions[0])
    specs = template.chain
    return packed_ops(2, [4, 4], max_ops=max_ops, allow_advance=True, actions=(INSERT, 1, 2)).map(
        lambda packed: on_wall_clock(template.with_events(build_events(
            specs, [cols, cols], packed[1], conditions=template.join.conditions, tie_keys=True))))


def _multiway(template: Scenario, max_ops: int) -> st.SearchStrategy[Scenario]:
    chain = template.meta.get("generated_chain")
    if not isinstance(chain, dict):
        raise ApiMisuseError("same_shape: a multi-way template needs the generated_chain meta multiway_scenarios "
                             "writes")
    n = len(template.join.inputs)
    specs = template.chain
    cols = ["k", "id"] if len(chain["key_columns"]) > 1 or chain["break_at"] is not None else ["k"]
    ops = ops_strategy(n, [4] * n, max_ops=max_ops, allow_advance=False)
    return st.tuples(ops, st.sampled_from(KEY_DOMAINS + (WIDE_KEY_DOMAIN,))).map(
        lambda drawn: template.with_events(build_events(specs, [cols] * n, drawn[0], key_domain=drawn[1],
                                                        tie_keys=True)))


def _interval(template: Scenario, max_ops: int) -> st.SearchStrategy[Scenario]:
    iv = template.join.interval
    assert iv is not None
    if iv.time != "event":
        raise ApiMisuseError("same_shape: only event-time interval joins (processing time depends on arrival)")
    bounds = (iv.lower_ms, iv.upper_ms)
    drawn = st.tuples(_step_strategy(max_ops, 1), st.tuples(st.integers(0, 6), st.integers(0, 6)),
                      st.integers(1, 12))
    return drawn.map(lambda d: template.with_events(build_event_time_events(
        d[0], delays=d[1], disorder=d[2], late_pct=0, strategies=STRATEGIES, negative_times=False, bounds=bounds,
        above_every_watermark=True)))


def same_shape(template: Scenario, *, max_ops: int = 24) -> st.SearchStrategy[Scenario]:
    """Scenarios with the template's inputs, join and config and a fresh stream each (no late records).

    The template must come from regular_join_scenarios, multiway_scenarios or interval_join_scenarios
    (event time); its events are replaced, its name is kept. A template with a state TTL must be a binary
    regular join whose streams are laid on a wall clock (generators/wall_clock.py): so are its fresh ones."""
    if template.config.state_ttl_ms is not None:
        return _wall_clock(template, min(max_ops, WALL_CLOCK_MAX_OPS)).map(lambda s: replace(s, expect_final=None, expect_changelog=None))
    if META_KEY in template.meta:  # time columns added to a drawn shape: fresh streams of it, timed again
        return st.tuples(same_shape(without_time_columns(template), max_ops=max_ops), time_draws()).map(
            lambda drawn: retimed(drawn[0], template, drawn[1]))
    if template.join.interval is not None:
        strategy = _interval(template, max_ops)
    elif len(template.join.inputs) > 2:
        strategy = _multiway(template, max_ops)
    else:
        strategy = _regular(template, max_ops)
    return strategy.map(lambda s: replace(s, expect_final=None, expect_changelog=None))
