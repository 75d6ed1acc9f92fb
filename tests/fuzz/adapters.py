"""What converge does with one hostile adapter (tests/support/adapters/hostile.py), as one outcome, with its evidence.

`run_fault` runs a whole `converge run --system cmd:...` campaign (in this process, with short time limits)
or a whole `converge check --system cmd:...` (through the command line's own `main`) against an adapter
that commits one fault at one request, and returns the outcome label, the exit code, what converge printed,
how long it took and which of the adapter's processes survived (found in /proc by the tag on their command
line, the adapter's own and any grandchild's).
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from converge.cli import main as cli
from converge.engine.model.errors import ConvergeError, exit_code, label
from converge.reports.options import RunOptions
from converge.systems.adapter.client import KILL_WAIT, Timeouts
from converge.systems.adapter.system_type import AdapterSystemType
from converge.systems.campaign import run_system_campaign
from tests.support.loaded_machine import SLACK
from tests.support.paths import FAKE_ADAPTERS

HOSTILE = FAKE_ADAPTERS / "hostile.py"
QUICK = Timeouts(hello=2, run_base=1, run_per_case=0, run_per_event=0, shutdown=1)
QUERY = ("CREATE TABLE a (k BIGINT, s STRING) WITH ('connector' = 'kafka', 'topic' = 'a', 'format' = 'json');\n"
         "CREATE TABLE b (k BIGINT, t STRING) WITH ('connector' = 'kafka', 'topic' = 'b', 'format' = 'json');\n"
         "SELECT a.k, a.s, b.t FROM a LEFT JOIN b ON a.k = b.k;\n")
# Faults that end the conversation (everything but the adapter that answers every case "unsupported").
# "ignore-shutdown" answers every case "unsupported" too, and then will not exit when asked.
NOT_CHECKED_FAULTS = ("unsupported", "ignore-shutdown")
TIMED_OUT = ("hang", "deaf", "grandchild-hang", "endless")


class QuickAdapterSystemType(AdapterSystemType):
    """`cmd:` with time limits a test can wait for (the command line's are 120 s and 30 s + 1 s per case)."""

    def open(self, *, timeouts: Timeouts = QUICK):  # type: ignore[override]
        return super().open(timeouts=timeouts)


@dataclass
class Outcome:
    label: str
    exit_code: int
    text: str            # stdout and stderr
    seconds: float
    survivors: list[int]
    command: str         # the adapter's command line, as converge names it

    def limit(self, surface: str, fault: str, at: int) -> float:
        """The time converge states for this fault, plus what its clean-up may add."""
        timeouts = QUICK if surface == "run" else Timeouts()
        shutdown = timeouts.shutdown if fault == "ignore-shutdown" else 0.0
        stated = 0.0
        if fault in TIMED_OUT:
            run = timeouts.run_base + timeouts.run_per_case * 4
            if at == 0 and fault != "deaf":
                stated = timeouts.hello
            elif at == 1 or fault == "deaf":  # the first request: resent once to a restarted adapter, which greets
                stated = 2 * run + timeouts.hello
            else:
                stated = run
        return stated + shutdown + KILL_WAIT + SLACK  # SLACK: the campaign itself, on a loaded machine


def survivors(tag: str, *, besides: int | None = None) -> list[int]:
    """The living processes whose command line holds `tag` (zombies are dead), but this one and `besides`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in (os.getpid(), besides):
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if tag.encode() in cmdline and stat[stat.rindex(")") + 2] not in "ZX":
            found.append(int(entry))
    return found


def _label_of(text: str, surface: str, code: int) -> str:
    """The outcome's label as converge printed it: the system's property's verdict (run: the first applicable
    property's, check: system_final_answer's), or the one-line error of a command that stopped."""
    for line in text.splitlines():
        if line.startswith("converge: "):
            return line.split(": ")[1]
        cells = line.split()
        if surface == "check" and cells[:1] == ["check/system_final_answer"]:
            return " ".join(cells[1:3]).rstrip(":") if cells[2].rstrip(":") in ("error", "checked", "run") \
                else cells[1]
        if surface == "run" and cells[:1] == ["hostile"] and "not applicable:" not in line and len(cells) > 4 \
                and " is up (started in " not in line:  # the progress line on stderr, not a row of the table
            return " ".join(cells[4:6]).rstrip(":") if cells[5].rstrip(":") in ("error", "checked", "input") \
                else cells[4]
    return f"exit {code}"


def run_fault(fault: str, at: int, *, surface: str = "run", examples: int = 6, seed: int = 1,
              env: dict[str, str] | None = None, tmp: Path | None = None) -> Outcome:
    """One campaign (`run`) or check (`check`) against `hostile.py FAULT AT TAG`."""
    tag = f"hostile-{uuid.uuid4().hex[:10]}"
    command = f"{sys.executable} {HOSTILE} {fault} {at} {tag}"
    out = io.StringIO()
    saved = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    started = time.perf_counter()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            if surface == "run":
                try:
                    code = run_system_campaign(RunOptions(examples=examples, seed=seed, system=f"cmd:{command}",
                                                          batch=4), QuickAdapterSystemType(f"cmd:{command}"))
                except ConvergeError as exc:  # as the command line prints it
                    print(f"converge: {label(exc)}: {exc}")
                    code = exit_code(exc)
            else:
                assert tmp is not None, "check reads its query from a file"
                query = tmp / "query.sql"
                query.write_text(QUERY)
                code = cli.main(["check", str(query), "--system", f"cmd:{command}", "--examples", str(examples),
                                 "--seed", str(seed), "--no-reports"])
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    seconds = time.perf_counter() - started
    text = out.getvalue()
    left = survivors(tag)
    kill(left)  # a failing test leaves nothing behind either
    return Outcome(_label_of(text, surface, code), code, text, seconds, left, command)


def kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


LINE_FAULTS = {  # fault -> what the message must show of the offending line
    "garbage": "offending line: Exception in thread main: not a protocol line {",
    "nan": "offending line: {\"type\": \"results\"",
    "wrong-id": "results[0].id: expected 'c0'",
    "duplicate-id": "results.results: ",
    "missing-result": "results.results: ",
    "wrong-request": "results.request: expected",
    "request-error": "hostile: cannot read this request",
    "exit-mid-line": "offending line: {\"type\": \"results\", \"request\": ",
}
RESULTS_FAULTS = ("wrong-id", "duplicate-id", "missing-result", "reordered", "wrong-request")
WHAT = {  # fault -> what the message must say went wrong
    "garbage": "a line that is not JSON", "nan": "a line that is not JSON", "huge": "a line that is not JSON",
    "endless": "a line longer than", "exit-mid-line": "a line without its end", "crash": "closed its output (exit "
    "status 9)", "hang": "no answer within", "deaf": "no answer within", "grandchild-exit": "it exited (exit status "
    "5) without answering", "grandchild-hang": "no answer within",
}
QUICK_FAULTS = ("garbage", "nan", "wrong-id", "duplicate-id", "missing-result", "wrong-request", "request-error",
                "exit-mid-line", "crash", "hang", "deaf", "grandchild-exit", "grandchild-hang")


def assert_one_system_error(outcome: Outcome, fault: str, at: int, surface: str) -> None:
    """The claims of the module docstring for one faulty run."""
    text = outcome.text
    assert "Inconsistent results" not in text and "Flaky" not in text, text
    assert (outcome.label, outcome.exit_code) == ("system error", 3), text
    assert text.count("system error") <= 2, text  # the row and the tally, or the command's one line
    assert f"adapter {outcome.command}" in text, text
    where = "the handshake" if at == 0 and fault != "deaf" else "run request"
    assert where in text, text
    if at == 0 and fault in RESULTS_FAULTS:  # results in place of the hello
        assert "expected a hello, got a 'results' message" in text and "offending line: {" in text, text
    elif fault in LINE_FAULTS:
        assert LINE_FAULTS[fault] in text, text
    if fault in WHAT:
        assert WHAT[fault] in text, text
    for line in text.splitlines():
        if "offending line:" in line:
            assert len(line) < 420, line  # cut to a few hundred characters
    if fault != "deaf":  # deaf says nothing until the request it never reads
        assert f": {fault} at request" in text, text  # stderr's tail
    assert outcome.seconds < outcome.limit(surface, fault, at), (outcome.seconds, text)
    assert outcome.survivors == [], f"processes of the adapter still alive: {outcome.survivors}"


FAULT_DRAWS = st.tuples(st.sampled_from(QUICK_FAULTS), st.integers(0, 3), st.integers(0, 2**16))


def judge(fault: str, at: int, seed: int) -> str:
    """One drawn fault in a campaign, its claims checked; its outcome label."""
    at = 0 if fault == "deaf" else at
    outcome = run_fault(fault, at, seed=seed)
    assert_one_system_error(outcome, fault, at, "run")
    return outcome.label
