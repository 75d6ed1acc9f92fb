"""Hypothesis strategies for changelog streams and join scenarios, importable by users."""

from generators.changelog import Op, build_events, interleave, ops_strategy, per_key_tokens
from generators.scenarios import regular_join_scenarios, without_unique_keys

__all__ = ["Op", "build_events", "interleave", "ops_strategy", "per_key_tokens", "regular_join_scenarios",
           "without_unique_keys"]
