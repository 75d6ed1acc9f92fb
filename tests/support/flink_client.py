"""Protocol-level access to the Flink adapter, on purpose: raw JSON lines in, raw answers out.

converge's own client (`AdapterSystem`) turns answers into CaseResults and stops at the first broken
message; these tests need to see exactly what the adapter writes (malformed requests, the error of
one case, requests before the hello), so they speak the protocol themselves, through converge's
`AdapterProcess`, on the same adapter process (and MiniCluster) the session's AdapterSystem holds.
"""

from __future__ import annotations

import json
from typing import Any

from converge.systems.adapter.client import AdapterProcess


class ProtocolClient:
    """JSON lines to an adapter process, answers read with a time limit; run requests numbered from 1000."""

    def __init__(self, process: AdapterProcess) -> None:
        self.process = process
        self.requests = 999

    def send_line(self, line: str) -> None:
        self.process.send((line + "\n").encode(), during="a test's line")

    def receive(self, timeout: float = 120.0) -> dict[str, Any]:
        return self.process.receive(timeout, during="a test's request")  # a non-JSON line fails the test here

    def ask(self, message: dict, timeout: float = 120.0) -> dict[str, Any]:
        self.send_line(json.dumps(message))
        return self.receive(timeout)

    def run(self, cases: list[dict], timeout: float = 120.0) -> list[dict]:
        self.requests += 1
        answer = self.ask({"type": "run", "request": self.requests, "cases": cases}, timeout)
        assert answer["type"] == "results" and answer["request"] == self.requests, answer
        assert [r["id"] for r in answer["results"]] == [c["id"] for c in cases]
        return answer["results"]


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


def folded(result: dict) -> list[list]:
    """A result's changelog folded into its final rows (+I/+U add one, -U/-D remove one), as a sorted multiset
    (`bag`); a row retracted more often than emitted fails here."""
    count: dict[str, int] = {}
    for kind, *row in result["changelog"]:
        text = json.dumps(row)
        count[text] = count.get(text, 0) + (1 if kind in ("+I", "+U") else -1)
        assert count[text] >= 0, f"{kind}{row} retracts a row not emitted before: {result['changelog']}"
    return sorted(text for text, n in count.items() for _ in range(n))
