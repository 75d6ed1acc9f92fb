"""The reports folder's pointer to its latest run: a text file and a link whose names differ in more than case
(issue 41 row 7: `LATEST` and `latest` are one name on macOS and Windows, so writing one replaced the other), and a
folder written by an older converge still read."""

from __future__ import annotations

from pathlib import Path

from converge.reports.runs import LATEST_FILE, LATEST_LINK, OLD_LATEST_FILE, claim_run_dir, latest_run


def test_no_two_names_in_the_reports_folder_differ_only_in_case(tmp_path: Path) -> None:
    first = claim_run_dir(tmp_path, started=1_000_000_000.0)
    second = claim_run_dir(tmp_path, started=1_000_000_001.0)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len({name.casefold() for name in names}) == len(names), names
    assert (tmp_path / LATEST_FILE).read_text().strip() == second.name and latest_run(tmp_path) == second
    if (tmp_path / LATEST_LINK).is_symlink():
        assert (tmp_path / LATEST_LINK).resolve() == second.resolve()
    assert first.is_dir()


def test_an_older_converges_pointer_is_read_then_replaced(tmp_path: Path) -> None:
    old_run = tmp_path / "20261101T000000.000000Z-run-1-abcd"
    old_run.mkdir()
    (tmp_path / OLD_LATEST_FILE).write_text(old_run.name + "\n")
    assert latest_run(tmp_path) == old_run  # what `converge replay converge-reports/...` and tools read
    new_run = claim_run_dir(tmp_path, started=1_900_000_000.0)
    assert not (tmp_path / OLD_LATEST_FILE).exists()  # the stale file would name the old run forever
    assert latest_run(tmp_path) == new_run


def test_a_later_run_is_never_displaced_by_an_older_pointer(tmp_path: Path) -> None:
    """The old file names a run that started later than the one now claiming: it stays the latest."""
    later = tmp_path / "20991231T000000.000000Z-run-1-abcd"
    later.mkdir()
    (tmp_path / OLD_LATEST_FILE).write_text(later.name + "\n")
    claim_run_dir(tmp_path, started=1_000_000_000.0)
    assert latest_run(tmp_path) == later
