"""The scenario model: inputs, join chain, config and events (docs/scenario-format.md).

One model serves hand-written cases, shrunk counterexamples and users' own
captured changelogs, so every part checks itself when it is built (from a file
or from Python) and names the offending key. The JSON form lives in
engine/model/scenario_json.py; the vocabularies (`Literal` types) are declared here
once and nowhere else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Literal, get_args

from converge.engine.model.errors import ApiMisuseError, BadInputError, UnsupportedError

ChangelogMode = Literal["insert_only", "retract", "upsert", "all"]
# Modes whose rows replace each other by unique key (an upsert stream; a raw changelog with bare +U).
KEYED_MODES: frozenset[str] = frozenset({"upsert", "all"})
JoinType = Literal["inner", "left", "right", "full", "semi", "anti"]
# rocksdb: EmbeddedRocksDBStateBackend's byte order; hashmap: HashMapStateBackend's java.util.HashMap order;
# arrival: the fix (engine/state.py). `heap`, a keyed-hash stand-in of 0.3.0 and earlier, is refused (REMOVED_ORDERS).
MapStateOrder = Literal["rocksdb", "hashmap", "arrival"]
REMOVED_ORDERS: dict[str, str] = {
    "heap": ("'heap' was converge's stand-in for the HashMapStateBackend's order (a keyed hash, which agreed "
             "with Flink by chance only) and is gone: name 'hashmap', Java HashMap's measured rule, and re-check "
             "any expected changelog the file holds, since its rows may come in another order"),
}
MultiJoinMode = Literal["off", "on"]
RuntimeName = Literal["local", "spark"]  # where the reference engine runs: in this process, or on Spark
Semantics = Literal["correct", "flink"]
# The Flink release whose operators' emission order the engine follows where releases differ (docs/semantics.md)
FlinkVersion = Literal["1.19", "1.20", "2.0", "2.1", "2.2", "2.3"]
TimeMode = Literal["event", "processing"]
ColumnType = Literal["BIGINT", "INTEGER", "DOUBLE", "VARCHAR", "BOOLEAN"]
PerKeyOrder = Literal["kept", "disordered"]
ExpectMatch = Literal["exact", "contains"]
# How a real system runs the job (docs/flink.md): none of them changes the join's answer, only how it is reached.
StateBackend = Literal["hashmap", "rocksdb"]
SinkKind = Literal["retract", "upsert"]
UpsertMaterialize = Literal["auto", "force", "none"]

COLUMN_TYPES: tuple[str, ...] = get_args(ColumnType)
INTEGER_TYPES = frozenset({"BIGINT", "INTEGER"})
# Times, TTLs and bounds are milliseconds in a signed 64-bit long, as in Flink.
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1


# ---------------------------------------------------------------- checks shared by the model and the JSON reader


def check_literal(value: Any, lit: Any, path: str) -> Any:
    """`value` if it is one of the `Literal` type's values; BadInputError naming `path` otherwise."""
    allowed = get_args(lit)
    if not isinstance(value, str) or value not in allowed:
        raise BadInputError(f"{value!r} is not one of {', '.join(map(str, allowed))}", path=path)
    return value


def check_int(value: Any, path: str, *, lo: int = LONG_MIN, hi: int = LONG_MAX) -> int:
    """An integer in [lo, hi] (a bool is not an integer here)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadInputError(f"expected an integer, got {short_repr(value)}", path=path)
    if not lo <= value <= hi:
        raise BadInputError(f"{short_repr(value)} is outside [{lo}, {hi}]", path=path)
    return value


def check_bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise BadInputError(f"expected true or false, got {short_repr(value)}", path=path)
    return value


def check_text(value: Any, path: str, *, what: str = "a string") -> str:
    """A non-empty string a database and a UTF-8 file can both hold: no NUL, no lone surrogate."""
    if not isinstance(value, str):
        raise BadInputError(f"expected {what}, got {short_repr(value)}", path=path)
    if not value.strip():
        raise BadInputError(f"expected {what}, got an empty string", path=path)
    if "\x00" in value:
        raise BadInputError(f"{what} must not contain a NUL character (found at offset {value.index(chr(0))})",
                            path=path)
    surrogate = unencodable_at(value)
    if surrogate is not None:
        raise BadInputError(f"{what} holds a lone surrogate \\u{ord(value[surrogate]):04x} at offset {surrogate}; "
                            f"it is not valid Unicode text", path=path)
    return value


def unencodable_at(text: str) -> int | None:
    """Offset of the first character UTF-8 cannot encode (a lone surrogate), or None."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def check_named_expressions(items: Any, path: str) -> tuple[tuple[str, str], ...]:
    """A non-empty list of [name, DuckDB SQL expression] with distinct names (case-insensitive). A name is any
    text, as a declared column's is (Flink's quoted `` `1-_./Ü` ``): the oracle quotes every name it writes."""
    if not isinstance(items, tuple) or not items:
        raise BadInputError(f"expected a non-empty list of [name, expression], got {short_repr(items)}", path=path)
    seen: set[str] = set()
    for j, item in enumerate(items):
        if not (isinstance(item, tuple) and len(item) == 2):
            raise BadInputError(f"expected [name, expression], got {short_repr(item)}", path=f"{path}[{j}]")
        name, expr = item
        check_text(name, f"{path}[{j}][0]", what="a column name")
        if name.casefold() in seen:
            raise BadInputError(f"column {name!r} is named twice (SQL names are case-insensitive)",
                                path=f"{path}[{j}][0]")
        seen.add(name.casefold())
        check_text(expr, f"{path}[{j}][1]", what="a SQL expression")
    return items


def short_repr(value: Any, limit: int = 60) -> str:
    """repr(value), cut to `limit` characters: error messages quote values users may have made huge."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---------------------------------------------------------------- the model


@dataclass(frozen=True)
class InputSpec:
    name: str
    columns: tuple[tuple[str, str], ...]
    unique_key: tuple[str, ...] | None = None
    changelog_mode: ChangelogMode = "retract"
    time_column: str | None = None
    # Flink's Calc in front of the join (a view, a derived table, computed columns): the columns the join sees,
    # each [name, DuckDB SQL expression over `columns`], and a filter; events carry `columns` (docs/scenario-format.md)
    project: tuple[tuple[str, str], ...] | None = None
    where: str | None = None
    # one table in several places (a self-join, two subqueries over one table): this input reads the stream of
    # the input named here, which the events name; Flink scans the table once and feeds each use
    source: str | None = None

    def __post_init__(self) -> None:
        try:
            if self in _VALID_SPECS:  # generators rebuild the same few specs for every example
                return
        except TypeError:
            pass  # unhashable: a field holds a list, which the checks below refuse
        self._check()
        if len(_VALID_SPECS) > 4096:
            _VALID_SPECS.clear()
        _VALID_SPECS.add(self)

    def _check(self) -> None:
        check_text(self.name, "name", what="an input name")
        if not self.name.isidentifier():
            raise BadInputError(f"{self.name!r} is not an identifier", path="name")
        if not isinstance(self.columns, tuple) or not self.columns:
            raise BadInputError("expected a non-empty list of [name, type]", path="columns")
        seen: dict[str, str] = {}
        for j, col in enumerate(self.columns):
            if not (isinstance(col, tuple) and len(col) == 2):
                raise BadInputError(f"expected [name, type], got {short_repr(col)}", path=f"columns[{j}]")
            cname, ctype = col
            check_text(cname, f"columns[{j}][0]", what="a column name")
            check_literal(ctype, ColumnType, f"columns[{j}][1]")
            folded = cname.casefold()
            if folded in seen:
                # SQL folds unquoted names: `k` and `K` would be one column to the oracle and two to the engine
                if seen[folded] == cname:
                    raise BadInputError(f"column {short_repr(cname)} is declared twice", path=f"columns[{j}]")
                raise BadInputError(f"columns {short_repr(seen[folded])} and {short_repr(cname)} differ only in "
                                    f"case; SQL identifiers are case-insensitive", path=f"columns[{j}]")
            seen[folded] = cname
        names = self.column_names
        if self.unique_key is not None:
            if (not isinstance(self.unique_key, tuple) or not self.unique_key
                    or any(c not in names for c in self.unique_key) or len(set(self.unique_key)) != len(self.unique_key)):
                raise BadInputError(f"{short_repr(self.unique_key)} must be a non-empty list of distinct columns of "
                                    f"{self.name!r} {list(names)}", path="unique_key")
        # (a declared upsert input needs a unique key; the join's own view of it may have lost it)
        check_literal(self.changelog_mode, ChangelogMode, "changelog_mode")
        if self.project is not None:
            check_named_expressions(self.project, "project")
        # with a projection the time attribute may be one of its columns (computed from the source's, e.g.
        # parsed from text: engine/model/time_text.py); a source column the projection keeps is read as before
        projected = tuple(n for n, _ in self.project) if isinstance(self.project, tuple) else ()
        if self.time_column is not None and self.time_column not in names and self.time_column not in projected:
            raise BadInputError(f"{self.time_column!r} is not a column of {self.name!r} {list(names + projected)}",
                                path="time_column")
        if self.where is not None:
            check_text(self.where, "where", what="a SQL boolean expression")
        if self.source is not None:
            check_text(self.source, "source", what="an input name")

    @property
    def has_calc(self) -> bool:
        """Whether a projection or a filter stands between this input's source and the join."""
        return self.project is not None or self.where is not None

    @property
    def joined_names(self) -> tuple[str, ...]:
        """The names of the columns the join sees (the projection's, or the source's)."""
        return self.column_names if self.project is None else tuple(n for n, _ in self.project)

    @cached_property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c for c, _ in self.columns)

    @cached_property
    def column_types(self) -> tuple[str, ...]:
        return tuple(t for _, t in self.columns)

    def index_of(self, column: str) -> int:
        try:
            return self.column_names.index(column)
        except ValueError:
            raise BadInputError(f"input {self.name!r} has no column {column!r}") from None


_VALID_SPECS: set[InputSpec] = set()
_CHECKED_PARTS: dict[tuple[int, int, int], tuple[Any, Any, Any]] = {}


@dataclass(frozen=True)
class IntervalSpec:
    left_time: str | None
    right_time: str | None
    lower_ms: int
    upper_ms: int
    time: TimeMode = "event"
    allowed_lateness_ms: int = 0

    def __post_init__(self) -> None:
        for key in ("left_time", "right_time"):
            value = getattr(self, key)
            if value is not None:
                check_text(value, key, what="a column name")
        # bounds are added to times; keep every sum inside a long
        check_int(self.lower_ms, "lower_ms", lo=-(2**62), hi=2**62)
        check_int(self.upper_ms, "upper_ms", lo=-(2**62), hi=2**62)
        check_literal(self.time, TimeMode, "time")
        check_int(self.allowed_lateness_ms, "allowed_lateness_ms", lo=0, hi=2**62)


@dataclass(frozen=True)
class JoinSpec:
    inputs: tuple[str, ...]
    types: tuple[str, ...]
    conditions: tuple[str, ...]
    interval: IntervalSpec | None = None
    # Flink's Calc after the join: the query's SELECT list over the output columns `input.column`, and its WHERE
    select: tuple[tuple[str, str], ...] | None = None
    where: str | None = None

    def __post_init__(self) -> None:
        for key in ("inputs", "types", "conditions"):
            if not isinstance(getattr(self, key), tuple):
                raise BadInputError(f"expected a list, got {short_repr(getattr(self, key))}", path=key)
        if len(self.inputs) < 2:
            raise BadInputError("a join needs at least two inputs", path="inputs")
        for i, name in enumerate(self.inputs):
            check_text(name, f"inputs[{i}]", what="an input name")
        if len(set(self.inputs)) != len(self.inputs):
            raise BadInputError("an input appears twice in the chain", path="inputs")
        n = len(self.inputs) - 1
        if len(self.types) != n or len(self.conditions) != n:
            raise BadInputError(f"{len(self.inputs)} inputs need {n} types and {n} conditions, got "
                                f"{len(self.types)} and {len(self.conditions)}", path="types")
        for i, jtype in enumerate(self.types):
            check_literal(jtype, JoinType, f"types[{i}]")
        for i, cond in enumerate(self.conditions):
            check_text(cond, f"conditions[{i}]", what="a SQL boolean expression")
        if self.interval is not None:
            if not isinstance(self.interval, IntervalSpec):
                raise BadInputError(f"expected an interval spec, got {short_repr(self.interval)}", path="interval")
            if n != 1:
                raise BadInputError("interval joins are binary", path="interval")
        if self.select is not None:
            check_named_expressions(self.select, "select")
        if self.where is not None:
            check_text(self.where, "where", what="a SQL boolean expression")

    @property
    def has_calc(self) -> bool:
        """Whether a SELECT list or a WHERE stands after the join."""
        return self.select is not None or self.where is not None


TtlSetting = int | Mapping[str, int] | None


@dataclass(frozen=True)
class Config:
    """Every option a scenario can set, typed; docs/scenario-format.md says what each one means."""

    state_ttl_ms: TtlSetting = None
    map_state_order: MapStateOrder = "rocksdb"
    multi_join: MultiJoinMode = "off"
    changelog_normalize: bool = True
    semantics: Semantics = "correct"
    min_cleanup_interval_ms: int = 0
    # input -> dedupe key columns (None: the input's unique key); docs/anomalies.md
    dedupe_before_join: Mapping[str, tuple[str, ...] | None] = field(default_factory=dict)
    unique_key_lost: tuple[str, ...] = ()
    per_key_order: PerKeyOrder = "kept"
    flink_version: FlinkVersion = "2.3"           # whose order of outer padding changes to emit (docs/semantics.md)
    # the multi-way planner's options; docs/multiway.md
    multi_join_max_tables: int | None = None
    multi_join_min_tables: int = 3
    multi_join_rewrite_right: bool = False
    # the mini-batch regular join (Flink's table.exec.mini-batch.*); docs/minibatch.md
    mini_batch_size: int | None = None
    mini_batch_latency_ms: int | None = None
    # how a real system runs the job (docs/flink.md "Job options"); converge's engine has one way to run a join
    state_backend: StateBackend | None = None     # None: the system's default
    parallelism: int | None = None                # None: the system's default (Flink's adapter: 1)
    sink: SinkKind = "retract"                    # upsert: a sink with a primary key (sink_key)
    sink_key: tuple[str, ...] = ()                # the upsert sink's primary key: output columns "input.column"
    upsert_materialize: UpsertMaterialize = "auto"  # Flink's table.exec.sink.upsert-materialize
    restart_after: int | None = None              # stop with a savepoint after this many changes, then restore

    def __post_init__(self) -> None:
        ttl = self.state_ttl_ms
        if isinstance(ttl, Mapping):
            for name, value in ttl.items():
                check_text(name, "state_ttl_ms", what="an input name")
                check_int(value, f"state_ttl_ms.{name}", lo=1, hi=2**62)
            object.__setattr__(self, "state_ttl_ms", dict(ttl))
        elif ttl is not None:
            check_int(ttl, "state_ttl_ms", lo=1, hi=2**62)
        if self.map_state_order in REMOVED_ORDERS:
            raise BadInputError(REMOVED_ORDERS[self.map_state_order], path="map_state_order")
        check_literal(self.map_state_order, MapStateOrder, "map_state_order")
        check_literal(self.multi_join, MultiJoinMode, "multi_join")
        check_bool(self.changelog_normalize, "changelog_normalize")
        check_literal(self.semantics, Semantics, "semantics")
        check_int(self.min_cleanup_interval_ms, "min_cleanup_interval_ms", lo=0, hi=2**62)
        if not isinstance(self.dedupe_before_join, Mapping):
            raise BadInputError(f"expected input names or {{input: [key columns]}}, got "
                                f"{short_repr(self.dedupe_before_join)}", path="dedupe_before_join")
        for name, cols in self.dedupe_before_join.items():
            check_text(name, "dedupe_before_join", what="an input name")
            if cols is not None and (not isinstance(cols, tuple) or not cols or len(set(cols)) != len(cols)
                                     or not all(isinstance(c, str) for c in cols)):
                raise BadInputError(f"{short_repr(cols)} must be a non-empty list of distinct column names",
                                    path=f"dedupe_before_join.{name}")
        object.__setattr__(self, "dedupe_before_join", dict(self.dedupe_before_join))
        if not isinstance(self.unique_key_lost, tuple) or len(set(self.unique_key_lost)) != len(self.unique_key_lost):
            raise BadInputError(f"expected a list of distinct input names, got {short_repr(self.unique_key_lost)}",
                                path="unique_key_lost")
        for i, name in enumerate(self.unique_key_lost):
            check_text(name, f"unique_key_lost[{i}]", what="an input name")
        check_literal(self.per_key_order, PerKeyOrder, "per_key_order")
        check_literal(self.flink_version, FlinkVersion, "flink_version")
        if self.multi_join_max_tables is not None:
            check_int(self.multi_join_max_tables, "multi_join_max_tables", lo=2, hi=2**31)
        check_int(self.multi_join_min_tables, "multi_join_min_tables", lo=2, hi=2**31)
        check_bool(self.multi_join_rewrite_right, "multi_join_rewrite_right")
        if self.mini_batch_size is not None:
            check_int(self.mini_batch_size, "mini_batch_size", lo=1, hi=2**31)
        if self.mini_batch_latency_ms is not None:
            check_int(self.mini_batch_latency_ms, "mini_batch_latency_ms", lo=1, hi=2**62)
            if self.mini_batch_size is None:
                raise BadInputError("a latency trigger needs mini_batch_size too (Flink requires both)",
                                    path="mini_batch_latency_ms")
        self._check_job_options()

    def _check_job_options(self) -> None:
        if self.state_backend is not None:
            check_literal(self.state_backend, StateBackend, "state_backend")
        if self.parallelism is not None:
            check_int(self.parallelism, "parallelism", lo=1, hi=64)
        check_literal(self.sink, SinkKind, "sink")
        check_literal(self.upsert_materialize, UpsertMaterialize, "upsert_materialize")
        if not isinstance(self.sink_key, tuple) or len(set(self.sink_key)) != len(self.sink_key) \
                or not all(isinstance(c, str) and "." in c for c in self.sink_key):
            raise BadInputError(f"expected a list of distinct output columns \"input.column\", got "
                                f"{short_repr(self.sink_key)}", path="sink_key")
        if self.sink == "upsert" and not self.sink_key:
            raise BadInputError("an upsert sink needs its primary key (sink_key)", path="sink_key")
        if self.sink == "retract" and self.sink_key:
            raise BadInputError("sink_key is the primary key of an upsert sink; this sink is retract", path="sink_key")
        if self.sink == "retract" and self.upsert_materialize != "auto":
            raise BadInputError("upsert_materialize applies to an upsert sink only", path="upsert_materialize")
        if self.restart_after is not None:
            check_int(self.restart_after, "restart_after", lo=0, hi=2**31)

    def ttl_for(self, input_name: str) -> int | None:
        ttl = self.state_ttl_ms
        if ttl is None or isinstance(ttl, int):
            return ttl
        return ttl.get(input_name)

    def optional_settings(self) -> dict[str, Any]:
        """The options beyond the base format that differ from their defaults (what a reader must notice)."""
        return {key: getattr(self, key) for key in OPTIONAL_CONFIG_KEYS
                if getattr(self, key) != getattr(_DEFAULT_CONFIG, key)}


OPTIONAL_CONFIG_KEYS = ("dedupe_before_join", "unique_key_lost", "per_key_order", "flink_version",
                        "multi_join_max_tables", "multi_join_min_tables", "multi_join_rewrite_right", "mini_batch_size",
                        "mini_batch_latency_ms", "state_backend", "parallelism", "sink", "sink_key",
                        "upsert_materialize", "restart_after")
# The job options: how a real system runs the join, never what it means (none changes the batch answer).
JOB_OPTION_KEYS = ("state_backend", "parallelism", "sink", "sink_key", "upsert_materialize", "restart_after")
_DEFAULT_CONFIG = Config()


@dataclass(frozen=True)
class Expect:
    emits: tuple[dict, ...]
    ordered: bool = True
    match: ExpectMatch = "exact"


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
    # the one free-form place: provenance written by converge (converge_failure, generated_chain, ...)
    meta: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise BadInputError(f"expected a string, got {short_repr(self.name)}", path="name")
        # with_events / replace keep inputs, join and config: checked once per combination of those objects
        key = (id(self.inputs), id(self.join), id(self.config))
        seen = _CHECKED_PARTS.get(key)
        if seen is not None and seen[0] is self.inputs and seen[1] is self.join and seen[2] is self.config:
            return
        if not isinstance(self.inputs, tuple) or not all(isinstance(s, InputSpec) for s in self.inputs):
            raise BadInputError("expected a list of inputs", path="inputs")
        if not isinstance(self.join, JoinSpec):
            raise BadInputError(f"expected a join spec, got {short_repr(self.join)}", path="join")
        if not isinstance(self.config, Config):
            raise BadInputError(f"expected a config, got {short_repr(self.config)}", path="config")
        _check_references(self)
        if len(_CHECKED_PARTS) > 1024:
            _CHECKED_PARTS.clear()
        _CHECKED_PARTS[key] = (self.inputs, self.join, self.config)  # held, so their ids are not reused

    def input(self, name: str) -> InputSpec:
        for spec in self.inputs:
            if spec.name == name:
                return spec
        raise BadInputError(f"scenario {self.name!r} has no input {name!r}")

    @property
    def chain(self) -> tuple[InputSpec, ...]:
        return tuple(self.input(n) for n in self.join.inputs)

    def with_events(self, events: list[Event] | tuple[Event, ...]) -> Scenario:
        return replace(self, events=tuple(events))

    def has_expectations(self) -> bool:
        return (
            self.expect_final is not None
            or self.expect_changelog is not None
            or any(e.expect is not None for e in self.events)
        )

    def has_views(self) -> bool:
        """Whether a projection or filter stands in front of the join or after it (engine/calc.py runs them)."""
        return self.join.has_calc or any(spec.has_calc for spec in self.chain)

    def output_width(self) -> int:
        if self.join.select is not None:
            return len(self.join.select)
        width = len(self.chain[0].joined_names)
        for spec, jtype in zip(self.chain[1:], self.join.types, strict=False):
            if jtype not in ("semi", "anti"):
                width += len(spec.joined_names)
        return width


def require_scenario(value: Any, caller: str) -> Scenario:
    """`value` if it is a Scenario; an ApiMisuseError naming the caller otherwise (e.g. a path was passed)."""
    if not isinstance(value, Scenario):
        hint = " (load a file with converge.load_scenario first)" if isinstance(value, (str, bytes)) or hasattr(
            value, "__fspath__") else ""
        raise ApiMisuseError(f"{caller}: expected a Scenario, got {type(value).__name__}{hint}")
    return value


def _check_references(s: Scenario) -> None:
    """Every name the join and the config use is declared, once (input names compare case-insensitively)."""
    seen: dict[str, str] = {}
    for i, spec in enumerate(s.inputs):
        folded = spec.name.casefold()
        if folded in seen:
            raise BadInputError(f"inputs {seen[folded]!r} and {spec.name!r} have the same name (SQL names are "
                                f"case-insensitive)", path=f"inputs[{i}].name")
        seen[folded] = spec.name
        if spec.changelog_mode in KEYED_MODES and spec.unique_key is None:
            raise BadInputError(f"an {spec.changelog_mode} input needs a unique_key",
                                path=f"inputs[{i}].changelog_mode")
    declared = {spec.name: spec for spec in s.inputs}
    _check_sources(s, declared)
    for i, name in enumerate(s.join.inputs):
        if name not in declared:
            raise BadInputError(f"unknown input {name!r} (declared: {', '.join(declared)})", path=f"join.inputs[{i}]")
    chain = s.join.inputs
    config = s.config
    if isinstance(config.state_ttl_ms, Mapping):
        for name in config.state_ttl_ms:
            if name not in chain:
                raise BadInputError(f"{name!r} is not an input of the join chain {list(chain)}",
                                    path=f"config.state_ttl_ms.{name}")
    for name, cols in config.dedupe_before_join.items():
        if name not in chain:
            raise BadInputError(f"{name!r} is not an input of the join chain {list(chain)}",
                                path="config.dedupe_before_join")
        spec = declared[name]
        if cols is None and not spec.unique_key:
            raise BadInputError(f"input {name!r} has no unique key; name the key columns, e.g. "
                                f"{{{name!r}: [{spec.column_names[0]!r}]}}", path="config.dedupe_before_join")
        if cols is not None and any(c not in spec.column_names for c in cols):
            raise BadInputError(f"{list(cols)} are not all columns of {name!r} {list(spec.column_names)}",
                                path=f"config.dedupe_before_join.{name}")
    if config.dedupe_before_join and s.join.interval is not None:
        raise BadInputError("an interval join takes append-only inputs; a dedupe emits retractions",
                            path="config.dedupe_before_join")
    for i, spec in enumerate(s.inputs):
        if spec.source is not None and spec.name in config.dedupe_before_join:
            raise UnsupportedError(f"inputs[{i}].source: one source feeding an input under dedupe_before_join is "
                                   f"not modelled yet")
    for name in config.unique_key_lost:
        if name not in chain:
            raise BadInputError(f"{name!r} is not an input of the join chain {list(chain)}",
                                path="config.unique_key_lost")
        if not declared[name].unique_key:
            raise BadInputError(f"input {name!r} declares no unique key to lose", path="config.unique_key_lost")
    _check_sink_key(s, declared)
    if s.has_views():
        _check_views(s)


def _check_sources(s: Scenario, declared: Mapping[str, InputSpec]) -> None:
    """An input that reads another's stream names a declared input without a source of its own, with its schema."""
    for i, spec in enumerate(s.inputs):
        if spec.source is None:
            continue
        path = f"inputs[{i}].source"
        source = declared.get(spec.source)
        if source is None or source is spec:
            raise BadInputError(f"{spec.source!r} is not another declared input (declared: {', '.join(declared)})",
                                path=path)
        if source.source is not None:
            raise BadInputError(f"input {source.name!r} reads {source.source!r} itself: name {source.source!r}",
                                path=path)
        if (spec.columns, spec.unique_key, spec.changelog_mode) != (source.columns, source.unique_key,
                                                                      source.changelog_mode):
            raise BadInputError(f"input {spec.name!r} reads {source.name!r}'s stream, so it declares the same "
                                f"columns, unique_key and changelog_mode (a view of it: project and where)",
                                path=path)
    _check_one_time_attribute(s)


def _check_one_time_attribute(s: Scenario) -> None:
    """Both inputs of an event-time interval join that read one stream read its one time attribute: a Flink table
    declares at most one rowtime (one WATERMARK), and a self-join's `x.ts BETWEEN y.ts ...` names it twice."""
    iv = s.join.interval
    if iv is None or iv.time != "event" or len(s.join.inputs) != 2:
        return
    names = {spec.name: spec for spec in s.inputs}
    if any(n not in names for n in s.join.inputs):
        return  # named by _check_references
    left, right = (names[n] for n in s.join.inputs)
    if left.source is None or left.source != right.source:
        return
    lt = time_index(left, iv.left_time, "join.interval.left_time")
    rt = time_index(right, iv.right_time, "join.interval.right_time")
    if lt != rt:
        raise BadInputError(f"inputs {left.name!r} and {right.name!r} read the one stream {left.source!r}, so their "
                            f"time attributes are its one time attribute: {left.column_names[lt]!r} and "
                            f"{right.column_names[rt]!r} differ", path="join.interval")


def sources_of(scenario: Scenario) -> dict[str, tuple[str, ...]]:
    """Stream (the input events name) -> the chain inputs it feeds, in chain order (an input without a source
    feeds itself)."""
    out: dict[str, list[str]] = {}
    for spec in scenario.chain:
        out.setdefault(spec.source or spec.name, []).append(spec.name)
    return {name: tuple(fed) for name, fed in out.items()}


def _check_views(s: Scenario) -> None:
    """The forms of a Calc around the join that converge runs; others are valid Flink, so UnsupportedError."""
    config = s.config
    for spec in s.chain:
        if not spec.has_calc:
            continue
        where = f"input {spec.name!r}"
        if spec.changelog_mode in KEYED_MODES:
            raise UnsupportedError(f"{where}: a projection or filter on an {spec.changelog_mode} input runs after "
                                   f"Flink's ChangelogNormalize, which converge does not model in front of a Calc")
        if spec.name in config.dedupe_before_join or spec.name in config.unique_key_lost:
            raise UnsupportedError(f"{where}: a projection or filter together with dedupe_before_join or "
                                   f"unique_key_lost is not modelled")
    if s.join.interval is not None and any(spec.has_calc for spec in s.chain) \
            and any(spec.source is not None for spec in s.chain):
        # the interval properties judge the join on DuckDB's projection of each input's own stream
        # (oracle/projected.py); one stream feeding both inputs through a Calc is not lowered yet
        raise UnsupportedError("a projection or filter in front of an interval self-join (one table read by both "
                               "inputs) is not modelled yet")
    if s.join.interval is not None and (s.join.has_calc or (s.join.interval.time != "processing"
                                                            and any(spec.where is not None for spec in s.chain))):
        # in front of an interval join a projection is a per-row map (an event-time attribute it computes, such as
        # one parsed from text, is the join's time); in front of a processing-time join a filter is too (a row's
        # time is its arrival whatever the Calc does); a filter in front of an event-time join (which rows the
        # watermark assigner sees) and a SELECT list or WHERE after the join are not modelled yet
        raise UnsupportedError("a filter in front of an event-time interval join, or a SELECT list or WHERE after an "
                               "interval join, is not modelled yet (a projection in front of an interval join is, "
                               "and a filter in front of a processing-time one)")
    if config.sink != "retract":
        raise UnsupportedError("an upsert sink's key names join output columns; with a SELECT list or a projection "
                               "it is not modelled yet")


def _check_sink_key(s: Scenario, declared: Mapping[str, InputSpec]) -> None:
    """An upsert sink's key names output columns: a column of an input whose columns reach the output."""
    shown = [s.join.inputs[0]] + [name for name, jtype in zip(s.join.inputs[1:], s.join.types, strict=False)
                                  if jtype not in ("semi", "anti")]
    for i, ref in enumerate(s.config.sink_key):
        name, _, column = ref.partition(".")
        if name not in shown or column not in declared[name].column_names:
            raise BadInputError(f"{ref!r} is not an output column (the output has the columns of "
                                f"{', '.join(shown)})", path=f"config.sink_key[{i}]")


def time_index(spec: InputSpec, ref: str | None, where: str) -> int:
    """The column index of an event-time attribute written `input.column` (or the input's time_column)."""
    column = ref
    if ref is None:
        column = spec.time_column
        if column is None:
            raise BadInputError(f"{where}: an event-time interval join needs the time attribute of input "
                                f"{spec.name!r} (e.g. \"{spec.name}.t\") or a time_column on the input")
    else:
        qualifier, dot, name = ref.partition(".")
        if dot:
            if qualifier != spec.name:
                raise BadInputError(f"{where}: {ref!r} must be a column of input {spec.name!r}")
            column = name
    assert column is not None
    index = spec.index_of(column)
    if spec.column_types[index] not in ("BIGINT", "INTEGER"):
        raise BadInputError(f"{where}: time attribute {spec.name}.{column} is {spec.column_types[index]}; "
                            f"times are BIGINT milliseconds")
    return index


def interval_time_name(spec: InputSpec, ref: str | None) -> str | None:
    """The name of an interval join's time attribute on `spec`: `ref` without its input qualifier, or the input's
    time_column (None: it has none)."""
    return (ref.partition(".")[2] or ref) if ref is not None else spec.time_column


def projected_time(spec: InputSpec, ref: str | None) -> bool:
    """Whether the input's event-time attribute is a column its projection computes (a rowtime parsed from text,
    engine/model/time_text.py), not one of its source columns."""
    column = interval_time_name(spec, ref)
    return spec.project is not None and column is not None and column not in spec.column_names \
        and column in spec.joined_names


def event_time_columns(scenario: Scenario) -> dict[str, int]:
    """Input name -> its event-time attribute's column, for an event-time interval join ({} otherwise); a stream
    the join's inputs read (`source`) -> theirs."""
    iv = scenario.join.interval
    if iv is None or iv.time != "event" or len(scenario.join.inputs) != 2:
        return {}
    out = {}
    for spec, ref, key in zip(scenario.chain, (iv.left_time, iv.right_time), ("left_time", "right_time"), strict=True):
        if projected_time(spec, ref):
            continue  # computed by the input's projection: the engine checks it after its Calc
        out[spec.name] = time_index(spec, ref, f"join.interval.{key}")
    for spec in scenario.chain:  # a stream read by both inputs (`source`) has their one time attribute
        if spec.source is not None and spec.name in out:
            out[spec.source] = out[spec.name]
    return out
