"""System properties over joins whose inputs carry event-time attributes (generators/time_attributes.py).

A rowtime column with a watermark on a regular or multi-way join's input changes nothing in the join's
answer: Flink's planner materializes the time attributes into plain timestamps (RelTimeIndicatorConverter),
and bugs there are planning failures or wrong fields (FLINK-37962, FLINK-38379 for the multi-way join).
These draws feed the existing checks (final answer = batch answer; multi-way plan = binary chain) with
such cases; half of them also compare two time columns in a join condition.
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st

from converge.engine.model.scenario import Scenario
from converge.engine.model.system import Capabilities
from converge.generators.time_attributes import time_attribute_scenarios

_MODEL_DEFAULTS = {"map_state_orders": ("rocksdb",)}  # as specs.MODEL_DEFAULTS: the system is not told of it
_TYPES = ("BIGINT", "VARCHAR")
_OUTER = ("inner", "left", "right", "full")

Draws = tuple[Callable[[], st.SearchStrategy[Scenario]], str | None]


def _reason(caps: Capabilities, name: str, families: tuple[str, ...]) -> str | None:
    missing = [f for f in families if f not in caps.families]
    if missing:
        return f"{name} does not run {' or '.join(missing)} joins"
    if not set(_TYPES) <= set(caps.column_types):
        return f"the generated cases have BIGINT and VARCHAR columns, which {name} does not take"
    if not {"inner", "left"} & set(caps.join_types):
        return f"{name} runs neither INNER nor LEFT joins"
    return None


def time_attribute_draws(caps: Capabilities, name: str) -> Draws:
    """Binary joins (INNER/LEFT/RIGHT/FULL) and 3-4-way INNER/LEFT chains (multi-way plan on where the system
    honours it), over insert-only, retract and upsert inputs, with a time column on some inputs."""
    reason = _reason(caps, name, ("regular", "multiway"))
    types = tuple(t for t in _OUTER if t in caps.join_types)
    chain_types = tuple(t for t in ("inner", "left") if t in caps.join_types)
    modes = tuple(m for m in ("insert_only", "retract", "upsert") if m in caps.changelog_modes)
    if reason is None and not modes:
        reason = f"{name} takes no changelog mode the generators draw"
    plans = ("on", "off") if caps.honours("multi_join") else ("off",)

    def strategy() -> st.SearchStrategy[Scenario]:
        binary = time_attribute_scenarios(multiway=False, regular={"join_types": types or _OUTER,
                                                                    "modes": tuple(m for m in modes if m != "upsert")
                                                                    or ("insert_only",), **_MODEL_DEFAULTS})
        chains = st.one_of(*(time_attribute_scenarios(multiway=True, chains={
            "num_inputs": (3, 4), "join_types": chain_types or ("inner",), "modes": modes or ("insert_only",),
            "multi_join": m, **_MODEL_DEFAULTS}) for m in plans))
        return st.one_of(binary, chains)

    return strategy, reason


def time_attribute_chain_draws(caps: Capabilities, name: str) -> Draws:
    """3-4-way INNER/LEFT chains with time columns, multi-way plan on (the check runs it off too)."""
    reason = _reason(caps, name, ("multiway",))
    if reason is None and not caps.honours("multi_join"):
        reason = f"{caps.why_ignored('multi_join', name)}, so the property would not exercise it"
    chain_types = tuple(t for t in ("inner", "left") if t in caps.join_types) or ("inner",)
    modes = tuple(m for m in ("insert_only", "retract", "upsert") if m in caps.changelog_modes) or ("insert_only",)
    return (lambda: time_attribute_scenarios(multiway=True, chains={
        "num_inputs": (3, 4), "join_types": chain_types, "modes": modes, "multi_join": "on",
        **_MODEL_DEFAULTS})), reason
