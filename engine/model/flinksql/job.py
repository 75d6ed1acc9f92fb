"""How the user's job runs: `SET` statements and an `INSERT INTO` sink, read into the scenario's job options.

Users write the options of a Flink job next to its query (`SET 'state.backend.type' = 'rocksdb';`,
`SET 'parallelism.default' = '2';`) and send its result to a sink table, whose `PRIMARY KEY (...) NOT
ENFORCED` makes it an upsert sink. converge runs the query on a system with the same options
(`converge check --system flink`), so each is read into a job option of the scenario's config
(engine/model/scenario.py JOB_OPTION_KEYS). A SET that converge cannot send to the system is refused at
its position, never ignored: the system would run a job the user did not write.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from converge.engine.model.errors import BadInputError
from converge.engine.model.flinksql.positions import SourceText, clip

# Flink option -> (job option, {the user's value (lower case) -> converge's value} or int for a count)
_SET_OPTIONS: dict[str, tuple[str, dict[str, Any] | type]] = {
    "state.backend.type": ("state_backend", {"hashmap": "hashmap", "rocksdb": "rocksdb"}),
    "state.backend": ("state_backend", {"hashmap": "hashmap", "rocksdb": "rocksdb"}),  # before Flink 1.19
    "parallelism.default": ("parallelism", int),
    "table.exec.sink.upsert-materialize": ("upsert_materialize", {"auto": "auto", "force": "force", "none": "none"}),
}
# Options whose value converge checks anyway: only this value is what converge checks, any other is refused.
_FIXED = {"execution.runtime-mode": "streaming"}
# Planner options that change the join converge checks: read from the file into the check's options (a flag on
# the command line wins, properties/query_plan.py), never sent as a job option of their own.
# Flink option -> (check option, "bool" | "duration" | "count")
PLANNER_OPTIONS: dict[str, tuple[str, str]] = {
    "table.exec.state.ttl": ("ttl_ms", "duration"),
    "table.optimizer.multi-join.enabled": ("multi_join", "bool"),
    "table.exec.mini-batch.enabled": ("mini_batch_enabled", "bool"),
    "table.exec.mini-batch.size": ("mini_batch_size", "count"),
    "table.exec.mini-batch.allow-latency": ("mini_batch_latency_ms", "duration"),
}
PLANNER_KEYS = frozenset(option for option, _ in PLANNER_OPTIONS.values())
# Flink's duration units (TimeUtils.parseDuration), in milliseconds; a bare number is milliseconds
_UNITS = {**dict.fromkeys(("ms", "milli", "millis", "millisecond", "milliseconds"), 1),
          **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1000),
          **dict.fromkeys(("min", "m", "minute", "minutes"), 60_000),
          **dict.fromkeys(("h", "hour", "hours"), 3_600_000), **dict.fromkeys(("d", "day", "days"), 86_400_000)}
_DURATION = re.compile(r"^(\d+)\s*([a-z]*)$")


@dataclass(frozen=True)
class JobSetting:
    """One job option the query sets, and where: shown by `check`, sent to the system in every case's config."""

    option: str          # a key of JOB_OPTION_KEYS
    value: Any
    written: str         # how the file says it: SET 'parallelism.default' = '2', or the sink's PRIMARY KEY
    where: str           # file:line:col

    def describe(self) -> str:
        shown = ", ".join(self.value) if isinstance(self.value, tuple) else self.value
        return f"{self.option}={shown} ({self.written} at {self.where})"


@dataclass(frozen=True)
class SinkTable:
    """A CREATE TABLE that the query's INSERT INTO writes to: only its columns and primary key matter."""

    name: str
    columns: tuple[str, ...]
    primary_key: tuple[str, ...] | None
    node: exp.Expr


def read_set(stmt: exp.Set, text: SourceText) -> list[JobSetting]:
    """The job options of one `SET 'key' = 'value'`; any key converge cannot send is refused at its position."""
    out = []
    for item in stmt.expressions:
        pair = item.this if isinstance(item, exp.SetItem) else None
        if stmt.args.get("unset") or not isinstance(pair, exp.EQ) or not isinstance(pair.expression, exp.Literal):
            raise text.unsupported(item, "only SET 'key' = 'value' is read (converge sends these options to the "
                                         "system)")
        key_node = pair.this
        key = key_node.name if isinstance(key_node, exp.Literal) else key_node.sql() \
            if isinstance(key_node, exp.Column) else None
        if key is None:
            raise text.unsupported(item, "only SET 'key' = 'value' is read")
        key = key.strip().lower()
        raw = pair.expression.name.strip()
        written = f"SET '{clip(key)}' = '{clip(raw)}'"
        if key in _FIXED:
            if raw.lower() != _FIXED[key]:
                raise text.unsupported(item, f"converge checks {_FIXED[key]} jobs only")
            continue
        if key in PLANNER_OPTIONS:
            option, kind = PLANNER_OPTIONS[key]
            out.append(JobSetting(option, _planner_value(kind, raw, item, text), written, text.where(item)))
            continue
        if key not in _SET_OPTIONS:
            known = ", ".join(f"'{k}'" for k in sorted(_SET_OPTIONS) + sorted(_FIXED) + sorted(PLANNER_OPTIONS))
            raise text.unsupported(item, f"converge cannot send this option to the system, so the job would not be "
                                         f"the one you run (options it sends: {known})")
        option, values = _SET_OPTIONS[key]
        if values is int:
            if not raw.isdigit() or int(raw) < 1:
                raise text.error(item, "the parallelism must be a whole number of at least 1")
            if int(raw) > 64:
                raise text.unsupported(item, "converge runs a parallelism of at most 64")
            value: Any = int(raw)
        else:
            assert isinstance(values, dict)
            if raw.lower() not in values:
                raise text.error(item, f"expected one of {', '.join(sorted(values))}")
            value = values[raw.lower()]
        out.append(JobSetting(option, value, written, text.where(item)))
    return out


def _planner_value(kind: str, raw: str, item: exp.Expr, text: SourceText) -> Any:
    """A planner option's value as Flink parses it (a boolean, a duration, a count); anything else is bad input."""
    value = raw.strip().lower()
    if kind == "bool":
        if value not in ("true", "false"):
            raise text.error(item, "expected 'true' or 'false'")
        return value == "true"
    if kind == "count":
        if not re.fullmatch(r"-?\d+", value):
            raise text.error(item, "expected a whole number")
        return int(value)
    found = _DURATION.match(value)
    if found is None or (found.group(2) and found.group(2) not in _UNITS):
        raise text.error(item, f"expected a duration such as '10 s', '500 ms' or '1 h' (units: "
                               f"{', '.join(sorted(set(_UNITS)))})")
    ms = int(found.group(1)) * _UNITS[found.group(2) or "ms"]
    if ms > 2**62:
        raise text.error(item, "the duration is beyond the range converge holds")
    return ms


def planner_config(settings: Sequence[JobSetting]) -> dict[str, Any]:
    """The planner options the file sets, the last SET of each winning (the check's options, not the job's)."""
    return {s.option: s.value for s in settings if s.option in PLANNER_KEYS}


def read_sink(node: exp.Create, text: SourceText) -> SinkTable:
    """A sink's CREATE TABLE: its column names and PRIMARY KEY (its connector is the user's; nothing is read)."""
    schema = node.this
    if node.kind != "TABLE" or not isinstance(schema, exp.Schema):
        raise text.unsupported(node, "only CREATE TABLE name (columns ...) WITH (...) is supported")
    columns: list[str] = []
    key: tuple[str, ...] | None = None
    for item in schema.expressions:
        if isinstance(item, exp.ColumnDef):
            columns.append(item.name)
            kinds = [c.args.get("kind") for c in item.args.get("constraints") or ()]
            if any(isinstance(k, exp.PrimaryKeyColumnConstraint) for k in kinds):
                key = (item.name,)
        elif isinstance(item, exp.PrimaryKey):
            options = item.args.get("options") or ()
            if not any("NOT ENFORCED" in (o if isinstance(o, str) else o.sql()).upper() for o in options):
                raise text.error(item, "Flink requires PRIMARY KEY (...) NOT ENFORCED")
            key = tuple(i.name for i in item.expressions)
        elif not isinstance(item, exp.WatermarkColumnConstraint):
            raise text.unsupported(item, "a sink's schema may hold columns and PRIMARY KEY (...) NOT ENFORCED")
    folded = {c.casefold(): c for c in columns}
    for k in key or ():
        if k.casefold() not in folded:
            raise text.error(schema, f"primary key column {k!r} is not a column of sink {schema.this.name!r}")
    return SinkTable(schema.this.name, tuple(columns), key, node)


def insert_target(node: exp.Insert) -> tuple[str, tuple[str, ...] | None]:
    """(sink table, its column list or None) of `INSERT INTO sink [(c, ...)] SELECT ...`."""
    target = node.this
    if isinstance(target, exp.Schema):
        return target.this.name, tuple(i.name for i in target.expressions)
    return target.name, None


def sink_settings(node: exp.Insert, sink: SinkTable, outputs: Sequence[tuple[str, str]],
                  text: SourceText) -> list[JobSetting]:
    """The sink's job options: `outputs` are the SELECT's output columns as (input alias, column), in order;
    the sink's columns take them by position (or by its INSERT column list)."""
    _, listed = insert_target(node)
    names = listed if listed is not None else sink.columns
    folded = {c.casefold() for c in sink.columns}
    unknown = [c for c in names if c.casefold() not in folded]
    if unknown:
        raise text.error(node.this, f"{unknown[0]!r} is not a column of sink {sink.name!r}")
    if len(names) != len(outputs) or (listed is not None and len(listed) != len(sink.columns)):
        raise text.error(node.this, f"sink {sink.name!r} takes {len(names)} columns; the SELECT gives "
                                    f"{len(outputs)} (converge reads an INSERT that fills every sink column)")
    where = text.where(node)
    if sink.primary_key is None:
        return [JobSetting("sink", "retract", f"INSERT INTO {clip(sink.name)} (no primary key)", where)]
    position = {c.casefold(): i for i, c in enumerate(names)}
    key = tuple(f"{outputs[position[k.casefold()]][0]}.{outputs[position[k.casefold()]][1]}"
                for k in sink.primary_key)
    if len(set(key)) != len(key):
        raise text.unsupported(node.this, f"sink {sink.name!r}: two primary key columns take the same output "
                                          f"column; converge's sink_key names output columns")
    written = f"INSERT INTO {clip(sink.name)} PRIMARY KEY ({', '.join(sink.primary_key)})"
    return [JobSetting("sink", "upsert", written, where), JobSetting("sink_key", key, written, where)]


def job_config(settings: Sequence[JobSetting]) -> dict[str, Any]:
    """The settings as Config fields (a later SET of one option wins, as in a Flink SQL session); the planner
    options are the check's (planner_config), not fields a case's config takes from the file."""
    return {s.option: s.value for s in settings if s.option not in PLANNER_KEYS}


def check_consistent(settings: Sequence[JobSetting], text: SourceText) -> None:
    """Options that only make sense together: upsert-materialize needs an upsert sink."""
    config = job_config(settings)
    planner = planner_config(settings)
    if planner.get("mini_batch_enabled"):
        # Flink refuses a mini-batch job without both triggers (table.exec.mini-batch.size > 0, allow-latency > 0)
        for option, key in (("mini_batch_size", "table.exec.mini-batch.size"),
                            ("mini_batch_latency_ms", "table.exec.mini-batch.allow-latency")):
            if planner.get(option, 0) <= 0:
                enabled = next(s for s in reversed(settings) if s.option == "mini_batch_enabled")
                raise BadInputError(f"{enabled.where}: {enabled.written} needs SET '{key}' to a value above 0 "
                                    f"(Flink requires both mini-batch triggers)")
    materialize = next((s for s in settings if s.option == "upsert_materialize"), None)
    if materialize is not None and config.get("sink") != "upsert" and materialize.value != "auto":
        raise BadInputError(f"{materialize.where}: {materialize.written} applies to an upsert sink; the query "
                            f"writes to none (INSERT INTO a table with a PRIMARY KEY)")
