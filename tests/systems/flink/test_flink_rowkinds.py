"""Flink's changelog judged with its row kinds (properties/systems/changelogs.py) on the session's adapter.

Default suite: the minimal case of FLINK-34380 (docs/flink-findings.md #7) replayed on Flink 2.3.0 diverges on
its +U row and the built-in entry recognises it; the same key rule passes Flink's record-by-record join, which
pairs every +U with a -U. Slow: a mini-batch campaign finds the class by itself.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from converge.engine.model.scenario import Config
from converge.engine.model.scenario_json import load_scenario
from converge.properties import exercise
from converge.properties.systems import checks
from converge.properties.systems.known import Recogniser, builtin_known
from converge.properties.systems.replay import replay_on_system
from converge.systems.adapter.client import AdapterSystem
from tests.support.flink_campaign import run_campaign, summary_rows
from tests.support.shared_adapter import Borrowed

pytestmark = [pytest.mark.flink, pytest.mark.xdist_group("flink")]

ENTRY = "flink-minibatch-update-after-first"


def test_flink_34380_replays_as_a_divergence_of_the_plus_u_row_and_is_known(flink_system: AdapterSystem) -> None:
    (entry,) = [k for k in builtin_known() if k.id == ENTRY]
    assert entry.case is not None
    outcome = replay_on_system(entry.case, Borrowed(flink_system), "flink")
    assert outcome.label == "diverged", outcome.problems
    (d,) = outcome.divergences  # the final answer is right: only the row kinds diverge
    assert d.property == "changelog_rowkinds"
    assert "+U[1, 6, 1, 7] at output 0 is the first row of its key [1, 1, 7]" in d.message, d.message
    assert "(row kinds compared)" in d.message and dict(d.engine) == {("+U", 1, 6, 1, 7): 1}
    recognise = Recogniser((entry,), "flink", flink_system.version, "minibatch", "changelog_rowkinds")
    assert recognise(d) == entry


def test_the_same_updates_record_by_record_are_well_formed_and_the_models(flink_system: AdapterSystem) -> None:
    """Without mini-batch, Flink's INNER join forwards the order's -U and +U: +I, -U, +U of one key, as converge's
    model emits them event by event; the key rule holds and the case is compared."""
    (entry,) = [k for k in builtin_known() if k.id == ENTRY]
    case = load_scenario(entry.case)
    plain = replace(case, config=Config(), expect_final=None)
    (result,) = flink_system.run_cases([plain])
    assert [(c.kind, list(c.row)) for c in result.changelog] == [("+I", [1, 5, 1, 7]), ("-U", [1, 5, 1, 7]),
                                                                   ("+U", [1, 6, 1, 7])]
    with exercise.Recording() as seen:
        checks.changelog_rowkinds(Borrowed(flink_system), [plain])
    assert (seen.exercised.compared, seen.exercised.skipped) == (1, 0)


@pytest.mark.slow
def test_a_mini_batch_campaign_finds_flink_34380_by_itself(on_session_flink, tmp_path: Path, capsys) -> None:
    args = ["--family", "minibatch", "--property", "changelog_rowkinds", "--examples", "200", "--seed", "1"]
    code, out, _ = run_campaign(args + ["--no-known"], tmp_path / "no-known", capsys)
    assert code == 1 and "DIVERGED minibatch/changelog_rowkinds on flink 2.3.0" in out, out
    assert "+U[" in out and "(row kinds compared)" in out, out
    code, out, _ = run_campaign(args, tmp_path / "known", capsys)
    assert code == 0 and summary_rows(out)["minibatch changelog_rowkinds"][4] == "known", out
    assert f"known {ENTRY} (" in out, out
