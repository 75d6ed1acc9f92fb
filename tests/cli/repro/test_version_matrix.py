"""The version matrix without Flink: which releases a --system/--versions pair names, and a release that is not
installed reported as "not installed", never as agreeing. On installed releases: tests/systems/flink/
test_repro_live.py (--run-slow)."""

from __future__ import annotations

import pytest

from converge.cli.main import main
from converge.engine.model.errors import UsageError
from converge.properties.systems.known import BUILTIN
from converge.systems.flink.matrix import Cell, is_matrix, matrix_versions, print_matrix, replay_matrix

ROWTIME = BUILTIN / "cases" / "flink_upsert_rowtime_plan_fails.json"
ABSENT = ["0.0.1", "0.0.2"]  # releases no machine has installed


def test_versions_are_named_oldest_first_once_each() -> None:
    assert matrix_versions("flink", "2.3.0, 1.20.1,2.3.0") == ["1.20.1", "2.3.0"]
    assert matrix_versions("flink:*", "1.10.0,1.9.3") == ["1.9.3", "1.10.0"]  # by number, not by text


@pytest.mark.parametrize(("spec", "versions", "says"), [
    ("flink:2.3.0", "1.20.1", "give --system flink"),
    ("flink", " , ", "expected releases"),
    ("spark:*", None, "flink only"),
], ids=["one-release-and-versions", "empty", "not-flink"])
def test_a_matrix_that_names_nothing_measurable_is_a_usage_error(spec, versions, says) -> None:
    with pytest.raises(UsageError, match=says):
        matrix_versions(spec, versions)


def test_which_specs_ask_for_a_matrix() -> None:
    assert is_matrix("flink:*", None) and is_matrix("flink", "2.3.0")
    assert not is_matrix("flink:2.3.0", None) and not is_matrix(None, None)


def test_a_release_that_is_not_installed_is_reported_so_and_never_agrees(capsys) -> None:
    with pytest.raises(UsageError, match="none of the releases 0.0.1, 0.0.2 is installed"):
        replay_matrix([ROWTIME], ABSENT)
    out = capsys.readouterr().out
    assert f"version matrix of {ROWTIME}:" in out
    for version in ABSENT:
        assert f"flink {version:<10} not installed  converge systems install flink --version {version}" in out
    assert "agrees" not in out


def test_the_replay_command_takes_versions_and_needs_a_system(capsys) -> None:
    assert main(["replay", "--system", "flink", "--versions", ",".join(ABSENT), str(ROWTIME)]) == 2
    assert "not installed" in capsys.readouterr().out
    assert main(["replay", "--versions", "2.3.0", str(ROWTIME)]) == 2


def test_the_matrix_prints_one_row_per_release_under_each_file() -> None:
    lines: list[str] = []
    print_matrix([Cell("1.20.1", "a.json", "agrees"), Cell("2.3.0", "a.json", "diverges", "final differs"),
                  Cell("2.3.0", "b.json", "fails")], lines.append)
    assert lines == ["version matrix of a.json:", "  flink 1.20.1     agrees", "  flink 2.3.0      diverges       "
                     "final differs", "version matrix of b.json:", "  flink 2.3.0      fails"]
