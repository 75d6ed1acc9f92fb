"""Each command leaves exactly the files it promises: no ./.hypothesis, no empty run folder, no half-written report.

Every command runs as a process of its own in an empty working directory,
with the user's cache pointed into the test's temporary folder, and the
directory must then hold what the command's documentation promises and
nothing else. A full disk is simulated by making the one low-level write of
engine/model/files.py fail with ENOSPC: no 0-byte or partial file may stay,
the message names the file and the reason, and the run's exit code stands.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from converge.engine.model import files
from converge.generators.storage import converge_hypothesis_home, keep_hypothesis_out_of_the_working_directory
from converge.properties.campaign import PropertyResult
from converge.properties.divergence import Divergence
from converge.reports.failure import write_failure_report
from converge.reports.run_reports import RunReports
from converge.reports.runs import LATEST_FILE, latest_run
from tests.conftest import HYPOTHESIS_HOME
from tests.support.captures import LEFT_JOIN, left_join_capture
from tests.support.paths import ROOT
from tests.support.small_scenarios import TLP

SCENARIO = ROOT / "tests" / "scenarios" / "regular" / "acc_inner_no_match.json"


def converge(cwd: Path, cache: Path, *args: str) -> subprocess.CompletedProcess:
    """`converge ARGS` in `cwd`, as a user runs it: default reports folder, Hypothesis's default home, `cache`
    as the user's cache."""
    env = {k: v for k, v in os.environ.items() if k not in ("CONVERGE_REPORTS_DIR", "HYPOTHESIS_STORAGE_DIRECTORY")}
    env.update(XDG_CACHE_HOME=str(cache), PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "converge.cli.main", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600, check=False)


def tree(folder: Path) -> set[str]:
    """Every path under `folder`, hidden ones included; links to folders are listed, not followed."""
    found = set()
    for top, dirs, names in os.walk(folder):
        for name in dirs + names:
            found.add((Path(top) / name).relative_to(folder).as_posix())
    return found


@pytest.fixture
def place(tmp_path: Path) -> tuple[Path, Path]:
    """An empty working directory and, beside it, the user's cache."""
    (tmp_path / "cwd").mkdir()
    return tmp_path / "cwd", tmp_path / "cache"


# ---------------------------------------------------------------- each command, in an empty directory

QUICK = ("--examples", "3", "--seed", "1")
NOTHING: set[str] = set()


@pytest.mark.parametrize("args, promised", [
    (["run", "--family", "regular", "--property", "prefix_consistency", *QUICK, "--no-reports"], NOTHING),
    (["check", str(LEFT_JOIN), *QUICK], NOTHING),  # green: no failure report, so no reports folder at all
    (["replay", str(SCENARIO)], NOTHING),
    (["explain", str(SCENARIO)], NOTHING),
    (["mutants", "--only", "null_keys_match", "--examples", "50", "--seed", "1", "--out", "m.json"],
     {"m.json", "m.md"}),
], ids=["run", "check", "replay", "explain", "mutants"])
def test_a_command_leaves_only_what_it_promises(place: tuple[Path, Path], args: list[str], promised: set[str]) -> None:
    cwd, cache = place
    done = converge(cwd, cache, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    assert tree(cwd) == promised, done.stdout + done.stderr


def test_check_keeps_hypothesis_constants_in_the_user_cache(place: tuple[Path, Path]) -> None:
    """`check` is the command that made Hypothesis write ./.hypothesis/constants/ (its findings search)."""
    cwd, cache = place
    done = converge(cwd, cache, "check", str(LEFT_JOIN), *QUICK, "--no-reports")
    assert done.returncode == 0, done.stderr
    assert tree(cwd) == NOTHING
    assert any((cache / "converge" / "hypothesis" / "constants").iterdir())


def test_verify_leaves_nothing(place: tuple[Path, Path], tmp_path: Path) -> None:
    cwd, cache = place
    (tmp_path / "captures").mkdir()
    orders, payments, out, _ = left_join_capture(tmp_path / "captures")
    done = converge(cwd, cache, "verify", str(LEFT_JOIN), "--source", f"orders={orders}", "--source",
                    f"payments={payments}", "--output", str(out))
    assert done.returncode == 0, done.stderr
    assert tree(cwd) == NOTHING


def test_run_with_reports_leaves_its_summary_and_the_pointers(place: tuple[Path, Path]) -> None:
    cwd, cache = place
    done = converge(cwd, cache, "run", "--family", "regular", "--property", "prefix_consistency", *QUICK)
    assert done.returncode == 0, done.stderr
    run = (cwd / "converge-reports" / LATEST_FILE).read_text().strip()
    expected = {"converge-reports", "converge-reports/latest-run.txt", f"converge-reports/{run}",
                f"converge-reports/{run}/summary.md", f"converge-reports/{run}/summary.json"}
    assert tree(cwd) - {"converge-reports/latest"} == expected  # the link, where the file system allows one


# ---------------------------------------------------------------- Hypothesis's home


def test_a_home_someone_chose_is_kept(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert keep_hypothesis_out_of_the_working_directory() == HYPOTHESIS_HOME  # the suite's conftest chose it
    monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", str(tmp_path))
    assert keep_hypothesis_out_of_the_working_directory() == tmp_path
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert converge_hypothesis_home() == tmp_path / "xdg" / "converge" / "hypothesis"


# ---------------------------------------------------------------- the run's directory, made at its first file


def _result(ok: bool = True) -> PropertyResult:
    r = PropertyResult("regular", "p", examples=1, seconds=0.1, seed=1)
    if not ok:
        r.error = RuntimeError("boom")
    return r


def test_a_run_that_writes_nothing_leaves_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reports = RunReports.open(tmp_path / "reports", "check")
    assert reports.reporter() is not None
    assert reports.settle(0) == 0
    assert not (tmp_path / "reports").exists() and capsys.readouterr().err == ""


def test_latest_names_the_run_that_started_last_among_those_that_wrote(tmp_path: Path) -> None:
    first, second = RunReports.open(tmp_path, "run"), RunReports.open(tmp_path, "run")
    second.started = first.started + 1  # started later ...
    assert second.summary([_result()]) is not None
    assert first.summary([_result()]) is not None  # ... than this one, which writes later
    assert first.run_dir is not None and second.run_dir is not None and first.run_dir.name < second.run_dir.name
    assert latest_run(tmp_path) == second.run_dir
    silent = RunReports.open(tmp_path, "run")
    silent.started = second.started + 1
    silent.settle(0)
    runs = [p for p in tmp_path.iterdir() if p.is_dir() and not p.is_symlink()]
    assert latest_run(tmp_path) == second.run_dir and sorted(runs) == [first.run_dir, second.run_dir]


# ---------------------------------------------------------------- a full disk


@pytest.fixture
def full_disk(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The low-level write writes a few bytes of the first `calls[0]` files, then fails with ENOSPC."""
    real = files._write_all
    budget = [0]

    def write(fd: int, data: bytes) -> None:
        if budget[0] > 0:
            budget[0] -= 1
            return real(fd, data)
        os.write(fd, data[:7])  # a partial file, as a disk that filled up mid-way leaves it
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files, "_write_all", write)
    return budget


def _no_partial_files(folder: Path) -> None:
    for path in folder.rglob("*"):
        assert not path.name.endswith(".tmp"), path
        assert path.is_dir() or path.stat().st_size > 7, path


@pytest.mark.parametrize("whole", [0, 1], ids=["scenario file fails", "markdown fails"])
def test_a_report_that_cannot_be_written_leaves_no_part_of_itself(tmp_path: Path, full_disk: list[int],
                                                                   whole: int) -> None:
    full_disk[0] = whole
    with pytest.raises(OSError) as info:
        write_failure_report(Divergence("p", TLP, "by design"), tmp_path, timeline=False)
    assert info.value.errno == errno.ENOSPC
    suffix = ".json" if whole == 0 else ".md"
    assert info.value.filename.endswith(suffix) and Path(info.value.filename).parent == tmp_path
    assert str(info.value).endswith(f"No space left on device: {info.value.filename!r}")
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_keeps_the_verdict_and_names_the_file(tmp_path: Path, full_disk: list[int],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    reports = RunReports.open(tmp_path, "run")
    assert reports.write_failure(Divergence("p", TLP, "by design"), timeline=False) == []
    assert reports.summary([_result(ok=False)]) is None
    assert reports.settle(1) == 1  # the divergence is still the run's exit code
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.startswith("converge: warning: ") for line in err)
    assert "the report of p was not written: " in err[0] and "No space left on device" in err[0]
    assert f"the summary was not written: {reports.run_dir / 'summary.json'}: No space left" in err[1]
    _no_partial_files(tmp_path)
    assert [p.name for p in reports.run_dir.iterdir()] == []


def test_a_green_run_whose_summary_cannot_be_written_exits_2(tmp_path: Path, full_disk: list[int],
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    full_disk[0] = 1  # summary.json is written, summary.md is not
    reports = RunReports.open(tmp_path, "run")
    assert reports.summary([_result()]) is None
    assert reports.settle(0) == 2
    assert "summary.md: No space left on device" in capsys.readouterr().err
    assert sorted(p.name for p in reports.run_dir.iterdir()) == ["summary.json"]
    _no_partial_files(tmp_path)


# ---------------------------------------------------------------- a dropped picture is said, not silent


def test_a_picture_that_cannot_be_written_is_warned_about(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from matplotlib.figure import Figure

    def savefig(self: Figure, path: Path, **kw: object) -> None:
        Path(path).write_bytes(b"\x89PNG")  # the start of a picture, then the disk is full
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Figure, "savefig", savefig)
    reports = RunReports.open(tmp_path, "run")
    paths = reports.write_failure(Divergence("p", TLP, "by design"))
    assert [Path(p).suffix for p in paths] == [".json", ".md"]
    assert "could not be written: No space left on device" in Path(paths[1]).read_text()
    assert reports.settle(1) == 1
    err = capsys.readouterr().err
    assert err.startswith("converge: warning: timeline picture ") and ".png not written: No space left" in err
    assert sorted(p.suffix for p in reports.run_dir.iterdir()) == [".json", ".md"]


def test_a_report_without_matplotlib_warns_once_and_keeps_the_exit_code(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the `pictures` extra were not installed
    reports = RunReports.open(tmp_path, "mutants")
    for _ in range(2):
        assert len(reports.write_failure(Divergence("p", TLP, "by design"))) == 2
    assert reports.settle(0) == 0  # a kill of `converge mutants` is written, and still a success
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "matplotlib is not installed" in err
