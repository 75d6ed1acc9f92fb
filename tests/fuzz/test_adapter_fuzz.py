"""Hostile adapters: every fault of a system is one "system error" (exit 3) that names the adapter, the request,
the offending line and stderr's tail, within the stated time limit, and leaves no process of the adapter alive.

Each fault of tests/support/adapters/hostile.py is committed at a run request (or at the handshake) of a whole
campaign (`converge run --system cmd:...`) or check (`converge check --system cmd:...`); tests/fuzz/adapters.py
runs it and collects the outcome. Never Hypothesis's "Inconsistent results from replaying a test case!": the
first fault stops the property (no shrinking, no replay on a dead adapter), and the campaign's later
properties are "not checked". The short runs are part of the default suite; `--run-slow` runs the 100 MB and
300 MB lines, the check of every fault and a longer Hypothesis draw of faults, places and surfaces.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from converge.engine.model.scenario import ChangeEvent, InputSpec, JoinSpec, Scenario
from converge.systems.adapter.client import KILL_WAIT, AdapterSystem
from tests.conftest import examples
from tests.fuzz.adapters import (
    FAULT_DRAWS,
    HOSTILE,
    LINE_FAULTS,
    NOT_CHECKED_FAULTS,
    QUICK,
    QUICK_FAULTS,
    WHAT,
    assert_one_system_error,
    judge,
    kill,
    run_fault,
    survivors,
)
from tests.support.adapters import hostile
from tests.support.loaded_machine import SLACK


@pytest.mark.parametrize("fault", QUICK_FAULTS)
def test_a_fault_in_a_campaign_is_one_system_error(fault: str) -> None:
    at = 0 if fault == "deaf" else 2
    outcome = run_fault(fault, at)
    assert_one_system_error(outcome, fault, at, "run")
    if outcome.label == "system error" and at > 0:
        assert "not checked" in outcome.text  # reference/system_equals_reference, after the system died


@pytest.mark.parametrize("fault", ["garbage", "crash", "hang"])
def test_a_fault_at_the_handshake_is_one_system_error(fault: str) -> None:
    assert_one_system_error(run_fault(fault, 0), fault, 0, "run")


@pytest.mark.parametrize("fault", ["grandchild-exit"])
def test_a_fault_in_a_check_is_one_system_error(fault: str, tmp_path: Path) -> None:
    outcome = run_fault(fault, 1, surface="check", examples=3, tmp=tmp_path)
    assert_one_system_error(outcome, fault, 1, "check")


def test_a_result_list_in_another_order_is_one_system_error() -> None:
    outcome = run_fault("reordered", 1, examples=12, seed=3)
    assert_one_system_error(outcome, "reordered", 1, "run")
    assert "results[0].id: expected 'c0'" in outcome.text


def test_an_adapter_that_will_not_shut_down_is_killed_within_the_shutdown_limit() -> None:
    outcome = run_fault("ignore-shutdown", 1, examples=2)
    assert outcome.survivors == [] and outcome.seconds < outcome.limit("run", "ignore-shutdown", 1), outcome.text


def test_an_adapter_that_supports_nothing_is_not_checked() -> None:
    outcome = run_fault("unsupported", 1, examples=4)
    assert (outcome.label, outcome.exit_code) == ("not checked", 2), outcome.text
    assert outcome.survivors == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_ends_converge_and_every_process_of_its_adapter(tmp_path: Path, signum: signal.Signals) -> None:
    """SIGTERM or SIGINT to `converge run` while its adapter (and the adapter's grandchild, in its own session)
    hang: converge exits with 128 + the signal's number within seconds, and no process of the adapter is left."""
    tag = f"hostile-{signum.name}-{uuid.uuid4().hex[:8]}"
    command = f"cmd:{sys.executable} {HOSTILE} grandchild-hang 1 {tag}"
    converge = subprocess.Popen([sys.executable, "-m", "converge.cli.main", "run", "--system", command,
                                 "--examples", "2", "--reports-dir", str(tmp_path)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while len(survivors(tag, besides=converge.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)  # until the adapter and its grandchild run
        assert len(survivors(tag, besides=converge.pid)) == 2, "the hostile adapter never started its grandchild"
        started = time.monotonic()
        converge.send_signal(signum)
        _, err = converge.communicate(timeout=SLACK + 15)
        assert time.monotonic() - started < SLACK
    finally:
        converge.kill()
        left = survivors(tag, besides=converge.pid)
        kill(left)
    assert not left, f"processes of the adapter still alive: {left}"
    assert converge.returncode == 128 + signum, err
    assert f"interrupted by {signum.name}".encode() in err


def test_closing_an_adapter_whose_daemon_holds_its_output_ends_both_within_the_shutdown_limit() -> None:
    """The adapter exits when told; the process it daemonized (own session, re-parented to PID 1) keeps its
    stdout open. Closing once waited on that pipe for minutes and left the daemon running."""
    tag = f"hostile-daemon-{uuid.uuid4().hex[:8]}"
    system = AdapterSystem([sys.executable, str(HOSTILE), "daemon", "1", tag], label="daemon", timeouts=QUICK)
    try:
        assert [r.status for r in system.run_cases([_case()])] == ["unsupported"]
        assert len(survivors(tag)) == 2
        started = time.monotonic()
        system.close()
        assert time.monotonic() - started < QUICK.shutdown + KILL_WAIT + SLACK
        assert system.process.proc.returncode == 0
    finally:
        left = survivors(tag)
        kill(left)
    assert left == []


def _case() -> Scenario:
    a = InputSpec("a", (("k", "BIGINT"),), None, "insert_only")
    return Scenario("c", (a, replace(a, name="b")), JoinSpec(("a", "b"), ("inner",), ("a.k = b.k",)),
                    events=(ChangeEvent("a", "+I", (1,)),))


def test_the_hostile_adapter_knows_each_fault_the_suite_names() -> None:
    assert set(QUICK_FAULTS) | set(LINE_FAULTS) | set(WHAT) | set(NOT_CHECKED_FAULTS) <= set(hostile.FAULTS)


@pytest.mark.slow
@pytest.mark.parametrize("fault, size", [("huge", 100_000_000), ("endless", 300_000_000)])
def test_a_huge_line_is_one_system_error_cut_short(fault: str, size: int) -> None:
    outcome = run_fault(fault, 1, env={"HOSTILE_SIZE": str(size)})
    assert_one_system_error(outcome, fault, 1, "run")
    assert "offending line: xxxx" in outcome.text


@pytest.mark.slow
@pytest.mark.parametrize("fault", QUICK_FAULTS)
def test_every_fault_in_a_check_is_one_system_error(fault: str, tmp_path: Path) -> None:
    at = 0 if fault == "deaf" else 1
    outcome = run_fault(fault, at, surface="check", examples=3, tmp=tmp_path)
    assert_one_system_error(outcome, fault, at, "check")


@pytest.mark.slow
@settings(max_examples=examples(40), deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(FAULT_DRAWS)
def test_drawn_faults_long_run(draw: tuple[str, int, int]) -> None:
    judge(*draw)
