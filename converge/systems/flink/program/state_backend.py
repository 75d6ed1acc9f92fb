"""The job option `state_backend` on real Flink (part of the Flink adapter program).

Standard library and pyflink only (see adapter.py). A job's backend is chosen by `state.backend.type`
(`hashmap`: HashMapStateBackend, a Java HashMap per MapState; `rocksdb`: EmbeddedRocksDBStateBackend, a
MapState iterated in the byte order of its serialized keys). The table config is copied into the job's
configuration when the job is planned, so setting it before each job selects that job's backend; the JobManager
reports which backend it loaded (`backend_of`), which is how a test checks the option was not ignored.
"""

from __future__ import annotations

from typing import Any

BACKENDS = ("hashmap", "rocksdb")
# What the JobManager names each backend (ArchivedExecutionGraph.getStateBackendName).
BACKEND_CLASSES = {"hashmap": "HashMapStateBackend", "rocksdb": "EmbeddedRocksDBStateBackend"}


def apply_state_backend(table_config: Any, backend: str) -> None:
    """Select the next job's state backend (every job sets it: a job never inherits the previous job's)."""
    if backend not in BACKENDS:
        raise ValueError(f"state backend {backend!r}: expected one of {', '.join(BACKENDS)}")
    table_config.set("state.backend.type", backend)


def backend_of(cluster: Any, job_id: Any) -> str | None:
    """The backend a finished job ran on, as the JobManager loaded it ("hashmap" / "rocksdb"; None: not known)."""
    graph = cluster.getArchivedExecutionGraph(job_id).get()
    name = graph.getStateBackendName()
    if not name.isPresent():
        return None
    loaded = str(name.get())
    for backend, cls in BACKEND_CLASSES.items():
        if loaded.endswith(cls):
            return backend
    return loaded
