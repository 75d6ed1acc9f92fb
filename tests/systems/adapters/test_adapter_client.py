"""converge's side of the adapter protocol against fake adapters that misbehave in every way the contract names."""

from __future__ import annotations

import sys
import time

import pytest

from converge.engine.model.errors import SystemUnderTestError
from converge.engine.model.scenario import ChangeEvent, InputSpec, JoinSpec, Scenario
from converge.systems.adapter.client import KILL_WAIT, AdapterSystem, Timeouts
from tests.support.loaded_machine import SLACK
from tests.support.paths import FAKE_ADAPTERS
from tests.support.processes import gone

FAKE = str(FAKE_ADAPTERS / "fake.py")
QUICK = Timeouts(hello=20, run_base=2, run_per_case=0, run_per_event=0, shutdown=5)


def fake(mode: str = "good", timeouts: Timeouts = QUICK) -> AdapterSystem:
    return AdapterSystem([sys.executable, FAKE, mode], label=f"fake {mode}", timeouts=timeouts)


def case(n: int = 0) -> Scenario:
    a = InputSpec("a", (("k", "BIGINT"), ("s", "VARCHAR")), None, "insert_only")
    b = InputSpec("b", (("k", "BIGINT"),), None, "insert_only")
    return Scenario(f"c{n}", (a, b), JoinSpec(("a", "b"), ("inner",), ("a.k = b.k",)),
                    events=(ChangeEvent("a", "+I", (n, "x")),))


def test_a_good_adapter_is_greeted_batched_by_its_max_batch_and_shut_down() -> None:
    with fake() as system:
        assert (system.name, system.version, system.capabilities.max_batch) == ("fake", "0", 2)
        results = system.run_cases([case(i) for i in range(5)])
        assert [r.final for r in results] == [{(None, None, None): 1}] * 5
        assert system.requests == 3  # 2 + 2 + 1 cases
        pid = system.process.proc.pid
    assert system.process.proc.returncode == 0
    assert gone(pid)


def test_a_line_that_is_not_json_names_the_line() -> None:
    with pytest.raises(SystemUnderTestError) as info:
        fake("banner")
    text = str(info.value)
    assert "adapter fake banner, the handshake: it wrote a line that is not JSON" in text
    assert "offending line: Starting the engine ..." in text


def test_an_unknown_capability_is_named() -> None:
    with pytest.raises(SystemUnderTestError, match="unknown key 'colour'"):
        fake("unknown-key")


def test_a_hanging_adapter_times_out_and_its_process_group_is_killed() -> None:
    system = fake("hang")
    pid = system.process.proc.pid
    started = time.perf_counter()
    with pytest.raises(SystemUnderTestError) as info:
        system.run_cases([case()])
    assert time.perf_counter() - started < QUICK.run(1) + KILL_WAIT + SLACK  # stated: 2 s, checked below
    text = str(info.value)
    assert "run request 1 (its 1 cases not checked): no answer within 2 s (timed out)" in text
    assert "request 1: 1 cases" in text  # stderr's tail
    assert gone(pid)


def test_an_adapter_that_dies_reports_its_exit_status_and_stderr() -> None:
    system = fake("die")
    with pytest.raises(SystemUnderTestError) as info:
        system.run_cases([case()])
    text = str(info.value)
    assert "it closed its output (exit status 7)" in text and "engine exploded" in text


@pytest.mark.parametrize("mode, message", [
    ("wrong-id", r"results\[0\]\.id: expected 'c0'"),
    ("wrong-width", r"results\[0\]\.final\[0\]: expected a row of 3 values \(the join's output width\), got 2"),
    ("wrong-type", r"results\[0\]\.final\[0\]\[0\]: 'one' is not a BIGINT value"),
])
def test_a_result_that_breaks_the_contract_says_where(mode: str, message: str) -> None:
    system = fake(mode)
    with pytest.raises(SystemUnderTestError, match=message):
        system.run_cases([case()])


def test_a_command_that_does_not_exist_is_a_system_error() -> None:
    with pytest.raises(SystemUnderTestError, match="cannot start it"):
        AdapterSystem(["/nonexistent/adapter"], timeouts=QUICK)


def test_an_adapter_that_stops_reading_its_input_times_out_while_converge_sends() -> None:
    """A request larger than the pipe's buffer to an adapter that reads no more: the send itself keeps the
    request's time limit, where it used to block for ever."""
    hostile = str(FAKE_ADAPTERS / "hostile.py")
    system = AdapterSystem([sys.executable, hostile, "deaf", "0", "deaf-send"], label="deaf", timeouts=QUICK)
    big = case()
    big = Scenario(big.name, big.inputs, big.join, events=tuple(ChangeEvent("a", "+I", (i, "x" * 40))
                                                                for i in range(5000)))
    started = time.perf_counter()
    with pytest.raises(SystemUnderTestError) as info:
        system.run_cases([big])
    assert time.perf_counter() - started < QUICK.run(1) + KILL_WAIT + SLACK  # stated: 2 s, checked below
    text = str(info.value)
    assert "run request 1 (its 1 cases not checked): it did not read its input within 2 s (timed out)" in text
    assert gone(system.process.proc.pid)


def test_an_offending_line_is_shown_cut_with_its_length() -> None:
    from converge.systems.adapter.client import SHOWN_CHARS, shown_line

    assert shown_line(b'{"type": "x"}\n') == '{"type": "x"}'
    long = shown_line(b"y" * 5000 + b"\n")
    assert long == "y" * SHOWN_CHARS + " ... (5001 bytes)"
