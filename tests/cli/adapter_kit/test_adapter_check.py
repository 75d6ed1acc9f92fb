"""The conformance kit passes the documented example adapter and fails wrong ones with a clear message;
campaigns and replays against an external adapter (`--system cmd:...`)."""

from __future__ import annotations

import json
import shlex
import sys

import pytest

from converge.cli.main import main
from tests.support.example_adapter import EXAMPLE, PADDING


@pytest.fixture(scope="module")
def adapters(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("adapters")
    assert PADDING in EXAMPLE
    sources = {
        "example": EXAMPLE,
        # drops the NULL-padded rows of LEFT joins: joins every LEFT join as an INNER one
        "no_padding": EXAMPLE.replace(PADDING, 'keyword = "JOIN"'),
        # writes a log line on stdout before the hello
        "banner": EXAMPLE.replace("def main():\n", "def main():\n    print('engine starting')\n"),
        # takes one case per request: no batch can be sent
        "one_per_request": EXAMPLE.replace('"max_batch": 100', '"max_batch": 1'),
        # declares only inner joins over INTEGER columns: no fixed case lies inside its capabilities
        "covers_nothing": EXAMPLE.replace('"join_types": ["inner", "left"]', '"join_types": ["inner"]').replace(
            '"column_types": ["BIGINT", "INTEGER", "VARCHAR"]', '"column_types": ["INTEGER"]'),
    }
    out = {}
    for name, code in sources.items():
        path = folder / f"{name}.py"
        path.write_text(code)
        out[name] = f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"
    return out


def test_the_documented_example_adapter_passes_the_kit(adapters, capsys) -> None:
    assert main(["adapter", "check", adapters["example"]]) == 0
    out = capsys.readouterr().out
    for check in ("handshake", "case 02_left_retract_residual", "batch", "unsupported case", "malformed request",
                  "shutdown", "version negotiation", "time limits"):
        assert f"PASS  {check}:" in out
    assert "SKIP  case 05_full_outer: not applicable: the system does not run FULL joins" in out
    assert "FAIL" not in out


def test_an_adapter_that_drops_padded_rows_fails_the_kit_naming_the_missing_row(adapters, capsys) -> None:
    assert main(["adapter", "check", adapters["no_padding"]]) == 1
    out = capsys.readouterr().out
    assert ("FAIL  case 02_left_retract_residual: 1 row missing [[1, 5, None, None]] (expected 2 rows, got 1 row: "
            "[[2, -1, 2, 0]])") in out
    assert "PASS  case 01_inner_insert_only" in out


def test_an_adapter_that_breaks_the_handshake_fails_the_kit(adapters, capsys) -> None:
    assert main(["adapter", "check", adapters["banner"]]) == 1
    out = capsys.readouterr().out
    assert "FAIL  handshake:" in out and "not JSON" in out and "offending line: engine starting" in out


def test_a_campaign_on_the_example_adapter_passes_what_applies_and_says_what_does_not(adapters, capsys,
                                                                                      tmp_path) -> None:
    code = main(["run", "--system", f"cmd:{adapters['example']}", "--examples", "30", "--seed", "1",
                 "--reports-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    header = out.splitlines()[0].split()
    assert header[:4] == ["system", "family", "property", "outcome"]
    assert "not applicable: sqlite-naive does not run interval joins" in out
    assert "passed with 0" not in out
    assert "system: sqlite-naive" in out
    summary = json.loads((tmp_path / "latest" / "summary.json").read_text())
    assert summary["system"].startswith("sqlite-naive ")


def test_a_divergence_of_a_system_is_reported_replayable_and_can_be_known(adapters, capsys, tmp_path) -> None:
    args = ["run", "--system", f"cmd:{adapters['no_padding']}", "--family", "regular", "--property",
            "final_equals_oracle", "--examples", "60", "--seed", "3", "--reports-dir", str(tmp_path / "r")]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "DIVERGED regular/final_equals_oracle on sqlite-naive" in out
    assert "(oracle = reference engine ≠ sqlite-naive" in out
    (report,) = (tmp_path / "r" / "latest").glob("final-equals-oracle-*.md")
    text = report.read_text()
    assert "## Answers side by side" in text and "| row | oracle | sqlite-naive" in text
    assert "converge replay --system" in text
    (scenario_file,) = report.parent.glob("final-equals-oracle-*.json")
    assert main(["replay", "--system", f"cmd:{adapters['no_padding']}", str(scenario_file)]) == 1
    assert main(["replay", "--system", f"cmd:{adapters['example']}", str(scenario_file)]) == 0
    capsys.readouterr()
    known = tmp_path / "known.json"
    known.write_text(json.dumps({"known": [{"system": "sqlite-naive", "matcher": "LEFT JOIN",
                                            "reason": "pads nothing, on purpose", "link": "https://example.org/1"}]}))
    assert main(args + ["--known", str(known)]) == 0
    out = capsys.readouterr().out
    assert "KNOWN regular/final_equals_oracle on sqlite-naive" in out
    assert ": pads nothing, on purpose (https://example.org/1)" in out


def test_a_known_divergences_file_with_an_unknown_key_is_bad_input(adapters, tmp_path, capsys) -> None:
    known = tmp_path / "known.json"
    known.write_text(json.dumps({"known": [{"system": "x", "property": "p", "reason": "r", "link": "l",
                                            "why": "?"}]}))
    assert main(["run", "--system", "reference", "--known", str(known), "--no-reports"]) == 2
    assert "unknown key 'why'" in capsys.readouterr().err


def test_known_and_batch_need_a_system(capsys) -> None:
    assert main(["run", "--batch", "3", "--no-reports"]) == 2
    assert "--system" in capsys.readouterr().err



def test_an_adapter_whose_capabilities_cover_no_fixed_case_is_not_checked(adapters, capsys) -> None:
    assert main(["adapter", "check", adapters["covers_nothing"]]) == 2
    out = capsys.readouterr().out
    assert "PASS  case" not in out and "FAIL" not in out
    assert out.rstrip().endswith("no answer of the adapter was compared; the protocol checks alone do not pass the "
                                 "kit")


def test_an_adapter_that_takes_one_case_per_request_has_the_batch_check_skipped_with_the_reason(adapters,
                                                                                               capsys) -> None:
    assert '"max_batch": 100' in EXAMPLE
    assert main(["adapter", "check", adapters["one_per_request"]]) == 0
    out = capsys.readouterr().out
    assert "SKIP  batch: max_batch is 1: the adapter takes one case per request" in out
    assert "PASS  case 17_left_null_safe_keys: 4 rows as expected" in out


def test_a_long_difference_lists_the_first_rows_and_counts_the_rest() -> None:
    from collections import Counter

    from converge.cli.adapter_check import compare

    expected = Counter({(i,): 1 for i in range(10)})
    got = Counter({(0,): 3})
    assert compare(expected, expected) is None
    assert compare(expected, got) == (
        "9 rows missing [[1], [2], [3], [4], [5], [6], [7], [8], and 1 more]; 2 unexpected rows [[0] x2] "
        "(expected 10 rows, got 3 rows: [[0] x3])")
