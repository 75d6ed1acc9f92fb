"""What stands in front of a regular join: dedupes, lost unique keys, per-key order (docs/anomalies.md).

The options are typed fields of `Config` (`dedupe_before_join`,
`unique_key_lost`, `per_key_order`), checked when the scenario is built; this
module resolves them against the inputs:

* `dedupe_before_join`: each named input passes through a dedupe (keep the
  last row per key by arrival, Flink's ROW_NUMBER() ... = 1 rewrite) before the
  join; the key defaults to the input's unique key. The join then sees the
  input as a retract stream whose unique key is the dedupe key.
* `unique_key_lost`: inputs whose declared unique key the join does not know
  (Flink's planner loses it, e.g. with mini-batch, FLINK-27922), so their join
  state is InputSideHasNoUniqueKey. A dedupe restores it.
* `per_key_order`: `kept` (a retraction of a row the join state does not hold
  is bad input) | `disordered` (changes of one key may arrive swapped, as after
  a different keyBy upstream; the join takes them as Flink's state views do,
  without that check).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from converge.engine.model.scenario import InputSpec, PerKeyOrder, Scenario
from converge.engine.operators.dedupe import DeduplicateKeepLastRowOperator


@dataclass(frozen=True)
class PipelineOptions:
    dedupe: dict[str, tuple[str, ...]]       # input name -> dedupe key columns
    unique_key_lost: frozenset[str]
    per_key_order: PerKeyOrder = "kept"


def pipeline_options(scenario: Scenario) -> PipelineOptions:
    """The options with every default resolved (a dedupe without columns keys on the input's unique key)."""
    config = scenario.config
    dedupe = {name: cols if cols is not None else tuple(scenario.input(name).unique_key or ())
              for name, cols in config.dedupe_before_join.items()}
    return PipelineOptions(dedupe, frozenset(config.unique_key_lost), config.per_key_order)


def join_inputs(scenario: Scenario) -> tuple[InputSpec, ...]:
    """The chain's inputs as the join sees them: a deduped input is a retract stream keyed by the
    dedupe key; an input whose unique key was lost has none."""
    opts = pipeline_options(scenario)
    out = []
    for spec in scenario.chain:
        if spec.name in opts.dedupe:
            spec = replace(spec, unique_key=opts.dedupe[spec.name], changelog_mode="retract")
        elif spec.name in opts.unique_key_lost:
            spec = replace(spec, unique_key=None)
        out.append(spec)
    return tuple(out)


def dedupe_source(scenario: Scenario, spec: InputSpec) -> DeduplicateKeepLastRowOperator | None:
    """The dedupe operator to put between input `spec` (as declared) and the join, if one is asked for."""
    key = pipeline_options(scenario).dedupe.get(spec.name)
    if key is None:
        return None
    return DeduplicateKeepLastRowOperator(spec, key, emit_identical=scenario.config.ttl_for(spec.name) is not None)


def per_key_order(scenario: Scenario) -> PerKeyOrder:
    return pipeline_options(scenario).per_key_order
