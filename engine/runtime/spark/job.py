"""Scenarios as one Spark Structured Streaming query: one transformWithState operator per plan stage.

    source files (one per micro-batch)
      -> stage 0: groupBy("node|bucket").transformWithState(StageProcessor)   [RocksDB state, checkpointed]
      -> stage 1: union(its source rows, stage 0's output) -> groupBy("node|bucket").transformWithState ...
      -> last stage's output (roots' changes) -> foreachBatch: Parquet, one folder per batch id

A stage holds every plan node of that height, of every scenario in the job,
so a chain (ChangelogNormalize -> join, or join -> join) is one stateful
operator per level, and many small scenarios share one query (Spark's cost
is per query and per micro-batch, not per scenario). The sink is idempotent
per batch id: a batch that Spark re-runs after a crash replaces its own
output, so nothing is lost and nothing duplicated. The output is read back
as one list of changes per scenario event, like the local runtime's.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from pyspark.sql import functions as F

from converge.engine.model.changelog import Change, OutputWatermark
from converge.engine.model.errors import ApiMisuseError, BadInputError, ConvergeError, UnsupportedError
from converge.engine.model.scenario import Scenario, WatermarkEvent
from converge.engine.model.scenario_json import scenario_to_dict
from converge.engine.operators.base import Operator, OperatorContext
from converge.engine.planner import PlanNode
from converge.engine.planner import plan as make_plan
from converge.engine.runtime.local import RunResult
from converge.engine.runtime.spark.clocks import Clocks, node_clocks
from converge.engine.runtime.spark.processor import (
    DEFAULT_BUCKETS,
    ERROR_KINDS,
    ROW_SCHEMA,
    JobSpec,
    NodeRef,
    StageProcessor,
    node_of,
)
from converge.engine.runtime.spark.session import ROCKSDB_PROVIDER, get_spark
from converge.engine.runtime.spark.source import (
    SOURCE_SCHEMA,
    batch_bounds,
    batch_columns,
    encode_events,
    mtime_base,
    write_batch_file,
)
from converge.engine.state import KeyedStateBackend


class UnsupportedOnSpark(UnsupportedError):
    """The scenario needs something the Spark runtime does not run yet (docs/spark.md says what)."""


def uses_time(op: Operator) -> bool:
    """Whether an operator reacts to timers or watermarks (it overrides on_timer / on_watermark).

    A node that buffers across keys (the mini-batch join) flushes on a watermark, but runs grouped by
    node alone, not as a time-driven node: scenarios that would give it a watermark are refused
    (refuse_buffering)."""
    cls = type(op)
    return cls.on_timer is not Operator.on_timer or (cls.on_watermark is not Operator.on_watermark
                                                     and not op.buffers_across_keys)


def time_driven(scenario: Scenario, nodes: Sequence[PlanNode]) -> bool:
    """Whether the plan is time-driven; refuses the time-driven shapes the Spark runtime cannot run.

    A time-driven operator must be the plan's only node (it reads the
    scenario's inputs directly, as an interval join does), so its watermark
    is computed from the events alone; and `semantics=flink` is refused for
    it, because Flink's interval join shares a field across all keys, which a
    partitioned runtime cannot reproduce."""
    timed = [n for n in nodes if uses_time(n.operator)]
    if not timed:
        return False
    name = timed[0].describe or timed[0].name
    if len(nodes) != 1:
        raise UnsupportedOnSpark(f"{name}: a time-driven operator runs on Spark only as the plan's single node")
    if scenario.config.semantics != "correct":
        raise UnsupportedOnSpark(f"{name}: semantics={scenario.config.semantics!r} shares operator state across "
                                 f"keys, which the Spark runtime cannot reproduce; use semantics=correct")
    return True


def check_supported(scenario: Scenario, nodes: Sequence[PlanNode]) -> bool:
    """Raise UnsupportedOnSpark if the Spark runtime cannot run this plan; else whether it is time-driven."""
    shared = sorted({spec.source for spec in scenario.inputs if spec.source is not None})
    if shared:  # valid input (a self-join): the source rows go to one entry per input name, not to each reader
        raise UnsupportedOnSpark(f"input {shared[0]!r} is read by several inputs (`source`, a self-join), which "
                                 f"the Spark runtime does not fan out yet; run it on the local runtime")
    refuse_buffering(scenario, nodes)
    return time_driven(scenario, nodes)


def refuse_buffering(scenario: Scenario, nodes: Sequence[PlanNode]) -> None:
    """A node that buffers records of many keys (the mini-batch join) runs grouped by node alone, with
    processing time and the end of the input in-band (processor.py); a watermark would flush its bundle
    at the node's combined watermark, which the stages do not compute for it yet, so such a scenario is
    refused."""
    buffering = [n for n in nodes if n.operator.buffers_across_keys]
    if buffering and any(isinstance(e, WatermarkEvent) for e in scenario.events):
        name = buffering[0].describe or buffering[0].name
        raise UnsupportedOnSpark(f"{name}: a watermark flushes the mini-batch bundle, which the Spark runtime "
                                 f"does not run yet (docs/minibatch.md); drop the watermark events")


def _height(node: PlanNode) -> int:
    children = [c for c in node.inputs if isinstance(c, PlanNode)]
    return 0 if not children else 1 + max(_height(c) for c in children)


def add_output_watermarks(scenario: Scenario, clocks: Clocks, per_event: list[list]) -> None:
    """Append what the node's on_watermark emits at each watermark rise, after that event's timer output.

    on_watermark is not keyed, so the driver calls it on its own copy of the
    operator, in event order, as the local runtime does after firing timers."""
    (node,) = make_plan(scenario).nodes()
    ctx = OperatorContext(KeyedStateBackend(scenario.config.map_state_order))
    node.operator.open(ctx)
    for seq, wm in zip(clocks.wm_seq, clocks.wm_value, strict=False):
        ctx.watermark = wm
        ctx.state.now = clocks.processing_time_at(seq)
        for item in node.operator.on_watermark(wm, ctx):
            if not isinstance(item, OutputWatermark):
                raise UnsupportedOnSpark(f"on_watermark emitted {item!r}; on Spark it may emit watermarks only")
            per_event[seq].append(item)


LAYOUT_FILE = "converge-layout.json"   # in the checkpoint folder; Spark ignores files it does not know
LAYOUT_VERSION = 2                      # 1: one key group per key (no file); 2: keys hashed into buckets


def check_buckets(buckets: Any) -> int:
    """The bucket count a job was given, validated where it is loaded."""
    if isinstance(buckets, bool) or not isinstance(buckets, int) or buckets < 1:
        raise ApiMisuseError(f"buckets must be a whole number of at least 1, not {buckets!r}")
    return buckets


def check_layout(checkpoint: Path, buckets: int) -> None:
    """Refuse to continue a checkpoint whose state was grouped differently, or record the layout of a new one.

    The grouping column decides under which group Spark keeps each key's
    state: with another bucket count (or the per-key groups of an older
    version) the keys would silently start from empty state."""
    marker = checkpoint / LAYOUT_FILE
    wanted = {"version": LAYOUT_VERSION, "buckets": buckets}
    if marker.exists():
        found = json.loads(marker.read_text())
        if found != wanted:
            raise ApiMisuseError(f"the checkpoint {checkpoint} groups keys as {found}, this job as {wanted}: "
                                 f"run it with buckets={found.get('buckets')} or start from a new checkpoint")
        return
    if (checkpoint / "offsets").exists():
        raise ApiMisuseError(f"the checkpoint {checkpoint} was written by an older Spark runtime (one key group per "
                             f"key, no {LAYOUT_FILE}); its state cannot be regrouped: start from a new checkpoint")
    checkpoint.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps(wanted) + "\n")


class IdempotentParquetSink:
    """foreachBatch target: each batch's rows go to their own folder, overwritten if the batch runs again."""

    def __init__(self, path: Path, *, columns: Sequence[str] = ("key", "data"), fail_marker: str | None = None,
                 fail_after_batch: int | None = None) -> None:
        self.path = path
        self.columns = list(columns)
        self.fail_marker = fail_marker
        self.fail_after_batch = fail_after_batch

    def __call__(self, df: Any, batch_id: int) -> None:
        df.select(*self.columns).write.mode("overwrite").parquet(str(self.path / f"batch_id={batch_id:06d}"))
        if (self.fail_after_batch == batch_id and self.fail_marker is not None
                and os.path.exists(self.fail_marker)):
            raise RuntimeError(f"injected crash after the sink wrote batch {batch_id}, before Spark committed it")


def read_sink_rows(path: Path) -> list[tuple[str, bytes]]:
    """Every (key, data) row the sink holds, batch folder by batch folder."""
    rows: list[tuple[str, bytes]] = []
    for part in sorted(path.glob("batch_id=*/*.parquet")):
        table = pq.read_table(part, columns=["key", "data"])
        rows.extend(zip(table.column("key").to_pylist(), table.column("data").to_pylist(), strict=False))
    return rows


def decode_changelog(rows: Iterable[tuple[str, bytes]], sizes: Sequence[int]
                     ) -> tuple[list[list[list[Change]]], list[list[tuple[int, str, str]]]]:
    """Sink rows as, per scenario, one list of changes per event in the local runtime's order, and
    per scenario the errors the processors reported as (event index, message, error kind)."""
    items: list[list[tuple]] = [[] for _ in sizes]
    for key, blob in rows:
        items[-node_of(key) - 1].extend(pickle.loads(blob))
    per_event: list[list[list[Change]]] = []
    errors: list[list[tuple[int, str, str]]] = []
    for n, found in zip(sizes, items, strict=False):
        found.sort(key=lambda it: (it[0], it[1]))
        events: list[list[Change]] = [[] for _ in range(n)]
        errs: list[tuple[int, str, str]] = []
        for seq, _pos, kind, row in found:
            if kind in ERROR_KINDS:
                errs.append((seq, row, kind))
            else:
                events[seq].append(Change(kind, tuple(row)))
        per_event.append(events)
        errors.append(errs)
    return per_event, errors


class SparkJoinJob:
    """Scenarios on Spark in one streaming query: source files, checkpoint and sink under one work folder.

    `write_batches` and `run` are separate so tests can stop the query between
    micro-batches and restart it from its checkpoint with more input. Every
    scenario's events are split into the same number of micro-batches.
    """

    def __init__(self, scenarios: Sequence[Scenario], *, spark: Any = None, work_dir: str | Path | None = None,
                 batches: int | None = None, bounds: Sequence[int] | None = None,
                 fail_marker: str | None = None, fail_event: tuple[int, int] | None = None,
                 fail_after_batch: int | None = None, buckets: int | None = None) -> None:
        if not scenarios:
            raise ApiMisuseError("SparkJoinJob: a Spark job needs at least one scenario")
        if bounds is not None and len(scenarios) != 1:
            raise ApiMisuseError("SparkJoinJob: explicit batch bounds need exactly one scenario")
        self.scenarios = list(scenarios)
        self.buckets = check_buckets(DEFAULT_BUCKETS if buckets is None else buckets)
        count = batches if batches is not None else 1
        self.bounds = [batch_bounds(len(s.events), batches=count, bounds=bounds) for s in self.scenarios]
        self.n_batches = max(len(b) for b in self.bounds)
        refs: list[NodeRef] = []
        self.rows = []
        self.clocks: list[Clocks | None] = []
        for s_index, scenario in enumerate(self.scenarios):
            plan = make_plan(scenario)
            nodes = plan.nodes()
            clocks = None
            if check_supported(scenario, nodes):
                entry = {name: idx for name, (_node, idx) in plan.entry.items()}
                clocks = node_clocks(scenario, entry, len(nodes[0].inputs), self.bounds[s_index])
            self.clocks.append(clocks)
            first = len(refs)
            numbers = {id(n): (first + i, _height(n)) for i, n in enumerate(nodes)}
            for i, n in enumerate(nodes):
                parent = None if n.parent is None else numbers[id(n.parent)][0]
                refs.append(NodeRef(s_index, i, numbers[id(n)][1], parent, n.operator.buffers_across_keys))
            self.rows.append(encode_events(scenario, plan, numbers, s_index, clocks, self.buckets))
        self.stages = 1 + max(ref.stage for ref in refs)
        self.time_driven = any(c is not None for c in self.clocks)
        if self.time_driven and self.stages > 1:
            raise UnsupportedOnSpark("a job with a time-driven scenario must have single-node plans only "
                                     "(run_scenarios_on_spark runs them in a job of their own)")
        self.spec = JobSpec(tuple(scenario_to_dict(s.with_events(())) for s in self.scenarios), tuple(refs),
                            uuid.uuid4().hex, tuple(self.clocks) if self.time_driven else (), fail_marker,
                            fail_event, self.buckets)
        self.spark = spark
        self.owns_dir = work_dir is None
        self._root = Path(work_dir) if work_dir is not None else None
        self.fail_marker = fail_marker
        self.fail_after_batch = fail_after_batch
        self.batches_written = 0
        self.files_written = 0
        self._mtime = mtime_base()
        self.progress: list[dict] = []

    # ----------------------------------------------------------- folders
    @property
    def root(self) -> Path:
        """The work folder (made on first use; a temporary one unless work_dir was given)."""
        if self._root is None:
            self._root = Path(tempfile.mkdtemp(prefix="converge-spark-"))
        return self._root

    @property
    def source_dir(self) -> Path:
        return self.root / "source"

    @property
    def checkpoint_dir(self) -> Path:
        return self.root / "checkpoint"

    @property
    def sink_dir(self) -> Path:
        return self.root / "sink"

    # ----------------------------------------------------------- input
    def write_batches(self, upto: int | None = None) -> int:
        """Write the source files of batches [written so far, upto); returns how many files were added."""
        upto = self.n_batches if upto is None else min(upto, self.n_batches)
        added = 0
        for b in range(self.batches_written, upto):
            if write_batch_file(self.batch_columns(b), self.source_dir / f"batch-{b:06d}.parquet", self._mtime + b):
                added += 1
        self.batches_written = max(self.batches_written, upto)
        self.files_written += added
        return added

    def batch_columns(self, b: int) -> dict[str, list]:
        """Source columns of micro-batch b (scenario, seq, stage, node, key, data, etime)."""
        parts = [(rows, *bounds[b]) for rows, bounds in zip(self.rows, self.bounds, strict=False) if b < len(bounds)]
        return batch_columns(parts, b, tick=self.time_driven)

    # ----------------------------------------------------------- query
    def build_query(self, source: Any) -> Any:
        """The streaming DataFrame of the last stage's output (roots' changes).

        A time-driven job runs in EventTime mode with the micro-batch number as
        event time (watermark delay 0): Spark's watermark then says which
        micro-batches are done, which is what a timer needs to be woken."""
        columns = ["key", "data"]
        mode = "None"
        if self.time_driven:
            source = source.withWatermark("etime", "0 seconds")
            columns.append("etime")
            mode = "EventTime"
        df = None
        for stage in range(self.stages):
            entering = source.filter(F.col("stage") == stage).select(*columns)
            df = entering if df is None else df.unionByName(entering)
            df = df.groupBy("key").transformWithState(StageProcessor(self.spec, stage), ROW_SCHEMA, "Append", mode)
        return df

    def run(self) -> None:
        """Process every source file written so far (availableNow), continuing from the checkpoint."""
        if self.files_written == 0 and not self.checkpoint_dir.exists():
            return                                   # no change event at all: nothing for Spark to do
        check_layout(self.checkpoint_dir, self.buckets)   # before a JVM starts: a refusal is cheap
        spark = self.spark or get_spark()
        self.spark = spark
        if spark.conf.get("spark.sql.streaming.stateStore.providerClass", "") != ROCKSDB_PROVIDER:
            spark.conf.set("spark.sql.streaming.stateStore.providerClass", ROCKSDB_PROVIDER)
        source = (spark.readStream.schema(SOURCE_SCHEMA).option("maxFilesPerTrigger", 1)
                  .parquet(str(self.source_dir)))
        sink = IdempotentParquetSink(self.sink_dir, fail_marker=self.fail_marker,
                                     fail_after_batch=self.fail_after_batch)

        def start_and_wait() -> None:
            query = (self.build_query(source).writeStream.foreachBatch(sink)
                     .option("checkpointLocation", str(self.checkpoint_dir)).trigger(availableNow=True).start())
            try:
                query.awaitTermination()
            finally:
                self.progress.extend(query.recentProgress)
                if query.isActive:
                    query.stop()

        retry_worker_connect(start_and_wait)

    # ----------------------------------------------------------- output
    def results(self, sink_rows: Iterable[tuple[str, bytes]] | None = None) -> list[RunResult | ConvergeError]:
        """Per scenario: its RunResult, or the error of its first rejected event (bad input, or a
        NonTerminationError when a timer kept firing)."""
        rows = read_sink_rows(self.sink_dir) if sink_rows is None else sink_rows
        per_event, errors = decode_changelog(rows, [len(s.events) for s in self.scenarios])
        out: list[RunResult | ConvergeError] = []
        for scenario, events, errs, clocks in zip(self.scenarios, per_event, errors, self.clocks, strict=False):
            if errs:
                seq, message, kind = min(errs)
                error = ERROR_KINDS[kind]
                out.append(BadInputError(message, event_index=seq) if error is BadInputError else error(message))
                continue
            if clocks is not None:
                add_output_watermarks(scenario, clocks, events)
            out.append(RunResult(scenario, events))
        return out

    def result(self, index: int = 0) -> RunResult:
        outcome = self.results()[index]
        if isinstance(outcome, ConvergeError):
            raise outcome
        return outcome

    def cleanup(self) -> None:
        if self.owns_dir and self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)


# Spark's message when a Python worker it forked does not connect back to the JVM within the 10 s fixed in its
# code (PythonWorkerFactory; docs/spark.md, "Spark on a loaded machine"): a loaded machine's, not the job's, failure.
WORKER_CONNECT_FAILURE = "Python worker failed to connect back"
worker_connect_retries = 0  # how many runs were started again after it (a campaign's closing note counts them)
# Starts after the first: a worker's connect-back misses its 10 s when the machine's load peaks (JVMs of other jobs
# starting). Seen here: one start failing at load 12-15 (issue 41 row 9), two in a row at load 20-30 (the suite
# under .ci/under-load beside other jobs), so a few more starts, each after a pause that lets a peak pass.
WORKER_CONNECT_RETRIES = 3
WORKER_CONNECT_PAUSE_S = (2.0, 5.0, 10.0)


def retry_worker_connect(start_and_wait: Callable[[], None], *, say: Callable[[str], None] | None = None,
                         sleep: Callable[[float], None] = time.sleep) -> None:
    """Run the query; when it fails because a Python worker did not connect back in time, run it again from its
    checkpoint (the sink is idempotent per batch id, so a batch written before the failure is not doubled), up to
    WORKER_CONNECT_RETRIES times. Any other failure, or the same one on the last start, is raised as it came
    (issue 41 row 9: loaded CI runners went red)."""
    global worker_connect_retries
    for attempt in range(WORKER_CONNECT_RETRIES + 1):
        try:
            start_and_wait()
            return
        except Exception as exc:  # noqa: BLE001 - Py4J's and PySpark's error classes: told apart by their message
            if WORKER_CONNECT_FAILURE not in str(exc) or attempt == WORKER_CONNECT_RETRIES:
                raise
        worker_connect_retries += 1
        pause = WORKER_CONNECT_PAUSE_S[attempt]
        (say or _stderr)(f"spark: a Python worker failed to connect back to the JVM (a loaded machine); the query runs "
                         f"again from its checkpoint in {pause:g} s (retry {attempt + 1} of {WORKER_CONNECT_RETRIES}; "
                         f"{worker_connect_retries} such retries so far in this process)")
        sleep(pause)


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def split_by_time(scenarios: Sequence[Scenario]) -> dict[bool, list[int]]:
    """Indexes of the scenarios without and with a time-driven plan (they need separate queries)."""
    groups: dict[bool, list[int]] = {False: [], True: []}
    for i, scenario in enumerate(scenarios):
        groups[time_driven(scenario, make_plan(scenario).nodes())].append(i)
    return groups


def run_scenarios_on_spark(scenarios: Sequence[Scenario], *, work_dir: str | Path | None = None,
                           **options: Any) -> list[RunResult | ConvergeError]:
    """Run several scenarios on Spark; per scenario a RunResult or the error that ended it.

    Scenarios without time-driven operators share one query; time-driven ones
    (interval joins) run in a second query, in EventTime mode."""
    out: list[Any] = [None] * len(scenarios)
    for timed, indexes in split_by_time(scenarios).items():
        if not indexes:
            continue
        folder = None if work_dir is None else Path(work_dir) / ("time" if timed else "plain")
        job = SparkJoinJob([scenarios[i] for i in indexes], work_dir=folder, **options)
        try:
            job.write_batches()
            job.run()
            for i, result in zip(indexes, job.results(), strict=False):
                out[i] = result
        finally:
            job.cleanup()
    return out


def run_scenario_on_spark(scenario: Scenario, *, spark: Any = None, batches: int | None = None,
                          bounds: Sequence[int] | None = None, work_dir: str | Path | None = None,
                          buckets: int | None = None) -> RunResult:
    """Run every event of a scenario on Spark: one list of output changes per event, like the local runtime.

    `batches` splits the events evenly into that many micro-batches, `bounds`
    names the first event of each later batch; by default the whole scenario
    is one micro-batch.
    """
    (outcome,) = run_scenarios_on_spark([scenario], spark=spark, batches=batches, bounds=bounds,
                                        work_dir=work_dir, buckets=buckets)
    if isinstance(outcome, ConvergeError):
        raise outcome
    return outcome
