"""The batch oracle on Spark SQL: DuckDBOracle.final's answer, computed by Spark on Parquet files of the inputs.

DuckDB is the embedded default; this oracle is for answers that should be
computed where a large stream lives. It runs the query the DuckDB oracle
renders (oracle/sql.py, oracle/interval.py), translated by
oracle/spark_translate.py, over Spark views of Parquet files
(oracle/spark_inputs.py). Spark costs a fraction of a second per query
however small, so ``final_many`` answers many scenarios of one shape
(same inputs and join) in one query: their tables are unioned with a
scenario id, and every ON clause also equates the ids (the position column
of render_join_sql's history form, used here for the scenario).

pyspark is imported only when a session is needed, so the default
(DuckDB) path never imports it.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from converge.engine.model.errors import BadInputError, ConvergeError, OracleError
from converge.engine.model.scenario import InputSpec, Scenario, require_scenario
from converge.oracle.interval import interval_final_sql, interval_records, time_column
from converge.oracle.materialize import materialize_inputs
from converge.oracle.spark_inputs import (
    BAD_INPUT,
    MATERIALIZE_MODES,
    MaterializeMode,
    changelog_table,
    log_schema,
    materialize_sql,
    scenario_changelog,
    table_of_rows,
    write_parquet,
)
from converge.oracle.spark_translate import spark_ident, translate_query
from converge.oracle.sql import check_supported, render_join_sql, seq_column_name

__all__ = ["SparkSQLOracle"]

_SESSION_CONF = {"spark.sql.ansi.enabled": "true", "spark.sql.caseSensitive": "true"}
"""What the translation assumes (ANSI: overflow is an error, as in DuckDB; exact column names)."""


def _session() -> Any:
    """The active SparkSession, else a small local one of the oracle's own.

    Not the Spark runtime's session helper: the oracle does not import the
    code it checks (tests/architecture/test_harness_hygiene.py)."""
    from pyspark.sql import SparkSession  # lazy: pyspark only when the Spark SQL oracle is used

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName("converge-oracle").master("local[2]")
    for key, value in {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
                       "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
                       "spark.sql.shuffle.partitions": "2", "spark.sql.session.timeZone": "UTC"}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _file(folder: Path, input_name: str) -> Path:
    return folder / f"input-{len(input_name)}-{uuid.uuid4().hex[:8]}.parquet"   # any input name, a safe file name


def _shape(scenario: Scenario) -> Any:
    try:
        key = (scenario.inputs, scenario.join)
        hash(key)
        return key
    except TypeError:
        return id(scenario)


def _prepared(batch: Sequence[Scenario], answers: list, prepare: Callable[[Scenario], Any]) -> tuple[list, list[int]]:
    """`prepare` of each scenario, and the indexes of those it accepted; a BadInputError is that scenario's
    answer (the others still share the query)."""
    out: list = []
    valid: list[int] = []
    for i, s in enumerate(batch):
        try:
            out.append(prepare(s))
            valid.append(i)
        except BadInputError as exc:
            answers[i] = exc
    return out, valid


class SparkSQLOracle:
    """Final answers (bags of output rows) of regular, multi-way and interval joins, computed by Spark SQL.

    ``materialize="python"`` replays changelogs in Python (small cases);
    ``"spark"`` writes the changelogs to Parquet and folds them in Spark SQL
    (interval joins always use their records computed in Python).
    """

    def __init__(self, spark: Any = None, *, materialize: MaterializeMode = "python",
                 work_dir: str | Path | None = None) -> None:
        if materialize not in MATERIALIZE_MODES:
            raise BadInputError(f"materialize={materialize!r}: expected one of {', '.join(MATERIALIZE_MODES)}")
        self._spark = spark
        self.materialize = materialize
        self._work_dir = Path(work_dir) if work_dir is not None else None
        self.last_sql: str | None = None

    # ------------------------------------------------------------ session
    @property
    def spark(self) -> Any:
        if self._spark is None:
            self._spark = _session()
        return self._spark

    def _folder(self) -> Path:
        root = self._work_dir or Path(tempfile.gettempdir())
        path = root / f"converge-spark-oracle-{uuid.uuid4().hex[:12]}"
        path.mkdir(parents=True, exist_ok=True)
        return path

    # ------------------------------------------------------------ answers
    def final(self, scenario: Scenario) -> Counter[tuple]:
        """The join of the inputs materialized after all events (DuckDBOracle.final's answer)."""
        require_scenario(scenario, "SparkSQLOracle.final")
        (outcome,) = self.final_many([scenario])
        if isinstance(outcome, ConvergeError):
            raise outcome
        return outcome

    def final_many(self, scenarios: Sequence[Scenario]) -> list[Counter[tuple] | ConvergeError]:
        """Per scenario its final answer, or the error that prevents it; one Spark query per shape.

        If a shared query fails (an overflow in one scenario's data), each
        scenario of that shape is asked alone, so the error lands on its own."""
        groups: dict[Any, list[int]] = {}
        for i, s in enumerate(scenarios):
            require_scenario(s, "SparkSQLOracle.final_many")
            groups.setdefault(_shape(s), []).append(i)
        out: list[Counter[tuple] | ConvergeError | None] = [None] * len(scenarios)
        for indexes in groups.values():
            batch = [scenarios[i] for i in indexes]
            try:
                answers: list[Counter[tuple] | ConvergeError] = list(self._answer(batch))
            except ConvergeError as exc:
                if len(batch) == 1:
                    answers = [exc]
                else:
                    answers = [self._single(s) for s in batch]
            for i, answer in zip(indexes, answers, strict=False):
                out[i] = answer
        return out  # type: ignore[return-value]

    def _single(self, scenario: Scenario) -> Counter[tuple] | ConvergeError:
        try:
            return self._answer([scenario])[0]
        except ConvergeError as exc:
            return exc

    def sql_for(self, scenario: Scenario) -> str:
        """The Spark SQL ``final`` runs for this scenario, over views named ``v_<input>`` (for reports)."""
        sid = seq_column_name(scenario)
        return self._query(scenario, {spec.name: f"v_{spec.name}" for spec in scenario.chain}, sid)

    # ------------------------------------------------------------ the query
    def _query(self, scenario: Scenario, views: Mapping[str, str], sid: str) -> str:
        types = {(spec.name, c): t for spec in scenario.chain for c, t in spec.columns}
        for spec in scenario.chain:
            types[(spec.name, sid)] = "BIGINT"
        if scenario.join.interval is not None:
            for spec in scenario.chain:
                types[(spec.name, time_column(spec))] = "BIGINT"
            duck = interval_final_sql(scenario, tables=views, seq=sid)
        else:
            check_supported(scenario)
            duck = render_join_sql(scenario, views, seq=sid)
        return translate_query(duck, types)

    def _answer(self, batch: Sequence[Scenario]) -> list[Counter[tuple] | ConvergeError]:
        """One query for scenarios of one shape; a scenario whose stream is invalid gets its BadInputError."""
        first = batch[0]
        sid = seq_column_name(first)
        folder = self._folder()
        try:
            answers: list[Counter[tuple] | ConvergeError] = [Counter() for _ in batch]
            valid = list(range(len(batch)))
            if first.join.interval is not None:
                frames, valid = self._interval_views(batch, folder, answers)
            elif self.materialize == "python":
                frames, valid = self._python_views(batch, folder, answers)
            else:
                frames = self._spark_views(batch, folder)
            if not valid:
                return answers
            views = {}
            for spec in first.chain:
                name = f"converge_oracle_{uuid.uuid4().hex[:12]}"
                frames[spec.name].createOrReplaceTempView(name)
                views[spec.name] = name
            sql = self._query(first, views, sid)
            self.last_sql = sql
            try:
                rows = self._collect(sql)
            finally:
                for name in views.values():
                    self.spark.catalog.dropTempView(name)
            for row in rows:
                answer = answers[row[0]]
                assert isinstance(answer, Counter)
                answer[tuple(row[1:])] += 1
            return answers
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _collect(self, sql: str) -> list[tuple]:
        spark = self.spark
        saved = {k: spark.conf.get(k, None) for k in _SESSION_CONF}
        for k, v in _SESSION_CONF.items():
            spark.conf.set(k, v)
        try:
            return [tuple(r) for r in spark.sql(sql).collect()]
        except Exception as exc:  # pyspark's errors (analysis, a raise_error, Py4J): one class for the caller
            raise spark_error(exc, sql) from None
        finally:
            for k, v in saved.items():
                if v is None:
                    spark.conf.unset(k)
                else:
                    spark.conf.set(k, v)

    def _view_of(self, spec: InputSpec, path: Path, extra: Sequence[tuple[str, str]] = ()) -> Any:
        """A DataFrame of a Parquet table with the input's own column names (and sid / time columns)."""
        df = self.spark.read.parquet(str(path))
        cols = [f"c{i} AS {spark_ident(name)}" for i, (name, _) in enumerate(spec.columns)]
        cols += [f"{source} AS {spark_ident(name)}" for source, name in extra]
        return df.selectExpr(*cols)

    def _python_views(self, batch: Sequence[Scenario], folder: Path,
                      answers: list) -> tuple[dict[str, Any], list[int]]:
        tables, valid = _prepared(batch, answers, materialize_inputs)
        sid = seq_column_name(batch[0])
        frames = {}
        for spec in batch[0].chain:
            rows, sids = [], []
            for i, t in zip(valid, tables, strict=False):
                for row, n in t[spec.name].items():
                    rows.extend([row] * n)
                    sids.extend([i] * n)
            path = write_parquet(table_of_rows(spec, rows, sids), _file(folder, spec.name))
            frames[spec.name] = self._view_of(spec, path, [("sid", sid)])
        return frames, valid

    def _spark_views(self, batch: Sequence[Scenario], folder: Path) -> dict[str, Any]:
        sid = seq_column_name(batch[0])
        frames = {}
        for spec in batch[0].chain:
            events, sids = [], []
            for i, s in enumerate(batch):
                log = scenario_changelog(s, spec)
                events.extend(log)
                sids.extend([i] * len(log))
            path = write_parquet(changelog_table(spec, events, sids), _file(folder, spec.name))
            frames[spec.name] = self.changelog_frame(spec, str(path), sid=True, sid_name=sid)
        return frames

    def changelog_frame(self, spec: InputSpec, path: str, *, sid: bool, sid_name: str | None = None,
                        strict: bool = True) -> Any:
        """An input's final table, folded by Spark SQL from changelog Parquet files at ``path``
        (columns pos, kind, c0..cn[, sid]; oracle/spark_inputs.py)."""
        log = self.spark.read.schema(log_schema(spec, sid)).parquet(path)
        name = f"converge_log_{uuid.uuid4().hex[:12]}"
        log.createOrReplaceTempView(name)
        folded = self.spark.sql(materialize_sql(spec, name, sid=sid, strict=strict))
        cols = [f"c{i} AS {spark_ident(c)}" for i, (c, _) in enumerate(spec.columns)]
        if sid:
            cols.append(f"sid AS {spark_ident(sid_name or 'sid')}")
        return folded.selectExpr(*cols)

    def _interval_views(self, batch: Sequence[Scenario], folder: Path,
                        answers: list) -> tuple[dict[str, Any], list[int]]:
        def checked_records(s: Scenario) -> dict:
            interval_final_sql(s)            # the DuckDB oracle's checks of the join, bounds and inputs
            return interval_records(s)

        records, valid = _prepared(batch, answers, checked_records)
        sid = seq_column_name(batch[0])
        frames = {}
        for spec in batch[0].chain:
            tcol = time_column(spec)
            wide = replace(spec, columns=spec.columns + ((tcol, "BIGINT"),))
            rows, sids = [], []
            for i, rec in zip(valid, records, strict=False):
                for _pos, time, row in rec[spec.name]:
                    rows.append(row + (time,))
                    sids.append(i)
            path = write_parquet(table_of_rows(wide, rows, sids), _file(folder, spec.name))
            frames[spec.name] = self._view_of(wide, path, [("sid", sid)])
        return frames, valid

    def join_frame(self, scenario: Scenario, frames: Mapping[str, Any]) -> Any:
        """The final join as a Spark DataFrame over given input tables (each with the input's column names
        and a scenario id column named ``seq_column_name(scenario)``): for answers too large to collect."""
        views = {}
        for spec in scenario.chain:
            name = f"converge_oracle_{uuid.uuid4().hex[:12]}"
            frames[spec.name].createOrReplaceTempView(name)
            views[spec.name] = name
        sql = self._query(scenario, views, seq_column_name(scenario))
        self.last_sql = sql
        for k, v in _SESSION_CONF.items():
            self.spark.conf.set(k, v)
        return self.spark.sql(sql)


def spark_error(exc: BaseException, sql: str) -> ConvergeError:
    """A Spark failure as the project's error: an invalid stream is bad input, anything else the oracle's."""
    text = str(exc)
    if BAD_INPUT in text:
        detail = text.split(BAD_INPUT, 1)[1].split("\n")[0].strip().rstrip("'\".")
        return BadInputError(detail)
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return OracleError(f"Spark SQL failed: {type(exc).__name__}: {first}\n-- SQL:\n{sql}")
