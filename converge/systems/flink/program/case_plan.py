"""One protocol CASE (a converge scenario plus its per-input changelogs) as a Flink job shape and its rows.

Standard library only (the adapter runs it in the Flink environment). Cases with the same
`Shape.key` run as one Flink job: every input gets a case id column (`t<i>cid`), which is part
of every primary key and every join condition, and leads every output row. Inputs and columns
are renamed by position (`t<i>c<j>`), so no user name needs quoting and nested subqueries
(SEMI/ANTI) never see two columns of one name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from arrival import case_order  # the program's folder is on sys.path
from condition_sql import FLINK_TYPES, Column, Untranslatable, translate  # the program's folder is on sys.path
from dedupe_sql import DedupeError, dedupe_keys, deduplicated  # the program's folder is on sys.path
from parallel import check as check_parallelism  # the program's folder is on sys.path
from sinks import key_columns  # the program's folder is on sys.path
from time_attributes import on_rowtimes, rowtime_sql  # the program's folder is on sys.path
from ttl_clock import CLOCK, ClockError, check_runs, instants  # the program's folder is on sys.path

_JOIN_SQL = {"inner": "INNER", "left": "LEFT", "right": "RIGHT", "full": "FULL"}
_KINDS = {"insert_only": ("+I",), "retract": ("+I", "-U", "+U", "-D"), "upsert": ("+I", "+U", "-D")}
_SCENARIO_KEYS = {"name", "description", "inputs", "join", "config", "events"}
_INPUT_KEYS = {"name", "columns", "unique_key", "changelog_mode", "time_column"}
_JOIN_KEYS = {"inputs", "types", "conditions", "interval"}
_INTERVAL_KEYS = {"left_time", "right_time", "lower_ms", "upper_ms", "time", "allowed_lateness_ms"}
# Options that steer converge's own engine model (state layout, planner, anomaly injection) and leave
# the join's final answer alone; a real Flink job has its own and the adapter ignores these.
_MODEL_ONLY = {"map_state_order", "changelog_normalize", "semantics", "min_cleanup_interval_ms", "per_key_order",
               "flink_version", "multi_join_max_tables", "multi_join_min_tables", "multi_join_rewrite_right"}
# How the job runs (docs/flink.md "Job options"); each is sent to Flink, none changes the join's meaning.
_JOB_KEYS = {"state_backend", "parallelism", "sink", "sink_key", "upsert_materialize", "restart_after"}
# Rowtimes go through TO_TIMESTAMP_LTZ(ms, 3): keep them between the years 100 and 9999.
_TIME_RANGE = (-59_000_000_000_000, 253_000_000_000_000)


class CaseError(Exception):
    """The CASE message itself is malformed (a request error, not a property of the system)."""


@dataclass(frozen=True)
class InputPlan:
    view: int                                   # position in the chain: the view and column prefix
    types: tuple[str, ...]                      # converge column types
    primary_key: tuple[int, ...]                # column positions of the unique key
    mode: str                                   # insert_only | retract | upsert
    time_column: int | None = None              # the column turned into a rowtime (any join with a time_column)


@dataclass(frozen=True)
class JobOptions:
    """The case's job options as Flink takes them (the defaults: how the adapter ran every job before them)."""
    state_backend: str = "hashmap"              # state.backend.type
    parallelism: int = 1                        # parallelism.default
    sink: str = "retract"                       # retract: collect(); upsert: a sink with primary key sink_key
    sink_key: tuple[str, ...] = ()              # output columns "input.column"
    upsert_materialize: str = "auto"            # table.exec.sink.upsert-materialize
    restart_after: int | None = None            # stop with a savepoint after this many of each case's changes

    def key(self) -> list[Any]:
        return [self.state_backend, self.parallelism, self.sink, list(self.sink_key), self.upsert_materialize,
                self.restart_after]


@dataclass
class Shape:
    key: str
    inputs: list[InputPlan]
    select: str                                 # the query, with {v0}, {v1}, ... for the view names
    multi_join: bool
    interval: bool
    mini_batch: tuple[int, int] | None = None    # (size, allow-latency ms): Flink's mini-batch join, or off
    job: JobOptions = field(default_factory=JobOptions)
    rowtimes: tuple[int, ...] = ()               # regular joins: output positions checked against a rowtime's text
    sink_columns: tuple[str, ...] = ()           # an upsert sink's key columns, as Flink names (sinks.py)
    ttl_ms: int | None = None                    # table.exec.state.ttl on the wall clock (ttl_clock.py), or none
    case_id: str = "t0cid"                       # the select's first value: an output row's case id

    def query(self, views: list[str], base: int = 0) -> str:
        """The select over these views, each output row's case id (when not negative: a case's, not a dummy's)
        raised by `base`. The job's inputs number each shape's cases from 0 (the ids a hash order of Flink's
        reads, properties/systems/case_id.py), so a job of several shapes tells their rows apart by a base per
        shape (session.FlinkSession.run_shapes)."""
        sql = self.select.format(**{f"v{i}": v for i, v in enumerate(views)})
        if base == 0:
            return sql
        head = f"SELECT JSON_ARRAY({self.case_id}, "
        if not sql.startswith(head):
            raise ValueError(f"the shape's select does not start with its case id: {sql[:80]!r}")
        cid = self.case_id
        return f"SELECT JSON_ARRAY(IF({cid} < 0, {cid}, {cid} + {base}), " + sql[len(head):]

    @property
    def job_key(self) -> str:
        """The settings of the whole job (table config, checkpointing, sink): shapes that agree on it and are
        `combinable` can share one job (session.FlinkSession.run_shapes)."""
        key: list[Any] = [self.multi_join, self.mini_batch, self.job.key()]
        return json.dumps(key if self.ttl_ms is None else [*key, self.ttl_ms])


def combinable(shape: Shape) -> bool:
    """Whether the shape's cases may share a job with other shapes' (of the same job_key): a retract sink
    (collect) without a restart. An upsert sink's key and a restart's savepoint belong to one query."""
    return shape.job.sink == "retract" and shape.job.restart_after is None


@dataclass
class PlannedCase:
    shape: Shape
    rows: list[list[list[Any]]]                 # per chain input: [kind, value, ...]
    times: list[int] = field(default_factory=list)
    order: list[tuple[int, list[Any]]] = field(default_factory=list)  # (view, row) in the scenario's order
    instants: list[int] = field(default_factory=list)  # a TTL case: each change's logical processing time


def _check_keys(obj: Any, allowed: set[str], where: str) -> dict:
    if not isinstance(obj, dict):
        raise CaseError(f"{where}: expected an object")
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise Untranslatable(f"{where}: unknown key {unknown[0]!r} (this adapter does not know what it means)")
    return obj


def plan(case: dict) -> PlannedCase:
    """The case's job shape and rows; Untranslatable when Flink cannot run it with converge's meaning."""
    scenario = _check_keys(case.get("scenario"), _SCENARIO_KEYS, "scenario")
    join = _check_keys(scenario.get("join"), _JOIN_KEYS, "scenario.join")
    config = _check_keys(scenario.get("config", {}), _MODEL_ONLY | {"state_ttl_ms", "multi_join",
                                                                  "dedupe_before_join", "unique_key_lost",
                                                                  "mini_batch_size", "mini_batch_latency_ms"}
                         | _JOB_KEYS,
                         "scenario.config")
    specs = {}
    for i, spec in enumerate(scenario.get("inputs") or []):
        spec = _check_keys(spec, _INPUT_KEYS, f"scenario.inputs[{i}]")
        specs[spec.get("name")] = spec
    chain = join.get("inputs")
    types = join.get("types")
    conditions = join.get("conditions")
    if not (isinstance(chain, list) and isinstance(types, list) and isinstance(conditions, list)
            and len(chain) >= 2 and len(types) == len(conditions) == len(chain) - 1
            and all(name in specs for name in chain)):
        raise CaseError("scenario.join: inputs, types and conditions do not describe a join chain")
    interval = join.get("interval")
    if interval is not None:
        _check_keys(interval, _INTERVAL_KEYS, "scenario.join.interval")
        if interval.get("time", "event") != "event":
            raise Untranslatable("processing-time interval joins: Flink's processing time is the wall clock")
    multi_join = config.get("multi_join", "off") == "on"
    mini_batch = None
    if config.get("mini_batch_size") is not None:
        # Flink needs a positive allow-latency with mini-batch on; without converge's latency trigger the
        # bundle still closes on its size and at the end of the bounded input, so the final answer is the same
        mini_batch = (int(config["mini_batch_size"]), int(config.get("mini_batch_latency_ms") or 1000))

    job = _job_options(config)
    check_parallelism(job.parallelism)
    plans: list[InputPlan] = []
    visible: list[Column] = []
    for i, name in enumerate(chain):
        spec = specs[name]
        columns = spec.get("columns")
        if not isinstance(columns, list) or not all(isinstance(c, list) and len(c) == 2 for c in columns):
            raise CaseError(f"input {name!r}: columns must be [name, type] pairs")
        names = [c[0] for c in columns]
        col_types = tuple(c[1] for c in columns)
        if any(t not in FLINK_TYPES for t in col_types):
            raise Untranslatable(f"input {name!r}: a column type is not one of {sorted(FLINK_TYPES)}")
        key = spec.get("unique_key") or []
        mode = spec.get("changelog_mode", "retract")
        if mode not in _KINDS or any(k not in names for k in key):
            raise CaseError(f"input {name!r}: bad changelog_mode or unique_key")
        time_column = None
        if interval is not None:
            ref = interval.get("left_time" if i == 0 else "right_time") or spec.get("time_column")
            column = ref.split(".", 1)[1] if isinstance(ref, str) and "." in ref else ref
            if column not in names:
                raise CaseError(f"input {name!r}: no time column {ref!r}")
            time_column = names.index(column)
            if mode != "insert_only":
                raise Untranslatable("interval joins take append-only inputs; "
                                     f"input {name!r} is {mode}")
        elif spec.get("time_column") is not None:  # a rowtime on a regular or multi-way join's input
            if spec["time_column"] not in names:
                raise CaseError(f"input {name!r}: time_column {spec['time_column']!r} is not one of its columns")
            time_column = names.index(spec["time_column"])
            if col_types[time_column] != "BIGINT":
                raise Untranslatable(f"input {name!r}: the rowtime of a regular join is sent for a BIGINT time "
                                     f"column (millis) only")
        plans.append(InputPlan(i, col_types, tuple(names.index(k) for k in key), mode, time_column))
        visible.extend(Column(name, n, f"t{i}c{j}", t) for j, (n, t) in enumerate(zip(names, col_types)))

    timed = {p.view: p.time_column for p in plans if p.time_column is not None and interval is None}
    select, rowtimes, case_id = _query(chain, types, conditions, visible, interval, timed)
    if config.get("dedupe_before_join"):  # Flink's deduplication query in front of those inputs (dedupe_sql.py)
        if interval is not None:
            raise Untranslatable("dedupe_before_join on an interval join (converge's dedupe is for regular joins)")
        if timed:
            raise Untranslatable("dedupe_before_join on inputs with time attributes is not translated (the "
                                 "deduplication's PROCTIME() ordering beside a rowtime was never measured)")
        try:
            keys = dedupe_keys(config["dedupe_before_join"], chain, specs)
        except DedupeError as exc:
            raise CaseError(str(exc)) from None
        select = deduplicated(select, keys, [len(p.types) for p in plans])
    shape_key = json.dumps([[[p.types, p.primary_key, p.mode, p.time_column] for p in plans], select, multi_join,
                            mini_batch, job.key()], sort_keys=True)
    unique = {name: tuple(specs[name].get("unique_key") or ()) for name in chain}
    sink_columns = key_columns(chain, types, visible, unique, job.sink_key) if job.sink == "upsert" else ()
    if job.sink == "upsert" and job.restart_after is not None:
        raise Untranslatable("a restart through an upsert sink is not translated (restart.py collects the join's "
                             "own changelog)")
    ttl_ms = _wall_ttl(config.get("state_ttl_ms"), types, plans, job, bool(interval or timed or mini_batch
                                                                                or config.get("dedupe_before_join")))
    if ttl_ms is not None:
        shape_key = json.dumps([shape_key, ttl_ms])
    shape = Shape(shape_key, plans, select, multi_join, interval is not None, mini_batch, job, rowtimes=rowtimes,
                  sink_columns=sink_columns, ttl_ms=ttl_ms, case_id=case_id)
    rows = _rows(case, chain, plans)
    times = [r[1 + p.time_column] for p, rs in zip(plans, rows) if p.time_column is not None for r in rs]
    if interval is not None:
        _check_no_late_rows(scenario, chain, plans)
    order = case_order(scenario.get("events"), chain, rows)
    at: list[int] = []
    if ttl_ms is not None:
        try:
            at = instants(scenario.get("events"), chain)
            check_runs(order, at)
        except ClockError as exc:
            raise Untranslatable(f"state TTL: {exc}") from None
    return PlannedCase(shape, rows, times, order, at)


def _wall_ttl(ttl: Any, types: list[str], plans: list[InputPlan], job: JobOptions, other_time: bool) -> int | None:
    """The TTL sent to Flink for the case's `state_ttl_ms` (ttl_clock.py), or None without one; Untranslatable for
    what the paced wall clock does not drive: a TTL per input, a join other than a binary INNER/LEFT/RIGHT/FULL
    join of insert-only and retract inputs at parallelism 1 into a retract sink, anything else that keeps
    time-dependent state (mini-batch, interval, rowtimes, dedupe), a restart."""
    if ttl is None or ttl == {}:
        return None
    if not isinstance(ttl, int) or isinstance(ttl, bool):
        raise Untranslatable("state TTL per input (Flink's STATE_TTL hint) is not translated: one TTL for the "
                             "join (table.exec.state.ttl) is")
    reason = None
    if len(types) != 1 or types[0] not in _JOIN_SQL:
        reason = "only a binary INNER/LEFT/RIGHT/FULL join is driven (SEMI/ANTI may be planned with an aggregate)"
    elif any(p.mode not in ("insert_only", "retract") for p in plans):
        reason = "an upsert input's ChangelogNormalize keeps TTL'd state of its own"
    elif other_time:
        reason = "mini-batch, interval joins, rowtimes and dedupe are not driven with a TTL"
    elif job.parallelism != 1 or job.sink != "retract" or job.restart_after is not None:
        reason = "only parallelism 1, a retract sink and no restart are driven with a TTL"
    if reason is not None:
        raise Untranslatable(f"state TTL: {reason}")
    try:
        return CLOCK.wall_ttl(ttl)
    except ClockError as exc:
        raise Untranslatable(f"state TTL: {exc}") from None


def _job_options(config: dict) -> JobOptions:
    """The job options of scenario.config, checked as converge's loader checks them (a CaseError otherwise)."""
    backend = config.get("state_backend") or "hashmap"
    parallelism = config.get("parallelism") or 1
    sink = config.get("sink", "retract")
    sink_key = config.get("sink_key") or []
    materialize = config.get("upsert_materialize", "auto")
    restart = config.get("restart_after")
    if backend not in ("hashmap", "rocksdb"):
        raise CaseError(f"scenario.config.state_backend: {backend!r} is not hashmap or rocksdb")
    if not isinstance(parallelism, int) or isinstance(parallelism, bool) or not 1 <= parallelism <= 64:
        raise CaseError(f"scenario.config.parallelism: {parallelism!r} is not an integer from 1 to 64")
    if sink not in ("retract", "upsert") or materialize not in ("auto", "force", "none"):
        raise CaseError(f"scenario.config: sink {sink!r} / upsert_materialize {materialize!r} is not known")
    if not isinstance(sink_key, list) or not all(isinstance(c, str) for c in sink_key) \
            or bool(sink_key) != (sink == "upsert"):
        raise CaseError("scenario.config.sink_key: an upsert sink's primary key, as output columns (and only then)")
    if restart is not None and (not isinstance(restart, int) or isinstance(restart, bool) or restart < 0):
        raise CaseError(f"scenario.config.restart_after: {restart!r} is not a count of changes")
    return JobOptions(backend, parallelism, sink, tuple(sink_key), materialize, restart)


def _query(chain: list[str], types: list[str], conditions: list[str], columns: list[Column],
           interval: dict | None, timed: dict[int, int]) -> tuple[str, tuple[int, ...], str]:
    """The job's SELECT over views {v0}.. (one JSON text per row: case id, then the output columns, then the
    rowtimes of the joined inputs in `timed` (view -> time column), whose positions in the row come second, then
    the case id's expression)."""
    frag = "{v0}"
    outputs = [c for c in columns if c.flink_name.startswith("t0c")]
    visible = list(outputs)
    cids = ["t0cid"]
    padded = False   # may the left side's first case id be NULL (after a RIGHT or FULL join)?
    for k, (jtype, cond) in enumerate(zip(types, conditions), start=1):
        mine = [c for c in columns if c.flink_name.startswith(f"t{k}c")]
        if jtype not in (*_JOIN_SQL, "semi", "anti"):
            raise Untranslatable(f"join type {jtype!r}")
        if not isinstance(cond, str):
            raise CaseError(f"condition {k - 1} is not text")
        try:
            sql = on_rowtimes(translate(cond, visible + mine), timed)
        except Untranslatable as exc:
            raise Untranslatable(f"condition {cond!r}: {exc}") from None
        left_cid = f"COALESCE({', '.join(cids)})" if padded else "t0cid"
        on = f"{left_cid} = t{k}cid AND {sql}"
        if interval is not None:
            lo, hi = interval.get("lower_ms", 0), interval.get("upper_ms", 0)
            if not all(isinstance(v, int) and abs(v) < 86_400_000 * 99 for v in (lo, hi)):
                raise Untranslatable("interval bounds beyond 99 days do not fit Flink's interval literals")
            on += f" AND t0rt BETWEEN t1rt + {_interval(lo)} AND t1rt + {_interval(hi)}"
            if jtype not in _JOIN_SQL:
                raise Untranslatable(f"{jtype} interval joins are not interval joins in Flink")
        if jtype in ("semi", "anti"):
            negate = "NOT " if jtype == "anti" else ""
            frag = f"(SELECT * FROM {frag} WHERE {negate}EXISTS (SELECT 1 FROM {{v{k}}} WHERE {on})) AS s{k}"
        else:
            frag = f"{frag} {_JOIN_SQL[jtype]} JOIN {{v{k}}} ON {on}"
            outputs += mine
            visible += mine
            cids.append(f"t{k}cid")
            padded = padded or jtype in ("right", "full")
    out_cid = f"COALESCE({', '.join(cids)})" if padded else "t0cid"
    names = [c.flink_name for c in outputs]
    joined = sorted(v for v in timed if f"t{v}cid" in cids)
    rowtimes = tuple(names.index(f"t{v}c{timed[v]}") for v in joined)
    values = ", ".join([out_cid] + names + [rowtime_sql(v) for v in joined])
    return f"SELECT JSON_ARRAY({values} NULL ON NULL) FROM {frag}", rowtimes, out_cid


def _interval(ms: int) -> str:
    sign = "-" if ms < 0 else ""
    ms = abs(ms)
    days, rest = divmod(ms, 86_400_000)
    hours, rest = divmod(rest, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    return f"INTERVAL '{sign}{days} {hours:02d}:{minutes:02d}:{seconds:02d}.{millis:03d}' DAY TO SECOND(3)"


def _rows(case: dict, chain: list[str], plans: list[InputPlan]) -> list[list[list[Any]]]:
    changelogs = case.get("changelogs")
    if not isinstance(changelogs, dict) or set(changelogs) - set(chain):
        raise CaseError("changelogs: expected an object keyed by the chain's input names")
    out = []
    for name, p in zip(chain, plans):
        rows = changelogs.get(name, [])
        if not isinstance(rows, list):
            raise CaseError(f"changelogs.{name}: expected a list")
        for n, row in enumerate(rows):
            if not isinstance(row, list) or len(row) != len(p.types) + 1 or row[0] not in _KINDS[p.mode]:
                raise CaseError(f"changelogs.{name}[{n}]: expected [kind, value x{len(p.types)}] with a kind "
                                f"of {p.mode}")
            for value, ctype in zip(row[1:], p.types):
                if not _fits(value, ctype):
                    raise CaseError(f"changelogs.{name}[{n}]: {value!r} is not a {ctype}")
            if any(row[1 + j] is None for j in p.primary_key):
                raise Untranslatable(f"input {name!r} has a NULL in its unique key; Flink's primary key "
                                     "columns are NOT NULL")
            if p.time_column is not None:
                t = row[1 + p.time_column]
                if not isinstance(t, int) or not _TIME_RANGE[0] <= t <= _TIME_RANGE[1]:
                    raise Untranslatable(f"input {name!r}: event time {t!r} is outside what a Flink rowtime holds")
        out.append(rows)
    return out


def _fits(value: Any, ctype: str) -> bool:
    if value is None:
        return True
    if ctype in ("BIGINT", "INTEGER"):
        bits = 63 if ctype == "BIGINT" else 31
        return isinstance(value, int) and not isinstance(value, bool) and -(2**bits) <= value < 2**bits
    if ctype == "DOUBLE":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, str) if ctype == "VARCHAR" else isinstance(value, bool)


def _check_no_late_rows(scenario: dict, chain: list[str], plans: list[InputPlan]) -> None:
    """Refuse a case whose rows arrive behind a watermark: its answer depends on lateness handling,
    which the adapter's never-late watermark (see adapter.py) does not reproduce. Conservative:
    any watermark event of any input counts."""
    highest = None
    for n, event in enumerate(scenario.get("events") or []):
        if not isinstance(event, dict):
            continue
        if "watermark" in event and isinstance(event["watermark"], int):
            highest = event["watermark"] if highest is None else max(highest, event["watermark"])
        elif "processing_time" in event:
            raise Untranslatable("processing-time events: Flink's processing time is the wall clock")
        elif event.get("input") in chain and isinstance(event.get("row"), list) and highest is not None:
            p = plans[chain.index(event["input"])]
            t = event["row"][p.time_column] if p.time_column is not None else None
            if isinstance(t, int) and t <= highest:
                raise Untranslatable(f"events[{n}] is a late row (time {t} at watermark {highest}); only cases "
                                     "without late rows are run")
