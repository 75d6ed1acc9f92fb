"""converge's side of the adapter protocol: an adapter command in its own process, spoken to in JSON lines.

An adapter is someone else's program wrapping someone else's engine, so
everything can go wrong: it may not start, hang in a JVM, print a log line
on stdout, answer another request, or die half-way. Each of these ends the
conversation the same way: the process group is killed (an adapter's JVM
children go with it) and a SystemUnderTestError names the adapter, the
request, the offending line and the tail of the adapter's stderr.
"""

from __future__ import annotations

import collections
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from converge.engine.model.errors import SystemUnderTestError
from converge.engine.model.scenario import Scenario
from converge.engine.model.system import CaseResult, System
from converge.reports.systems.adapter import protocol

STDERR_TAIL_LINES = 40
MAX_LINE_BYTES = 256 * 1024 * 1024   # a batch of results is one line; a line without an end is a broken adapter


@dataclass(frozen=True)
class Timeouts:
    """Seconds converge waits (docs/adapter-protocol.md): hello (a JVM starts), run (base + per case), shutdown."""

    hello: float = 120.0
    run_base: float = 30.0
    run_per_case: float = 1.0
    shutdown: float = 10.0

    def run(self, cases: int) -> float:
        return self.run_base + self.run_per_case * cases


_EOF = object()


class AdapterProcess:
    """The adapter command as a process: send a message, receive one within a time limit, stop it."""

    def __init__(self, argv: Sequence[str], *, label: str | None = None) -> None:
        self.argv = list(argv)
        self.label = label or " ".join(self.argv)
        self._lines: queue.Queue = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, start_new_session=True)
        except OSError as exc:
            raise SystemUnderTestError(f"adapter {self.label}: cannot start it: {exc.strerror or exc}") from None
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        try:
            while True:
                line = self.proc.stdout.readline(MAX_LINE_BYTES)
                if not line:
                    break
                self._lines.put(line)
        except (OSError, ValueError):
            pass
        self._lines.put(_EOF)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        try:
            for raw in self.proc.stderr:
                self._stderr.append(raw.decode("utf-8", "replace").rstrip("\n"))
        except (OSError, ValueError):
            pass

    def stderr_tail(self) -> str:
        time.sleep(0.05)  # let the reader thread take what the adapter printed last
        return "\n".join(self._stderr)

    def fail(self, what: str, *, during: str, line: bytes | None = None) -> SystemUnderTestError:
        """Kill the adapter; the error to raise, with the offending line and stderr's tail."""
        self.kill()
        text = f"adapter {self.label}, {during}: {what}"
        if line is not None:
            shown = line.decode("utf-8", "replace").rstrip("\n")
            text += f"\n  offending line: {shown[:200]}" + (" ..." if len(shown) > 200 else "")
        tail = self.stderr_tail()
        if tail:
            text += "\n  stderr (last lines):\n    " + tail.replace("\n", "\n    ")
        return SystemUnderTestError(text)

    def send(self, message: dict[str, Any] | bytes, *, during: str) -> None:
        data = message if isinstance(message, bytes) else protocol.encode(message)
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            code = self.proc.poll()
            raise self.fail(f"it stopped reading its input (exit status {code})", during=during) from None

    def receive(self, timeout: float, *, during: str) -> dict[str, Any]:
        """The next message, checked to be a JSON object with a type; a timeout, an exit or garbage raises."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise self.fail(f"no answer within {timeout:g} s (timed out)", during=during) from None
        if line is _EOF:
            try:
                code = self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = None
            raise self.fail(f"it closed its output (exit status {code})", during=during)
        if not line.endswith(b"\n"):
            raise self.fail(f"a line longer than {MAX_LINE_BYTES} bytes or without its end", during=during,
                            line=line)
        try:
            return protocol.decode(line)
        except SystemUnderTestError as exc:
            raise self.fail(f"it wrote {exc}", during=during, line=line) from None

    def wait_exit(self, timeout: float) -> int | None:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        """Kill the adapter's whole process group (its own children too)."""
        if self.proc.poll() is None or _group_alive(self.proc.pid):
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass

    def shutdown(self, timeout: float) -> int | None:
        """Ask the adapter to exit; its exit status (None when it had to be killed)."""
        code: int | None = None
        if self.proc.poll() is None:
            try:
                self.send({"type": "shutdown"}, during="shutdown")
                code = self.wait_exit(timeout)
            except SystemUnderTestError:
                code = self.proc.poll()
        else:
            code = self.proc.returncode
        self.kill()
        return code


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


class AdapterSystem(System):
    """A system behind an adapter command: started and greeted at construction, stopped by close()."""

    def __init__(self, argv: Sequence[str], *, label: str | None = None, timeouts: Timeouts = Timeouts()) -> None:
        self.timeouts = timeouts
        self.process = AdapterProcess(argv, label=label)
        self.requests = 0
        self.process.send(protocol.hello_request(), during="the handshake")
        reply = self.process.receive(timeouts.hello, during="the handshake")
        try:
            self.name, self.version, self.capabilities = protocol.read_hello(reply)
        except SystemUnderTestError as exc:
            raise self.process.fail(str(exc), during="the handshake") from None

    def run_cases(self, cases: Sequence[Scenario]) -> list[CaseResult]:
        out: list[CaseResult] = []
        size = self.capabilities.max_batch
        for start in range(0, len(cases), size):
            out += self._run_batch(cases[start:start + size])
        return out

    def _run_batch(self, scenarios: Sequence[Scenario]) -> list[CaseResult]:
        self.requests += 1
        request = self.requests
        cases = [(f"c{i}", s) for i, s in enumerate(scenarios)]
        during = f"run request {request} ({len(cases)} cases)"
        self.process.send(protocol.run_request(request, cases), during=during)
        reply = self.process.receive(self.timeouts.run(len(cases)), during=during)
        try:
            return protocol.read_results(reply, request, cases, self.capabilities.output)
        except SystemUnderTestError as exc:
            raise self.process.fail(str(exc), during=during, line=protocol.encode(reply)) from None

    def close(self) -> None:
        self.process.shutdown(self.timeouts.shutdown)
