"""Hypothesis strategies for changelog streams and join scenarios, importable by users.

Every strategy builds its streams by construction (operations on a model table),
so every example Hypothesis generates or shrinks to is a valid changelog.
Importing this package registers the `converge` settings profile (profile.py).
"""

from converge.generators.anomalies import dedupe_scenarios, lost_key_scenarios, order_item_scenarios
from converge.generators.changelog import Op, build_events, interleave, ops_strategy, packed_ops, per_key_tokens
from converge.generators.disorder import disordered_scenarios
from converge.generators.interval import interval_join_scenarios
from converge.generators.multiway import multiway_scenarios
from converge.generators.profile import PROFILE, PROFILE_NAME
from converge.generators.scenarios import regular_join_batches, regular_join_scenarios, without_unique_keys
from converge.generators.schema import any_schema_join_batches, any_schema_join_scenarios, schema_scenarios

__all__ = ["PROFILE", "PROFILE_NAME", "Op", "any_schema_join_batches", "any_schema_join_scenarios", "schema_scenarios", "build_events", "dedupe_scenarios", "disordered_scenarios",
           "interleave", "interval_join_scenarios", "lost_key_scenarios", "multiway_scenarios", "ops_strategy",
           "order_item_scenarios", "packed_ops", "per_key_tokens", "regular_join_batches", "regular_join_scenarios", "without_unique_keys"]
