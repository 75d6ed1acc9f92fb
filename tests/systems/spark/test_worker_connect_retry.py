"""Spark's "Python worker failed to connect back" (a worker forked on a loaded machine missing its 10 s): the query
runs again from its checkpoint after a pause, up to three times, each retry named and counted; any other failure, or
the same one on the fourth start, is raised as it came (issue 41 row 9). No JVM: the query is a stand-in that fails as
Spark's would, and the pauses are recorded instead of slept."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

from converge.engine.runtime.spark import job  # noqa: E402 - after the skip: job imports pyspark

SPARK_TEXT = ("An exception was thrown from the Python worker. Please see the stack trace below.\n"
              "org.apache.spark.SparkException: Python worker failed to connect back.\n"
              "\tat org.apache.spark.api.python.PythonWorkerFactory.createSimpleWorker")


class _Query:
    def __init__(self, *failures: Exception) -> None:
        self.failures, self.starts = list(failures), 0

    def __call__(self) -> None:
        self.starts += 1
        if self.failures:
            raise self.failures.pop(0)


def test_a_worker_that_did_not_connect_back_is_retried_after_a_pause_named_and_counted(monkeypatch) -> None:
    monkeypatch.setattr(job, "worker_connect_retries", 0)
    said: list[str] = []
    slept: list[float] = []
    query = _Query(RuntimeError(SPARK_TEXT), RuntimeError(SPARK_TEXT))
    job.retry_worker_connect(query, say=said.append, sleep=slept.append)
    assert query.starts == 3 and job.worker_connect_retries == 2
    assert slept == [2.0, 5.0]
    assert said == ["spark: a Python worker failed to connect back to the JVM (a loaded machine); the query runs "
                    "again from its checkpoint in 2 s (retry 1 of 3; 1 such retries so far in this process)",
                    "spark: a Python worker failed to connect back to the JVM (a loaded machine); the query runs "
                    "again from its checkpoint in 5 s (retry 2 of 3; 2 such retries so far in this process)"]


def test_the_same_failure_on_the_fourth_start_is_raised(monkeypatch) -> None:
    monkeypatch.setattr(job, "worker_connect_retries", 0)
    slept: list[float] = []
    query = _Query(*(RuntimeError(SPARK_TEXT) for _ in range(4)))
    with pytest.raises(RuntimeError, match="failed to connect back"):
        job.retry_worker_connect(query, say=lambda text: None, sleep=slept.append)
    assert query.starts == 4 and job.worker_connect_retries == 3
    assert slept == [2.0, 5.0, 10.0]


def test_any_other_failure_is_raised_at_once(monkeypatch) -> None:
    monkeypatch.setattr(job, "worker_connect_retries", 0)
    query = _Query(RuntimeError("java.lang.OutOfMemoryError"))
    with pytest.raises(RuntimeError, match="OutOfMemoryError"):
        job.retry_worker_connect(query, say=lambda text: None, sleep=lambda s: pytest.fail("slept"))
    assert query.starts == 1 and job.worker_connect_retries == 0
