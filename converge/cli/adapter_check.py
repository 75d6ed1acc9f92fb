"""`converge adapter check CMD`: the conformance kit for adapter authors.

It starts the adapter the way a campaign does and checks the contract of
docs/adapter-protocol.md one piece at a time: the handshake (and which
protocol version it negotiated), fixed cases whose answers were worked out by
hand (conformance/*.json, each with its `expect_final`), batches that switch
shapes, each declared setting's visible effect, a case outside the declared
capabilities, a request it cannot read, the time limits and shutdown. Each
check prints PASS, FAIL (naming the case and what was wrong) or SKIP (with
why); adapter_check_answers.py holds the answer checks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from converge.cli.adapter_check_answers import (
    Check,
    Record,
    Session,
    Verdict,
    answer_verdict,
    check_batches,
    check_fixed_cases,
    check_settings,
    compare,
    expected_final,
    fixed_cases,
)
from converge.engine.model.errors import SystemUnderTestError
from converge.engine.model.scenario import Scenario
from converge.engine.model.system import Capabilities, applicability
from converge.systems.adapter import protocol
from converge.systems.adapter.client import DEFAULT_TIMEOUTS, AdapterProcess, Timeouts
from converge.systems.adapter.system_type import adapter_argv

__all__ = ["Check", "check_adapter", "compare", "fixed_cases", "run_adapter_check"]


def check_adapter(argv: Sequence[str], *, timeouts: Timeouts = DEFAULT_TIMEOUTS, versions: Sequence[int] | None = None,
                  echo: Callable[[str], None] = print) -> list[Check]:
    """Run every check against the adapter command, offering `versions` (default: every version converge speaks);
    each check is echoed as it finishes."""
    checks: list[Check] = []

    def record(name: str, verdict: Verdict, message: str) -> None:
        checks.append(Check(name, verdict, message))
        echo(checks[-1].line())

    offered = tuple(versions or protocol.VERSIONS)
    session = Session(argv, timeouts, offered)
    try:
        session.start()
    except SystemUnderTestError as exc:
        record("handshake", "FAIL", str(exc))
        echo("(the other checks need a working handshake)")
        return checks
    caps = session.capabilities
    assert caps is not None
    record("handshake", "PASS", f"{session.title} (protocol version {session.version}, offered "
           f"{list(offered)}), answered in {session.hello_seconds:.1f} s")
    record("capabilities", "PASS", ", ".join(f"{k}={v}" for k, v in caps.to_json().items()))
    cases = fixed_cases()
    applicable = [(n, s) for n, s in cases if applicability(s, caps) is None]
    check_fixed_cases(session, cases, record)
    check_batches(session, cases, record)
    check_settings(session, record)
    _check_unsupported(session, cases, caps, record)
    _check_malformed(session, applicable, record)
    _check_shutdown(session, record)
    _check_versions(argv, timeouts, record)
    if any("timed out" in c.message for c in checks):
        record("time limits", "FAIL", "an answer did not come in time (above)")
    else:
        record("time limits", "PASS", f"every answer came in time: hello {session.hello_seconds:.1f} s of "
               f"{timeouts.hello:g} s, slowest run request {session.slowest_run:.1f} s (limit {timeouts.run_base:g} s "
               f"+ {timeouts.run_per_case:g} s per case)")
    return checks


def _check_shutdown(session: Session, record: Record) -> None:
    """`shutdown` to a live adapter: one a failed check ended is started again first, so that this check is about
    the shutdown alone."""
    try:
        session.start()
    except SystemUnderTestError as exc:
        record("shutdown", "FAIL", f"the adapter, started again after a failed check, did not greet: {exc}")
        return
    code = session.close()
    limit = session.timeouts.shutdown
    record("shutdown", "PASS" if code == 0 else "FAIL",
           "exited with status 0" if code == 0 else
           (f"exited with status {code}" if code is not None else
            f"did not exit within {limit:g} s of the shutdown message (killed)"))


def _check_unsupported(session: Session, cases: list[tuple[str, Scenario]], caps: Capabilities,
                       record: Record) -> None:
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
    diff = compare(expected_final(scenario), result.folded())
    record("unsupported case", "PASS" if diff is None else "FAIL",
           f"{name} ({reason}): answered ok, and correctly" if diff is None else
           f"{name} ({reason}) is outside the declared capabilities and the adapter answered it wrongly: {diff}")


def _check_malformed(session: Session, applicable: list[tuple[str, Scenario]], record: Record) -> None:
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
        verdict, message = answer_verdict(session.run([scenario])[0], expected_final(scenario))
    except SystemUnderTestError as exc:
        verdict, message = "FAIL", f"the adapter must stay up after a request error: {exc}"
    record("malformed request", verdict, f"answered with a request error, then {name}: {message}"
           if verdict == "PASS" else message)


def _check_versions(argv: Sequence[str], timeouts: Timeouts, record: Record) -> None:
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


def run_adapter_check(command: str, *, timeouts: Timeouts = DEFAULT_TIMEOUTS, version: int | None = None) -> int:
    """The CLI's entry: 0 when no check failed and some fixed case was compared, 1 when a check failed, 2 when
    no answer was compared (not checked). `version` forces the one protocol version offered."""
    checks = check_adapter(adapter_argv(command), timeouts=timeouts, versions=None if version is None else [version])
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

