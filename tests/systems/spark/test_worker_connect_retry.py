"""Spark's "Python worker failed to connect back" (a worker forked on a loaded machine missing its 10 s): the query
runs once more from its checkpoint, the retry is named and counted; any other failure, or the same one twice, is
raised as it came (issue 41 row 9). No JVM: the query is a stand-in that fails as Spark's would."""

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


def test_a_worker_that_did_not_connect_back_is_retried_once_named_and_counted(monkeypatch) -> None:
    monkeypatch.setattr(job, "worker_connect_retries", 0)
    said: list[str] = []
    query = _Query(RuntimeError(SPARK_TEXT))
    job.retry_worker_connect(query, say=said.append)
    assert query.starts == 2 and job.worker_connect_retries == 1
    assert said == ["spark: a Python worker failed to connect back to the JVM (a loaded machine); the query runs "
                    "once more from its checkpoint (1 such retry so far in this process)"]


def test_the_same_failure_twice_is_raised(monkeypatch) -> None:
    monkeypatch.setattr(job, "worker_connect_retries", 0)
    query = _Query(RuntimeError(SPARK_TEXT), RuntimeError(SPARK_TEXT))
    with pytest.raises(RuntimeError, match="failed to connect back"):
        job.retry_worker_connect(query, say=lambda text: None)
    assert query.starts == 2 and job.worker_connect_retries == 1


def test_any_other_failure_is_raised_at_once(monkeypatch) -> None:
    monkeypatch.setattr(job, "worker_connect_retries", 0)
    query = _Query(RuntimeError("java.lang.OutOfMemoryError"))
    with pytest.raises(RuntimeError, match="OutOfMemoryError"):
        job.retry_worker_connect(query, say=lambda text: None)
    assert query.starts == 1 and job.worker_connect_retries == 0
