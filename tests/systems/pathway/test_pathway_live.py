"""Real Pathway through the product's front doors: the conformance kit on the adapter command, hand-checked cases
through the session's adapter (NULL keys, null-safe keys, an asymmetric interval, a key-only upsert delete), and
`converge run --system pathway` campaigns (one property by default, every family with --run-slow).
"""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from pathlib import Path

import pytest

from converge.cli.main import main
from converge.engine.model.scenario import Scenario
from converge.engine.model.scenario_json import scenario_from_dict
from converge.systems.adapter.client import AdapterSystem
from converge.systems.pathway.system_type import PathwaySystemType
from tests.support.shared_adapter import Borrowed

pytestmark = [pytest.mark.pathway, pytest.mark.xdist_group("pathway")]


@pytest.fixture
def on_session_pathway(pathway_system: AdapterSystem, monkeypatch: pytest.MonkeyPatch) -> AdapterSystem:
    monkeypatch.setattr(PathwaySystemType, "open", lambda kind, **_: Borrowed(pathway_system))
    return pathway_system


def test_the_pathway_adapter_passes_the_conformance_kit(pathway_command: list[str], capsys) -> None:
    assert main(["adapter", "check", shlex.join(pathway_command)]) == 0
    out = capsys.readouterr().out
    for check in ("handshake", "capabilities", "case 05_full_outer", "case 03_inner_null_keys", "batch",
                  "malformed request", "shutdown", "version negotiation", "time limits"):
        assert f"PASS  {check}" in out, out
    assert "FAIL" not in out, out


def _case(types: list[str], conditions: list[str], inputs: dict[str, list], events: list, *,
          interval: dict | None = None, upsert: str | None = None) -> Scenario:
    specs = [{"name": name, "columns": columns, "unique_key": [columns[0][0]] if name == upsert else None,
              "changelog_mode": "upsert" if name == upsert else "retract"} for name, columns in inputs.items()]
    if interval is not None:
        specs = [{**spec, "changelog_mode": "insert_only", "time_column": "t"} for spec in specs]
    join = {"inputs": list(inputs), "types": types, "conditions": conditions}
    if interval is not None:
        join["interval"] = interval
    return scenario_from_dict({"name": "hand", "inputs": specs, "join": join,
                               "events": [{"input": i, "kind": k, "row": r} for i, k, r in events]})


def _final(system: AdapterSystem, scenario: Scenario) -> Counter:
    (result,) = system.run_cases([scenario])
    assert result.status == "ok", result.message
    return result.final


AB = {"a": [["k", "BIGINT"], ["x", "VARCHAR"]], "b": [["k", "BIGINT"], ["y", "VARCHAR"]]}
NULLS = [("a", "+I", [1, "a1"]), ("a", "+I", [None, "a2"]), ("a", "+I", [1, "a1"]), ("b", "+I", [1, "b1"]),
         ("b", "+I", [None, "b2"]), ("b", "+I", [3, "b3"]), ("a", "-D", [1, "a1"])]


def test_a_null_key_never_matches_with_equals_but_matches_null_safe(pathway_system: AdapterSystem) -> None:
    # by hand: a holds (1,a1) once (two copies, one retracted) and (NULL,a2); b holds (1,b1), (NULL,b2), (3,b3)
    full = _final(pathway_system, _case(["full"], ["a.k = b.k"], AB, NULLS))
    assert full == Counter({(1, "a1", 1, "b1"): 1, (None, "a2", None, None): 1, (None, None, None, "b2"): 1,
                            (None, None, 3, "b3"): 1})
    safe = _final(pathway_system, _case(["full"], ["a.k IS NOT DISTINCT FROM b.k"], AB, NULLS))
    assert safe == Counter({(1, "a1", 1, "b1"): 1, (None, "a2", None, "b2"): 1, (None, None, 3, "b3"): 1})


def test_a_residual_on_an_outer_join_pads_the_rows_left_without_a_pair(pathway_system: AdapterSystem) -> None:
    events = [("a", "+I", [1, "a1"]), ("a", "+I", [2, "a2"]), ("b", "+I", [1, "no"]), ("b", "+I", [2, "yes"]),
              ("b", "+I", [2, "no"])]
    left = _final(pathway_system, _case(["left"], ["a.k = b.k AND b.y <> 'no'"], AB, events))
    assert left == Counter({(1, "a1", None, None): 1, (2, "a2", 2, "yes"): 1})


def test_interval_bounds_are_not_mirrored(pathway_system: AdapterSystem) -> None:
    # b.t - 1 <= a.t <= b.t + 3 with a.t = 10: the b rows at 7..11 qualify, 6 and 12 do not (a mirrored mapping
    # would take 9..13)
    ts = {"a": [["k", "BIGINT"], ["t", "BIGINT"]], "b": [["k", "BIGINT"], ["t", "BIGINT"]]}
    events = [("a", "+I", [1, 10])] + [("b", "+I", [1, t]) for t in (6, 7, 11, 12, 13)]
    interval = {"left_time": "a.t", "right_time": "b.t", "lower_ms": -1, "upper_ms": 3, "time": "event",
                "allowed_lateness_ms": 0}
    got = _final(pathway_system, _case(["inner"], ["a.k = b.k"], ts, events, interval=interval))
    assert got == Counter({(1, 10, 1, 7): 1, (1, 10, 1, 11): 1})


def test_an_upsert_delete_by_key_retracts_the_held_row(pathway_system: AdapterSystem) -> None:
    events = [("a", "+I", [1, "x"]), ("a", "+U", [1, "y"]), ("a", "+I", [2, "z"]), ("a", "-D", [2, None]),
              ("b", "+I", [1, "b1"]), ("b", "+I", [2, "b2"])]
    got = _final(pathway_system, _case(["right"], ["a.k = b.k"], AB, events, upsert="a"))
    assert got == Counter({(1, "y", 1, "b1"): 1, (None, None, 2, "b2"): 1})


def _campaign(args: list[str], tmp_path: Path, capsys) -> tuple[int, str, dict]:
    code = main(["run", "--system", "pathway", "--reports-dir", str(tmp_path), *args])
    out = capsys.readouterr().out
    return code, out, json.loads((tmp_path / "latest" / "summary.json").read_text())


def test_a_small_pathway_campaign_compares_every_case(on_session_pathway, tmp_path: Path, capsys) -> None:
    code, out, summary = _campaign(["--property", "final_equals_oracle", "--family", "regular", "--examples", "8",
                                    "--batch", "4", "--seed", "3"], tmp_path, capsys)
    assert code == 0, out
    (row,) = [line.split() for line in out.splitlines() if line.startswith("pathway ")]
    assert row[2:5] == ["regular", "final_equals_oracle", "passed"], out
    examples, batches, cases, compared, unsupported = (int(c) for c in row[5:10])
    assert examples == cases == compared == 8 and batches == 2 and unsupported == 0, out
    assert summary["system"].startswith("pathway ")


@pytest.mark.slow
def test_a_pathway_campaign_over_every_family(on_session_pathway, tmp_path: Path, capsys) -> None:
    code, out, _ = _campaign(["--examples", "100", "--seed", "7"], tmp_path, capsys)
    assert code == 0, out
    rows = {tuple(line.split()[2:4]): line for line in out.splitlines() if line.startswith("pathway ")}
    for applicable in [("regular", "final_equals_oracle"), ("regular", "semi_anti_equals_oracle"),
                       ("regular", "upsert_equals_oracle"), ("multiway", "final_equals_oracle"),
                       ("interval", "no_late_equals_oracle"), ("time", "final_equals_oracle"),
                       ("reference", "system_equals_reference")]:
        assert " passed " in rows[applicable], out
    for setting in [("minibatch", "final_equals_oracle"), ("multiway", "multiway_equals_binary_chain")]:
        note = re.search(r"not applicable \[(\d+)\]", rows[setting])  # the reason is a footnote (issue 41 row 5)
        assert note and f"\n[{note[1]}] not applicable: Pathway has no" in out, out
