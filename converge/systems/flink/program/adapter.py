"""The Flink adapter: converge's adapter protocol v1 on stdin/stdout, answered by Apache Flink (PyFlink).

A standalone program for the Flink environment (`converge systems install flink`):
`<venv>/bin/python -I adapter.py`. It imports only the standard library, pyflink and its two
sibling modules (case_plan.py, condition_sql.py), never converge. stdout carries protocol lines
only: at start the real stdout is kept on a private descriptor and descriptor 1 is pointed at
stderr, so the JVM (which inherits it) and any library print go to stderr.

One MiniCluster per process, started at the hello (session.py); every job runs on it through a
remote environment (a local environment would start a MiniCluster per job, ~1.6 s each). The cases
of one request are grouped by shape (case_plan.Shape) and each group runs as one job whose result
comes back in one py4j call. Every input of a job is fed from one checkpoint-gated source in the
scenario's order (arrival.py), so a case's changelog repeats from run to run; the answer is each
case's changelog, row kinds and emission order as Flink's collect() gave them (`output: "changelog"`),
which converge folds for the final answer and reads for the row-kind properties.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

sys.path.append(str(Path(__file__).resolve().parent))  # the sibling modules, as top-level names

from case_plan import CaseError, PlannedCase, combinable, plan
from condition_sql import FLINK_TYPES, Untranslatable
from pacing import DEFAULT, Pacing, PacingError, parse
from pacing import ENV as ENV_PACING
from session import ARRIVALS, FlinkJobError, FlinkSession, Undecided

PROTOCOL = "converge-adapter"
MAX_BATCH = 500
MAX_SHAPES_PER_JOB = 40   # shapes whose queries share one job (one UNION ALL): the planner's work grows with them
_MESSAGE_KEYS = {"hello": {"type", "protocol", "versions"}, "run": {"type", "request", "cases"},
                 "shutdown": {"type"}}
_CASE_KEYS = {"id", "scenario", "changelogs"}


class RequestError(Exception):
    """The message cannot be read as a protocol request; the adapter answers an error and stays up."""


# The settings converge sends that a Flink version may lack: (setting, the feature, where it came from, the first
# release with it). The jars agree (tests/systems/flink/test_versions.py): MiniBatchStreamingJoinOperator is in
# 1.19.0 and later, StreamingMultiJoinOperator in 2.1.0 and later. Before its release Flink ignores the setting's
# options.
FEATURES = (("mini_batch", "mini-batch regular join", "FLIP-415", (1, 19)),
            ("multi_join", "multi-way join operator", "FLIP-516", (2, 1)),
            ("state_backend", "state backend per job checked by this adapter", "state.backend.type", (1, 19)),
            ("restart", "stop-with-savepoint and restore checked by this adapter", "restart.py", (1, 19)),
            # toChangelogStream with a primary key and ChangelogMode.upsert(): an upsert sink (sinks.py)
            ("upsert_sink", "upsert DataStream sink", "FLIP-136", (1, 13)),
            # table.exec.resource.default-parallelism for the join's operators (parallel.py)
            ("parallelism", "per-job SQL operator parallelism", "table.exec.resource.default-parallelism",
             (1, 10)))


def release(version: str) -> tuple[int, int]:
    """(major, minor) of a version such as 2.3.0 or 2.1-SNAPSHOT."""
    numbers = []
    for part in version.split(".")[:2]:
        digits = "".join(c for c in part if c.isdigit())
        numbers.append(int(digits) if digits else 0)
    major, minor = (numbers + [0, 0])[:2]
    return major, minor


def honoured_settings(version: str) -> list[str]:
    """The settings this Flink version honours: those whose feature it has (FEATURES)."""
    return [setting for setting, _, _, since in FEATURES if release(version) >= since]


def lacked_settings(version: str) -> dict[str, str]:
    """For each setting this version does not honour, the sentence a campaign shows as the reason its property is
    not applicable ("Flink 1.19.0 has no multi-way join operator (FLIP-516, from 2.1)")."""
    return {setting: f"Flink {version} has no {feature} ({flip}, from {since[0]}.{since[1]})"
            for setting, feature, flip, since in FEATURES if release(version) < since}


class Adapter:
    """The protocol loop: one request line in, one answer line out."""

    def __init__(self, write: Callable[[dict], None], session_factory: Callable[[], FlinkSession],
                 arrival: str = "paced", pacing: Pacing = DEFAULT) -> None:
        if arrival not in ARRIVALS:
            raise ValueError(f"arrival {arrival!r}: expected one of {', '.join(ARRIVALS)}")
        self.arrival = arrival
        self.pacing = pacing
        self.write = write
        self.session_factory = session_factory
        self.session: FlinkSession | None = None

    def hello(self) -> dict:
        from pyflink.version import __version__ as flink_version  # lazy: see FlinkSession

        return {"type": "hello", "protocol": PROTOCOL, "version": 1,
                "system": {"name": "flink", "version": flink_version},
                "capabilities": {
                    "families": ["regular", "interval", "multiway"],
                    "join_types": ["inner", "left", "right", "full", "semi", "anti"],
                    "changelog_modes": ["insert_only", "retract", "upsert"],
                    "column_types": list(FLINK_TYPES),
                    # state TTL on the paced wall clock (ttl_clock.py): a round per checkpoint interval
                    "time_domains": ["event_time"], "state_ttl": self.arrival == "paced", "output": "changelog",
                    # paced arrival repeats each case's changelog; free arrival interleaves inputs as Flink reads
                    "deterministic_order": self.arrival == "paced",
                    "max_batch": MAX_BATCH,
                    # paced: a round per event (and `guard` filler rounds after it), which converge's time limit
                    # counts (converge/systems/adapter/rounds.py); free: no rounds
                    "rounds_per_event": 1 + self.pacing.guard if self.arrival == "paced" else 0,
                    "settings": [s for s in honoured_settings(flink_version) if s != "restart" or self.arrival == "paced"],
                    "lacks": {**lacked_settings(flink_version), **({} if self.arrival == "paced" else {
                        "restart": "a restart needs the paced arrival (CONVERGE_FLINK_ARRIVAL=paced)"})}}}

    def handle(self, line: str) -> bool:
        """Answer one line; False when the adapter should exit."""
        request = None
        try:
            try:
                message = json.loads(line)
            except ValueError as exc:
                raise RequestError(f"not a JSON line: {exc}") from None
            if not isinstance(message, dict):
                raise RequestError("a message must be a JSON object")
            if isinstance(message.get("request"), int):
                request = message["request"]
            kind = message.get("type")
            if kind not in _MESSAGE_KEYS:
                raise RequestError(f"unknown message type {kind!r}")
            unknown = sorted(set(message) - _MESSAGE_KEYS[kind])
            if unknown:
                raise RequestError(f"unknown key {unknown[0]!r} in a {kind} message")
            if kind == "shutdown":
                return False
            if kind == "hello":
                versions = message.get("versions")
                if message.get("protocol") != PROTOCOL or not isinstance(versions, list) or 1 not in versions:
                    self.write({"type": "error", "message": f"this adapter speaks {PROTOCOL} version 1 only"})
                    return False
                if self.session is None:
                    self.session = self.session_factory()
                self.write(self.hello())
                return True
            if self.session is None:
                raise RequestError("send a hello before a run request")
            if request is None:
                raise RequestError("a run message needs an integer 'request'")
            self.write({"type": "results", "request": request, "results": self.run(message.get("cases"))})
        except RequestError as exc:
            answer: dict[str, Any] = {"type": "error", "message": str(exc)}
            if request is not None:
                answer["request"] = request
            self.write(answer)
        return True

    def run(self, cases: Any) -> list[dict]:
        if not isinstance(cases, list) or not cases:
            raise RequestError("'cases' must be a non-empty list")
        if len(cases) > MAX_BATCH:
            raise RequestError(f"{len(cases)} cases in one request; max_batch is {MAX_BATCH}")
        results: list[dict | None] = [None] * len(cases)
        groups: dict[str, list[tuple[int, PlannedCase]]] = defaultdict(list)
        ids = []
        for n, case in enumerate(cases):
            if not isinstance(case, dict) or not isinstance(case.get("id"), str):
                raise RequestError(f"cases[{n}]: a case is an object with a string 'id'")
            unknown = sorted(set(case) - _CASE_KEYS)
            if unknown:
                raise RequestError(f"cases[{n}]: unknown key {unknown[0]!r}")
            ids.append(case["id"])
            try:
                planned = plan(case)
            except Untranslatable as exc:
                results[n] = {"id": case["id"], "status": "unsupported", "message": str(exc)}
                continue
            except CaseError as exc:
                raise RequestError(f"cases[{n}] ({case['id']}): {exc}") from None
            groups[planned.shape.key].append((n, planned))
        if len(set(ids)) != len(ids):
            raise RequestError("case ids must be distinct within a request")
        for job in self.jobs(list(groups.values())):
            for n, answer in self.run_job(job):
                results[n] = {"id": ids[n], **answer}
        return [r for r in results if r is not None]

    def jobs(self, groups: list[list[tuple[int, PlannedCase]]]) -> list[list[list[tuple[int, PlannedCase]]]]:
        """The request's jobs, each a list of shape groups: with paced arrival and `jobs=request`, the shapes that
        share their job settings (and may share a job: case_plan.combinable) run together, at most
        MAX_SHAPES_PER_JOB a job; otherwise a job per shape."""
        if self.arrival != "paced" or self.pacing.jobs == "shape":
            return [[group] for group in groups]
        shared: dict[str, list[list[tuple[int, PlannedCase]]]] = defaultdict(list)
        alone = []
        for group in groups:
            shape = group[0][1].shape
            if combinable(shape):
                shared[shape.job_key].append(group)
            else:
                alone.append([group])
        chunks = [same[i:i + MAX_SHAPES_PER_JOB] for same in shared.values()
                  for i in range(0, len(same), MAX_SHAPES_PER_JOB)]
        return chunks + alone

    def run_job(self, groups: list[list[tuple[int, PlannedCase]]]) -> list[tuple[int, dict]]:
        """One job for several shape groups; if it fails, a job per shape (run_group), so an error is narrowed
        to a shape and then to the case that causes it, and the other cases still get their answers."""
        assert self.session is not None
        if len(groups) == 1:
            return self.run_group(groups[0])
        try:
            parts = self.session.run_shapes([(g[0][1].shape, [p for _, p in g]) for g in groups])
        except FlinkJobError:
            return [answer for group in groups for answer in self.run_group(group)]
        return [(n, _answer(changelogs[i])) for group, changelogs in zip(groups, parts) for i, (n, _) in enumerate(group)]

    def run_group(self, members: list[tuple[int, PlannedCase]]) -> list[tuple[int, dict]]:
        """One job for the group; if it fails, each case alone, so an error names the case that causes it."""
        assert self.session is not None
        shape = members[0][1].shape
        try:
            changelogs = self.session.run(shape, [p for _, p in members])
            return [(n, _answer(changelogs[i])) for i, (n, _) in enumerate(members)]
        except FlinkJobError as exc:
            if len(members) == 1:
                return [(members[0][0], {"status": "error", "message": str(exc)})]
        return [answer for member in members for answer in self.run_group([member])]


def _answer(changelog: Any) -> dict:
    """A case's answer: its changelog, or unsupported when the TTL job's clock left its expiry undecided."""
    if isinstance(changelog, Undecided):
        return {"status": "unsupported", "message": changelog.message}
    return {"status": "ok", "changelog": changelog}


def main() -> int:
    protocol_out = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
    protocol_in = os.fdopen(os.dup(0), "r", encoding="utf-8", newline="\n")
    os.dup2(2, 1)  # whatever writes to descriptor 1 from now on (the JVM, a print) lands on stderr
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    sys.stdout = sys.stderr

    def write(message: dict) -> None:
        protocol_out.write(json.dumps(message, allow_nan=False, separators=(",", ":")) + "\n")
        protocol_out.flush()

    arrival = os.environ.get("CONVERGE_FLINK_ARRIVAL", "paced")
    if arrival not in ARRIVALS:
        print(f"converge flink adapter: CONVERGE_FLINK_ARRIVAL={arrival!r}: expected one of {', '.join(ARRIVALS)}",
              file=sys.stderr)
        return 2
    try:
        pacing = parse(os.environ.get(ENV_PACING))
    except PacingError as exc:
        print(f"converge flink adapter: {exc}", file=sys.stderr)
        return 2
    adapter = Adapter(write, lambda: FlinkSession(arrival, pacing), arrival, pacing)
    try:
        for line in protocol_in:
            if not line.strip():
                continue
            if not adapter.handle(line):
                break
    except Exception:  # a bug of the adapter: say so on stderr, and exit non-zero
        traceback.print_exc()
        return 3
    finally:
        if adapter.session is not None:
            try:
                adapter.session.close()
            except Exception:
                traceback.print_exc()
    return 0


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    os._exit(code)  # the py4j gateway's threads would otherwise keep the process alive
