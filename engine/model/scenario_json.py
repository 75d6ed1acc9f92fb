"""Scenario files: strict reading and faithful writing of the JSON format (docs/scenario-format.md).

Users feed converge files they wrote by hand, captured from real jobs or
damaged on the way, so the reader checks every section's type before using
it, rejects unknown keys (suggesting the key that was probably meant), and
turns every way a file can be wrong into one BadInputError naming the file and
the key path, event index or byte offset. Nothing is silently dropped: the one
free-form place is the `meta` object.
"""

from __future__ import annotations

import difflib
import json
import math
import os
from collections.abc import Collection
from pathlib import Path
from typing import Any, Final

from converge.engine.model.changelog import RowKind
from converge.engine.model.errors import BadInputError
from converge.engine.model.files import write_text_whole
from converge.engine.model.rows import RowValidator, allowed_kinds, validate_output_row
from converge.engine.model.scenario import (
    ChangeEvent,
    Config,
    Event,
    Expect,
    ExpectMatch,
    IdleEvent,
    InputSpec,
    IntervalSpec,
    JoinSpec,
    ProcessingTimeEvent,
    Scenario,
    WatermarkEvent,
    check_bool,
    check_int,
    check_literal,
    check_text,
    event_time_columns,
    unencodable_at,
)

__all__ = ["load_scenario", "scenario_from_dict", "scenario_to_dict", "dump_scenario", "event_to_json",
           "parse_scenario_text", "parse_scenario_bytes", "MAX_FILE_BYTES", "MAX_META_DEPTH"]

MAX_FILE_BYTES: Final = 1 << 30      # a million-event capture is ~70 MB; a gigabyte is a mistake
MAX_META_DEPTH: Final = 32           # `meta` is free-form, but must stay writable and readable back

TOP_KEYS: Final = ("name", "description", "inputs", "join", "config", "events", "expect_final",
                   "expect_changelog", "meta")
# Files written before `meta` existed kept provenance at the top level; they are read into `meta`.
LEGACY_META_KEYS: Final = ("converge_failure", "generated_chain", "disorder_swapped")
INPUT_KEYS: Final = ("name", "columns", "unique_key", "changelog_mode", "time_column", "project", "where", "source")
JOIN_KEYS: Final = ("inputs", "types", "conditions", "interval", "select", "where")
INTERVAL_KEYS: Final = ("left_time", "right_time", "lower_ms", "upper_ms", "time", "allowed_lateness_ms")
CONFIG_KEYS: Final = ("state_ttl_ms", "map_state_order", "multi_join", "changelog_normalize", "semantics",
                      "min_cleanup_interval_ms", "dedupe_before_join", "unique_key_lost", "per_key_order",
                      "flink_version", "multi_join_max_tables", "multi_join_min_tables", "multi_join_rewrite_right",
                      "mini_batch_size", "mini_batch_latency_ms", "state_backend", "parallelism", "sink", "sink_key",
                      "upsert_materialize", "restart_after")
EXPECT_KEYS: Final = ("emits", "ordered", "match")
_CHANGE_KEYS: Final = frozenset({"input", "kind", "row", "expect"})
_WATERMARK_KEYS: Final = frozenset({"input", "watermark", "expect"})
_IDLE_KEYS: Final = frozenset({"input", "idle", "expect"})
_TIME_KEYS: Final = frozenset({"processing_time", "expect"})
_EVENT_KEYS: Final = tuple(sorted(_CHANGE_KEYS | _WATERMARK_KEYS | _IDLE_KEYS | _TIME_KEYS))


# ---------------------------------------------------------------- bytes -> JSON


def _json_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return f"{str(value).lower()}"
    if value is None:
        return "null"
    return f"the number {value!r}" if len(repr(value)) < 40 else "a number"


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise BadInputError(f"duplicate key {dup!r} in one JSON object (keys: {[k for k, _ in pairs][:12]}); "
                            f"JSON readers disagree on which value wins, so converge takes neither")
    return obj


def _no_constant(name: str) -> Any:
    raise BadInputError(f"{name} is not a JSON number; write a finite number or null")


def parse_scenario_text(text: str, *, default_name: str = "scenario") -> Scenario:
    """A scenario from JSON text (what load_scenario does after reading and decoding the file)."""
    try:
        obj = json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise BadInputError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno} "
                            f"(character {exc.pos})") from None
    except RecursionError:
        raise BadInputError("JSON nested too deeply to read (a scenario needs at most a few levels)") from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        raise BadInputError(f"not readable JSON: {exc}") from None
    return scenario_from_dict(obj, default_name=default_name)


def parse_scenario_bytes(data: bytes, *, source: str = "scenario") -> Scenario:
    """A scenario from a file's bytes; errors start with `source` (the file's path)."""
    if len(data) > MAX_FILE_BYTES:
        raise BadInputError(f"{source}: {len(data)} bytes; scenario files are limited to {MAX_FILE_BYTES}")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise BadInputError(f"{source}: not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start} "
                            f"(line {line}) {exc.reason}") from None
    try:
        return parse_scenario_text(text, default_name=Path(source).stem or "scenario")
    except BadInputError as exc:
        raise BadInputError(f"{source}: {exc}") from None


def load_scenario(path: str | os.PathLike[str]) -> Scenario:
    """Read one scenario file; every problem is a BadInputError that starts with the file's path."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise BadInputError(f"{path}: {size} bytes; scenario files are limited to {MAX_FILE_BYTES}")
        data = path.read_bytes()
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read the file: {exc.strerror or exc}") from None
    return parse_scenario_bytes(data, source=str(path))


# ---------------------------------------------------------------- JSON -> model


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _object(value: Any, path: str, known: Collection[str], required: Collection[str] = ()) -> dict:
    """`value` as a JSON object with only `known` keys and every `required` one."""
    if not isinstance(value, dict):
        raise BadInputError(f"expected an object, got {_json_kind(value)}", path=path or None)
    for key in value:
        if key not in known:
            close = difflib.get_close_matches(str(key), list(known), n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(known)}"
            raise BadInputError(f"unknown key {key!r}{hint}", path=_join(path, key))
    for key in required:
        if key not in value:
            raise BadInputError(f"missing key {key!r}", path=path or None)
    return value


def _list(value: Any, path: str, *, non_empty: bool = False) -> list:
    if not isinstance(value, (list, tuple)):
        raise BadInputError(f"expected a list, got {_json_kind(value)}", path=path)
    if non_empty and not value:
        raise BadInputError("expected a non-empty list", path=path)
    return list(value)


def _names(value: Any, path: str) -> tuple[str, ...]:
    return tuple(check_text(v, _join(path, i), what="a name") for i, v in enumerate(_list(value, path)))


def _build(path: str, make: Any, *args: Any, **kwargs: Any) -> Any:
    """Call a model constructor, prefixing the key path of its own checks with `path`."""
    try:
        return make(*args, **kwargs)
    except BadInputError as exc:
        if exc.event_index is not None:
            raise
        raise BadInputError(exc.detail, path=_join(path, exc.path) if exc.path else path) from None


def _named_expressions(value: Any, path: str) -> tuple[tuple[str, str], ...] | None:
    """A `project` or `select` list: [[name, expression], ...] (the model checks names and text)."""
    if value is None:
        return None
    items = []
    for j, item in enumerate(_list(value, path, non_empty=True)):
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            raise BadInputError(f"expected [name, expression], got {_json_kind(item)}", path=f"{path}[{j}]")
        items.append((item[0], item[1]))
    return tuple(items)


def _parse_input(obj: Any, path: str) -> InputSpec:
    _object(obj, path, INPUT_KEYS, ("name", "columns"))
    columns = []
    for j, col in enumerate(_list(obj["columns"], _join(path, "columns"), non_empty=True)):
        where = f"{path}.columns[{j}]"
        if not isinstance(col, (list, tuple)) or len(col) != 2:
            raise BadInputError(f"expected [name, type], got {_json_kind(col)}", path=where)
        ctype = col[1].upper() if isinstance(col[1], str) else col[1]
        columns.append((col[0], ctype))
    uk = obj.get("unique_key")
    return _build(path, InputSpec, obj["name"], tuple(columns),
                  None if uk is None else _names(uk, _join(path, "unique_key")),
                  obj.get("changelog_mode", "retract"), obj.get("time_column"),
                  _named_expressions(obj.get("project"), _join(path, "project")), obj.get("where"),
                  obj.get("source"))


def _parse_interval(obj: Any) -> IntervalSpec | None:
    if obj is None:
        return None
    path = "join.interval"
    _object(obj, path, INTERVAL_KEYS, ("lower_ms", "upper_ms"))
    return _build(path, IntervalSpec, obj.get("left_time"), obj.get("right_time"), obj["lower_ms"],
                  obj["upper_ms"], obj.get("time", "event"), obj.get("allowed_lateness_ms", 0))


def _parse_join(obj: Any) -> JoinSpec:
    _object(obj, "join", JOIN_KEYS, ("inputs", "types", "conditions"))
    return _build("join", JoinSpec, _names(obj["inputs"], "join.inputs"),
                  tuple(_list(obj["types"], "join.types")), tuple(_list(obj["conditions"], "join.conditions")),
                  _parse_interval(obj.get("interval")), _named_expressions(obj.get("select"), "join.select"),
                  obj.get("where"))


def _parse_config(obj: Any) -> Config:
    if obj is None:
        return Config()
    _object(obj, "config", CONFIG_KEYS)
    kwargs = {k: v for k, v in obj.items() if v is not None or k in ("state_ttl_ms", "multi_join_max_tables")}
    ttl = kwargs.get("state_ttl_ms")
    if isinstance(ttl, dict):
        kwargs["state_ttl_ms"] = dict(ttl)
    elif isinstance(ttl, (list, str)):
        raise BadInputError(f"expected null, an integer or {{input: integer}}, got {_json_kind(ttl)}",
                            path="config.state_ttl_ms")
    if "dedupe_before_join" in kwargs:
        raw = kwargs["dedupe_before_join"]
        where = "config.dedupe_before_join"
        if isinstance(raw, dict):
            kwargs["dedupe_before_join"] = {
                k: None if v is None else _names(v, f"{where}.{k}") for k, v in raw.items()}
        elif not isinstance(raw, list):
            raise BadInputError(f"expected a list of input names or {{input: [key columns]}}, got {_json_kind(raw)}",
                                path=where)
        else:
            kwargs["dedupe_before_join"] = dict.fromkeys(_names(raw, where))
    if "unique_key_lost" in kwargs:
        kwargs["unique_key_lost"] = _names(kwargs["unique_key_lost"], "config.unique_key_lost")
    if "sink_key" in kwargs:
        kwargs["sink_key"] = _names(kwargs["sink_key"], "config.sink_key")
    return _build("config", Config, **kwargs)


def _scalar(value: Any, path: str) -> Any:
    if isinstance(value, (dict, list)):
        raise BadInputError(f"expected a value (number, string, boolean or null), got {_json_kind(value)}",
                            path=path)
    return value


def _parse_expect(obj: Any, path: str, width: int) -> Expect | None:
    if obj is None:
        return None
    _object(obj, path, EXPECT_KEYS, ("emits",))
    items = []
    for i, item in enumerate(_list(obj["emits"], f"{path}.emits")):
        where = f"{path}.emits[{i}]"
        if isinstance(item, dict) and "watermark" in item:
            _object(item, where, ("watermark",))
            check_int(item["watermark"], f"{where}.watermark")
        else:
            _object(item, where, ("kind", "row"), ("kind", "row"))
            check_literal(item["kind"], RowKind, f"{where}.kind")
            validate_output_row(_list(item["row"], f"{where}.row"), width, f"{where}.row")
        items.append(item)
    ordered = check_bool(obj.get("ordered", True), f"{path}.ordered")
    match = check_literal(obj.get("match", "exact"), ExpectMatch, f"{path}.match")
    return Expect(tuple(items), ordered, match)



def _unknown_event_key(obj: dict, allowed: frozenset[str], path: str) -> BadInputError:
    key = next(k for k in obj if k not in allowed)
    close = difflib.get_close_matches(str(key), sorted(allowed), n=1, cutoff=0.6)
    if key in _EVENT_KEYS:
        hint = f"; this event has {sorted(allowed - {'expect'})}, so {key!r} does not belong to it"
    else:
        hint = f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(sorted(allowed))}"
    return BadInputError(f"unknown key {key!r}{hint}", path=_join(path, key))


class _EventReader:
    """Turns the JSON events into model events, checking each against the inputs it names."""

    def __init__(self, inputs: tuple[InputSpec, ...], chain: tuple[str, ...], width: int,
                 time_columns: dict[str, int]) -> None:
        self._time_columns = time_columns
        self._specs = {spec.name: spec for spec in inputs}
        self._sources = {spec.name: spec.source for spec in inputs if spec.source is not None}
        # the streams events name: each chain input's own, or the input whose stream it reads (`source`)
        self._chain = frozenset(self._sources.get(name, name) for name in chain)
        self._validators = {spec.name: RowValidator(spec).validate for spec in inputs}
        self._kinds = {spec.name: allowed_kinds(spec) for spec in inputs}
        self._width = width
        self._processing_time: int | None = None

    def _input(self, obj: dict, path: str) -> str:
        name = obj.get("input")
        if name is None:
            raise BadInputError("missing key 'input'", path=path)
        if not isinstance(name, str) or name not in self._specs:
            raise BadInputError(f"unknown input {name!r} (declared: {', '.join(self._specs)})", path=f"{path}.input")
        if name in self._sources:
            raise BadInputError(f"input {name!r} reads the stream of {self._sources[name]!r}: write its events on "
                                f"{self._sources[name]!r}", path=f"{path}.input")
        if name not in self._chain:
            raise BadInputError(f"input {name!r} is declared but not part of the join chain {sorted(self._chain)}",
                                path=f"{path}.input")
        return name

    def read(self, obj: Any, i: int) -> Event:
        path = f"events[{i}]"
        if not isinstance(obj, dict):
            raise BadInputError(f"expected an object, got {_json_kind(obj)}", path=path)
        keys = obj.keys()
        expect = _parse_expect(obj.get("expect"), f"{path}.expect", self._width) if "expect" in keys else None
        if "processing_time" in keys:
            if not keys <= _TIME_KEYS:
                raise _unknown_event_key(obj, _TIME_KEYS, path)
            t = check_int(obj["processing_time"], f"{path}.processing_time")
            if self._processing_time is not None and t < self._processing_time:
                raise BadInputError(f"processing time goes backwards: {t} after {self._processing_time}",
                                    path=f"{path}.processing_time")
            self._processing_time = t
            return ProcessingTimeEvent(t, expect)
        if "watermark" in keys:
            if not keys <= _WATERMARK_KEYS:
                raise _unknown_event_key(obj, _WATERMARK_KEYS, path)
            return WatermarkEvent(self._input(obj, path), check_int(obj["watermark"], f"{path}.watermark"), expect)
        if "idle" in keys:
            if not keys <= _IDLE_KEYS:
                raise _unknown_event_key(obj, _IDLE_KEYS, path)
            if obj["idle"] is not True:
                raise BadInputError(f"expected true, got {_json_kind(obj['idle'])}", path=f"{path}.idle")
            return IdleEvent(self._input(obj, path), expect)
        if not keys <= _CHANGE_KEYS:
            raise _unknown_event_key(obj, _CHANGE_KEYS, path)
        name = self._input(obj, path)
        if "kind" not in keys or "row" not in keys:
            raise BadInputError("a change needs 'kind' and 'row' (or the event is 'watermark', 'idle' or "
                                "'processing_time')", path=path)
        kind = check_literal(obj["kind"], RowKind, f"{path}.kind")
        if kind not in self._kinds[name]:
            raise BadInputError(f"{kind} on input {name!r}: a {self._specs[name].changelog_mode} input accepts only "
                                f"{', '.join(sorted(self._kinds[name]))}", path=f"{path}.kind")
        row = obj["row"]
        if not isinstance(row, list):
            raise BadInputError(f"expected a list, got {_json_kind(row)}", path=f"{path}.row")
        try:
            checked = self._validators[name](row)
        except BadInputError as exc:
            raise BadInputError(exc.detail, path=f"{path}.row", event_index=i) from None
        time = self._time_columns.get(name)
        if time is not None and checked[time] is None:
            raise BadInputError(f"the event-time attribute {self._specs[name].column_names[time]!r} is NULL; an "
                                f"event-time interval join needs every row's time", path=f"{path}.row[{time}]",
                                event_index=i)
        return ChangeEvent(name, kind, checked, expect)


def _check_meta(value: Any) -> dict:
    """`meta` holds anything JSON can, but bounded in depth so it can always be written back."""
    if not isinstance(value, dict):
        raise BadInputError(f"expected an object, got {_json_kind(value)}", path="meta")
    stack: list[tuple[Any, int, str]] = [(value, 1, "meta")]
    while stack:
        item, depth, path = stack.pop()
        if depth > MAX_META_DEPTH:
            raise BadInputError(f"nested deeper than {MAX_META_DEPTH} levels", path=path)
        if isinstance(item, dict):
            stack.extend((v, depth + 1, _join(path, str(k))) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, depth + 1, _join(path, j)) for j, v in enumerate(item))
        elif isinstance(item, str) and unencodable_at(item) is not None:
            raise BadInputError("holds a lone surrogate; it is not valid Unicode text", path=path)
        elif isinstance(item, float) and not math.isfinite(item):
            raise BadInputError(f"{item} is not a finite number", path=path)
    return dict(value)


def scenario_from_dict(obj: Any, *, default_name: str = "scenario") -> Scenario:
    """Build and validate a scenario from its JSON object; BadInputError names the key path."""
    _object(obj, "", TOP_KEYS + LEGACY_META_KEYS, ("inputs", "join"))
    inputs = tuple(_parse_input(o, f"inputs[{i}]") for i, o in enumerate(_list(obj["inputs"], "inputs", non_empty=True)))
    join = _parse_join(obj["join"])
    meta = _check_meta(obj["meta"]) if obj.get("meta") is not None else {}
    for key in LEGACY_META_KEYS:
        if key in obj:
            if key in meta:
                raise BadInputError(f"{key!r} is both a top-level key and a key of 'meta'", path=key)
            meta[key] = _check_meta({key: obj[key]})[key]
    name = obj.get("name", default_name)
    description = obj.get("description") or ""
    scenario = _build("", Scenario, check_text(name, "name", what="a name"), inputs, join,
                      _parse_config(obj.get("config")), (), None, None, meta,
                      check_text(description, "description", what="a description") if description else "")
    width = scenario.output_width()
    reader = _EventReader(inputs, join.inputs, width, event_time_columns(scenario))
    events = tuple(reader.read(e, i) for i, e in enumerate(_list(obj.get("events", []), "events")))
    final = obj.get("expect_final")
    if final is not None:
        final = tuple(validate_output_row(_list(r, f"expect_final[{i}]"), width, f"expect_final[{i}]")
                      for i, r in enumerate(_list(final, "expect_final")))
    expect_changelog = _parse_expect(obj.get("expect_changelog"), "expect_changelog", width)
    return Scenario(scenario.name, inputs, join, scenario.config, events, final, expect_changelog, meta,
                    scenario.description)


# ---------------------------------------------------------------- model -> JSON


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


def _config_to_json(cfg: Config) -> dict[str, Any]:
    """The base keys always (they say what the run assumed); the optional ones when they differ from the default."""
    out: dict[str, Any] = {
        "state_ttl_ms": dict(cfg.state_ttl_ms) if isinstance(cfg.state_ttl_ms, dict) else cfg.state_ttl_ms,
        "map_state_order": cfg.map_state_order,
        "multi_join": cfg.multi_join,
        "changelog_normalize": cfg.changelog_normalize,
        "semantics": cfg.semantics,
        "min_cleanup_interval_ms": cfg.min_cleanup_interval_ms,
    }
    for key, value in cfg.optional_settings().items():
        if key == "dedupe_before_join":
            value = (list(value) if all(v is None for v in value.values())
                     else {k: None if v is None else list(v) for k, v in value.items()})
        elif key in ("unique_key_lost", "sink_key"):
            value = list(value)
        out[key] = value
    return out


def _input_to_json(spec: InputSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"name": spec.name, "columns": [list(c) for c in spec.columns],
                           "unique_key": list(spec.unique_key) if spec.unique_key else None,
                           "changelog_mode": spec.changelog_mode, "time_column": spec.time_column}
    if spec.project is not None:
        out["project"] = [list(c) for c in spec.project]
    if spec.where is not None:
        out["where"] = spec.where
    if spec.source is not None:
        out["source"] = spec.source
    return out


def scenario_to_dict(s: Scenario) -> dict:
    interval = None
    if s.join.interval is not None:
        iv = s.join.interval
        interval = {"left_time": iv.left_time, "right_time": iv.right_time, "lower_ms": iv.lower_ms,
                    "upper_ms": iv.upper_ms, "time": iv.time, "allowed_lateness_ms": iv.allowed_lateness_ms}
    out: dict[str, Any] = {"name": s.name}
    if s.description:
        out["description"] = s.description
    if s.meta:  # first, so a failure report opens with what failed
        out["meta"] = dict(s.meta)
    join: dict[str, Any] = {"inputs": list(s.join.inputs), "types": list(s.join.types),
                            "conditions": list(s.join.conditions), "interval": interval}
    if s.join.select is not None:
        join["select"] = [list(c) for c in s.join.select]
    if s.join.where is not None:
        join["where"] = s.join.where
    out.update({
        "inputs": [_input_to_json(i) for i in s.inputs],
        "join": join,
        "config": _config_to_json(s.config),
        "events": [event_to_json(e) for e in s.events],
    })
    if s.expect_changelog is not None:
        out["expect_changelog"] = _expect_to_json(s.expect_changelog)
    if s.expect_final is not None:
        out["expect_final"] = [list(r) for r in s.expect_final]
    return out


def dump_scenario(s: Scenario, path: str | os.PathLike[str]) -> Path:
    """Write `s` to `path` whole or not at all (a temporary file renamed into place: engine/model/files.py)."""
    return write_text_whole(path, json.dumps(scenario_to_dict(s), indent=1, allow_nan=False) + "\n")
