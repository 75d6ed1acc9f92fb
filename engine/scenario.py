"""The scenario model: inputs, join chain, config and events (docs/scenario-format.md).

One format serves hand-written cases, shrunk counterexamples and conformance
cases, so loading validates eagerly and names the offending key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, get_args

from converge.engine.changelog import ROW_KINDS
from converge.engine.errors import BadInputError

ChangelogMode = Literal["insert_only", "retract", "upsert"]
JoinType = Literal["inner", "left", "right", "full", "semi", "anti"]
MapStateOrder = Literal["rocksdb", "heap", "arrival"]
MultiJoinMode = Literal["off", "on"]
Semantics = Literal["correct", "flink"]
TimeMode = Literal["event", "processing"]
ColumnType = Literal["BIGINT", "INTEGER", "DOUBLE", "VARCHAR", "BOOLEAN"]

COLUMN_TYPES: tuple[str, ...] = get_args(ColumnType)


def _check_literal(value: Any, lit: Any, where: str) -> Any:
    allowed = get_args(lit)
    if value not in allowed:
        raise BadInputError(f"{where}: {value!r} is not one of {', '.join(map(str, allowed))}")
    return value


@dataclass(frozen=True)
class InputSpec:
    name: str
    columns: tuple[tuple[str, str], ...]
    unique_key: tuple[str, ...] | None = None
    changelog_mode: ChangelogMode = "retract"
    time_column: str | None = None

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c for c, _ in self.columns)

    @property
    def column_types(self) -> tuple[str, ...]:
        return tuple(t for _, t in self.columns)

    def index_of(self, column: str) -> int:
        try:
            return self.column_names.index(column)
        except ValueError:
            raise BadInputError(f"input {self.name!r} has no column {column!r}") from None


@dataclass(frozen=True)
class IntervalSpec:
    left_time: str | None
    right_time: str | None
    lower_ms: int
    upper_ms: int
    time: TimeMode = "event"
    allowed_lateness_ms: int = 0


@dataclass(frozen=True)
class JoinSpec:
    inputs: tuple[str, ...]
    types: tuple[str, ...]
    conditions: tuple[str, ...]
    interval: IntervalSpec | None = None


@dataclass(frozen=True)
class Config:
    state_ttl_ms: int | dict[str, int] | None = None
    map_state_order: MapStateOrder = "rocksdb"
    multi_join: MultiJoinMode = "off"
    changelog_normalize: bool = True
    semantics: Semantics = "correct"
    min_cleanup_interval_ms: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def ttl_for(self, input_name: str) -> int | None:
        ttl = self.state_ttl_ms
        if ttl is None or isinstance(ttl, int):
            return ttl
        return ttl.get(input_name)


@dataclass(frozen=True)
class Expect:
    emits: tuple[dict, ...]
    ordered: bool = True
    match: Literal["exact", "contains"] = "exact"


@dataclass(frozen=True)
class ChangeEvent:
    input: str
    kind: str
    row: tuple
    expect: Expect | None = None


@dataclass(frozen=True)
class ProcessingTimeEvent:
    processing_time: int
    expect: Expect | None = None


@dataclass(frozen=True)
class WatermarkEvent:
    input: str
    watermark: int
    expect: Expect | None = None


@dataclass(frozen=True)
class IdleEvent:
    input: str
    expect: Expect | None = None


Event = ChangeEvent | ProcessingTimeEvent | WatermarkEvent | IdleEvent


@dataclass(frozen=True)
class Scenario:
    name: str
    inputs: tuple[InputSpec, ...]
    join: JoinSpec
    config: Config = field(default_factory=Config)
    events: tuple[Event, ...] = ()
    expect_final: tuple[tuple, ...] | None = None
    expect_changelog: Expect | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def input(self, name: str) -> InputSpec:
        for spec in self.inputs:
            if spec.name == name:
                return spec
        raise BadInputError(f"scenario {self.name!r} has no input {name!r}")

    @property
    def chain(self) -> tuple[InputSpec, ...]:
        return tuple(self.input(n) for n in self.join.inputs)

    def with_events(self, events: list[Event] | tuple[Event, ...]) -> "Scenario":
        return replace(self, events=tuple(events))

    def has_expectations(self) -> bool:
        return (
            self.expect_final is not None
            or self.expect_changelog is not None
            or any(e.expect is not None for e in self.events)
        )

    def output_width(self) -> int:
        width = len(self.chain[0].columns)
        for spec, jtype in zip(self.chain[1:], self.join.types):
            if jtype not in ("semi", "anti"):
                width += len(spec.columns)
        return width


# ---------------------------------------------------------------- parsing


def _req(obj: dict, key: str, where: str) -> Any:
    if not isinstance(obj, dict):
        raise BadInputError(f"{where}: expected an object, got {type(obj).__name__}")
    if key not in obj:
        raise BadInputError(f"{where}: missing key {key!r}")
    return obj[key]


def _int(value: Any, where: str, *, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadInputError(f"{where}: expected an integer, got {value!r}")
    return value


def _parse_expect(obj: Any, where: str) -> Expect | None:
    if obj is None:
        return None
    emits = _req(obj, "emits", where)
    if not isinstance(emits, list):
        raise BadInputError(f"{where}.emits: expected a list")
    items = []
    for i, item in enumerate(emits):
        if not isinstance(item, dict) or not ({"kind", "row"} <= item.keys() or "watermark" in item):
            raise BadInputError(f"{where}.emits[{i}]: expected {{kind, row}} or {{watermark}}, got {item!r}")
        if "kind" in item and item["kind"] not in ROW_KINDS:
            raise BadInputError(f"{where}.emits[{i}]: unknown row kind {item['kind']!r}")
        items.append(item)
    match = obj.get("match", "exact")
    if match not in ("exact", "contains"):
        raise BadInputError(f"{where}.match: {match!r} is not exact|contains")
    return Expect(tuple(items), bool(obj.get("ordered", True)), match)


def _parse_input(obj: dict, i: int) -> InputSpec:
    where = f"inputs[{i}]"
    name = _req(obj, "name", where)
    if not isinstance(name, str) or not name.isidentifier():
        raise BadInputError(f"{where}.name: {name!r} is not an identifier")
    cols = _req(obj, "columns", where)
    if not isinstance(cols, list) or not cols:
        raise BadInputError(f"{where}.columns: expected a non-empty list of [name, type]")
    columns = []
    for j, col in enumerate(cols):
        if not (isinstance(col, (list, tuple)) and len(col) == 2 and isinstance(col[0], str)):
            raise BadInputError(f"{where}.columns[{j}]: expected [name, type], got {col!r}")
        ctype = str(col[1]).upper()
        if ctype not in COLUMN_TYPES:
            raise BadInputError(f"{where}.columns[{j}]: type {col[1]!r} is not one of {', '.join(COLUMN_TYPES)}")
        columns.append((col[0], ctype))
    names = [c for c, _ in columns]
    if len(set(names)) != len(names):
        raise BadInputError(f"{where}.columns: duplicate column names in {names}")
    uk = obj.get("unique_key")
    if uk is not None:
        if not isinstance(uk, list) or not uk or any(c not in names for c in uk):
            raise BadInputError(f"{where}.unique_key: {uk!r} must be a non-empty list of columns of {name!r}")
        uk = tuple(uk)
    mode = _check_literal(obj.get("changelog_mode", "retract"), ChangelogMode, f"{where}.changelog_mode")
    if mode == "upsert" and uk is None:
        raise BadInputError(f"{where}: an upsert input needs a unique_key")
    tcol = obj.get("time_column")
    if tcol is not None and tcol not in names:
        raise BadInputError(f"{where}.time_column: {tcol!r} is not a column of {name!r}")
    return InputSpec(name, tuple(columns), uk, mode, tcol)


def _parse_interval(obj: Any) -> IntervalSpec | None:
    if obj is None:
        return None
    where = "join.interval"
    time = _check_literal(obj.get("time", "event"), TimeMode, f"{where}.time")
    return IntervalSpec(
        left_time=obj.get("left_time"),
        right_time=obj.get("right_time"),
        lower_ms=_int(_req(obj, "lower_ms", where), f"{where}.lower_ms"),
        upper_ms=_int(_req(obj, "upper_ms", where), f"{where}.upper_ms"),
        time=time,
        allowed_lateness_ms=_int(obj.get("allowed_lateness_ms", 0), f"{where}.allowed_lateness_ms"),
    )


def _parse_config(obj: Any) -> Config:
    obj = obj or {}
    where = "config"
    known = {"state_ttl_ms", "map_state_order", "multi_join", "changelog_normalize", "semantics",
             "min_cleanup_interval_ms"}
    ttl = obj.get("state_ttl_ms")
    if isinstance(ttl, dict):
        ttl = {k: _int(v, f"{where}.state_ttl_ms.{k}") for k, v in ttl.items()}
        for k, v in ttl.items():
            if v <= 0:
                raise BadInputError(f"{where}.state_ttl_ms.{k}: TTL must be positive, got {v}")
    elif ttl is not None:
        ttl = _int(ttl, f"{where}.state_ttl_ms")
        if ttl <= 0:
            raise BadInputError(f"{where}.state_ttl_ms: TTL must be positive, got {ttl}")
    normalize = obj.get("changelog_normalize", True)
    if not isinstance(normalize, bool):
        raise BadInputError(f"{where}.changelog_normalize: expected true or false, got {normalize!r}")
    return Config(
        state_ttl_ms=ttl,
        map_state_order=_check_literal(obj.get("map_state_order", "rocksdb"), MapStateOrder, f"{where}.map_state_order"),
        multi_join=_check_literal(obj.get("multi_join", "off"), MultiJoinMode, f"{where}.multi_join"),
        changelog_normalize=normalize,
        semantics=_check_literal(obj.get("semantics", "correct"), Semantics, f"{where}.semantics"),
        min_cleanup_interval_ms=_int(obj.get("min_cleanup_interval_ms", 0), f"{where}.min_cleanup_interval_ms"),
        extra={k: v for k, v in obj.items() if k not in known},
    )


def _parse_event(obj: Any, i: int, input_names: set[str]) -> Event:
    where = f"events[{i}]"
    if not isinstance(obj, dict):
        raise BadInputError(f"{where}: expected an object, got {obj!r}")
    expect = _parse_expect(obj.get("expect"), f"{where}.expect")
    if "processing_time" in obj:
        return ProcessingTimeEvent(_int(obj["processing_time"], f"{where}.processing_time"), expect)
    name = _req(obj, "input", where)
    if name not in input_names:
        raise BadInputError(f"{where}.input: unknown input {name!r}")
    if "watermark" in obj:
        return WatermarkEvent(name, _int(obj["watermark"], f"{where}.watermark"), expect)
    if obj.get("idle"):
        return IdleEvent(name, expect)
    kind = _req(obj, "kind", where)
    if kind not in ROW_KINDS:
        raise BadInputError(f"{where}.kind: unknown row kind {kind!r} (expected one of {', '.join(ROW_KINDS)})")
    row = _req(obj, "row", where)
    if not isinstance(row, list):
        raise BadInputError(f"{where}.row: expected a list, got {row!r}")
    return ChangeEvent(name, kind, tuple(row), expect)


def scenario_from_dict(obj: dict, *, default_name: str = "scenario") -> Scenario:
    """Build and validate a scenario from its JSON object."""
    inputs = tuple(_parse_input(o, i) for i, o in enumerate(_req(obj, "inputs", "scenario")))
    names = {s.name for s in inputs}
    if len(names) != len(inputs):
        raise BadInputError("inputs: duplicate input names")
    join_obj = _req(obj, "join", "scenario")
    chain = tuple(_req(join_obj, "inputs", "join"))
    types = tuple(_req(join_obj, "types", "join"))
    conditions = tuple(_req(join_obj, "conditions", "join"))
    if len(chain) < 2:
        raise BadInputError("join.inputs: a join needs at least two inputs")
    for n in chain:
        if n not in names:
            raise BadInputError(f"join.inputs: unknown input {n!r}")
    if len(set(chain)) != len(chain):
        raise BadInputError("join.inputs: an input appears twice in the chain")
    if len(types) != len(chain) - 1 or len(conditions) != len(chain) - 1:
        raise BadInputError(
            f"join: {len(chain)} inputs need {len(chain) - 1} types and conditions, "
            f"got {len(types)} and {len(conditions)}")
    for i, t in enumerate(types):
        _check_literal(t, JoinType, f"join.types[{i}]")
    for i, c in enumerate(conditions):
        if not isinstance(c, str) or not c.strip():
            raise BadInputError(f"join.conditions[{i}]: expected a SQL boolean expression")
    interval = _parse_interval(join_obj.get("interval"))
    if interval is not None and len(chain) != 2:
        raise BadInputError("join.interval: interval joins are binary")
    join = JoinSpec(chain, types, conditions, interval)
    events = tuple(_parse_event(e, i, names) for i, e in enumerate(obj.get("events", [])))
    final = obj.get("expect_final")
    if final is not None:
        if not isinstance(final, list):
            raise BadInputError("expect_final: expected a list of rows")
        final = tuple(tuple(r) for r in final)
    meta = {k: v for k, v in obj.items() if k not in
            {"name", "inputs", "join", "config", "events", "expect_final", "expect_changelog"}}
    return Scenario(
        name=str(obj.get("name", default_name)),
        inputs=inputs,
        join=join,
        config=_parse_config(obj.get("config")),
        events=events,
        expect_final=final,
        expect_changelog=_parse_expect(obj.get("expect_changelog"), "expect_changelog"),
        meta=meta,
    )


def load_scenario(path: str | Path) -> Scenario:
    path = Path(path)
    try:
        obj = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise BadInputError(f"{path}: not valid JSON ({exc})") from None
    try:
        return scenario_from_dict(obj, default_name=path.stem)
    except BadInputError as exc:
        raise BadInputError(f"{path}: {exc}") from None


# ---------------------------------------------------------------- writing


def _expect_to_json(expect: Expect) -> dict:
    out: dict[str, Any] = {"emits": list(expect.emits), "ordered": expect.ordered}
    if expect.match != "exact":
        out["match"] = expect.match
    return out


def event_to_json(event: Event) -> dict:
    if isinstance(event, ChangeEvent):
        out: dict[str, Any] = {"input": event.input, "kind": event.kind, "row": list(event.row)}
    elif isinstance(event, ProcessingTimeEvent):
        out = {"processing_time": event.processing_time}
    elif isinstance(event, WatermarkEvent):
        out = {"input": event.input, "watermark": event.watermark}
    else:
        out = {"input": event.input, "idle": True}
    if event.expect is not None:
        out["expect"] = _expect_to_json(event.expect)
    return out


def scenario_to_dict(s: Scenario) -> dict:
    cfg = s.config
    config: dict[str, Any] = {
        "state_ttl_ms": cfg.state_ttl_ms,
        "map_state_order": cfg.map_state_order,
        "multi_join": cfg.multi_join,
        "changelog_normalize": cfg.changelog_normalize,
        "semantics": cfg.semantics,
        "min_cleanup_interval_ms": cfg.min_cleanup_interval_ms,
        **cfg.extra,
    }
    interval = None
    if s.join.interval is not None:
        iv = s.join.interval
        interval = {"left_time": iv.left_time, "right_time": iv.right_time, "lower_ms": iv.lower_ms,
                    "upper_ms": iv.upper_ms, "time": iv.time, "allowed_lateness_ms": iv.allowed_lateness_ms}
    out: dict[str, Any] = {
        "name": s.name,
        **s.meta,
        "inputs": [
            {"name": i.name, "columns": [list(c) for c in i.columns],
             "unique_key": list(i.unique_key) if i.unique_key else None,
             "changelog_mode": i.changelog_mode, "time_column": i.time_column}
            for i in s.inputs
        ],
        "join": {"inputs": list(s.join.inputs), "types": list(s.join.types),
                 "conditions": list(s.join.conditions), "interval": interval},
        "config": config,
        "events": [event_to_json(e) for e in s.events],
    }
    if s.expect_changelog is not None:
        out["expect_changelog"] = _expect_to_json(s.expect_changelog)
    if s.expect_final is not None:
        out["expect_final"] = [list(r) for r in s.expect_final]
    return out


def dump_scenario(s: Scenario, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(scenario_to_dict(s), indent=1) + "\n")
    return path
