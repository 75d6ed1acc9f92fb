"""An operator that keeps re-registering a due timer ends in NonTerminationError, in the runtime, the CLI and replay.

The seeded bug `interval_cleanup_timer_not_advanced` (converge/cli/
mutant_catalog.py) re-registers the interval join's cleanup timer at the
earliest remaining row's time, which is at or below the clock that fired it:
without the runtime's step budget every command below would hang.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from converge.cli import mutant_catalog
from converge.cli.main import main
from converge.engine.model.errors import EXIT_INTERNAL, NonTerminationError, exit_code
from converge.engine.model.scenario import ChangeEvent, ProcessingTimeEvent
from converge.engine.model.scenario_json import load_scenario, scenario_from_dict
from converge.engine.runtime.guard import MAX_SAME_TIMER_FIRINGS
from converge.engine.runtime.local import LocalRuntime
from converge.properties.interval import with_final

LOOPING = mutant_catalog.by_name("interval_cleanup_timer_not_advanced")[0]


def _processing_time_interval_join():
    return scenario_from_dict({
        "name": "processing-time interval join",
        "inputs": [{"name": "a", "columns": [["k", "BIGINT"], ["x", "BIGINT"]]},
                   {"name": "b", "columns": [["k", "BIGINT"], ["y", "BIGINT"]]}],
        "join": {"inputs": ["a", "b"], "types": ["inner"], "conditions": ["a.k = b.k"],
                 "interval": {"lower_ms": -1, "upper_ms": -1, "time": "processing"}},
        "events": [],
    })


# a row at 1 and a row at 2 of one key: the cleanup pass at 3 keeps the row at 2 and (the bug) re-arms at 2
EVENTS = [ProcessingTimeEvent(1), ChangeEvent("a", "+I", (0, 0)), ProcessingTimeEvent(2),
          ChangeEvent("a", "+I", (0, 0))]


def test_the_engine_without_the_bug_fires_the_same_stream_normally() -> None:
    rt = LocalRuntime(_processing_time_interval_join())
    for event in EVENTS:
        rt.process_event(event)
    rt.process_event(ProcessingTimeEvent(3))
    rt.process_event(ProcessingTimeEvent(10))
    assert rt.pending_timers() == 0


def test_a_looping_timer_raises_with_event_operator_time_and_bound_and_rolls_back() -> None:
    with mutant_catalog.applied(LOOPING):
        rt = LocalRuntime(_processing_time_interval_join())
        for event in EVENTS:
            rt.process_event(event)
        before = copy.deepcopy(rt.snapshot())
        with pytest.raises(NonTerminationError) as info:
            rt.process_event(ProcessingTimeEvent(3))
        message = str(info.value)
        assert message.startswith("event 4: operator interval_join fired its processing-time timer 2 ")
        assert f"bound {MAX_SAME_TIMER_FIRINGS} per event" in message and "processing time (3)" in message
        assert rt.snapshot() == {**before, "event_index": 5}  # the looping event left nothing but its place
    assert exit_code(info.value) == EXIT_INTERNAL


def _run_cli(reports: Path) -> int:
    # seed 6 draws a looping stream within its first 10 examples (generation no longer depends on which
    # modules the process loaded: properties/determinism.py)
    return main(["run", "--family", "interval", "--property", "matches_step_model", "--examples", "30",
                 "--seed", "6", "--reports-dir", str(reports)])


def test_converge_run_reports_a_looping_engine_as_a_failure_with_a_shrunk_counterexample(tmp_path, capsys) -> None:
    with mutant_catalog.applied(LOOPING):
        code = _run_cli(tmp_path)
    out = capsys.readouterr().out
    assert code == EXIT_INTERNAL                # a looping engine is a bug, not a divergence
    assert "INTERNAL ERROR interval/matches_step_model" in out and "NonTerminationError" in out
    reports = sorted(p for p in tmp_path.glob("*/matches-step-model-*.json") if p.parent.name != "latest")
    assert len(reports) == 1
    doc = json.loads(reports[0].read_text())
    assert "NonTerminationError" in doc["meta"]["converge_failure"]["message"]
    scenario = load_scenario(reports[0])
    assert len(scenario.events) <= 12           # shrunk: the loop needs a handful of events
    with mutant_catalog.applied(LOOPING):
        # the property ran the file with a final watermark on every input (interval.with_final); whether
        # Hypothesis found a processing-time or an event-time loop first depends on what it explored
        with pytest.raises(NonTerminationError, match="times without the (processing time|watermark)"):
            LocalRuntime(with_final(scenario)).run()
        assert main(["replay", str(reports[0])]) == EXIT_INTERNAL
    assert "NonTerminationError" in capsys.readouterr().out
    assert main(["replay", str(reports[0])]) == 0   # the engine without the bug passes the same file
