"""The adapter's time limits: they grow with the request, the user can raise them (--system-timeout or
CONVERGE_SYSTEM_TIMEOUT), and a first request that times out is resent once to a restarted adapter."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

from converge.cli.main import main
from converge.engine.model.errors import SystemUnderTestError, UsageError
from converge.engine.model.scenario import ChangeEvent, Config, InputSpec, JoinSpec, Scenario
from converge.systems.adapter import client
from converge.systems.adapter.client import AdapterSystem, Timeouts, timeout_seconds
from converge.systems.adapter.rounds import request_rounds
from converge.systems.registry import open_system, system_type_of
from tests.support.paths import FAKE_ADAPTERS
from tests.support.processes import gone

FAKE = str(FAKE_ADAPTERS / "fake.py")
QUICK = Timeouts(hello=20, run_base=1.5, run_per_case=0, run_per_event=0, shutdown=5)


def case(n: int = 0, events: int = 1) -> Scenario:
    a = InputSpec("a", (("k", "BIGINT"), ("s", "VARCHAR")), None, "insert_only")
    b = InputSpec("b", (("k", "BIGINT"),), None, "insert_only")
    return Scenario(f"c{n}", (a, b), JoinSpec(("a", "b"), ("inner",), ("a.k = b.k",)),
                    events=tuple(ChangeEvent("a", "+I", (i, "x")) for i in range(events)))


def test_a_request_gets_a_base_plus_a_second_per_case_plus_a_hundredth_per_event() -> None:
    limits = Timeouts()
    assert limits.run(1) == 31.0
    assert limits.run(20, 400) == 30 + 20 + 4.0
    assert limits.run(500, 10_000) == 30 + 500 + 100.0
    assert limits.explain(20, 400) == "30 s + 1 s per case + 0.01 s per event = 54 s for 20 cases of 400 events"


def test_a_first_request_that_times_out_is_resent_once_to_a_restarted_adapter(tmp_path: Path,
                                                                              capsys: pytest.CaptureFixture) -> None:
    mark = tmp_path / "first-process"
    with AdapterSystem([sys.executable, FAKE, "slow-first", str(mark)], label="fake slow-first",
                       timeouts=QUICK) as system:
        first_pid = int(mark.read_text()) if mark.exists() else None
        results = system.run_cases([case()])
        assert [r.status for r in results] == ["ok"]
        assert system.restarts == 1
        assert first_pid is None  # the mark is written by the first request, not by the hello
        slow_pid = int(mark.read_text())
        assert slow_pid != system.process.proc.pid and gone(slow_pid)
        assert [r.status for r in system.run_cases([case(1), case(2)])] == ["ok", "ok"]
        assert system.restarts == 1
    assert capsys.readouterr().err.splitlines() == [
        "retrying: adapter fake slow-first: run request 1 timed out after 1.5 s; the first request of a session may "
        "meet a cold engine, so the adapter is restarted once and the request resent"]


def test_a_first_request_that_times_out_twice_is_a_system_error_naming_both_attempts_and_the_limit() -> None:
    system = AdapterSystem([sys.executable, FAKE, "hang"], label="fake hang", timeouts=QUICK)
    with pytest.raises(SystemUnderTestError) as info:
        system.run_cases([case(events=3)])
    text = str(info.value)
    assert text.startswith("adapter fake hang, run request 1 (its 1 cases not checked): no answer within 1.5 s "
                           "(timed out), on the second attempt: the first had timed out too, then the adapter was "
                           "restarted and the request resent; the limit was 1.5 s + 0 s per case + 0 s per event = "
                           "1.5 s for 1 cases of 3 events; give the system more time with --system-timeout SECONDS "
                           "or CONVERGE_SYSTEM_TIMEOUT=SECONDS"), text
    assert "request 1: 1 cases" in text  # the restarted adapter's stderr
    assert system.restarts == 1 and gone(system.process.proc.pid)
    with pytest.raises(SystemUnderTestError, match="failed earlier and was stopped"):
        system.run_cases([case()])


def test_a_later_request_that_times_out_is_not_resent() -> None:
    system = AdapterSystem([sys.executable, FAKE, "hang-later"], label="fake hang-later", timeouts=QUICK)
    assert [r.status for r in system.run_cases([case()])] == ["ok"]
    with pytest.raises(SystemUnderTestError) as info:
        system.run_cases([case(1)])
    assert "run request 2 (its 1 cases not checked): no answer within 1.5 s (timed out)" in str(info.value)
    assert "second attempt" not in str(info.value)
    assert system.restarts == 0


def test_the_limit_a_hanging_adapter_meets_grows_with_the_cases_and_events_of_the_request() -> None:
    grows = Timeouts(hello=20, run_base=1, run_per_case=0.25, run_per_event=0.05, shutdown=5)
    for cases, events, stated in ((1, 1, "1.3"), (2, 4, "1.9")):  # 1 + 0.25 * cases + 0.05 * events * cases
        system = AdapterSystem([sys.executable, FAKE, "hang"], label="fake hang", timeouts=grows)
        with pytest.raises(SystemUnderTestError) as info:
            system.run_cases([case(i, events) for i in range(cases)])
        assert f"no answer within {stated} s (timed out)" in str(info.value)


@pytest.mark.parametrize(("text", "wrong"), [
    ("soon", "expected a number of seconds, such as 120"), ("0", ".* above 0"), ("-5", ".* above 0"),
    ("nan", ".* above 0"), ("inf", ".* above 0"), ("1e9", "at most 604800 s")])
def test_a_bad_time_limit_is_a_usage_error_saying_what_was_wrong(text: str, wrong: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UsageError, match=f"--system-timeout '{text}': {wrong}"):
        timeout_seconds(text)
    monkeypatch.setenv("CONVERGE_SYSTEM_TIMEOUT", text)
    with pytest.raises(UsageError, match=f"CONVERGE_SYSTEM_TIMEOUT '{text}': {wrong}"):
        Timeouts.configured()


def test_the_flag_wins_over_the_environment_which_wins_over_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CONVERGE_SYSTEM_TIMEOUT", raising=False)
    assert Timeouts.configured() == Timeouts()
    monkeypatch.setenv("CONVERGE_SYSTEM_TIMEOUT", "45")
    assert Timeouts.configured().run(2) == 47 and Timeouts.configured().hello == 120
    assert Timeouts.configured(300).run(2) == 302 and Timeouts.configured(300).hello == 300
    command = f"cmd:{sys.executable} {FAKE} good"
    with open_system(command) as system:
        assert isinstance(system, AdapterSystem) and system.timeouts.run_base == 45
    with open_system(command, timeout=7.5) as system:
        assert isinstance(system, AdapterSystem) and system.timeouts.run_base == 7.5


def test_a_system_without_an_adapter_refuses_the_flag() -> None:
    with pytest.raises(UsageError, match="--system-timeout applies to systems behind an adapter"):
        system_type_of("reference", timeout=10)
    assert system_type_of("flink:1.19.0", timeout=10).timeout == 10  # nothing starts before open()


def _hanging_replay(tmp_path: Path, capsys: pytest.CaptureFixture, *flags: str) -> str:
    scenario = tmp_path / "one.json"
    scenario.write_text(json.dumps({
        "name": "one", "inputs": [{"name": "a", "columns": [["k", "BIGINT"]], "changelog_mode": "insert_only"},
                                  {"name": "b", "columns": [["k", "BIGINT"]], "changelog_mode": "insert_only"}],
        "join": {"inputs": ["a", "b"], "types": ["inner"], "conditions": ["a.k = b.k"]},
        "events": [{"input": "a", "kind": "+I", "row": [1]}, {"input": "b", "kind": "+I", "row": [1]}]}))
    code = main(["replay", str(scenario), "--system", f"cmd:{sys.executable} {FAKE} hang", *flags])
    captured = capsys.readouterr()
    assert code == 3, captured
    return captured.out + captured.err


def test_the_command_line_flag_and_the_environment_set_the_limit_and_the_flag_wins(
        tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONVERGE_SYSTEM_TIMEOUT", "0.5")
    text = _hanging_replay(tmp_path, capsys)
    assert "the limit was 0.5 s + 1 s per case + 0.01 s per event = 1.52 s for 1 cases of 2 events" in text
    text = _hanging_replay(tmp_path, capsys, "--system-timeout", "0.25")
    assert "the limit was 0.25 s + 1 s per case + 0.01 s per event = 1.27 s for 1 cases of 2 events" in text


def test_the_flag_is_refused_when_bad_or_without_a_system(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as info:
        main(["replay", str(tmp_path), "--system", "flink", "--system-timeout", "soon"])
    assert info.value.code == 2
    assert "--system-timeout: expected a number of seconds, such as 120" in capsys.readouterr().err
    assert main(["replay", str(tmp_path), "--system-timeout", "9"]) == 2
    assert "--system-timeout applies to a system under test (--system SPEC)" in capsys.readouterr().err


def test_run_and_check_take_the_flag_only_with_an_adapter_system(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    query = tmp_path / "query.sql"
    query.write_text("CREATE TABLE a (k BIGINT) WITH ('connector' = 'kafka', 'topic' = 'a', 'format' = 'json');\n"
                     "CREATE TABLE b (k BIGINT) WITH ('connector' = 'kafka', 'topic' = 'b', 'format' = 'json');\n"
                     "SELECT a.k, b.k FROM a JOIN b ON a.k = b.k;\n")
    assert main(["run", "--system-timeout", "9", "--examples", "1"]) == 2
    assert "--system-timeout applies to a system under test (--system SPEC)" in capsys.readouterr().err
    assert main(["check", str(query), "--system-timeout", "9", "--no-reports"]) == 2
    assert "--system-timeout applies to a system under test" in capsys.readouterr().err
    assert main(["check", str(query), "--system", "reference", "--system-timeout", "9", "--no-reports"]) == 2
    assert "not to converge's own engine" in capsys.readouterr().err
    assert main(["run", "--system", "reference", "--system-timeout", "9", "--examples", "1", "--no-reports"]) == 2
    assert "--system-timeout applies to systems behind an adapter (cmd:COMMAND, flink[:VERSION], " \
           "pathway[:VERSION]), not to --system reference" in capsys.readouterr().err


def _config_case(n: int, events: int, **config: object) -> Scenario:
    return dataclasses.replace(case(n, events), config=Config(**config))  # type: ignore[arg-type]


def test_a_paced_adapters_rounds_are_counted_per_job_of_the_request() -> None:
    """By hand from docs/flink.md "Arrival": two lead rounds a job, then two rounds per event of the job's longest
    case (record by record) or per bundle of each case (mini-batch); upsert sinks and restarts are jobs of their
    own, a restart with a 60-round gap."""
    assert request_rounds([case(0, 3), case(1, 7)], 2) == 2 + 2 * 7
    assert request_rounds([case(0, 3), case(1, 7)], 0) == 0
    assert request_rounds([case(0, 3), _config_case(1, 7, multi_join="on")], 2) == (2 + 2 * 3) + (2 + 2 * 7)
    mini = [_config_case(0, 5, mini_batch_size=2), _config_case(1, 4, mini_batch_size=2)]  # 3 + 2 bundles
    assert request_rounds(mini, 2) == 2 + 2 * 5
    alone = [_config_case(0, 4, restart_after=2), _config_case(1, 4, restart_after=2)]
    assert request_rounds(alone, 2) == 2 * (60 + 2 + 2 * 4)
    assert request_rounds([case(0, 0)], 2) == 2


def test_a_time_out_counts_the_paced_rounds_and_names_the_limit_and_the_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client.os, "getloadavg", lambda: (9.25, 4.5, 3.0))
    monkeypatch.setattr(client.os, "cpu_count", lambda: 2)
    limits = Timeouts(hello=20, run_base=1, run_per_case=0, run_per_event=0, run_per_round=0.05, shutdown=5)
    system = AdapterSystem([sys.executable, FAKE, "paced-hang-later"], label="fake paced", timeouts=limits)
    assert system.capabilities.rounds_per_event == 2
    assert [r.status for r in system.run_cases([case(0, 1)])] == ["ok"]
    with pytest.raises(SystemUnderTestError) as info:
        system.run_cases([case(1, 3), case(2, 1)])  # one job: 2 lead rounds + 2 per event of the longest (3)
    assert str(info.value).startswith(
        "adapter fake paced, run request 2 (its 2 cases not checked): no answer within 1.4 s (timed out); the limit "
        "was 1 s + 0 s per case + 0 s per event + 0.05 s per paced round = 1.4 s for 2 cases of 4 events in 8 "
        "rounds; give the system more time with --system-timeout SECONDS or CONVERGE_SYSTEM_TIMEOUT=SECONDS (the "
        "base of every request's limit, 1 s now); load average 9.2/4.5/3.0 (1/5/15 min) on 2 cores\n"), info.value
    assert gone(system.process.proc.pid)


def test_the_default_limit_gives_a_paced_round_a_quarter_second() -> None:
    assert Timeouts().run(20, 400, 82) == 30 + 20 + 4 + 20.5
    assert Timeouts().explain(20, 400, 82) == ("30 s + 1 s per case + 0.01 s per event + 0.25 s per paced round = "
                                               "74.5 s for 20 cases of 400 events in 82 rounds")
