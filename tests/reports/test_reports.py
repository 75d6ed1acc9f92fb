"""Failure reports replay to the same failure without Hypothesis; the Markdown, picture and summary say enough."""

from __future__ import annotations

import ast
import json
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import strategies as st

from converge.cli.main import main
from converge.cli.mutant_catalog import applied, by_name, report_notes
from converge.engine.model.changelog import Change
from converge.engine.model.errors import NotCheckedError
from converge.engine.model.scenario_json import load_scenario, scenario_from_dict
from converge.oracle import DuckDBOracle
from converge.properties import interval
from converge.properties.campaign import PropertyResult, run_property
from converge.properties.divergence import Divergence, FailedCall, PropertyFailure
from converge.properties.exercise import Exercised
from converge.properties.registry import PropertySpec, select
from converge.properties.regular import snapshot_restore, tlp_partition
from converge.properties.replay import replay_path
from converge.reports.counts import Counts
from converge.reports.failure import failure_reporter, property_failures, write_failure_report
from converge.reports.location import reports_folder
from converge.reports.summary import write_summary
from tests.support.paths import ROOT
from tests.support.small_scenarios import AB, TLP

# Arrival-ordered MapState: a's three rows must join b in the order they arrived, also across a restore.
SNAPSHOT = scenario_from_dict({
    "name": "arrival order across a restore", "inputs": AB,
    "join": {"inputs": ["a", "b"], "types": ["inner"], "conditions": ["a.k = b.k"]},
    "config": {"map_state_order": "arrival"},
    "events": [{"input": "a", "kind": "+I", "row": [0, 1]}, {"input": "a", "kind": "+I", "row": [0, 2]},
               {"input": "a", "kind": "+I", "row": [0, 3]}, {"input": "b", "kind": "+I", "row": [0, 9]}],
})


def _failure(check, *args) -> PropertyFailure:
    with pytest.raises(PropertyFailure) as info:
        check(*args)
    return info.value


def test_a_failure_found_by_hypothesis_replays_to_the_same_failure(tmp_path: Path, capsys) -> None:
    (spec,) = select("regular", "prefix_consistency")
    mutant = by_name("padding_not_retracted_on_first_match")[0]
    with applied(mutant):
        result = run_property(spec, max_examples=200, seed=1,
                              on_failure=failure_reporter(tmp_path, notes=report_notes()))
        assert result.failure is not None and result.seed == 1
        d = result.failure.divergence
        scenario_file, md, png = (Path(p) for p in result.reports)
        assert main(["replay", str(scenario_file)]) == 1
        assert "reproduces the recorded failure" in capsys.readouterr().out
        (outcome,) = replay_path(scenario_file)
        (again,) = outcome.divergences
        assert (again.property, again.event_index, again.engine, again.expected) == \
            (d.property, d.event_index, d.engine, d.expected)
    saved = load_scenario(scenario_file)
    info = saved.meta["converge_failure"]
    assert info["property"] == "prefix_consistency" and info["seed"] == 1 and info["family"] == "regular"
    assert info["mutants"] == [mutant.name] and info["event_index"] == d.event_index
    assert saved.events == d.scenario.events
    assert saved.expect_final is not None  # the oracle's answer, checked by replay as well
    # with the bug gone, the same file passes: the property and the oracle's expectation both hold
    assert main(["replay", str(scenario_file)]) == 0
    assert "prefix_consistency" in capsys.readouterr().out and png.read_bytes()[:4] == b"\x89PNG"
    assert md.exists()


def test_a_property_with_extra_arguments_reruns_with_them(tmp_path: Path) -> None:
    with applied(by_name("residual_python_truthiness")[0]):
        # NOT over a disjunction: DuckDB 1.x folds NOT over a bare comparison into its opposite
        residual = "a.x > b.y OR a.x > 5"
        failure = _failure(tlp_partition, TLP, "a.k = b.k", residual)
        failure.call = FailedCall((TLP, "a.k = b.k", residual))  # what run_property records
        (path, *_) = write_failure_report(failure.divergence, tmp_path, seed=5, args=failure.call.args)
        args = json.loads(path.read_text())["meta"]["converge_failure"]["args"]
        assert args == [{"$scenario": "self"}, "a.k = b.k", residual]
        (broken,) = replay_path(path)
        assert [d.property for d in broken.divergences] == ["tlp_partition"]
    (fixed,) = replay_path(path)
    assert fixed.ok and fixed.checked[0] == "tlp_partition", fixed.problems


def test_snapshot_cut_is_recorded_and_replayed(tmp_path: Path) -> None:
    snapshot_restore(SNAPSHOT, 2)  # the real engine keeps arrival order across a restore
    with applied(by_name("restore_forgets_arrival_counter")[0]):
        d = _failure(snapshot_restore, SNAPSHOT, 2).divergence
        assert d.event_index == 3
        (path, md, *_) = write_failure_report(d, tmp_path, args=(SNAPSHOT, 2), family="regular", seed=9)
        (broken,) = replay_path(path)
        assert not broken.ok and broken.divergences[0].event_index == 3
    (fixed,) = replay_path(path)
    assert fixed.ok, fixed.problems
    assert "`2`" in md.read_text()  # the cut is shown with the other arguments


def test_markdown_report_has_sql_tables_diff_config_seed_and_picture(tmp_path: Path) -> None:
    with applied(by_name("null_keys_match")[0]):
        from converge.properties.regular import prefix_consistency

        null_keys = scenario_from_dict({
            "name": "null keys", "inputs": AB,
            "join": {"inputs": ["a", "b"], "types": ["left"], "conditions": ["a.k = b.k"]},
            "config": {"map_state_order": "hashmap"},
            "events": [{"input": "a", "kind": "+I", "row": [None, 1]},
                       {"input": "b", "kind": "+I", "row": [None, 2]}]})
        d = _failure(prefix_consistency, null_keys).divergence
        paths = write_failure_report(d, tmp_path, seed=42, family="regular", runtime="local")
    md = paths[1].read_text()
    assert _sql_of(md) == DuckDBOracle().sql_for(null_keys, "history")  # the query the property compared with
    for needed in ("# regular/prefix_consistency failed", "```sql", "`a` **left** `b` on `a.k = b.k`", "## Config",
                   "hashmap",
                   "| correct |", "## Input changelog", "### a (insert_only)", "| 0 | +I | NULL | 1 |",
                   "```diff", "+ [None, 1, None, 2]", "- [None, 1, None, None]", "seed 42",
                   f"![timeline]({paths[2].name})", "converge replay"):
        assert needed in md, needed
    assert paths[2].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_runner_writes_reports_only_through_the_reporter_it_is_given(tmp_path: Path, monkeypatch) -> None:
    def always_fails(scenario) -> None:
        raise PropertyFailure(Divergence("always_fails", scenario, "by design"))

    spec = PropertySpec("test", "always_fails",
                        lambda: st.just(TLP).map(lambda s: (s,)), always_fails)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONVERGE_REPORTS_DIR", raising=False)
    result = run_property(spec, max_examples=3)  # no reporter: nothing is written, under pytest or not
    assert result.failure is not None and result.seed is not None and result.reports == []
    assert list(tmp_path.iterdir()) == []
    result = run_property(spec, max_examples=3, on_failure=failure_reporter(tmp_path / "here"))
    assert sorted(p.suffix for p in (tmp_path / "here").iterdir()) == [".json", ".md", ".png"]
    assert sorted(Path(p).suffix for p in result.reports) == [".json", ".md", ".png"]


def test_the_reports_setting_is_read_in_one_place(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("CONVERGE_REPORTS_DIR", raising=False)
    assert reports_folder() == Path("converge-reports") and not reports_folder().is_absolute()
    monkeypatch.setenv("CONVERGE_REPORTS_DIR", str(tmp_path / "env"))
    assert reports_folder() == tmp_path / "env"                     # the environment is the fallback
    assert reports_folder(tmp_path / "given") == tmp_path / "given"  # a value given wins
    assert reports_folder("off") is None
    monkeypatch.setenv("CONVERGE_REPORTS_DIR", "off")
    assert reports_folder() is None and reports_folder("elsewhere") == Path("elsewhere")


def test_an_exception_group_gets_one_report_per_property_failure(tmp_path: Path) -> None:
    one = PropertyFailure(Divergence("p1", TLP, "first"))
    two = PropertyFailure(Divergence("p2", SNAPSHOT, "second"))
    paths = [path for failure in property_failures(ExceptionGroup("two failures", [one, two]))
             for path in write_failure_report(failure.divergence, tmp_path)]
    assert sorted(p.name for p in paths if p.suffix == ".json") == [
        "p1-tlp-with-a-null-1.json", "p2-arrival-order-across-a-restore-1.json"]


def test_summary_has_families_properties_rates_and_links(tmp_path: Path) -> None:
    report = tmp_path / "r" / "x-1.md"
    ok = PropertyResult("regular", "prefix_consistency", examples=100, seconds=2.0, seed=3,
                        exercised=Exercised(compared=97, unsupported=3, reasons=Counter({"unsupported: why": 3})))
    bad = PropertyResult("regular", "final_convergence", examples=10, failures=1, seconds=0.5, seed=4,
                         failure=PropertyFailure(Divergence("final_convergence", TLP, "differs")),
                         reports=[str(report)], exercised=Exercised(compared=10))
    idle = PropertyResult("regular", "ttl", examples=5, seconds=0.5, exercised=Exercised(skipped=5),
                          error=NotCheckedError("none of 5 cases compared"))
    # what a run asked (examples) beside what ran (cases): the first property was asked 120 and ran 100
    md, js = write_summary([ok, bad, idle], tmp_path, counts={("regular", "prefix_consistency"): Counts(120, None, 100)})
    data = json.loads(js.read_text())
    assert data["passed"] == 1 and data["failed"] == 1 and data["not_checked"] == 1 and data["examples"] == 135
    assert (data["batches"], data["cases"]) == (None, 115)
    (fam,) = data["families"]
    assert fam == {"family": "regular", "properties": 3, "examples": 135, "batches": None, "cases": 115,
                   "compared": 107, "failures": 1, "seconds": 3.0, "cases_per_second": 38.3}
    first, second, third = data["properties"]
    assert (first["examples"], first["batches"], first["cases"]) == (120, None, 100)
    assert first["cases_per_second"] == 50.0 and second["seed"] == 4
    assert "system_seconds" not in first  # only a system campaign measures its waits
    assert first["exercised"] == {"compared": 97, "not_applicable": 0, "unsupported": 3, "skipped": 0, "known": 0,
                                  "reasons": {"unsupported: why": 3}}
    assert [p["outcome"] for p in (first, second, third)] == ["passed", "diverged", "not checked"]
    text = md.read_text()
    assert "[md](r/x-1.md)" in text and "## Failures" in text and "final_convergence" in text
    assert "| regular | ttl | not checked | 5 | — | 5 | 0 | 5 |" in text  # examples, batches, cases, compared
    assert "135 examples, — batches, 115 cases in 3.0 s" in text


def test_a_system_summary_shows_batches_and_the_seconds_spent_waiting_for_the_system(tmp_path: Path) -> None:
    run = PropertyResult("regular", "final_equals_oracle", examples=3, seconds=4.0, seed=1,
                         exercised=Exercised(compared=45))
    md, js = write_summary([run], tmp_path, system="fake 1", counts={("regular", "final_equals_oracle"):
                                                                     Counts(45, 3, 45)},
                           waited={("regular", "final_equals_oracle"): 2.5})
    (row,) = json.loads(js.read_text())["properties"]
    assert (row["examples"], row["batches"], row["cases"]) == (45, 3, 45)
    assert (row["system_seconds"], row["converge_seconds"]) == (2.5, 1.5)
    assert "| regular | final_equals_oracle | passed | 45 | 3 | 45 | 45 | 0 |" in md.read_text()


def test_several_distinct_failures_report_the_property_failure_with_its_own_arguments() -> None:
    from converge.generators.scenarios import regular_join_scenarios

    def two_bugs(scenario) -> None:
        if len(scenario.events) >= 3:
            raise PropertyFailure(Divergence("two_bugs", scenario, "long streams fail"))
        if len(scenario.events) == 1:
            raise ValueError("and so do streams of one event")

    spec = PropertySpec("test", "two_bugs", lambda: regular_join_scenarios().map(lambda s: (s,)), two_bugs)
    result = run_property(spec, max_examples=60, seed=1, on_failure=lambda r: None)
    assert result.failure is not None and result.error is None
    (scenario,) = result.failure_args
    assert scenario is result.failure.divergence.scenario and len(scenario.events) == 3


def test_without_matplotlib_a_report_is_written_without_its_picture(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the `pictures` extra were not installed
    paths = write_failure_report(Divergence("p", TLP, "by design"), tmp_path)
    assert [p.suffix for p in paths] == [".json", ".md"]
    assert 'pip install "converge[pictures]"' in paths[1].read_text()
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".json", ".md"]



# ---------------------------------------------------------------- reports ask the evidence, they do not redo it

_IV = scenario_from_dict({
    "name": "at the lower bound",
    "inputs": [{"name": n, "columns": [["k", "BIGINT"], ["t", "BIGINT"]], "time_column": "t",
                "changelog_mode": "insert_only"} for n in ("a", "b")],
    "join": {"inputs": ["a", "b"], "types": ["inner"], "conditions": ["a.k = b.k"],
             "interval": {"left_time": "a.t", "right_time": "b.t", "lower_ms": -5, "upper_ms": 5}},
    "events": [{"input": "a", "kind": "+I", "row": [1, 10]}, {"input": "b", "kind": "+I", "row": [1, 15]}],
})


def _sql_of(md: str) -> str:
    """The SQL block of a report's "## Join" section."""
    section = md.split("## Join", 1)[1]
    return section.split("```sql\n", 1)[1].split("\n```", 1)[0]


def test_an_interval_report_shows_the_query_the_oracle_ran(tmp_path: Path) -> None:
    interval.no_late_equals_oracle(_IV)  # the real engine joins the pair exactly at the bound
    with applied(by_name("interval_bound_exclusive")[0]):
        d = _failure(interval.no_late_equals_oracle, _IV).divergence
    ran = DuckDBOracle().sql_for(interval.with_positions(interval.with_final(_IV)), "final")
    assert d.oracle_sql == ran
    (_, md, *_) = write_failure_report(d, tmp_path, timeline=False)
    text = md.read_text()
    assert _sql_of(text) == ran and "BETWEEN" in ran
    assert "`a.t` - `b.t` in [-5, 5] ms" in text
    assert d.emitted == [[], []]  # the mutant's run, cut to the scenario's events: the pair at the bound is lost


def test_the_report_takes_the_engine_output_from_the_evidence_and_runs_nothing(tmp_path: Path,
                                                                               monkeypatch) -> None:
    import converge.engine.runtime.local as local
    from converge.oracle.query import run_query as _unused  # noqa: F401 - loaded before it is made to fail

    def must_not_run(*args, **kw):
        raise AssertionError("the report writer ran the engine or an oracle")

    monkeypatch.setattr(local, "run_scenario", must_not_run)
    monkeypatch.setattr(local.LocalRuntime, "run", must_not_run)
    monkeypatch.setattr(DuckDBOracle, "final", must_not_run)
    monkeypatch.setattr(DuckDBOracle, "history", must_not_run)
    marker = Change("+I", (424242, "only-in-the-evidence", 7, 8))
    d = Divergence("p", TLP, "by design", event_index=1, emitted=[[], [marker]], oracle_sql="SELECT 'the query'",
                   expected_final=Counter({(1, None, 1, 5): 2}))
    (scenario_file, md, *_) = write_failure_report(d, tmp_path)
    text = md.read_text()
    assert "The engine emitted at event 1: `+I [424242, 'only-in-the-evidence', 7, 8]`" in text
    assert _sql_of(text) == "SELECT 'the query'"
    assert load_scenario(scenario_file).expect_final == ((1, None, 1, 5), (1, None, 1, 5))


def test_without_evidence_the_report_says_what_it_lacks(tmp_path: Path) -> None:
    (scenario_file, md, *_) = write_failure_report(Divergence("p", TLP, "by design", event_index=1), tmp_path,
                                                   timeline=False)
    text = md.read_text()
    assert _sql_of(text) == "-- the property gave no oracle query"
    assert "The property gave no engine output" in text
    assert load_scenario(scenario_file).expect_final is None  # nothing computed behind the property's back


def test_a_run_gives_its_reports_the_oracle_final_answer(tmp_path: Path) -> None:
    """A property that never asks the oracle (snapshot_restore) still gets a file expecting its final answer."""
    spec = PropertySpec("test", "snapshot_restore", lambda: st.just((SNAPSHOT, 2)), snapshot_restore)
    with applied(by_name("restore_forgets_arrival_counter")[0]):
        result = run_property(spec, max_examples=1, on_failure=failure_reporter(tmp_path))
    d = result.failure.divergence
    assert d.expected_final == DuckDBOracle().final(SNAPSHOT) and d.oracle_sql == DuckDBOracle().sql_for(
        SNAPSHOT, "final")
    saved = load_scenario(next(p for p in result.reports if p.endswith(".json")))
    assert Counter(saved.expect_final) == d.expected_final


def test_the_report_writer_imports_neither_the_engine_runtime_nor_a_property_module() -> None:
    source = ROOT / "reports" / "failure.py"
    imported: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
        elif isinstance(node, ast.Import):
            imported.update(a.name for a in node.names)
    assert imported, "no imports found: the check would pass vacuously"
    bad = {m for m in imported if m.startswith(("converge.engine.runtime", "converge.oracle"))
           or (m.startswith("converge.properties") and m not in ("converge.properties.divergence",
                                                                "converge.properties.registry"))}
    assert not bad, bad
