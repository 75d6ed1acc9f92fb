"""Planning an interval join: validate the spec, split the condition, build one operator.

Everything Flink's planner would refuse is refused here, before any event
runs, with the offending key named: updating (upsert) inputs, SEMI/ANTI,
negative allowed lateness, a time attribute that is not
an integer column of its own input. A window with L > U is valid SQL that
Flink plans as no join at all (engine/operators/negative_window.py).
"""

from __future__ import annotations

from converge.engine.condition import compile_predicate, split_condition
from converge.engine.model.errors import BadInputError, InternalError
from converge.engine.model.scenario import IntervalSpec, Scenario, time_index
from converge.engine.operators.base import Operator
from converge.engine.operators.interval_join import IntervalJoinSpec, TimeIntervalJoinOperator
from converge.engine.operators.negative_window import NegativeWindowJoinOperator
from converge.engine.planner.base import Plan, PlanNode

_NAMES = {"inner": "InnerJoin", "left": "LeftOuterJoin", "right": "RightOuterJoin", "full": "FullOuterJoin"}


def _check(scenario: Scenario, iv: IntervalSpec) -> None:
    if len(scenario.join.inputs) != 2:
        raise BadInputError("join.interval: interval joins are binary")
    jtype = scenario.join.types[0]
    if jtype not in _NAMES:
        raise BadInputError(f"join.types[0]: an interval join cannot be {jtype!r} (inner, left, right or full)")
    if iv.time == "processing" and iv.allowed_lateness_ms != 0:
        raise BadInputError("join.interval.allowed_lateness_ms: a processing-time interval join has no "
                            "allowed lateness (Flink passes 0)")
    for spec in scenario.chain:
        if spec.changelog_mode in ("upsert", "all"):
            raise BadInputError(f"input {spec.name!r} is an {spec.changelog_mode} (updating) input; interval "
                                f"join inputs must be append-only")


def build_interval_spec(scenario: Scenario) -> IntervalJoinSpec:
    iv = scenario.join.interval
    if iv is None:
        raise InternalError("join.interval is not set: not an interval join")
    _check(scenario, iv)
    left, right = scenario.chain
    try:
        split = split_condition(scenario.join.conditions[0], [left], right)
    except BadInputError as exc:
        raise BadInputError(f"join.conditions[0]: {exc}") from None
    residual = compile_predicate(split.residual_sql, [[left], [right]]) if split.residual_sql else None
    if iv.time == "event":
        left_time = time_index(left, iv.left_time, "join.interval.left_time")
        right_time = time_index(right, iv.right_time, "join.interval.right_time")
    else:
        left_time = right_time = None
    return IntervalJoinSpec(
        join_type=scenario.join.types[0],  # type: ignore[arg-type]
        left=left,
        right=right,
        left_key_indexes=tuple(left.index_of(k.left.column) for k in split.equi_keys),
        right_key_indexes=tuple(right.index_of(k.right.column) for k in split.equi_keys),
        filter_nulls=tuple(not k.null_safe for k in split.equi_keys),
        residual=residual,
        residual_sql=split.residual_sql,
        lower_ms=iv.lower_ms,
        upper_ms=iv.upper_ms,
        time_mode=iv.time,
        left_time_index=left_time,
        right_time_index=right_time,
        allowed_lateness_ms=iv.allowed_lateness_ms,
        min_cleanup_interval_ms=scenario.config.min_cleanup_interval_ms,
        semantics=scenario.config.semantics,
    )


def _describe(spec: IntervalJoinSpec) -> str:
    lk = ", ".join(spec.left.column_names[i] for i in spec.left_key_indexes)
    rk = ", ".join(spec.right.column_names[i] for i in spec.right_key_indexes)
    times = ""
    if spec.time_mode == "event":
        times = (f", leftTimeIndex={spec.left_time_index}, rightTimeIndex={spec.right_time_index}")
    return (f"IntervalJoin(joinType=[{_NAMES[spec.join_type]}], windowBounds=[isRowTime="
            f"{str(spec.time_mode == 'event').lower()}, leftLowerBound={spec.lower_ms}, "
            f"leftUpperBound={spec.upper_ms}{times}], allowedLateness=[{spec.allowed_lateness_ms}], "
            f"minCleanUpInterval=[{max(0, spec.min_cleanup_interval_ms)}], leftKeys=[{lk}], rightKeys=[{rk}], "
            f"where=[{spec.residual_sql or 'true'}], semantics=[{spec.semantics}])")


def _describe_empty(spec: IntervalJoinSpec) -> str:
    """Flink's plan of an empty window (StreamExecIntervalJoin.createNegativeWindowSizeJoin): a union of two maps."""
    left = "PadLeft" if spec.join_type in ("left", "full") else "FilterLeft"
    right = "PadRight" if spec.join_type in ("right", "full") else "FilterRight"
    return (f"Union({left}, {right}) (IntervalJoin(joinType=[{_NAMES[spec.join_type]}], leftLowerBound="
            f"{spec.lower_ms}, leftUpperBound={spec.upper_ms}): the window is empty, so Flink joins nothing and "
            f"{'pads every outer row as it arrives' if spec.join_type != 'inner' else 'emits no row'})")


def plan_interval_join(scenario: Scenario) -> Plan:
    """One keyed TimeIntervalJoinOperator reading both inputs directly (an empty window: Flink's maps instead)."""
    spec = build_interval_spec(scenario)
    left, right = scenario.chain
    operator: Operator
    if spec.lower_ms > spec.upper_ms:
        operator, describe = NegativeWindowJoinOperator(spec), _describe_empty(spec)
    else:
        operator, describe = TimeIntervalJoinOperator(spec), _describe(spec)
    node = PlanNode("interval_join", operator, [left.name, right.name], describe=describe)
    entry = {left.name: (node, 0), right.name: (node, 1)}
    cols = tuple(f"{s.name}.{c}" for s in (left, right) for c in s.column_names)
    return Plan(node, scenario, entry, cols)
