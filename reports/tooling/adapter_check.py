"""`converge adapter check CMD`: the conformance kit for adapter authors.

It starts the adapter the way a campaign does and checks the contract of
docs/adapter-protocol.md one piece at a time: the handshake, version
negotiation, a few fixed cases whose answers were worked out by hand
(conformance/*.json, each with its `expect_final`), a batch, a case outside
the declared capabilities, a request it cannot read, the time limits and
shutdown. Each check prints PASS, FAIL (with what was wrong) or SKIP (with
why); the exit status is 0 when nothing failed, 1 otherwise.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from converge.engine.model.errors import SystemUnderTestError
from converge.engine.model.scenario import Scenario
from converge.engine.model.scenario_json import load_scenario
from converge.engine.model.system import Capabilities, CaseResult, applicability
from converge.reports.systems.adapter import protocol
from converge.reports.systems.adapter.client import AdapterProcess, Timeouts
from converge.reports.systems.adapter.kind import adapter_argv

CASES_FOLDER = Path(__file__).resolve().parent / "conformance"
Verdict = Literal["PASS", "FAIL", "SKIP"]


@dataclass(frozen=True)
class Check:
    name: str
    verdict: Verdict
    message: str

    def line(self) -> str:
        return f"{self.verdict}  {self.name}: {self.message}".replace("\n", "\n      ")


def fixed_cases() -> list[tuple[str, Scenario]]:
    """The kit's cases, by file stem, each with its hand-written expect_final."""
    return [(p.stem, load_scenario(p)) for p in sorted(CASES_FOLDER.glob("*.json"))]


def _rows(bag: Counter) -> str:
    return "[" + ", ".join(f"{list(r)}" + (f" x{n}" if n != 1 else "") for r, n in sorted(bag.items(), key=repr)) + "]"


def compare(expected: Counter, got: Counter) -> str | None:
    if got == expected:
        return None
    missing, extra = expected - got, got - expected
    text = f"expected {_rows(expected)}, got {_rows(got)}"
    if missing:
        text += f"; missing {_rows(missing)}"
    if extra:
        text += f"; unexpected {_rows(extra)}"
    return text


@dataclass
class Session:
    """One adapter process at a time: restarted (and greeted) when a failed check killed the last one."""

    argv: Sequence[str]
    timeouts: Timeouts
    process: AdapterProcess | None = None
    capabilities: Capabilities | None = None
    title: str = ""
    requests: int = 0
    slowest_run: float = 0.0
    hello_seconds: float = 0.0
    starts: list[float] = field(default_factory=list)

    def start(self) -> AdapterProcess:
        if self.process is None:
            started = time.perf_counter()
            process = AdapterProcess(self.argv)
            process.send(protocol.hello_request(), during="the handshake")
            reply = process.receive(self.timeouts.hello, during="the handshake")
            try:
                name, version, self.capabilities = protocol.read_hello(reply)
            except SystemUnderTestError as exc:
                raise process.fail(str(exc), during="the handshake", line=protocol.encode(reply)) from None
            self.hello_seconds = max(self.hello_seconds, time.perf_counter() - started)
            self.title = f"{name} {version}"
            self.process = process
        return self.process

    def run(self, scenarios: Sequence[Scenario]) -> list[CaseResult]:
        process = self.start()
        assert self.capabilities is not None
        self.requests += 1
        cases = [(f"k{self.requests}-{i}", s) for i, s in enumerate(scenarios)]
        during = f"run request {self.requests}"
        started = time.perf_counter()
        try:
            process.send(protocol.run_request(self.requests, cases), during=during)
            reply = process.receive(self.timeouts.run(len(cases)), during=during)
            try:
                return protocol.read_results(reply, self.requests, cases, self.capabilities.output)
            except SystemUnderTestError as exc:
                raise process.fail(str(exc), during=during, line=protocol.encode(reply)) from None
        except SystemUnderTestError:
            self.process = None
            raise
        finally:
            self.slowest_run = max(self.slowest_run, time.perf_counter() - started)

    def close(self) -> int | None:
        if self.process is None:
            return None
        process, self.process = self.process, None
        return process.shutdown(self.timeouts.shutdown)


def _answer(result: CaseResult, expected: Counter) -> tuple[Verdict, str]:
    if result.status != "ok":
        return "FAIL", (f"the declared capabilities cover this case, but the adapter answered {result.status}: "
                        f"{result.message}")
    diff = compare(expected, result.folded())
    return ("PASS", f"{sum(expected.values())} row(s) as expected") if diff is None else ("FAIL", diff)


def check_adapter(argv: Sequence[str], *, timeouts: Timeouts = Timeouts(),
                  echo: Callable[[str], None] = print) -> list[Check]:
    """Run every check against the adapter command; each is echoed as it finishes."""
    checks: list[Check] = []

    def record(name: str, verdict: Verdict, message: str) -> None:
        checks.append(Check(name, verdict, message))
        echo(checks[-1].line())

    session = Session(argv, timeouts)
    try:
        session.start()
    except SystemUnderTestError as exc:
        record("handshake", "FAIL", str(exc))
        echo("(the other checks need a working handshake)")
        return checks
    caps = session.capabilities
    assert caps is not None
    record("handshake", "PASS", f"{session.title}, protocol 1, answered in {session.hello_seconds:.1f} s")
    record("capabilities", "PASS", ", ".join(f"{k}={v}" for k, v in caps.to_json().items()))
    cases = fixed_cases()
    applicable = [(n, s) for n, s in cases if applicability(s, caps) is None]
    for name, scenario in cases:
        reason = applicability(scenario, caps)
        if reason is not None:
            record(f"case {name}", "SKIP", f"not applicable: {reason}")
            continue
        try:
            verdict, message = _answer(session.run([scenario])[0], _expected(scenario))
        except SystemUnderTestError as exc:
            verdict, message = "FAIL", str(exc)
        record(f"case {name}", verdict, message)
    _check_batch(session, applicable, record)
    _check_unsupported(session, cases, caps, record)
    _check_malformed(session, applicable, record)
    code = session.close()
    record("shutdown", "PASS" if code == 0 else "FAIL",
           "exited with status 0" if code == 0 else
           (f"exited with status {code}" if code is not None else
            f"did not exit within {timeouts.shutdown:g} s of the shutdown message (killed)"))
    _check_versions(argv, timeouts, record)
    if any("timed out" in c.message for c in checks):
        record("time limits", "FAIL", "an answer did not come in time (above)")
    else:
        record("time limits", "PASS", f"every answer came in time: hello {session.hello_seconds:.1f} s of "
               f"{timeouts.hello:g} s, slowest run request {session.slowest_run:.1f} s (limit {timeouts.run_base:g} s "
               f"+ {timeouts.run_per_case:g} s per case)")
    return checks


def _expected(scenario: Scenario) -> Counter:
    return Counter(tuple(r) for r in scenario.expect_final or ())


def _check_batch(session: Session, applicable: list[tuple[str, Scenario]], record: Callable) -> None:
    if len(applicable) < 2:
        record("batch", "SKIP", "fewer than two fixed cases apply")
        return
    caps = session.capabilities
    assert caps is not None
    chosen = list(reversed(applicable))[: caps.max_batch]
    try:
        results = session.run([s for _, s in chosen])
    except SystemUnderTestError as exc:
        record("batch", "FAIL", str(exc))
        return
    wrong = [f"{name}: {answer[1]}" for (name, s), r in zip(chosen, results)
             if (answer := _answer(r, _expected(s)))[0] == "FAIL"]
    record("batch", "FAIL" if wrong else "PASS", "; ".join(wrong) if wrong else
           f"{len(chosen)} cases in one request, answered in order")


def _check_unsupported(session: Session, cases: list[tuple[str, Scenario]], caps: Capabilities,
                       record: Callable) -> None:
    outside = [(n, s, r) for n, s in cases if (r := applicability(s, caps)) is not None and
               "cannot drive state TTL" not in r]
    if not outside:
        record("unsupported case", "SKIP", "every fixed case is inside the declared capabilities")
        return
    name, scenario, reason = outside[0]
    try:
        result = session.run([scenario])[0]
    except SystemUnderTestError as exc:
        record("unsupported case", "FAIL", f"{name} ({reason}) must be answered unsupported or error, not end the "
               f"adapter: {exc}")
        return
    if result.status != "ok":
        record("unsupported case", "PASS", f"{name} ({reason}): {result.status}: {result.message}")
        return
    diff = compare(_expected(scenario), result.folded())
    record("unsupported case", "PASS" if diff is None else "FAIL",
           f"{name} ({reason}): answered ok, and correctly" if diff is None else
           f"{name} ({reason}) is outside the declared capabilities and the adapter answered it wrongly: {diff}")


def _check_malformed(session: Session, applicable: list[tuple[str, Scenario]], record: Callable) -> None:
    try:
        process = session.start()
        process.send({"type": "run", "request": 9000, "cases": "not a list of cases"}, during="a malformed request")
        reply = process.receive(session.timeouts.run(1), during="a malformed request")
    except SystemUnderTestError as exc:
        session.process = None
        record("malformed request", "FAIL", f"a run request whose cases are not a list must be answered "
               f"{{\"type\": \"error\", \"request\": 9000, \"message\": ...}}: {exc}")
        return
    if reply.get("type") != "error" or reply.get("request") != 9000 or not isinstance(reply.get("message"), str) \
            or set(reply) - {"type", "request", "message"}:
        session.close()
        record("malformed request", "FAIL", f"expected {{\"type\": \"error\", \"request\": 9000, \"message\": ...}}, "
               f"got {protocol.encode(reply).decode()[:200].strip()}")
        return
    if not applicable:
        record("malformed request", "PASS", f"answered with a request error: {reply['message']}")
        return
    name, scenario = applicable[0]
    try:
        verdict, message = _answer(session.run([scenario])[0], _expected(scenario))
    except SystemUnderTestError as exc:
        verdict, message = "FAIL", f"the adapter must stay up after a request error: {exc}"
    record("malformed request", verdict, f"answered with a request error, then {name}: {message}"
           if verdict == "PASS" else message)


def _check_versions(argv: Sequence[str], timeouts: Timeouts, record: Callable) -> None:
    try:
        process = AdapterProcess(argv)
        process.send({"type": "hello", "protocol": protocol.PROTOCOL, "versions": [999]}, during="a hello for "
                     "version 999")
        reply = process.receive(timeouts.hello, during="a hello offering only version 999")
    except SystemUnderTestError as exc:
        record("version negotiation", "FAIL", f"offered only version 999, the adapter must answer "
               f"{{\"type\": \"error\", \"message\": ...}}: {exc}")
        return
    code = process.wait_exit(timeouts.shutdown)
    process.kill()
    if reply.get("type") != "error" or not isinstance(reply.get("message"), str):
        record("version negotiation", "FAIL", f"offered only version 999, expected an error message, got "
               f"{protocol.encode(reply).decode()[:200].strip()}")
    elif code is None:
        record("version negotiation", "FAIL", f"answered an error but did not exit within {timeouts.shutdown:g} s")
    else:
        record("version negotiation", "PASS", f"refused version 999 ({reply['message']}) and exited")


def run_adapter_check(command: str, *, timeouts: Timeouts = Timeouts()) -> int:
    """The CLI's entry: 0 when no check failed and some fixed case was compared, 1 when a check failed, 2 when
    no answer was compared (not checked)."""
    checks = check_adapter(adapter_argv(command), timeouts=timeouts)
    failed = [c for c in checks if c.verdict == "FAIL"]
    passed = sum(c.verdict == "PASS" for c in checks)
    skipped = sum(c.verdict == "SKIP" for c in checks)
    print(f"\n{passed} passed, {len(failed)} failed, {skipped} skipped")
    if failed:
        return 1
    if not any(c.name.startswith("case ") and c.verdict == "PASS" for c in checks):
        print("not checked: no fixed case lies inside the declared capabilities, so no answer of the adapter was "
              "compared; the protocol checks alone do not pass the kit")
        return 2
    return 0

