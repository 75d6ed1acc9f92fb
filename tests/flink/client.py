"""A minimal test-side client of the adapter protocol: JSON lines to a process, answers read with a timeout.

converge's own client (the systems-under-test layer) is tested elsewhere; this one is just enough to
drive an adapter process from a test and see exactly what it writes.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
from typing import Any


class AdapterProcess:
    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._read, args=(self.process.stdout, self.lines.put), daemon=True).start()
        threading.Thread(target=self._read, args=(self.process.stderr, self.stderr.append), daemon=True).start()
        self.requests = 0

    @staticmethod
    def _read(stream, put) -> None:
        for line in stream:
            put(line)
        put(None)

    def send_line(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def receive(self, timeout: float = 120.0) -> dict[str, Any]:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no answer in {timeout} s; stderr tail: {self.stderr[-10:]}") from None
        assert line is not None, f"the adapter closed stdout; stderr tail: {self.stderr[-10:]}"
        return json.loads(line)  # a non-JSON line on stdout fails the test here

    def ask(self, message: dict, timeout: float = 120.0) -> dict[str, Any]:
        self.send_line(json.dumps(message))
        return self.receive(timeout)

    def hello(self) -> dict[str, Any]:
        return self.ask({"type": "hello", "protocol": "converge-adapter", "versions": [1]})

    def run(self, cases: list[dict], timeout: float = 120.0) -> list[dict]:
        self.requests += 1
        answer = self.ask({"type": "run", "request": self.requests, "cases": cases}, timeout)
        assert answer["type"] == "results" and answer["request"] == self.requests, answer
        assert [r["id"] for r in answer["results"]] == [c["id"] for c in cases]
        return answer["results"]

    def shutdown(self, timeout: float = 30.0) -> int:
        try:
            self.send_line(json.dumps({"type": "shutdown"}))
            return self.process.wait(timeout)
        finally:
            self.kill()

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def bigint_input(name: str, columns: list[str], *, unique_key: list[str] | None = None, mode: str = "retract",
                 time_column: str | None = None) -> dict:
    spec = {"name": name, "columns": [[c, "BIGINT"] for c in columns], "unique_key": unique_key,
            "changelog_mode": mode}
    if time_column is not None:
        spec["time_column"] = time_column
    return spec


def case(case_id: str, inputs: list[dict], types: list[str], conditions: list[str], changelogs: dict,
         *, config: dict | None = None, interval: dict | None = None, events: list | None = None) -> dict:
    join: dict[str, Any] = {"inputs": [i["name"] for i in inputs], "types": types, "conditions": conditions}
    if interval is not None:
        join["interval"] = interval
    return {"id": case_id, "scenario": {"name": case_id, "inputs": inputs, "join": join, "config": config or {},
                                        "events": events or []},
            "changelogs": changelogs}


def bag(rows: list[list]) -> list[str]:
    """A multiset of rows in a comparable form (Flink's order is not repeatable)."""
    return sorted(json.dumps(r) for r in rows)
