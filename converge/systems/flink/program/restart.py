"""A job stopped with a savepoint part-way through its input and restored from it (the `restart_after` option).

Standard library and pyflink only (part of the Flink adapter program; the layout is pure Python, so the
tests import it without Java).

How (docs/flink.md "Restarts"): the job's one paced source (arrival.py) emits, in this order, the rounds of
every case's first changes (`restart_after` of them; for a mini-batch join rounded up to a whole bundle,
because a savepoint flushes the bundle as any checkpoint does), one round holding a MARKER record, `gap`
rounds of fillers, a second lead (the gap's end), then the rounds of the remaining changes. Job 1 runs that
source; the marker goes through the query unjoined (a UNION ALL branch) into the collect sink, and when the
client reads it the adapter stops the job with a savepoint (`JobClient.stopWithSavepoint`, no drain: no end
of input, no final watermark). The source is then somewhere in the gap. Job 2 is the same query over the
same source, restored from the savepoint (the restore path option, unclaimed state refused): the source
continues where it stopped, the join starts from its saved state. The case's changelog is job 1's rows,
then job 2's. The collect sink's state is dropped from the savepoint first (drop_collect_state: why).

Why a gap: the client sees the marker only after the checkpoint that covers it has completed, and the
savepoint's barrier follows a little later; meanwhile the gate lets one round through per checkpoint.
Fillers there change nothing (they reach no join). A second marker ends the gap: if job 1 emitted it, the
savepoint came too late, and the run is repeated with a wider gap.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any, TypeVar

from arrival import LEAD, Event, Slot, rounds  # the program's folder is on sys.path

MARKER = -1000            # the case id of the marker records (no case has it; below every dummy's)
GAP_END = -1001           # the case id of the record that ends the gap
GAP = 60                  # filler rounds between the marker and the rest of the input (grows on a miss)
TRIES = 3                 # runs with a wider gap each before the adapter gives up
STOP_TIMEOUT_S = 120      # the savepoint must be taken within this


T = TypeVar("T")


class RestartMissed(Exception):
    """The savepoint's barrier came after the gap: job 1 already ran part of the remaining input."""


def retrying(run: Callable[[int], T]) -> T:
    """run(gap), again with a gap twice as wide while the savepoint comes too late (TRIES runs in all)."""
    for attempt in range(TRIES):
        try:
            return run(GAP * 2 ** attempt)
        except RestartMissed:
            if attempt == TRIES - 1:
                raise
    raise AssertionError("unreachable")


def cut_points(orders: list[list[Event]], restart_after: int, bundle: int | None) -> list[int]:
    """How many of each case's changes come before the restart: `restart_after`, rounded up to a whole bundle
    for a mini-batch join, and never more than the case has."""
    if restart_after < 0:
        raise ValueError(f"restart_after counts changes: {restart_after}")
    at = restart_after if bundle is None else -(-restart_after // bundle) * bundle
    return [min(at, len(order)) for order in orders]


def restart_rounds(orders: list[list[Event]], inputs: int, bundle: int | None, guard: int, restart_after: int,
                   gap: int = GAP, runs: bool = False) -> tuple[list[list[Slot | None]], int]:
    """The job's rounds with the restart between the changes before and after the cut, and the index of the
    marker's round. Round k of each part is as arrival.rounds lays it out (the same bundles as without a
    restart: the cut falls on a bundle's end), all rounds padded to one width; the marker record (case
    MARKER, input 0) is the first slot of its round. The gap's end (GAP_END, input 0) opens a second lead, with
    the dummies of the other inputs and a filler round after it: the operators that keep something outside
    state (the mini-batch assigner sends a watermark with the first record of each input, and that watermark
    flushes the bundle) start afresh in job 2, so each input's first record there must be a dummy, as in job 1."""
    cuts = cut_points(orders, restart_after, bundle)
    before = rounds([o[:c] for o, c in zip(orders, cuts)], inputs, bundle, guard, runs)
    after = rounds([o[c:] for o, c in zip(orders, cuts)], inputs, bundle, guard, runs)[2:]  # no second lead
    width = max(len(r) for r in before + after)
    marker: list[Slot | None] = [(MARKER, 0, ["+I"])]
    gap_end: list[Slot | None] = [(GAP_END, 0, ["+I"])] + [(LEAD, view, ["+I"]) for view in range(1, inputs)]
    blank: list[Slot | None] = []
    middle = [blank] * guard + [marker] + [blank] * gap + [gap_end, blank]
    laid = before + middle + after
    return [list(r) + [None] * (width - len(r)) for r in laid], len(before) + guard


def restore_key(version: str) -> str:
    """The configuration key that names the savepoint a job starts from: Flink 2.0 renamed it (1.20 knows both)."""
    return "execution.state-recovery.path" if int(version.split(".")[0]) >= 2 else "execution.savepoint.path"


def marked_query(sql: str, first_view: str) -> str:
    """The job's query plus the branch that brings the markers (input 0, case ids MARKER and below) to the
    sink without a join."""
    return (f"{sql} UNION ALL SELECT JSON_ARRAY(t0cid NULL ON NULL) FROM {first_view} "
            f"WHERE t0cid <= {MARKER}")


class RestartedRun:
    """Job 1 until the marker, a savepoint, job 2 from it; the rows of both in the sink's order."""

    def __init__(self, session: Any, job: Any) -> None:
        self.session = session
        self.jvm = session.jvm
        self.backend = job.state_backend
        self.restart_after = job.restart_after
        self.stats: dict[str, float] = {}

    def collect(self, sql: str, first_view: str) -> str:
        """Both jobs' rows as one Java list's text (the format session._collect returns)."""
        if self.session.arrival != "paced":
            raise RuntimeError("restart_after needs the paced arrival: the free one has no marker to stop at")
        query = marked_query(sql, first_view)
        config = self.session.t_env.get_config()
        folder = tempfile.mkdtemp(prefix="converge-savepoint-")
        from pyflink.version import __version__ as flink_version  # lazy: pyflink

        key = restore_key(flink_version)
        rows = self.jvm.java.util.ArrayList()
        try:
            config.set("state.backend.type", self.backend)
            started = time.perf_counter()
            savepoint = self._until_savepoint(query, folder, rows)
            self.stats["job1_s"] = time.perf_counter() - started
            config.set(key, savepoint)
            try:
                second = self.session.t_env.sql_query(query).execute()
            finally:
                _unset(config, self.session.env, key)
            self.session.last_job_id = second._j_table_result.getJobClient().get().getJobID()  # the job that ended
            self._drain(second._j_table_result.collect(), rows, None)
            self.stats["job2_s"] = time.perf_counter() - started - self.stats["job1_s"]
            # evidence that the restart happened, and what it cost (tests and `converge run` show stderr's tail)
            print(f"converge flink adapter: restarted after {self.restart_after} changes on {self.backend}: job 1 "
                  f"{self.stats['job1_s']:.1f} s, savepoint {os.path.basename(savepoint)}, job 2 restored from it "
                  f"{self.stats['job2_s']:.1f} s", file=sys.stderr, flush=True)
        finally:
            config.set("state.backend.type", "hashmap")
            shutil.rmtree(folder, ignore_errors=True)
        return str(self.jvm.java.lang.String.valueOf(rows))

    def _until_savepoint(self, query: str, folder: str, rows: Any) -> str:
        first = self.session.t_env.sql_query(query).execute()._j_table_result
        client = first.getJobClient().get()
        iterator = first.collect()
        if MARKER not in self._drain(iterator, rows, MARKER):
            raise RuntimeError("job 1 ended before its marker reached the sink")
        formats = self.jvm.org.apache.flink.core.execution.SavepointFormatType
        future = client.stopWithSavepoint(False, "file://" + folder, formats.CANONICAL)
        late = GAP_END in self._drain(iterator, rows, None)
        path = str(future.get(STOP_TIMEOUT_S, self.jvm.java.util.concurrent.TimeUnit.SECONDS))
        if late:
            raise RestartMissed("the savepoint came after the gap")
        self.stats["dropped_sink_states"] = drop_collect_state(self.jvm, path)
        return path

    def _drain(self, iterator: Any, rows: Any, until: int | None) -> set[int]:
        """Move the iterator's rows into `rows` until a row of case `until`, or to its end; the marker ids read."""
        marks: set[int] = set()
        while iterator.hasNext():
            row = iterator.next()
            case = _case_of(row)
            if case is not None and case <= MARKER:
                marks.add(case)
                if case == until:
                    return marks
                continue
            rows.add(row)
        iterator.close()
        return marks


def _case_of(row: Any) -> int | None:
    """The case id leading a result row's JSON text ("[3, ...]")."""
    text = str(row.getField(0)) if hasattr(row, "getField") else None
    if not text or not text.startswith("["):
        return None
    head = text[1:].split(",", 1)[0].split("]", 1)[0].strip()
    try:
        return int(head)
    except ValueError:
        return None


def _unset(config: Any, env: Any, key: str) -> None:
    """Forget the savepoint path again: in the table config, and in the environment's configuration, which the
    planner fills from the table config at every job (a later job would restore the deleted savepoint)."""
    config.get_configuration()._j_configuration.removeKey(key)
    env._j_stream_execution_environment.getConfiguration().removeKey(key)


# The operator state of Flink's collect sink (CollectSinkFunction): the results it holds for the client and the
# client's offset. The planner gives that sink a new operator id in every job, so its state maps to no operator of
# job 2; job 2's client starts afresh anyway (job 1's results all reached the adapter before job 1 ended).
COLLECT_STATE = {"offsetState", "bufferState"}


def drop_collect_state(jvm: Any, path: str) -> int:
    """Rewrite the savepoint's _metadata without the collect sink's state, so that job 2 restores with unclaimed
    state refused (Flink's default): any other operator of job 1 that job 2 lacks fails the restore. Returns how
    many operator states were dropped (1: a job has one collect sink)."""
    folder = path.removeprefix("file:")
    meta = os.path.join(folder, "_metadata")
    io = jvm.java.io
    checkpoints = jvm.org.apache.flink.runtime.checkpoint.Checkpoints
    stream = io.DataInputStream(io.FileInputStream(meta))
    try:
        metadata = checkpoints.loadCheckpointMetadata(stream, jvm.java.lang.Thread.currentThread()
                                                      .getContextClassLoader(), path)
    finally:
        stream.close()
    kept = jvm.java.util.ArrayList()
    dropped = 0
    for state in jvm.java.util.ArrayList(metadata.getOperatorStates()).toArray():
        if _state_names(jvm, state) == COLLECT_STATE:
            dropped += 1
        else:
            kept.add(state)
    rewritten = jvm.org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata(
        metadata.getCheckpointId(), kept, metadata.getMasterStates())
    out = io.DataOutputStream(io.FileOutputStream(meta))
    try:
        checkpoints.storeCheckpointMetadata(rewritten, out)
    finally:
        out.close()
    return dropped


def _state_names(jvm: Any, state: Any) -> set[str]:
    """The names of an operator's operator states (keyed states are left out: the collect sink has none)."""
    names: set[str] = set()
    for subtask in jvm.java.util.ArrayList(state.getStates()).toArray():
        if subtask.getManagedKeyedState().size() or subtask.getRawKeyedState().size():
            names.add("(keyed)")
        for handle in jvm.java.util.ArrayList(subtask.getManagedOperatorState()).toArray():
            names.update(str(n) for n in jvm.java.util.ArrayList(handle.getStateNameToPartitionOffsets().keySet())
                         .toArray())
    return names
