"""converge run's CI conventions (issue 28): --junit-xml, --maxfail/-x, --last-failed, -k, [tool.converge] and
progress lines in a log, on a campaign of four small properties with a known divergence and a known crash."""

from __future__ import annotations

import io
import json
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import strategies as st

from converge.cli.commands import run as run_command
from converge.cli.main import main
from converge.cli.selection import compile_keyword, narrow, select_names
from converge.engine.model.errors import UsageError
from converge.engine.model.system import CaseResult
from converge.properties.divergence import Divergence, PropertyFailure
from converge.properties.spec import PropertySpec
from converge.reports import failure
from tests.support.paths import EXAMPLES, SCENARIOS
from tests.support.small_scenarios import TLP


def holds(n: int) -> None:
    assert n >= 0


def diverges(scenario) -> None:
    raise PropertyFailure(Divergence("diverges", scenario, "by design: this property always diverges"))


def crashes(n: int) -> None:
    raise RuntimeError("by design: this property always crashes")


FAKE = [PropertySpec("fake", "holds", lambda: st.tuples(st.integers(0, 9)), holds, examples=3),
        PropertySpec("fake", "diverges", lambda: st.just((TLP,)), diverges, examples=3),
        PropertySpec("fake", "crashes", lambda: st.tuples(st.integers(0, 9)), crashes, examples=3),
        PropertySpec("other", "holds_too", lambda: st.tuples(st.integers(0, 9)), holds, examples=3)]


@pytest.fixture
def fake(monkeypatch, tmp_path: Path) -> Path:
    """`converge run` sees only FAKE; the working directory is a fresh one (no pyproject.toml above it is read
    unless a test writes one)."""
    monkeypatch.setattr(run_command, "select", lambda family=None, name=None: [
        s for s in FAKE if (family is None or s.family == family) and (name is None or s.name == name)])
    monkeypatch.setattr(run_command, "families", lambda: ["fake", "other"])
    monkeypatch.setattr(failure, "draw_timeline", lambda *a, **kw: None)  # no picture: seconds saved per report
    monkeypatch.delenv("CONVERGE_REPORTS_DIR", raising=False)
    work = tmp_path / "project" / "sub"
    work.mkdir(parents=True)
    (tmp_path / "project" / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    monkeypatch.chdir(work)
    return tmp_path


def parse(path: Path) -> tuple[dict[str, str], dict[str, ET.Element]]:
    root = ET.parse(path).getroot()  # the stdlib's parser: what a CI system reads
    (suite,) = root.findall("testsuite")
    return dict(suite.attrib), {f"{c.get('classname')}/{c.get('name')}": c for c in suite.findall("testcase")}


def test_junit_xml_has_one_testcase_per_property_with_the_failure_report_and_its_replay(fake: Path, capsys) -> None:
    out = fake / "junit.xml"
    code = main(["run", "--seed", "4", "--reports-dir", str(fake / "reports"), "--junit-xml", str(out)])
    assert code == 3  # a crash is the worst outcome
    suite, cases = parse(out)
    assert (suite["tests"], suite["failures"], suite["errors"], suite["skipped"]) == ("4", "1", "1", "0")
    assert list(cases) == ["fake/holds", "fake/diverges", "fake/crashes", "other/holds_too"]
    assert list(cases["fake/holds"]) == [] and list(cases["other/holds_too"]) == []
    (failure,) = cases["fake/diverges"]
    assert failure.tag == "failure" and failure.get("type") == "diverged"
    report = next(Path(p) for p in (fake / "reports").glob("*-run-*/*.json") if p.name != "summary.json")
    assert f"report {report}" in failure.get("message") and f"converge replay {report}" in failure.get("message")
    assert "by design: this property always diverges" in failure.text
    (error,) = cases["fake/crashes"]
    assert error.tag == "error" and error.get("type") == "crashed" and "always crashes" in error.get("message")
    assert "converge run -k fake/crashes --seed 4" in error.get("message")  # no report file: how to rerun it
    assert all(float(c.get("time")) >= 0 for c in cases.values())
    assert f"junit: {out}" in capsys.readouterr().out


def test_maxfail_stops_after_n_failures_and_reports_the_rest_as_not_run(fake: Path, capsys) -> None:
    out = fake / "junit.xml"
    assert main(["run", "-x", "--seed", "4", "--reports-dir", str(fake / "reports"), "--junit-xml", str(out)]) == 1
    table = capsys.readouterr().out
    assert "not run: --maxfail 1 reached (fake/diverges failed)" in table
    assert "1 passed, 1 diverged, 2 not run (" in table
    suite, cases = parse(out)
    assert (suite["tests"], suite["failures"], suite["errors"], suite["skipped"]) == ("4", "1", "0", "2")
    assert [c[0].tag for c in (cases["fake/crashes"], cases["other/holds_too"])] == ["skipped", "skipped"]
    summary = json.loads(next((fake / "reports").glob("*-run-*/summary.json")).read_text())
    assert (summary["passed"], summary["failed"], summary["not_run"]) == (1, 1, 2)
    assert [r["outcome"] for r in summary["properties"]] == ["passed", "diverged", "not run", "not run"]
    assert "--maxfail 1 reached" in cases["other/holds_too"][0].get("message")
    assert main(["run", "--maxfail", "2", "--seed", "4", "--no-reports"]) == 3
    table = capsys.readouterr().out
    assert "not run: --maxfail 2 reached (fake/diverges, fake/crashes failed)" in table and "1 not run (" in table


def test_k_selects_by_family_and_property_names_and_refuses_what_selects_nothing(fake: Path, capsys) -> None:
    assert main(["run", "-k", "holds and not other", "--seed", "1", "--no-reports"]) == 0
    out = capsys.readouterr().out
    assert "1 passed (3 examples asked" in out and "holds_too" not in out and "diverges" not in out
    assert main(["run", "-k", "(diverges or", "--no-reports"]) == 2
    assert "-k '(diverges or': expected a name, 'not' or '(' but the expression ended at position 13" in \
        capsys.readouterr().err
    assert main(["run", "-k", "nothing_is_called_this", "--no-reports"]) == 2
    assert "selects no property" in capsys.readouterr().err


def test_last_failed_reruns_the_failed_properties_with_their_seeds(fake: Path, capsys) -> None:
    reports = fake / "reports"
    assert main(["run", "--last-failed", "--reports-dir", str(reports)]) == 2
    assert "no earlier `converge run` left a summary" in capsys.readouterr().err
    assert main(["run", "--reports-dir", str(reports), "--seed", "11"]) == 3
    capsys.readouterr()
    assert main(["run", "--last-failed", "--reports-dir", str(reports)]) == 3
    captured = capsys.readouterr()
    assert "rerunning 2 properties" in captured.err and "fake/diverges, fake/crashes" in captured.err
    latest = reports / (reports / "latest-run.txt").read_text().strip()
    rows = json.loads((latest / "summary.json").read_text())["properties"]
    assert [(r["family"], r["property"], r["seed"]) for r in rows] == [("fake", "diverges", 11),
                                                                        ("fake", "crashes", 11)]
    assert main(["run", "--last-failed", "--seed", "3", "--reports-dir", str(reports)]) == 2
    assert "--seed would change it" in capsys.readouterr().err
    assert main(["run", "-k", "holds", "--reports-dir", str(reports)]) == 0
    capsys.readouterr()  # a campaign that did not run them does not clear them (as pytest's --lf keeps them)
    assert main(["run", "--last-failed", "--reports-dir", str(reports)]) == 3
    assert "rerunning 2 properties" in capsys.readouterr().err


def test_pyproject_tool_converge_gives_defaults_that_flags_override(fake: Path, capsys) -> None:
    (fake / "project" / "pyproject.toml").write_text(
        "[project]\nname = 'x'\n\n[tool.converge]\nexamples = 2\nseed = 21\nreports-dir = 'ci-reports'\n")
    assert main(["run", "-k", "holds"]) == 0
    capsys.readouterr()
    folder = fake / "project" / "ci-reports"  # relative to the pyproject.toml, not to the working directory
    rows = json.loads((folder / (folder / "latest-run.txt").read_text().strip() / "summary.json").read_text())["properties"]
    assert [(r["examples"], r["seed"]) for r in rows] == [(2, 21), (2, 21)]
    assert main(["run", "-k", "holds", "--examples", "1", "--seed", "5"]) == 0
    capsys.readouterr()
    rows = json.loads((folder / (folder / "latest-run.txt").read_text().strip() / "summary.json").read_text())["properties"]
    assert [(r["examples"], r["seed"]) for r in rows] == [(1, 5), (1, 5)]


@pytest.mark.parametrize(("table", "problem"), [
    ("exampels = 3", "[tool.converge] exampels: unknown key"),
    ("examples = '3'", "[tool.converge] examples: expected a whole number of at least 1, got '3'"),
    ("seed = true", "[tool.converge] seed: expected a whole number, got True"),
    ("known = 'a.json'", "[tool.converge] known: expected a list of file paths, got 'a.json'"),
])
def test_pyproject_mistakes_are_usage_errors_naming_the_file_and_key(fake: Path, capsys, table: str,
                                                                      problem: str) -> None:
    path = fake / "project" / "pyproject.toml"
    path.write_text(f"[tool.converge]\n{table}\n")
    assert main(["run", "--no-reports"]) == 2
    assert f"converge: usage: {path.resolve()}: {problem}" in capsys.readouterr().err


def test_a_log_gets_a_line_per_finished_property_and_quiet_gets_none(fake: Path, capsys) -> None:
    main(["run", "--seed", "2", "--no-reports"])
    err = capsys.readouterr().err  # captured: not a terminal, as in a CI log
    for n, key in enumerate(["fake/holds", "fake/diverges", "fake/crashes", "other/holds_too"], 1):
        assert f"[{n}/4] {key}: done: " in err
    main(["run", "--seed", "2", "--no-reports", "--quiet", "-k", "holds"])
    assert capsys.readouterr().err == ""


def test_the_keyword_grammar() -> None:
    names = ["regular/final_convergence", "regular/ttl_expiry", "interval/late_rows", "dense/a-b"]
    assert select_names("regular and not TTL", names) == ["regular/final_convergence"]
    assert select_names("not (regular or dense)", names) == ["interval/late_rows"]
    assert select_names("a-b or late and rows", names) == ["interval/late_rows", "dense/a-b"]
    assert select_names("not not dense/a", names) == ["dense/a-b"]
    for expr, where in (("regular and", 12), ("and x", 1), ("a b", 3), ("(a", 3), ("a )", 3), ("()", 2)):
        with pytest.raises(UsageError, match=f"at position {where}$"):
            compile_keyword(expr)
    with pytest.raises(UsageError, match="--last-failed: none of the properties"):
        narrow(names, only=["gone/away"])


def test_a_system_campaign_takes_k_maxfail_and_writes_junit_per_system_property(tmp_path: Path, capsys) -> None:
    from converge.reports.options import RunOptions
    from converge.reports.progress import CampaignProgress
    from converge.systems.campaign import run_system_campaign
    from tests.support.fake_systems import Dropping, DroppingSystemType

    class Inventing(Dropping):  # every answer holds a row no join produces: every case diverges
        def run_cases(self, cases):
            return [CaseResult.ok(final=Counter({("invented",): 1})) for _ in cases]

    class InventingSystemType(DroppingSystemType):
        def open(self, **kw):
            return Inventing(self.seen, self.stream)

    stream = io.StringIO()
    out = tmp_path / "system.xml"
    options = RunOptions(examples=2, seed=2, system="reference", reports=None, shrink_budget=0, maxfail=1,
                         only=("regular/final_equals_oracle", "minibatch/final_equals_oracle"), junit=out)
    watch = CampaignProgress(stream, tty=False, unit=("batch", "batches"))
    assert run_system_campaign(options, InventingSystemType(stream), watch=watch) == 1
    table = capsys.readouterr().out
    assert "not run: --maxfail 1 reached (regular/final_equals_oracle failed)" in table
    suite, cases = parse(out)
    assert list(cases) == ["dropping 0/regular/final_equals_oracle", "dropping 0/minibatch/final_equals_oracle"]
    assert (suite["tests"], suite["failures"], suite["errors"], suite["skipped"]) == ("2", "1", "0", "1")
    (failure,) = cases["dropping 0/regular/final_equals_oracle"]
    assert failure.tag == "failure" and "converge run --system reference -k regular/final_equals_oracle --seed 2" \
        in failure.get("message")  # reports are off: no file to replay, the rerun command instead
    assert cases["dropping 0/minibatch/final_equals_oracle"][0].tag == "skipped"


def test_check_shows_each_phase_and_property_in_a_log(monkeypatch, capsys) -> None:
    from converge.properties import findings, query_check

    monkeypatch.setattr(query_check, "check_properties", lambda query, options, final: FAKE[:1])
    monkeypatch.setattr(query_check, "skipped_properties", lambda query, options: [])
    monkeypatch.setattr(findings, "all_findings", lambda query, options, run: [])
    query = EXAMPLES / "left_join_residual.sql"
    assert main(["check", str(query), "--examples", "2", "--seed", "1", "--no-reports"]) == 0
    lines = [re.sub(r"\b\d+ s\b", "N s", line) for line in capsys.readouterr().err.splitlines()]  # any speed
    assert lines == [f"check: reading {query} (N s)", "check: planning (N s)",
                     "check: running 1 properties, 2 examples each (N s)",
                     "[1/1] fake/holds: example 0/2, 0 compared, N s",
                     "[1/1] fake/holds: done: 2 examples, 2 compared, N s", "check: searching for findings (N s)"]
    assert main(["check", str(query), "--examples", "2", "--seed", "1", "--no-reports", "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_replay_shows_each_file_as_it_starts(capsys) -> None:
    folder = SCENARIOS / "regressions"
    files = sorted(folder.glob("*.json"))[:2]
    assert main(["replay", *map(str, files)]) == 0
    lines = [re.sub(r"\(\d+ s\)$", "(N s)", line) for line in capsys.readouterr().err.splitlines()]
    assert lines == [f"replay: [1/2] {files[0]} (N s)", f"replay: [2/2] {files[1]} (N s)"]


def test_stdout_into_a_pipe_is_written_line_by_line(monkeypatch) -> None:
    from converge.cli import main as cli

    raw = io.BytesIO()
    piped = io.TextIOWrapper(raw, encoding="utf-8")  # as stdout into a pipe: block-buffered
    monkeypatch.setattr(sys, "stdout", piped)
    print("before")
    assert raw.getvalue() == b""  # held back until the buffer fills
    cli._line_buffered_stdout()
    print("a line of a long command")
    assert raw.getvalue() == b"before\na line of a long command\n"  # each line as it is printed


def test_pyproject_system_and_known_lists_are_defaults_relative_to_the_file(tmp_path: Path, monkeypatch) -> None:
    from converge.cli.ci_options import with_project_defaults
    from converge.cli.main import build_parser
    from converge.cli.project_config import load_project_config

    monkeypatch.delenv("CONVERGE_REPORTS_DIR", raising=False)
    (tmp_path / "pyproject.toml").write_text(
        "[tool.converge]\nsystem = 'flink:2.1.0'\nknown = ['ci/known.json']\nno-known = true\njunit-xml = 'out.xml'\n")
    (tmp_path / "deep" / "er").mkdir(parents=True)
    config = load_project_config(tmp_path / "deep" / "er")
    args = with_project_defaults(build_parser().parse_args(["run"]), config)
    assert (args.system, args.known, args.no_known, args.junit_xml) == (
        "flink:2.1.0", [str(tmp_path.resolve() / "ci" / "known.json")], True, str(tmp_path.resolve() / "out.xml"))
    args = with_project_defaults(build_parser().parse_args(["run", "--system", "pathway", "--known", "mine.json",
                                                            "--junit-xml", "here.xml"]), config)
    assert (args.system, args.known, args.junit_xml) == ("pathway", ["mine.json"], "here.xml")
    args = with_project_defaults(build_parser().parse_args(["run", "--system", "none"]), config)
    assert (args.system, args.known, args.no_known) == (None, None, False)  # embedded: no known lists to apply


def test_k_on_a_system_campaign_from_the_command_line_and_the_campaigns_that_refuse_the_ci_options(
        tmp_path: Path, capsys) -> None:
    out = tmp_path / "reference.xml"
    assert main(["run", "--system", "reference", "-k", "semi_anti", "--examples", "2", "--seed", "1", "--no-reports",
                 "--quiet", "--junit-xml", str(out)]) == 0
    suite, cases = parse(out)
    assert suite["tests"] == "1" and [c.get("name") for c in cases.values()] == ["regular/semi_anti_equals_oracle"]
    assert main(["run", "--system", "reference", "-k", "no_such_thing", "--no-reports"]) == 2
    assert "-k 'no_such_thing' selects no property" in capsys.readouterr().err
    for argv, flag in ((["--runtime", "spark", "-k", "regular"], "-k/--last-failed"),
                       (["--system", "spark", "-x"], "--maxfail/-x"),
                       (["--runtime", "spark", "--junit-xml", str(out)], "--junit-xml")):
        assert main(["run", *argv, "--no-reports"]) == 2
        assert f"converge: usage: {flag}: not supported by" in capsys.readouterr().err


def test_a_slow_system_start_shows_that_it_is_still_starting(tmp_path: Path, capsys) -> None:
    import threading

    from converge.reports.options import RunOptions
    from converge.reports.progress import CampaignProgress
    from converge.systems.campaign import run_system_campaign
    from tests.support.fake_systems import Dropping, DroppingSystemType

    told = threading.Event()

    class Log(io.StringIO):
        def write(self, text: str) -> int:
            if text.startswith("still starting reference ("):
                told.set()
            return super().write(text)

    class SlowSystemType(DroppingSystemType):
        def open(self, **kw):
            assert told.wait(60), "no line while the system started"  # returns as soon as the line is written
            return Dropping(self.seen, self.stream)

    stream = Log()
    watch = CampaignProgress(stream, tty=False, unit=("batch", "batches"), interval=0.01)
    options = RunOptions(examples=1, seed=1, system="reference", reports=None, only=("regular/final_equals_oracle",))
    run_system_campaign(options, SlowSystemType(stream), watch=watch)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "starting reference (a fake, ~0 s)..."
    assert re.fullmatch(r"still starting reference \(\d+ s\)", lines[1])
    assert any(line.startswith("dropping 0 is up") for line in lines[2:])
