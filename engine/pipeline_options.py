"""Optional config keys that change what stands in front of a regular join (docs/anomalies.md).

They live in `config.extra` (the scenario format keeps unknown config keys)
and are validated here, eagerly, when a plan is built:

* `dedupe_before_join`: a list of input names, or an object {input: [key
  columns]}. Each named input passes through a dedupe (keep the last row per
  key by arrival, Flink's ROW_NUMBER() ... = 1 rewrite) before the join; the
  key defaults to the input's unique key. The join then sees the input as a
  retract stream whose unique key is the dedupe key.
* `unique_key_lost`: a list of input names whose declared unique key the join
  does not know (Flink's planner loses it, e.g. with mini-batch, FLINK-27922),
  so their join state is InputSideHasNoUniqueKey. A dedupe restores it.
* `per_key_order`: `kept` (default: a retraction of a row the join state does
  not hold is bad input) | `disordered` (changes of one key may arrive
  swapped, as after a different keyBy upstream; the join takes them as Flink's
  state views do, without that check).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal, get_args

from converge.engine.errors import BadInputError
from converge.engine.operators.dedupe import DeduplicateKeepLastRowOperator
from converge.engine.scenario import InputSpec, Scenario

PerKeyOrder = Literal["kept", "disordered"]

DEDUPE_KEY = "dedupe_before_join"
LOST_KEY = "unique_key_lost"
ORDER_KEY = "per_key_order"


@dataclass(frozen=True)
class PipelineOptions:
    dedupe: dict[str, tuple[str, ...]]       # input name -> dedupe key columns
    unique_key_lost: frozenset[str]
    per_key_order: PerKeyOrder = "kept"


def _names(value: Any, where: str, chain: tuple[str, ...]) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
        raise BadInputError(f"config.{where}: expected a list of input names, got {value!r}")
    for n in value:
        if n not in chain:
            raise BadInputError(f"config.{where}: {n!r} is not an input of the join chain {list(chain)}")
    if len(set(value)) != len(value):
        raise BadInputError(f"config.{where}: an input is named twice in {value}")
    return value


def pipeline_options(scenario: Scenario) -> PipelineOptions:
    """The validated options; BadInputError names the config key and what is wrong with it."""
    extra = scenario.config.extra
    chain = scenario.join.inputs
    dedupe: dict[str, tuple[str, ...]] = {}
    raw = extra.get(DEDUPE_KEY)
    if raw is not None:
        if isinstance(raw, dict):
            _names(list(raw), DEDUPE_KEY, chain)
            items = list(raw.items())
        else:
            items = [(n, None) for n in _names(raw, DEDUPE_KEY, chain)]
        for name, cols in items:
            spec = scenario.input(name)
            if cols is None:
                if not spec.unique_key:
                    raise BadInputError(f"config.{DEDUPE_KEY}: input {name!r} has no unique key; "
                                        f"name the key columns, e.g. {{{name!r}: [{spec.column_names[0]!r}]}}")
                cols = list(spec.unique_key)
            if (not isinstance(cols, list) or not cols or any(c not in spec.column_names for c in cols)
                    or len(set(cols)) != len(cols)):
                raise BadInputError(f"config.{DEDUPE_KEY}.{name}: {cols!r} must be a non-empty list of distinct "
                                    f"columns of {name!r} {list(spec.column_names)}")
            dedupe[name] = tuple(cols)
        if scenario.join.interval is not None:
            raise BadInputError(f"config.{DEDUPE_KEY}: an interval join takes append-only inputs; "
                                f"a dedupe emits retractions")
    lost = frozenset(_names(extra.get(LOST_KEY, []), LOST_KEY, chain))
    for name in lost:
        if not scenario.input(name).unique_key:
            raise BadInputError(f"config.{LOST_KEY}: input {name!r} declares no unique key to lose")
    order = extra.get(ORDER_KEY, "kept")
    if order not in get_args(PerKeyOrder):
        raise BadInputError(f"config.{ORDER_KEY}: {order!r} is not one of {', '.join(get_args(PerKeyOrder))}")
    return PipelineOptions(dedupe, lost, order)


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
