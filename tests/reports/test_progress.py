"""A campaign's progress on stderr (reports/progress.py): what it says, how often, and when the system starts."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import strategies as st

from converge.cli.main import main
from converge.properties.campaign import run_property
from converge.properties.progress import PropertyProgress
from converge.properties.spec import PropertySpec
from converge.reports.options import RunOptions
from converge.reports.progress import CampaignProgress
from converge.systems.campaign import run_system_campaign
from tests.support.fake_systems import DroppingSystemType


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def log(clock: FakeClock, **kw) -> tuple[CampaignProgress, io.StringIO]:
    """A progress writer as in a CI log (not a terminal), on the fake clock."""
    stream = io.StringIO()
    return CampaignProgress(stream, tty=False, clock=clock, **kw), stream


def moment(phase: str = "running", examples: int = 1, **kw) -> PropertyProgress:
    return PropertyProgress("fake", "p", phase, examples, 50, **kw)  # type: ignore[arg-type]


def test_a_log_gets_a_line_per_phase_change_and_at_most_one_per_interval_between() -> None:
    clock = FakeClock()
    watch, stream = log(clock, interval=10.0)
    watch.begin(0, 2)
    for t in range(13):  # one example a second
        clock.now = t
        watch(moment(examples=t + 1, cases=t + 1, compared=t + 1))
    clock.now = 13
    watch(moment("shrinking", 14, cases=14, compared=14, shrink_steps=1, best_events=7, best_cases=1,
                 shrink_seconds=0.0, budget=120.0))
    clock.now = 14
    watch(moment("shrinking", 15, shrink_steps=2, best_events=5, best_cases=1, shrink_seconds=1.0, budget=120.0))
    clock.now = 15
    watch(moment("done", 15, cases=15, compared=15, budget=120.0, stopped=True))
    assert stream.getvalue().splitlines() == [
        "[1/2] fake/p: example 1/50, 1 compared, 0 s",
        "[1/2] fake/p: example 11/50, 11 compared, 10 s",
        "[1/2] fake/p: shrinking: step 1, best case 7 events / 1 case, 0 s (budget 120 s)",
        "[1/2] fake/p: done: 15 examples, 15 compared, 15 s, shrink stopped after 120 s",
    ]


def test_a_system_campaign_counts_batches_and_the_cases_sent() -> None:
    clock = FakeClock()
    watch, stream = log(clock, unit=("batch", "batches"))
    watch(moment(examples=3, cases=41, compared=40))
    assert stream.getvalue() == "fake/p: batch 3/50, 41 cases sent, 40 compared, 0 s\n"


def test_a_quick_property_shows_nothing_in_a_log_and_a_slow_one_shows_once_it_is_slow() -> None:
    clock = FakeClock()
    watch, stream = log(clock, quiet_for=5.0)
    watch(moment())
    clock.now = 2
    watch(moment("done"))
    assert stream.getvalue() == ""
    slow = PropertyProgress("fake", "slow", "running", 1, 50)
    clock.now = 3
    watch(slow)
    clock.now = 9
    watch(PropertyProgress("fake", "slow", "running", 2, 50, cases=2, compared=2))
    assert stream.getvalue() == "fake/slow: example 2/50, 2 compared, 6 s\n"


def test_on_a_terminal_the_line_is_redrawn_in_place_and_erased_at_the_end() -> None:
    clock = FakeClock()
    stream = io.StringIO()
    watch = CampaignProgress(stream, tty=True, clock=clock, redraw=0.1)
    watch(moment(examples=1))
    clock.now = 0.05
    watch(moment(examples=2))  # too soon after the last: not drawn
    clock.now = 1.0
    watch(moment(examples=3))
    watch.finish()
    text = stream.getvalue()
    assert "\n" not in text and text.count("\r") == 4  # two lines drawn, and the erasing one (\r, blanks, \r)
    assert "example 1/50" in text and "example 2/50" not in text and "example 3/50" in text
    assert text.endswith("\r")


def slow_spec(clock: FakeClock, limit: int) -> PropertySpec:
    """Each example costs a second of `clock`; it fails when its numbers sum past `limit`."""
    def check(xs: list[int]) -> None:
        clock.now += 1.0
        assert sum(xs) <= limit

    return PropertySpec("fake", "slow_sum", lambda: st.tuples(st.lists(st.integers(0, 10**6))), check, examples=30)


def test_run_property_reports_its_progress_as_it_runs() -> None:
    clock = FakeClock()
    watch, stream = log(clock, interval=10.0)
    result = run_property(slow_spec(clock, limit=10**9), seed=3, progress=watch, clock=clock)
    assert result.ok and result.examples == 30
    assert stream.getvalue().splitlines() == [
        "fake/slow_sum: example 0/30, 0 compared, 0 s",  # at once, before the first example runs
        "fake/slow_sum: example 10/30, 10 compared, 10 s",
        "fake/slow_sum: example 20/30, 20 compared, 20 s",
        "fake/slow_sum: example 30/30, 30 compared, 30 s",
        "fake/slow_sum: done: 30 examples, 30 compared, 30 s",
    ]


def test_run_property_reports_its_shrinking() -> None:
    clock = FakeClock()
    watch, stream = log(clock, interval=10.0)
    result = run_property(slow_spec(clock, limit=1000), seed=3, progress=watch, clock=clock)
    assert result.failure_args == ([1001],)
    lines = stream.getvalue().splitlines()
    assert any(line.startswith("fake/slow_sum: shrinking: step ") and "best case 0 events / 0 cases" in line
               for line in lines)  # a list of numbers holds no scenario
    assert lines[-1].startswith(f"fake/slow_sum: done: {result.examples} examples")
    assert len(lines) <= clock.now / 10 + 3  # one per 10 s, and the three phase changes


def test_a_system_campaign_says_it_starts_the_system_before_it_is_up_and_notes_a_stopped_shrink(
        tmp_path, capsys) -> None:
    stream = io.StringIO()
    kind = DroppingSystemType(stream)
    options = RunOptions(examples=60, seed=2, family="regular", property="final_equals_oracle", system="reference",
                         reports=tmp_path, shrink_budget=0, batch=20)
    watch = CampaignProgress(stream, tty=False, unit=("batch", "batches"))
    assert run_system_campaign(options, kind, watch=watch) == 1
    assert kind.seen == ["starting reference (a fake, ~0 s)...\n"]
    lines = stream.getvalue().splitlines()
    assert lines[1].startswith("dropping 0 is up (started in ") and lines[1].endswith("s); 1 property to run")
    assert lines[2] == "[1/1] regular/final_equals_oracle: batch 0/3, 0 cases sent, 0 compared, 0 s"  # 60 = 3 x 20
    assert lines[-1].startswith("[1/1] regular/final_equals_oracle: done: ")
    assert lines[-1].endswith(", shrink stopped after 0 s")
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("dropping 0"))
    assert "diverged (shrink stopped after 0 s)" in row
    (report,) = (tmp_path / "latest").glob("final-equals-oracle-*.json")
    assert json.loads(report.read_text())["meta"]["converge_failure"]["shrink_stopped_after_s"] == 0.0
    (markdown,) = (tmp_path / "latest").glob("final-equals-oracle-*.md")
    assert "| shrinking | stopped after 0 s (the shrink budget)" in markdown.read_text()
    summary = json.loads((tmp_path / "latest" / "summary.json").read_text())
    assert summary["properties"][0]["shrink_stopped_after_s"] == 0.0


def test_the_command_line_takes_a_shrink_budget_and_refuses_one_past_hypothesis_own_limit(capsys) -> None:
    with pytest.raises(SystemExit) as refused:
        main(["run", "--family", "regular", "--property", "final_equals_oracle", "--examples", "3",
              "--shrink-budget", "300", "--no-reports"])
    assert refused.value.code == 2
    assert "--shrink-budget: 300 is not from 0 to 240 seconds" in capsys.readouterr().err
    assert main(["run", "--family", "regular", "--property", "final_convergence", "--examples", "3",
                 "--shrink-budget", "30", "--no-reports"]) == 0
    assert main(["run", "--runtime", "spark", "--shrink-budget", "30", "--no-reports"]) == 2  # it never shrinks
    assert "the Spark runtime's campaign does not shrink" in capsys.readouterr().err


def test_a_progress_display_that_breaks_stops_showing_and_never_fails_the_property() -> None:
    clock = FakeClock()
    told: list[str] = []

    def closed_pipe(p: PropertyProgress) -> None:
        told.append(p.phase)
        raise BrokenPipeError(32, "Broken pipe")

    result = run_property(slow_spec(clock, limit=10**9), seed=3, progress=closed_pipe, clock=clock)
    assert result.ok and result.examples == 30 and told == ["running"]


def test_the_embedded_table_says_when_shrinking_stopped(capsys) -> None:
    from converge.cli.commands.run import print_results
    from converge.properties.registry import select

    spec = select("regular", "final_convergence")[0]
    clock = FakeClock()
    stopped = run_property(slow_spec(clock, limit=1000), seed=3, shrink_budget=0, clock=clock)
    print_results([spec], [stopped], stats=False)
    row = capsys.readouterr().out.splitlines()[2]
    assert row.split()[:2] == ["fake", "slow_sum"] and "(shrink stopped after 0 s)" in row
