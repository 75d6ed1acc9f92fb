"""The long-lived MiniCluster and how one job of cases runs on it (part of the Flink adapter program).

Standard library, pyflink and the sibling modules only (see adapter.py). Every job runs on the one
MiniCluster through a remote environment; every input of a job is fed from one checkpoint-gated
source in the scenario's order (arrival.py), so a case's changelog repeats from run to run.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections import defaultdict
from typing import Any

import parallel  # the program's folder is on sys.path
import sinks  # the program's folder is on sys.path
import ttl_clock  # the program's folder is on sys.path
from arrival import LEAD, rounds  # the program's folder is on sys.path
from case_plan import InputPlan, PlannedCase, Shape, combinable, plan  # the program's folder is on sys.path
from pacing import DEFAULT, Pacing  # the program's folder is on sys.path
from restart import RestartedRun, RestartMissed, restart_rounds, retrying  # the program's folder is on sys.path
from state_backend import apply_state_backend, backend_of  # the program's folder is on sys.path
from time_attributes import TIME_ZONE, strip_all  # the program's folder is on sys.path

# How the inputs of a job reach the join (arrival.py): "paced", one checkpoint-gated source in the scenario's
# order, or "free", one source per input as Flink interleaves them. Chosen by CONVERGE_FLINK_ARRIVAL.
ARRIVALS = ("paced", "free")
LATENCY_MS = 86_400_000  # mini-batch allow-latency when paced: its markers fall at UTC midnight only
_MODES = {"insert_only": "insert_only", "retract": "all", "upsert": "upsert"}


class FlinkJobError(Exception):
    """Flink refused or failed a job; the message is Flink's, shortened."""


def flink_message(exc: BaseException, lines: int = 4) -> str:
    """The first lines of a (py4j-wrapped) Java exception, plus its root cause."""
    java = getattr(exc, "java_exception", None)
    if java is None:
        head = str(exc).strip().splitlines()
        return " | ".join(head[:lines]) or type(exc).__name__
    root = java
    while root.getCause() is not None and root.getCause() != root:
        root = root.getCause()
    top = str(java.toString()).splitlines()[:lines]
    cause = str(root.toString()).splitlines()[:lines]
    return " | ".join(top if root == java else top + ["caused by: " + " ".join(cause)])


class FlinkSession:
    """The long-lived MiniCluster and the table environment that submits jobs to it."""

    def __init__(self, arrival: str = "paced", pacing: Pacing = DEFAULT) -> None:
        if arrival not in ARRIVALS:
            raise ValueError(f"arrival {arrival!r}: expected one of {', '.join(ARRIVALS)}")
        self.arrival = arrival
        self.pacing = pacing
        _drain_gateway_stderr()
        from py4j.protocol import Py4JJavaError  # lazy: the module must import without pyflink (tests, docs)
        from pyflink.common import Configuration, Types  # lazy: pyflink
        from pyflink.datastream import StreamExecutionEnvironment  # lazy: pyflink
        from pyflink.java_gateway import get_gateway  # lazy: pyflink
        from pyflink.table import StreamTableEnvironment  # lazy: pyflink

        self.java_error = Py4JJavaError
        self.types = Types
        gateway = get_gateway()
        jvm = gateway.jvm
        conf = jvm.org.apache.flink.configuration.Configuration()
        conf.setString("rest.port", "0")
        conf.setString("rest.bind-address", "127.0.0.1")
        conf.setString("rest.address", "127.0.0.1")
        mini = jvm.org.apache.flink.runtime.minicluster
        self.cluster = mini.MiniCluster(mini.MiniClusterConfiguration.Builder().setConfiguration(conf)
                                        .setNumTaskManagers(1).setNumSlotsPerTaskManager(4).build())
        self.cluster.start()
        port = self.cluster.getRestAddress().get().getPort()
        remote = jvm.org.apache.flink.streaming.api.environment.StreamExecutionEnvironment.createRemoteEnvironment(
            "127.0.0.1", port, Configuration()._j_configuration, gateway.new_array(jvm.java.lang.String, 0))
        self.env = StreamExecutionEnvironment(remote)
        self.env.set_parallelism(1)
        if arrival == "paced":  # the gate of arrival.py: one round per checkpoint (the pause is set per job)
            self.env.enable_checkpointing(pacing.interval_ms)
            # with checkpoints on, Flink's default restart strategy retries a failed job forever; fail at once
            restart = jvm.org.apache.flink.configuration.Configuration()
            restart.setString("restart-strategy.type", "none")
            self.env._j_stream_execution_environment.configure(restart)
            # watermarks follow the records only (no processing-time timer emits one between rounds)
            self.env.get_config().set_auto_watermark_interval(0)
        self.t_env = StreamTableEnvironment.create(self.env)
        if arrival == "paced":
            self.t_env.get_config().set("pipeline.auto-watermark-interval", "0 ms")
            self.t_env.get_config().set("restart-strategy.type", "none")
        self.jvm = jvm
        self.jobs = 0
        self.built = 0.0            # when the last job's source rows were handed to Java (perf_counter)
        self.laid = (0, 0)          # the last paced job's rounds and their width
        self.stamps: dict[int, float] = {}  # the last TTL job's probe stamps by instant (ttl_clock.py)
        self.warm_up()

    def warm_up(self) -> None:
        """Run one small job before the hello is answered, so the first run request does not pay the JVM's
        one-off costs (loading and compiling the planner, the runtime and the code generator).

        Measured on a loaded two-core machine (load average 6): the first job of a fresh MiniCluster took
        21 s, each later one 2-4 s, so the first request of `converge check --system flink` (one case per
        request, a limit of 31 s) timed out under a little more load. The hello's limit is 120 s. The job
        joins an upsert input (ChangelogNormalize) LEFT with a retract one and keeps the rows with a match
        in a third (EXISTS: a semi join), the operators converge's cases use most."""
        started = time.perf_counter()
        inputs = [{"name": "a", "columns": [["k", "BIGINT"], ["x", "VARCHAR"]], "unique_key": ["k"],
                   "changelog_mode": "upsert"},
                  {"name": "b", "columns": [["k", "BIGINT"], ["y", "DOUBLE"]], "unique_key": None,
                   "changelog_mode": "retract"},
                  {"name": "c", "columns": [["k", "BIGINT"]], "unique_key": None, "changelog_mode": "insert_only"}]
        case = {"id": "warm-up", "changelogs": {"a": [["+I", 1, "x"], ["+U", 1, "y"]],
                                                "b": [["+I", 1, 0.5], ["-D", 1, 0.5], ["+I", 1, 1.5]],
                                                "c": [["+I", 1]]},
                "scenario": {"name": "warm-up", "inputs": inputs, "config": {}, "events": [],
                             "join": {"inputs": ["a", "b", "c"], "types": ["left", "semi"],
                                      "conditions": ["a.k = b.k AND b.y > 1", "c.k = a.k"]}}}
        planned = plan(case)
        try:
            answer: Any = fold(self.run(planned.shape, [planned])[0])
        except FlinkJobError as exc:  # only time is lost: the first request pays the warm-up instead
            answer = f"failed: {exc}"
        print(f"converge flink adapter: warm-up job in {time.perf_counter() - started:.1f} s: {answer}; "
              f"pacing {self.pacing.text()}",
              file=sys.stderr, flush=True)

    def close(self) -> None:
        self.cluster.close()

    def run(self, shape: Shape, cases: list[PlannedCase], gap: int | None = None) -> dict[int, list[list[Any]]]:
        """Run `cases` (all of `shape`) as one job; each case's changelog ([kind, value...]) in emission order.
        With `restart_after`: two jobs, the second restored from the first's savepoint (restart.py; `gap`)."""
        if shape.job.restart_after is not None and gap is None:
            return retrying(lambda wider: self.run(shape, cases, wider))
        return self.run_shapes([(shape, cases)], gap)[0]

    def run_shapes(self, parts: list[tuple[Shape, list[PlannedCase]]],
                   gap: int | None = None) -> list[dict[int, list[list[Any]]]]:
        """Run the cases of several shapes as ONE job: one paced source whose round k holds event k of every case
        of every shape, each shape's query over its own views, the queries' rows in one UNION ALL into one
        collect sink. The shapes must share their job settings (case_plan.Shape.job_key) and a retract sink with
        no restart (case_plan.combinable), since those are options of the whole job. A case's id in its input rows
        is its index within its part, as in a job of its shape alone (the hash orders properties/systems/case_id.py
        models read it); its output rows carry its position in the job (shape after shape, Shape.query), which
        tells the shapes' rows apart. For each part,
        each case's changelog ([kind, value...]) in emission order, by the case's index within its part."""
        shape = parts[0][0]  # the job's settings (every part agrees)
        if len(parts) > 1 and (gap is not None or any(s.job_key != shape.job_key or not combinable(s)
                                                      for s, _ in parts)):
            raise ValueError("only shapes with the same job settings and a retract sink without a restart "
                             "share a job")
        from pyflink.table import Schema  # lazy: pyflink
        from pyflink.table.changelog_mode import ChangelogMode  # lazy: pyflink

        self.jobs += 1
        started = time.perf_counter()
        self.laid = (0, 0)
        self.built = started
        views = [[f"j{self.jobs}_s{n}_v{p.view}" for p in s.inputs] for n, (s, _) in enumerate(parts)]
        starts = [sum(len(cases) for _, cases in parts[:n]) for n in range(len(parts))]
        times = [t for _, cases in parts for case in cases for t in case.times]
        try:
            # first: the paced split plans its own small queries (to_changelog_stream) with this config
            config = self.t_env.get_config()
            config.set("table.optimizer.multi-join.enabled", str(shape.multi_join).lower())
            apply_state_backend(config, shape.job.state_backend)
            config.set("table.local-time-zone", TIME_ZONE)  # rowtime texts (time_attributes.py)
            # the join's state TTL on the wall clock (ttl_clock.py); 0: none, Flink's default
            config.set("table.exec.state.ttl", f"{shape.ttl_ms or 0} ms")
            config.set("table.exec.mini-batch.enabled", str(shape.mini_batch is not None).lower())
            if shape.mini_batch is not None:
                config.set("table.exec.mini-batch.size", str(shape.mini_batch[0]))
                # paced: only the size, the checkpoints between rounds and the end of input close a bundle
                latency = LATENCY_MS if self.arrival == "paced" else shape.mini_batch[1]
                config.set("table.exec.mini-batch.allow-latency", f"{latency} ms")
            sinks.configure(config, shape.job.sink, shape.job.upsert_materialize)
            parallel.before_arrival(config)
            if self.arrival == "paced":
                streams = self._paced_streams(parts, gap)
            else:
                streams = [[self._free_stream(p, cases, times) for p in s.inputs] for s, cases in parts]
            self.built = time.perf_counter()  # the source's rows laid out and handed to Java
            parallel.before_join(config, shape.job.parallelism)
            for (s, _), part_views, part_streams in zip(parts, views, streams):
                for p, view, stream in zip(s.inputs, part_views, part_streams):
                    self._register(p, view, stream, times, Schema, ChangelogMode)
            queries = [s.query(part_views, start) for (s, _), part_views, start in zip(parts, views, starts)]
            if shape.ttl_ms is not None:  # the TTL job's own clock (ttl_clock.py): its probe's stamps
                queries.append(ttl_clock.probe_sql(views[0][0], views[0][1]))
            sql = " UNION ALL ".join(queries)
            if gap is not None:
                text = RestartedRun(self, shape.job).collect(sql, views[0][0])
            elif shape.job.sink == "upsert":
                text = sinks.upsert_result(self, sql, shape.sink_columns, shape.job.upsert_materialize,
                                           f"j{self.jobs}_sink")
            else:
                text = self._collect(sql)
            ran_on = backend_of(self.cluster, self.last_job_id)
            if ran_on != shape.job.state_backend:  # an option Flink ignored would pass unnoticed otherwise
                raise FlinkJobError(f"the job ran on state backend {ran_on!r}, not {shape.job.state_backend!r}")
        except RestartMissed:
            raise
        except self.java_error as exc:
            raise FlinkJobError(flink_message(exc)) from None
        except Exception as exc:  # pyflink converts some Java errors into its own exception classes
            raise FlinkJobError(flink_message(exc)) from None
        finally:
            # to_changelog_stream (the paced split) adds its transformations to the environment, which never
            # executes them: without this each job's rows would stay referenced until the process ends
            from py4j.java_gateway import get_method  # lazy: py4j; Java's own clear (py4j's list proxy pops)

            get_method(self.env._j_stream_execution_environment.getTransformations(), "clear")()
            for view in (v for part_views in views for v in part_views):
                try:
                    self.t_env.drop_temporary_view(view)
                except Exception:  # a view that was never created
                    pass
        rounds_laid, width = self.laid
        print(f"converge flink adapter: job {self.jobs}: {len(parts)} shapes, {starts[-1] + len(parts[-1][1])} cases, "
              f"{rounds_laid} rounds of {width} records, built in {self.built - started:.2f} s, answered after "
              f"{time.perf_counter() - started:.2f} s", file=sys.stderr, flush=True)
        everything = _changelogs(text, starts[-1] + len(parts[-1][1]))
        answers: list[dict[int, Any]] = [strip_all({c: everything[start + c] for c in range(len(cases))}, s.rowtimes)
                                         for (s, cases), start in zip(parts, starts)]
        if shape.ttl_ms is not None:
            self._judge_clock(text, parts, answers)
        return answers

    def _judge_clock(self, text: str, parts: list[tuple[Shape, list[PlannedCase]]], answers: list[dict]) -> None:
        """Replace the changelog of every TTL case whose expiry the measured clock leaves undecided by an
        Undecided (ttl_clock.undecided; the adapter answers it unsupported)."""
        instants = ttl_clock.probed([case.instants for _, cases in parts for case in cases])
        stamps = [_stamp_ms(row[-1]) for row in _changelogs(text, 0, keep=ttl_clock.STAMPED)[ttl_clock.STAMPED]]
        slip = ttl_clock.slips(stamps, instants) if len(stamps) == len(instants) else {}
        self.stamps = dict(zip(instants, stamps))  # the last TTL job's, for ttl_probe.py
        ttl = ttl_clock.CLOCK.logical_ttl(parts[0][0].ttl_ms or 0)
        worst = max(slip.values(), default=0.0) - min(slip.values(), default=0.0)
        lost = 0
        for (_, cases), answer in zip(parts, answers):
            for c, case in enumerate(cases):
                why = ttl_clock.undecided(case.instants, ttl, slip)
                if why is not None:
                    answer[c] = Undecided(why)
                    lost += 1
        print(f"converge flink adapter: TTL job {self.jobs}: {len(stamps)} probe stamps for {len(instants)} "
              f"instants, the clock's slips spread over {worst:.0f} ms, {lost} cases not decided",
              file=sys.stderr, flush=True)

    def _register(self, p: InputPlan, view: str, stream: Any, times: list[int], schema_type: Any,
                  modes: Any) -> None:
        """Input `p`'s stream as the temporary view `view`: its changelog mode, its key, its rowtime."""
        names = _names(p)
        schema = schema_type.new_builder()
        key = [names[0]] + [names[1 + j] for j in p.primary_key]
        for name, ctype in zip(names, ["INTEGER", *p.types]):
            dtype = _data_type(ctype)
            schema.column(name, dtype.not_null() if p.primary_key and name in key else dtype)
        if p.primary_key:
            schema.primary_key(*key)
        if p.time_column is not None:
            rowtime = f"t{p.view}rt"
            schema.column_by_expression(rowtime, f"TO_TIMESTAMP_LTZ(t{p.view}c{p.time_column}, 3)")
            # Never late: the delay spans every time of the job, so the watermark passes no row
            # before the bounded source ends (its final watermark then flushes outer padding).
            delay = max(times, default=0) - min(times, default=0) + 1
            schema.watermark(rowtime, f"TO_TIMESTAMP_LTZ(t{p.view}c{p.time_column} - {delay}, 3)")
        mode = getattr(modes, _MODES[p.mode])()
        self.t_env.create_temporary_view(view, self.t_env.from_changelog_stream(stream, schema.build(), mode))

    def _free_stream(self, p: InputPlan, cases: list[PlannedCase], times: list[int]) -> Any:
        """Input `p` as its own collection source (arrival "free": Flink interleaves the sources as data arrives)."""
        from pyflink.common import Row  # lazy: see __init__
        from pyflink.common.types import RowKind  # lazy: pyflink

        kinds = _row_kinds()
        rows = [Row.of_kind(kinds[r[0]], index, *r[1:]) for index, case in enumerate(cases)
                for r in case.rows[p.view]]
        if not rows:  # from_collection needs a row: one of a case id no case has
            rows = [Row.of_kind(RowKind.INSERT, -1, *[_filler(t, min(times, default=0)) for t in p.types])]
        return self.env.from_collection(rows, type_info=self.types.ROW_NAMED(
            _names(p), [self.types.INT()] + [_TYPE_INFOS[t](self.types)() for t in p.types]))

    def _paced_streams(self, parts: list[tuple[Shape, list[PlannedCase]]], gap: int | None = None) -> list[list[Any]]:
        """Every input of every part from ONE checkpoint-gated source, in the rounds of arrival.rounds (see there
        why); per part, one stream per input.

        The job's inputs are numbered across the parts (the source's view, its tag); its cases too (part after
        part), but a case's id in its rows is its index within its part (Shape.query adds the part's base to the
        output's). The source's rows are wide: a tag (the view, -1 for a filler), the
        case id, then the columns of every input, the other inputs' columns holding fillers. A changelog view
        over it (mode `all`) is filtered by tag into one stream per input, which then gets its own changelog
        mode and key."""
        from pyflink.common import Row  # lazy: see __init__
        from pyflink.datastream import DataStream  # lazy: pyflink
        from pyflink.table.expressions import col  # lazy: pyflink

        kinds = _row_kinds()
        inputs = [(n, p) for n, (s, _) in enumerate(parts) for p in s.inputs]
        firsts = [sum(len(s.inputs) for s, _ in parts[:n]) for n in range(len(parts))]
        all_types = [t for _, p in inputs for t in p.types]
        all_names = ["tag", "cid"] + [f"s{n}{name}" for n, p in inputs for name in _names(p)[1:]]
        fillers = [_filler(t, 0) for t in all_types]
        first = min((t for _, cases in parts for case in cases for t in case.times), default=0)
        dummies = [_filler(t, first) for t in all_types]  # a lead's time: never ahead of a case's row
        offsets = [sum(len(q.types) for _, q in inputs[:g]) for g in range(len(inputs))]
        orders = [[(firsts[n] + view, row) for view, row in case.order]
                  for n, (_, cases) in enumerate(parts) for case in cases]
        local = [index for _, cases in parts for index in range(len(cases))]  # a case's id within its part
        shape = parts[0][0]
        bundle = shape.mini_batch[0] if shape.mini_batch else None
        merge = self.pacing.merges_runs(shape.job.parallelism)
        checkpoints = self.env.get_checkpoint_config()
        if shape.ttl_ms is not None:  # a round per checkpoint interval, on the wall clock's grid (ttl_clock.py)
            laid = ttl_clock.timed_rounds(orders, [case.instants for _, cases in parts for case in cases], len(inputs))
        elif gap is None:
            laid = rounds(orders, len(inputs), bundle, self.pacing.guard, merge)
        else:
            laid = restart_rounds(orders, len(inputs), bundle, self.pacing.guard, shape.job.restart_after, gap,
                                  merge)[0]
        rows = []
        for members in laid:
            for slot in members:
                if slot is None:
                    rows.append(Row.of_kind(kinds["+I"], -1, -1, *fillers))
                    continue
                case, view, change = slot
                values = list(fillers if case >= 0 else dummies)  # the lead's and restart.py's markers
                values[offsets[view]:offsets[view] + len(change) - 1] = change[1:]
                # each input's dummy has a case id of its own (-1, -2, ...): dummies never meet in a join,
                # so no condition is evaluated on them (a division by a filler 0 would fail the job)
                rows.append(Row.of_kind(kinds[change[0]], view, local[case] if case >= 0 else
                                        case if case != LEAD else LEAD - view, *values))
        type_info = self.types.ROW_NAMED(all_names, [self.types.INT(), self.types.INT()]
                                         + [_TYPE_INFOS[t](self.types)() for t in all_types])
        jvm = self.jvm
        width = len(laid[0])
        self.laid = (len(laid), width)
        gated = jvm.org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy.perCheckpoint(width)
        ttl = shape.ttl_ms is not None  # a TTL job's trigger follows its grid alone: no pause after a completion
        checkpoints.set_checkpoint_interval(ttl_clock.CLOCK.round_ms if ttl else self.pacing.interval_ms)
        checkpoints.set_min_pause_between_checkpoints(0 if ttl else self.pacing.pause(width, bundle is not None))
        function = jvm.org.apache.flink.connector.datagen.functions.FromElementsGeneratorFunction(
            type_info.get_java_type_info(), self.env._j_stream_execution_environment.getConfig(),
            self._java_rows(rows, type_info))
        source = jvm.org.apache.flink.connector.datagen.source.DataGeneratorSource(
            function, len(rows), gated, type_info.get_java_type_info())
        no_watermarks = jvm.org.apache.flink.api.common.eventtime.WatermarkStrategy.noWatermarks()
        # at the environment's parallelism, which parallel.before_arrival set back to 1 for this job
        wide = DataStream(self.env._j_stream_execution_environment.fromSource(source, no_watermarks, "arrival"))
        table = self.t_env.from_changelog_stream(wide)
        streams: list[list[Any]] = [[] for _ in parts]
        for g, (n, p) in enumerate(inputs):
            picked = [col("cid").alias(_names(p)[0])] + [
                col(all_names[2 + offsets[g] + j]).alias(name) for j, name in enumerate(_names(p)[1:])]
            streams[n].append(self.t_env.to_changelog_stream(table.filter(col("tag") == g).select(*picked)))
        return streams

    def _java_rows(self, rows: list[Any], type_info: Any) -> Any:
        """The rows as a Java list of Java Rows (row kinds kept), converted in a few py4j calls.

        PyFlink's own from_collection route: pickle to a file, let Java read and convert it into a
        collection input format; its private collection is then read by reflection."""
        import tempfile  # lazy: only this path writes a file

        internal = [type_info.to_internal_type(row) for row in rows]
        folder = tempfile.mkdtemp(prefix="converge-arrival-")
        path = os.path.join(folder, "rows")
        try:
            with open(path, "wb") as handle:
                self.env.serializer.serialize(internal, handle)
            objects = self.jvm.PythonBridgeUtils.readPythonObjects(path)
        finally:
            os.unlink(path)
            os.rmdir(folder)
        fmt = self.jvm.org.apache.flink.streaming.api.utils.PythonTypeUtils.getCollectionInputFormat(
            objects, type_info.get_java_type_info(), self.env._j_stream_execution_environment.getConfig())
        field = fmt.getClass().getDeclaredField("dataSet")
        field.setAccessible(True)
        return field.get(fmt)

    def _collect(self, sql: str) -> str:
        """The whole result in one py4j call: the Java list's text, `[+I[json], -D[json], ...]`."""
        result = self.t_env.sql_query(sql).execute()
        self.last_job_id = result._j_table_result.getJobClient().get().getJobID()
        iterator = result._j_table_result.collect()
        try:
            rows = self.jvm.org.apache.flink.util.CollectionUtil.iteratorToList(iterator)
            return str(self.jvm.java.lang.String.valueOf(rows))
        finally:
            iterator.close()


def _names(p: InputPlan) -> list[str]:
    """Input p's column names in Flink: its case id, then its columns by position."""
    return [f"t{p.view}cid"] + [f"t{p.view}c{j}" for j in range(len(p.types))]


def _row_kinds() -> dict[str, Any]:
    from pyflink.common.types import RowKind  # lazy: pyflink

    return {"+I": RowKind.INSERT, "-U": RowKind.UPDATE_BEFORE, "+U": RowKind.UPDATE_AFTER, "-D": RowKind.DELETE}


_TYPE_INFOS = {"BIGINT": lambda types: types.LONG, "INTEGER": lambda types: types.INT,
               "DOUBLE": lambda types: types.DOUBLE, "VARCHAR": lambda types: types.STRING,
               "BOOLEAN": lambda types: types.BOOLEAN}


def _data_type(ctype: str) -> Any:
    from pyflink.table import DataTypes  # lazy: pyflink

    return {"BIGINT": DataTypes.BIGINT, "INTEGER": DataTypes.INT, "DOUBLE": DataTypes.DOUBLE,
            "VARCHAR": DataTypes.STRING, "BOOLEAN": DataTypes.BOOLEAN}[ctype]()


def _filler(ctype: str, time: int) -> Any:
    return {"BIGINT": time, "INTEGER": 0, "DOUBLE": 0.0, "VARCHAR": "", "BOOLEAN": False}[ctype]


class Undecided:
    """A TTL case's answer when the measured clock leaves its expiry undecided (ttl_clock.undecided): why."""

    def __init__(self, message: str) -> None:
        self.message = message


def _stamp_ms(text: str) -> float:
    """A CURRENT_TIMESTAMP text (session time zone UTC, time_attributes.TIME_ZONE) in epoch milliseconds."""
    from datetime import datetime, timezone  # lazy: only a TTL job reads stamps

    return datetime.strptime(text[:23], "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=timezone.utc).timestamp() * 1000


def _changelogs(text: str, n_cases: int, keep: int | None = None) -> dict[int, list[list[Any]]]:
    """Split the job's changelog text into each case's changelog, [kind, value, ...] in emission order (and the
    rows of case id `keep`, which is no case: a TTL job's probe)."""
    decoder = json.JSONDecoder()
    out: dict[int, list[list[Any]]] = {case: [] for case in range(n_cases)}
    if keep is not None:
        out[keep] = []
    pos = 1 if text.startswith("[") else 0
    while pos < len(text) and text[pos] != "]":
        kind = text[pos:pos + 2]
        if kind not in ("+I", "+U", "-U", "-D") or text[pos + 2] != "[":
            raise FlinkJobError(f"cannot read Flink's result at {text[pos:pos + 40]!r}")
        value, end = decoder.raw_decode(text, pos + 3)
        if text[end] != "]":
            raise FlinkJobError(f"cannot read Flink's result at {text[end:end + 40]!r}")
        pos = end + 1
        if text.startswith(", ", pos):
            pos += 2
        case, row = value[0], value[1:]
        if isinstance(case, int) and (0 <= case < n_cases or case == keep):  # -1: the filler row of an empty input
            out[case].append([kind, *row])
    return out


def fold(changelog: list[list[Any]]) -> list[list[Any]]:
    """A changelog's final multiset (+I/+U add a row, -U/-D remove one), rows sorted by their JSON text."""
    bag: dict[str, int] = defaultdict(int)
    for kind, *row in changelog:
        bag[json.dumps(row)] += 1 if kind[0] == "+" else -1
    rows: list[list[Any]] = []
    for row, count in sorted(bag.items()):
        if count < 0:
            raise FlinkJobError(f"Flink retracted a row it never emitted: {row} ({count})")
        rows.extend(json.loads(row) for _ in range(count))
    return rows


def _drain_gateway_stderr() -> None:
    """PyFlink starts the JVM with stderr=PIPE and never reads it; copy it to our stderr so it never fills."""
    from pyflink import java_gateway  # lazy: see FlinkSession

    launch = java_gateway.launch_gateway_server_process

    def launch_and_drain(*args: Any, **kwargs: Any) -> Any:
        process = launch(*args, **kwargs)

        def pump() -> None:
            for line in iter(process.stderr.readline, b""):
                sys.stderr.buffer.write(line)
                sys.stderr.flush()
        threading.Thread(target=pump, daemon=True, name="jvm-stderr").start()
        return process
    java_gateway.launch_gateway_server_process = launch_and_drain


