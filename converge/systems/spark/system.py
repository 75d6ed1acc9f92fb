"""Spark's native join as a system under test (`--system spark`).

One SparkSession serves the whole campaign (a JVM takes seconds to start);
each case gets `spark.newSession()` — its own SQL conf with no-data
micro-batches on (they are what emits outer rows once the watermark passes;
converge's Spark runtime turns them off) and the case's watermark policy —
and runs as one streaming query: two Parquet file sources read one file per
trigger (`availableNow`), `withWatermark` per input, the join, and a
`foreachBatch` sink that keeps each epoch's output by batch id. Per epoch the
query's progress gives the watermark in effect and the join's state rows.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from converge import renamed
from converge.engine.model.errors import ApiMisuseError, SystemUnderTestError
from converge.engine.model.native_join_case import Epoch, NativeJoinCase, NativeRun
from converge.systems.spark.query import (
    SPARK_JOIN,
    build_inputs,
    column,
    join_condition,
    write_inputs,
)

HDFS_PROVIDER = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
DEFAULT_CONCURRENCY = 4   # queries at once in `run_many` (docs/spark.md, "Many cases at once"; measured there)


def millis(iso: str | None) -> int | None:
    """Spark's progress timestamp (ISO, UTC) in ms, exactly (a float product would turn 16.188 s into 16187)."""
    if not iso:
        return None
    return (datetime.fromisoformat(iso.replace("Z", "+00:00")) - EPOCH) // timedelta(milliseconds=1)


def _reason(exc: BaseException) -> str:
    text = str(getattr(exc, "getMessage", lambda: str(exc))() if hasattr(exc, "getMessage") else exc)
    return " ".join(text.strip().splitlines()[:1])[:400]


class NativeJoinSystem:
    """Spark Structured Streaming's stream-stream join on one local SparkSession.

    It runs native-join cases (engine/model/native_join_case.py), never converge scenarios: Spark's watermark
    follows the rows of each micro-batch, so a converge scenario's watermark events have no counterpart.
    """

    name = "spark"

    def __init__(self, *, shuffle_partitions: int = 1, codegen: bool = False) -> None:
        from pyspark import __version__ as pyspark_version  # lazy: starts nothing, but pyspark is optional

        from converge.engine.runtime.spark.session import get_spark  # lazy: imports pyspark

        self.version = pyspark_version
        self._base = get_spark()
        self._base.sparkContext.setLogLevel("ERROR")
        self._partitions = shuffle_partitions
        self._codegen = codegen
        self._work = Path(tempfile.mkdtemp(prefix="converge-spark-native-"))
        self._count = 0
        self._closed = False

    def close(self) -> None:
        """Remove the work folder; the SparkSession stays (it may be shared, as in the test suite)."""
        if not self._closed:
            shutil.rmtree(self._work, ignore_errors=True)
            self._closed = True

    @property
    def title(self) -> str:
        """`spark VERSION`, as reports show it."""
        return f"{self.name} {self.version}"

    def __enter__(self) -> NativeJoinSystem:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _session(self, case: NativeJoinCase) -> Any:
        session = self._base.newSession()
        for key, value in (("spark.sql.streaming.noDataMicroBatches.enabled", "true"),
                           ("spark.sql.streaming.multipleWatermarkPolicy", case.policy),
                           ("spark.sql.shuffle.partitions", str(self._partitions)),
                           ("spark.sql.streaming.numRecentProgressUpdates", "10000"),
                           ("spark.sql.session.timeZone", "UTC"),
                           # Spark's default store, which native joins use unless told otherwise (the runtime's
                           # RocksDB is for transformWithState); a few seconds faster per case here
                           ("spark.sql.streaming.stateStore.providerClass", HDFS_PROVIDER),
                           # every row read is counted in numInputRows (row groups of NULL keys are not skipped),
                           # so each epoch's input count shows which micro-batch it read
                           ("spark.sql.parquet.filterPushdown", "false"),
                           # a case's rows are a handful: compiling generated code for each new plan costs more than
                           # interpreting them (measured: 25-30% of a case, docs/spark.md "Many cases at once")
                           *(() if self._codegen else (("spark.sql.codegen.wholeStage", "false"),
                                                       ("spark.sql.codegen.factoryMode", "NO_CODEGEN")))):
            session.conf.set(key, value)
        return session

    def run_native(self, case: NativeJoinCase) -> NativeRun:
        """Run one case as one streaming query; a query Spark rejects is `unsupported` with Spark's reason."""
        return self.run_many([case], concurrency=1)[0]

    def run_many(self, cases: Sequence[NativeJoinCase], *, concurrency: int = DEFAULT_CONCURRENCY) -> list[NativeRun]:
        """Run each case as its own streaming query, up to `concurrency` of them at once in this session.

        Each query keeps its own session conf, inputs, watermark, state store and sink, so each case's run is the
        one `concurrency=1` gives (tests/systems/spark/test_concurrent_cases.py compares them); what overlaps is the
        latency of their micro-batches (planning, state commits, checkpoint files), which leaves a core idle
        while one query runs alone. Results come back in the order of `cases`.
        """
        if self._closed:
            raise SystemUnderTestError("the spark system is closed")
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ApiMisuseError(f"run_many(concurrency={concurrency!r}): expected a positive integer")
        results: list[NativeRun | None] = [None] * len(cases)
        running: list[tuple[int, _Pending]] = []
        try:
            for i, case in enumerate(cases):
                while len(running) >= concurrency:
                    j, pending = running.pop(0)
                    results[j] = self._finish(pending)
                started = self._start(case)
                if isinstance(started, NativeRun):
                    results[i] = started
                else:
                    running.append((i, started))
            while running:
                j, pending = running.pop(0)
                results[j] = self._finish(pending)
        finally:
            for _, pending in running:  # a failure stopped the loop: stop the others, remove their files
                pending.abandon()
        return [r for r in results if r is not None]

    def _start(self, case: NativeJoinCase) -> _Pending | NativeRun:
        from pyspark.errors import AnalysisException  # lazy: pyspark is optional
        from pyspark.sql import functions as F  # lazy: as above

        started = time.perf_counter()
        self._count += 1
        folder = self._work / f"case-{self._count}"
        inputs = build_inputs(case, folder)
        write_inputs(inputs, float(int(time.time())) - len(case.batches) - 10)
        session = self._session(case)
        frames = {}
        for side in ("left", "right"):
            spec = case.input(side)
            schema = ", ".join(f"{c} BIGINT" for c in ("_id", *spec.columns))
            df = (session.readStream.schema(schema).option("maxFilesPerTrigger", 1)
                  .parquet(str(inputs.folders[side])))
            df = df.select(*(F.col(c).alias(column(side, c)) for c in ("_id", *spec.columns)))
            df = df.withColumn(column(side, "_ts"), F.timestamp_millis(F.col(column(side, spec.time))))
            frames[side] = df.withWatermark(column(side, "_ts"), f"{spec.delay_ms} milliseconds")
        joined = frames["left"].join(frames["right"], F.expr(join_condition(case)), SPARK_JOIN[case.join])
        semi = case.join in ("left_semi", "left_anti")
        ids = [column("left", "_id")] + ([] if semi else [column("right", "_id")])
        collected: dict[int, list[tuple]] = {}

        def sink(df: Any, batch_id: int) -> None:
            collected[batch_id] = [tuple(r) for r in df.collect()]

        try:
            query = (joined.select(*ids).writeStream.outputMode("append").foreachBatch(sink)
                     .option("checkpointLocation", str(folder / "checkpoint")).trigger(availableNow=True).start())
        except AnalysisException as exc:
            shutil.rmtree(folder, ignore_errors=True)
            return NativeRun("unsupported", message=f"Spark rejects the query: {_reason(exc)}",
                             seconds=time.perf_counter() - started)
        return _Pending(case, query, folder, collected, (inputs.sentinel_ids["left"], inputs.sentinel_ids["right"]),
                        semi, started)

    def _finish(self, pending: _Pending) -> NativeRun:
        from pyspark.errors import StreamingQueryException  # lazy: pyspark is optional

        case, query = pending.case, pending.query
        try:
            query.awaitTermination()
            progress = list(query.recentProgress)
        except StreamingQueryException as exc:
            raise SystemUnderTestError(f"Spark's query failed on case {case.name!r}: {_reason(exc)}") from None
        finally:
            pending.abandon()
        epochs = []
        sentinel, collected = pending.sentinel, pending.collected
        for p in sorted(progress, key=lambda p: p.batchId):
            rows = collected.get(p.batchId, [])
            pairs = [(r[0], None if pending.semi else r[1]) for r in rows]
            pairs = [pr for pr in pairs if pr[0] != sentinel[0] and pr[1] != sentinel[1]]
            ops = p.stateOperators
            epochs.append(Epoch(p.batchId, tuple(pairs), millis((p.eventTime or {}).get("watermark")),
                                ops[0].numRowsTotal if ops else None, p.numInputRows))
        missing = sorted(set(collected) - {e.batch_id for e in epochs})
        if missing:
            raise SystemUnderTestError(f"Spark's progress lost the epochs {missing} of case {case.name!r}")
        return NativeRun("ok", tuple(epochs), seconds=time.perf_counter() - pending.started)


@dataclass
class _Pending:
    """A started query of one case, and what its sink has collected so far."""

    case: NativeJoinCase
    query: Any
    folder: Path
    collected: dict[int, list[tuple]]
    sentinel: tuple[int, int]
    semi: bool
    started: float

    def abandon(self) -> None:
        """Stop the query if it still runs and remove its files."""
        try:
            if self.query.isActive:
                self.query.stop()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


if not TYPE_CHECKING:  # its names before the 0.3 renames (converge.RENAMED) answer until 0.4, with a warning
    __getattr__ = renamed(__name__)
