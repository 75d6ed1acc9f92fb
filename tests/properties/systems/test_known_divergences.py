"""Known divergences cost nothing: a case an entry matches is counted as known inside the check, never shrunk,
and the rest of its batch and of the campaign is still judged; the built-in list ships in the package."""

from __future__ import annotations

import importlib.resources
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from converge.cli.main import main
from converge.engine.model.changelog import Change
from converge.engine.model.errors import BadInputError, NotCheckedError
from converge.engine.model.scenario import Scenario
from converge.engine.model.scenario_json import load_scenario
from converge.engine.model.system import Capabilities, CaseResult, System
from converge.engine.reference_system import ReferenceSystem
from converge.properties import exercise
from converge.properties.campaign import PropertyResult
from converge.properties.divergence import Divergence, PropertyFailure
from converge.properties.replay import replay_path
from converge.properties.systems import checks, known
from converge.properties.systems.known import Recogniser, builtin_known, campaign_known, load_known, parse_known
from converge.properties.systems.quota import CaseQuota
from converge.properties.systems.specs import SYSTEM_PROPERTIES
from converge.reports.options import RunOptions
from converge.reports.run_reports import RunReports
from converge.systems.base import SystemType
from converge.systems.campaign import SystemRun, closing_note, run_one, run_system_campaign, table
from tests.support.paths import ROOT, SCENARIOS

# A campaign seed whose draws hold LEFT-join batches in both final_equals_oracle and upsert_equals_oracle (40
# cases: two batches of 20), and in final_equals_oracle's 60 cases an INNER, a LEFT and then a FULL batch, so the
# fake's known defect is met (the tests assert it was): a change of the generators may need another seed.
SEED = "38"
LEFT_ENTRY = {"id": "fake-left-padding", "system": "fake", "versions": [">=1.0,<2"], "matcher": "(?m)^LEFT JOIN",
              "reason": "drops the padded rows of LEFT joins, on purpose", "link": "https://example.org/1"}


class Padless(System):
    """A system that answers as converge's reference engine, except that it drops the NULL-padded rows of a
    LEFT join (the "known" defect) and, with `extra_on_full`, adds a row to a FULL join's answer (a new one).
    It counts its run requests."""

    name = "fake"

    def __init__(self, *, extra_on_full: bool = False, version: str = "1.2.0") -> None:
        self.version, self.extra_on_full, self.calls = version, extra_on_full, 0
        # it answers final multisets (the changelog properties are then not applicable to it)
        self.capabilities = replace(Capabilities.everything(max_batch=20), settings=(), output="final",
                                    deterministic_order=False)
        self.reference = ReferenceSystem("local")

    def run_cases(self, cases: Sequence[Scenario]) -> list[CaseResult]:
        self.calls += 1
        out = []
        for case, result in zip(cases, self.reference.run_cases(list(cases)), strict=False):
            final = result.folded()
            if case.join.types == ("left",):
                final = Counter({row: n for row, n in final.items() if None not in row[-2:]})
            if self.extra_on_full and case.join.types == ("full",):
                final = final + Counter({("new",): 1})
            out.append(CaseResult.ok(final=final))
        return out


BATCHES = 3  # the batches `_run` asks for: 60 cases, in full batches of 20 (campaign.run_one)


def _prop(key: str):
    return next(p for p in SYSTEM_PROPERTIES if p.key == key)


def _entries(*entries: dict) -> list:
    return parse_known({"known": list(entries)}, "test")


def _run(system: System, entries: list, examples: int = 60, key: str = "regular/final_equals_oracle"):
    return run_one(_prop(key), system, "fake", RunOptions(examples=examples, seed=int(SEED), batch=20), entries,
                   RunReports.open(None, "run"))


def test_a_known_divergence_is_counted_inside_the_check_and_never_shrunk() -> None:
    system = Padless()
    run = _run(system, _entries(LEFT_ENTRY))
    res = run.result
    assert res is not None and res.failure is None, res.failure
    assert (run.outcome, run.exit_code) == ("known", 0)
    seen = res.exercised
    assert seen.known >= 1 and seen.compared >= 1 and seen.cases == seen.known + seen.compared + seen.not_compared
    assert seen.reasons["known: fake-left-padding"] == seen.known
    assert [(k.id, n) for k, n in run.known] == [("fake-left-padding", seen.known)]
    # 60 cases in full batches of 20: 3 batches, one run request each, and exactly the 60 cases asked; nothing was
    # shrunk or replayed (without the entry the same run sends more, below)
    assert system.calls == res.examples == BATCHES and seen.cases == 60
    _, rows = table(system, [run])
    assert rows[0][3:7] == ("known", 60, 3, 60) and rows[0][9] == seen.known


def test_without_the_entry_the_same_divergence_fails_and_is_shrunk() -> None:
    system = Padless()
    run = _run(system, [])
    res = run.result
    assert res is not None and res.failure is not None and (run.outcome, run.exit_code) == ("diverged", 1)
    assert res.exercised.known == 0 and run.known == []
    (cases,) = res.failure_args
    assert len(cases) == 1 and cases[0].join.types == ("left",)  # reduced to the one case
    # reduced against the system: one unmatched row of a is the whole defect (a padded row dropped)
    assert [e.input for e in cases[0].events] == ["a"] and res.failure.divergence.scenario == cases[0]
    reduction = res.failure.call.reduction
    assert system.calls == res.examples + reduction.requests and reduction.requests >= reduction.rounds > 0


def test_a_batch_with_a_known_and_a_new_divergence_fails_on_the_new_one() -> None:
    base = load_scenario(SCENARIOS / "regular" / "acc_inner_no_match.json")
    left = replace(base, join=replace(base.join, types=("left",)))
    full = replace(base, join=replace(base.join, types=("full",)))
    system = Padless(extra_on_full=True)
    recognise = Recogniser(tuple(_entries(LEFT_ENTRY)), "fake", system.version, "regular", "final_equals_oracle")
    with exercise.Recording() as rec, pytest.raises(PropertyFailure) as caught:
        checks.final_equals_oracle(system, [left, full], known=recognise)
    assert caught.value.divergence.scenario.join.types == ("full",)
    assert "extra: ['new']" in known.case_text(caught.value.divergence)
    assert (rec.exercised.known, rec.exercised.compared) == (1, 1)
    # the known case alone: nothing fails, and it is not counted as compared
    with exercise.Recording() as rec:
        checks.final_equals_oracle(system, [left], known=recognise)
    assert (rec.exercised.known, rec.exercised.compared) == (1, 0)


def test_a_campaign_run_with_known_and_new_divergences_fails_on_the_new_one() -> None:
    system = Padless(extra_on_full=True)
    mixed = _run(system, _entries(LEFT_ENTRY))
    assert (mixed.outcome, mixed.exit_code) == ("diverged", 1) and mixed.result.exercised.known >= 1
    assert mixed.result.failure.divergence.scenario.join.types == ("full",)
    (cases,) = mixed.result.failure_args
    assert [c.join.types for c in cases] == [("full",)]  # shrunk to the new divergence's case alone


def test_a_property_whose_every_compared_case_was_known_says_so(capsys) -> None:
    (entry,) = _entries(LEFT_ENTRY)
    seen = exercise.Exercised(known=3, unsupported=1)
    seen.reasons.update({"known: fake-left-padding": 3, "unsupported: no": 1})
    result = PropertyResult("regular", "final_equals_oracle", examples=2, error=NotCheckedError(
        seen.why_nothing_compared()), exercised=seen, seed=1)
    run = SystemRun(_prop("regular/final_equals_oracle"), result=result, known=[(entry, 3)],
                    quota=CaseQuota(4, 2))
    assert (run.outcome, run.exit_code) == ("known", 0)
    system = Padless()
    _, rows = table(system, [run])  # examples asked, batches, cases, compared, unsupported, known
    assert rows[0][3:10] == ("known (nothing else compared)", 4, 2, 4, 0, 1, 3)
    closing_note(system, [run], 0.0)
    out = capsys.readouterr().out
    assert "3 of 4 cases matched known divergences; nothing else was compared" in out
    assert str(result.error) == "none of 4 cases compared (3 known, 1 unsupported): known: fake-left-padding (3); " \
                                "unsupported: no (1)"


class FakeSystemType(SystemType):
    """The fake system behind `--system fake` (no schemes: it is no kind of the registry's)."""

    case_type = Scenario

    def __init__(self, spec: str, system: System) -> None:
        super().__init__(spec)
        self.system = system

    def open(self, **_: object) -> System:
        return self.system

    def run_campaign(self, options: RunOptions) -> int:
        return run_system_campaign(options, self)

    def replay_files(self, files: Sequence[Path]) -> int:
        raise AssertionError("not used")


@pytest.fixture
def builtin_fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A built-in list that holds the fake system's entry, with its minimal case."""
    folder = tmp_path / "builtin"
    (folder / "cases").mkdir(parents=True)
    case = folder / "cases" / "left.json"
    case.write_text((SCENARIOS / "regular" / "acc_inner_no_match.json").read_text())
    (folder / "fake.json").write_text(json.dumps({"known": [dict(LEFT_ENTRY, case="cases/left.json")]}))
    monkeypatch.setattr(known, "BUILTIN", folder)
    return case


def test_the_campaign_reports_known_with_the_minimal_case_and_goes_on(builtin_fake: Path, monkeypatch, capsys,
                                                                        tmp_path: Path) -> None:
    system = Padless()
    monkeypatch.setattr("converge.cli.commands.run.system_type_of",
                        lambda spec, timeout=None: FakeSystemType(spec, system))
    args = ["run", "--system", "fake", "--family", "regular", "--examples", "40", "--seed", SEED, "--no-reports"]
    assert main(args[:-1] + ["--reports-dir", str(tmp_path / "reports")]) == 0
    out = capsys.readouterr().out
    summary = tmp_path / "reports" / "latest" / "summary.json"
    written = json.loads(summary.read_text())  # the summary says known where the table does, not passed
    assert {p["property"]: p["outcome"] for p in written["properties"]} == {
        "final_equals_oracle": "known", "semi_anti_equals_oracle": "passed", "upsert_equals_oracle": "known"}
    assert (written["passed"], written["known"], written["failed"]) == (1, 2, 0)
    rows = {cells[3]: cells for cells in map(str.split, out.splitlines()) if cells[:3] == ["fake", "1.2.0", "regular"]}
    assert rows["final_equals_oracle"][4] == "known", out
    assert rows["semi_anti_equals_oracle"][4] == "passed", out  # the next properties still ran
    assert rows["upsert_equals_oracle"][4] == "known", out
    assert "KNOWN regular/final_equals_oracle on fake 1.2.0" in out
    assert "known fake-left-padding (" in out and "drops the padded rows of LEFT joins, on purpose" in out
    assert f"minimal case: {builtin_fake} ({builtin_fake.stat().st_size} bytes" in out
    # --no-known drops the built-in list: the same divergence fails the campaign
    assert main(args + ["--no-known"]) == 1
    out = capsys.readouterr().out
    assert "DIVERGED regular/final_equals_oracle on fake 1.2.0" in out and "KNOWN" not in out
    # ... and a --known FILE adds its entries back
    extra = tmp_path / "mine.json"
    extra.write_text(json.dumps({"known": [dict(LEFT_ENTRY, id="mine")]}))
    assert main(args + ["--no-known", "--known", str(extra)]) == 0
    assert "known mine (" in capsys.readouterr().out


def test_an_entry_for_other_versions_does_not_apply(builtin_fake: Path) -> None:
    run = _run(Padless(version="2.0.0"), campaign_known())
    assert run.outcome == "diverged" and run.result.exercised.known == 0


@pytest.mark.parametrize(("versions", "version", "expected"), [
    (["2.3.0"], "2.3.0", True), (["2.3.0"], "2.3", True), (["2.3.0"], "2.2.0", False),
    ([">=2.0,<2.3"], "2.2.0", True), ([">=2.0,<2.3"], "2.3.0", False), (["1.19.0", ">=2.3"], "1.19.0", True),
    (["0.1-naive"], "0.1-naive", True), ([">=1"], "0.1-naive", False)])
def test_versions_are_exact_versions_or_pep440_ranges(versions, version, expected) -> None:
    assert known.version_matches(tuple(versions), version) is expected


@pytest.mark.parametrize(("change", "message"), [
    ({"why": "?"}, "test: known[0] (fake-left-padding): unknown key 'why'"),
    ({"versions": []}, "test: known[0] (fake-left-padding).versions: expected a non-empty list"),
    ({"versions": "2.3.0"}, "test: known[0] (fake-left-padding).versions: expected a non-empty list"),
    ({"versions": [">=2.x"]}, "test: known[0] (fake-left-padding).versions: '>=2.x' is not a range of versions"),
    ({"versions": [2.3]}, "test: known[0] (fake-left-padding).versions: expected a version"),
    ({"case": "nowhere.json"}, "test: known[0] (fake-left-padding).case: no such scenario file: nowhere.json"),
    ({"matcher": "("}, "test: known[0] (fake-left-padding).matcher: not a regular expression"),
])
def test_a_bad_entry_is_bad_input_naming_the_entry_and_key(change: dict, message: str) -> None:
    with pytest.raises(BadInputError) as caught:
        parse_known({"known": [dict(LEFT_ENTRY, **change)]}, "test")
    assert str(caught.value).startswith(message), str(caught.value)


def test_two_entries_with_one_id_are_bad_input(tmp_path: Path) -> None:
    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps({"known": [LEFT_ENTRY, LEFT_ENTRY]}))
    with pytest.raises(BadInputError, match="the id 'fake-left-padding' names two entries"):
        campaign_known([mine], builtin=False)


def test_a_bad_known_file_on_the_command_line_is_bad_input(tmp_path: Path, capsys) -> None:
    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps({"known": [dict(LEFT_ENTRY, versions=["<<2"])]}))
    assert main(["run", "--system", "reference", "--known", str(mine), "--no-reports"]) == 2
    assert "known[0] (fake-left-padding).versions: '<<2' is not a range of versions" in capsys.readouterr().err


def test_no_known_needs_a_system(capsys) -> None:
    assert main(["run", "--no-known", "--no-reports"]) == 2
    assert "--no-known" in capsys.readouterr().err


# ---------------------------------------------------------------- the built-in list


# The versions each entry was replayed on (docs/flink-findings.md); every other entry: 1.19.0 to 2.3.0.
REPLAYED_ON = {"flink-upsert-rowtime-not-planned": (">=2.1.0,<=2.3.0",), "flink-multiway-rowtime-condition": ("2.1.0",),
               "flink-upsert-sink-outer-padding-lost": (">=2.3.0,<=2.3.0",),
               "flink-upsert-sink-key-only-delete": (">=2.3.0,<=2.3.0",),
               "flink-upsert-sink-semi-update-before": (">=1.20.1,<=2.3.0",)}


def test_the_built_in_list_loads_from_the_installed_package() -> None:
    folder = importlib.resources.files("converge.properties.systems") / "known_divergences"
    assert Path(str(folder)) == known.BUILTIN
    entries = builtin_known()
    assert {k.id for k in entries} >= {"flink-exists-correlated-null", "flink-not-exists-correlated-null",
                                       "flink-minibatch-suppressed-padding"}
    for entry in entries:
        assert entry.case is not None and entry.case.is_file() and entry.case.parent == known.BUILTIN / "cases"
        assert entry.system == "flink" and entry.versions == REPLAYED_ON.get(entry.id, (">=1.19.0,<=2.3.0",))
    assert campaign_known(builtin=False) == []


@pytest.mark.parametrize("entry", builtin_known(), ids=lambda k: k.id)
def test_each_minimal_case_gives_its_hand_checked_answer_on_converge(entry) -> None:
    (outcome,) = replay_path(entry.case)
    assert outcome.ok and outcome.checked, "\n".join(outcome.problems)


class Canned(System):
    """A system that gives one fixed final answer: what Flink 2.3.0 was measured to give (docs/flink-findings.md)."""

    def __init__(self, final: list, version: str = "2.3.0", name: str = "flink") -> None:
        self.name, self.version, self.final = name, version, Counter(tuple(r) for r in final)
        self.capabilities = Capabilities.everything(max_batch=20)

    def run_cases(self, cases: Sequence[Scenario]) -> list[CaseResult]:
        return [CaseResult.ok(final=self.final) for _ in cases]


def _divergence(case: Scenario, system: System, check=checks.final_equals_oracle) -> Divergence:
    with exercise.Recording(), pytest.raises(PropertyFailure) as caught:
        check(system, [case])
    return caught.value.divergence


# The answers Flink 2.3.0 gave on each minimal case (replayed, docs/flink-findings.md), written out by hand.
FLINK_ANSWERS = {"flink-exists-correlated-null": ("regular", "semi_anti_equals_oracle", []),
                 "flink-not-exists-correlated-null": ("regular", "semi_anti_equals_oracle", [[2, None]]),
                 "flink-minibatch-suppressed-padding": ("minibatch", "final_equals_oracle", [])}


WIDTH = {"flink-exists-correlated-null": 2, "flink-not-exists-correlated-null": 2,
         "flink-minibatch-suppressed-padding": 4}


@pytest.mark.parametrize("entry", [k for k in builtin_known() if k.id in FLINK_ANSWERS], ids=lambda k: k.id)
def test_each_built_in_matcher_recognises_its_minimal_case_and_nothing_near_it(entry) -> None:
    family, prop, answer = FLINK_ANSWERS[entry.id]
    case = load_scenario(entry.case)
    entries = builtin_known()
    for check in (checks.final_equals_oracle, checks.system_equals_reference):
        d = _divergence(case, Canned(answer), check)
        assert Recogniser(tuple(entries), "flink", "2.3.0", family, prop)(d) == entry
        assert Recogniser(tuple(entries), "flink", "2.4.0", family, prop)(d) is None  # not replayed there yet
        assert Recogniser(tuple(entries), "fake", "2.3.0", family, prop)(d) is None
    wrong_row = _divergence(case, Canned([[9] * WIDTH[entry.id]]))  # a row the case cannot give: not this class
    assert Recogniser(tuple(entries), "flink", "2.3.0", family, prop)(wrong_row) is None
    failed = replace(_divergence(case, Canned(answer)), message="flink failed on this case: boom")
    assert Recogniser(tuple(entries), "flink", "2.3.0", family, prop)(failed) is None


class CannedChangelog(System):
    """A system that gives one fixed changelog: what Flink 2.3.0 was measured to emit (docs/flink-findings.md #7)."""

    def __init__(self, changelog: list[tuple[str, tuple]]) -> None:
        self.name, self.version = "flink", "2.3.0"
        self.changelog = [Change(kind, row) for kind, row in changelog]
        self.capabilities = Capabilities.everything(max_batch=20)

    def run_cases(self, cases: Sequence[Scenario]) -> list[CaseResult]:
        return [CaseResult.ok(changelog=self.changelog) for _ in cases]


def test_the_rowkind_entry_recognises_flink_34380_and_nothing_near_it() -> None:
    """Flink 2.3.0's changelog of the minimal case is +U[1, 6, 1, 7] alone (replayed); the correct one is +I."""
    (entry,) = [k for k in builtin_known() if k.id == "flink-minibatch-update-after-first"]
    assert entry.link == "https://issues.apache.org/jira/browse/FLINK-34380"
    case = load_scenario(entry.case)
    recognise = Recogniser(tuple(builtin_known()), "flink", "2.3.0", "minibatch", "changelog_rowkinds")
    flink = _divergence(case, CannedChangelog([("+U", (1, 6, 1, 7))]), checks.changelog_rowkinds)
    assert "+U[1, 6, 1, 7] at output 0 is the first row of its key" in flink.message
    assert recognise(flink) == entry
    assert Recogniser((entry,), "flink", "2.4.0", "minibatch", "changelog_rowkinds")(flink) is None
    assert Recogniser((entry,), "flink", "2.3.0", "minibatch", "final_equals_oracle")(flink) is None
    off = replace(case, config=replace(case.config, mini_batch_size=None))  # record by record: not this class
    assert recognise(_divergence(off, CannedChangelog([("+U", (1, 6, 1, 7))]), checks.changelog_rowkinds)) is None
    kinds = _divergence(case, CannedChangelog([("+I", (1, 6, 1, 7))]), checks.changelog_rowkinds)
    assert "differs from converge's model" in kinds.message and recognise(kinds) is None  # a +I: another story


def test_the_mini_batch_entry_needs_mini_batch_and_a_residual_condition() -> None:
    (entry,) = [k for k in builtin_known() if k.id == "flink-minibatch-suppressed-padding"]
    case = load_scenario(entry.case)
    recognise = Recogniser((entry,), "flink", "2.3.0", "minibatch", "final_equals_oracle")
    assert recognise(_divergence(case, Canned([]))) == entry
    off = replace(case, config=replace(case.config, mini_batch_size=None))
    assert recognise(_divergence(off, Canned([]))) is None
    equi = replace(case, join=replace(case.join, conditions=("orders.order_id = vouchers.order_id",)))
    assert recognise(_divergence(equi, Canned([]))) is None
    text = known.case_text(_divergence(case, Canned([])))
    assert "vouchers: retract" in text
    no_updates = text.replace("vouchers: retract", "vouchers: insert_only")
    assert re.search(entry.matcher, text) and not re.search(entry.matcher, no_updates)


def test_load_known_reads_case_paths_beside_the_file(tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text("{}")
    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps({"known": [dict(LEFT_ENTRY, case="c.json")]}))
    (entry,) = load_known(mine)
    assert entry.case == tmp_path / "c.json"


def test_the_documented_entry_loads_and_means_what_docs_systems_md_says(tmp_path: Path) -> None:
    page = (ROOT / "docs" / "systems.md").read_text()
    section = page[page.index("## Known divergences"):]
    block = section[section.index("```json\n") + len("```json\n"):]
    block = block[:block.index("```")]
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "left_padding.json").write_text("{}")
    (tmp_path / "mine.json").write_text(block)
    (entry,) = load_known(tmp_path / "mine.json")
    assert (entry.id, entry.system, entry.case) == ("my-engine-left-padding", "my-engine",
                                                    tmp_path / "cases" / "left_padding.json")
    assert [known.version_matches(entry.versions, v) for v in ("1.4.0", "2.1.5", "2.2.0", "1.5.0")] == [
        True, True, False, False]


def test_the_mini_batch_entry_recognises_the_case_a_campaign_found_in_both_directions() -> None:
    """The campaign's own shrunk case: Flink keeps a padding that must go and drops one that must come."""
    (entry,) = [k for k in builtin_known() if k.id == "flink-minibatch-suppressed-padding"]
    case = load_scenario(SCENARIOS / "systems" / "flink_minibatch_padding_swapped.json")
    recognise = Recogniser((entry,), "flink", "2.3.0", "minibatch", "final_equals_oracle")
    flink = [[0, None, 3, "a", 0, 3, 3, "a"], [None, None, None, None, 0, 3, 3, "a"]]  # measured on 2.3.0
    text = known.case_text(_divergence(case, Canned(flink)))
    assert "missing: [NULL, NULL, NULL, NULL, 0, 0, 0, 'a']\nextra: [NULL, NULL, NULL, NULL, 0, 3, 3, 'a']" in text
    assert recognise(_divergence(case, Canned(flink))) == entry
    # a joined row wrong as well is not this class
    assert recognise(_divergence(case, Canned(flink[1:]))) is None


def test_known_options_reach_spark_native_joins(monkeypatch) -> None:
    """Spark's native-join campaign has known divergences of its own (properties/native_join/known.py, issue 42):
    --no-known and --known reach it (they were refused while it had none)."""
    from converge.systems.spark.system_type import SparkSystemType

    seen = []
    monkeypatch.setattr(SparkSystemType, "run_campaign", lambda self, options: seen.append(options) or 0)
    assert main(["run", "--system", "spark", "--no-known", "--no-reports"]) == 0
    assert len(seen) == 1 and seen[0].builtin_known is False


class Failing(System):
    """A system that fails every case with one message: what Flink gave on the entry's minimal case (replayed)."""

    def __init__(self, message: str, version: str) -> None:
        self.name, self.version, self.message = "flink", version, message
        self.capabilities = Capabilities.everything(max_batch=20)

    def run_cases(self, cases: Sequence[Scenario]) -> list[CaseResult]:
        return [CaseResult.error(self.message) for _ in cases]


# Flink's messages on the minimal cases (docs/flink-findings.md #8 and #9), shortened as the adapter shortens them.
PLANNING_FAILURES = {
    "flink-upsert-rowtime-not-planned": ("2.3.0", "java.lang.IndexOutOfBoundsException: 0 | at java.base/jdk.internal."
                                         "util.Preconditions.outOfBounds(Preconditions.java:100)"),
    "flink-multiway-rowtime-condition": ("2.1.0", 'java.lang.NullPointerException: Cannot invoke "org.apache.calcite.'
                                         'rel.RelNode.getInputs()" because "targetInput" is null'),
}


@pytest.mark.parametrize("entry_id", sorted(PLANNING_FAILURES))
def test_a_planning_failure_entry_recognises_its_case_and_nothing_near_it(entry_id: str) -> None:
    (entry,) = [k for k in builtin_known() if k.id == entry_id]
    version, message = PLANNING_FAILURES[entry_id]
    case = load_scenario(entry.case)
    recognise = Recogniser(tuple(builtin_known()), "flink", version, "time", "final_equals_oracle")
    assert recognise(_divergence(case, Failing(message, version))) == entry
    assert Recogniser(tuple(builtin_known()), "flink", "2.0.1", "time", "final_equals_oracle")(
        _divergence(case, Failing(message, "2.0.1"))) is None  # 2.0.1 plans both
    assert recognise(_divergence(case, Failing("java.lang.IllegalStateException: boom", version))) is None
    assert recognise(_divergence(case, Canned([[9] * case.output_width()], version))) is None  # an answer


def test_the_upsert_rowtime_entry_needs_an_upsert_input() -> None:
    (entry,) = [k for k in builtin_known() if k.id == "flink-upsert-rowtime-not-planned"]
    case = load_scenario(entry.case)
    retract = replace(case, inputs=tuple(replace(i, changelog_mode="retract") if i.changelog_mode == "upsert" else i
                                         for i in case.inputs))
    version, message = PLANNING_FAILURES[entry.id]
    recognise = Recogniser(tuple(builtin_known()), "flink", version, "time", "final_equals_oracle")
    assert recognise(_divergence(retract, Failing(message, version))) is None
