"""`converge capture`: a capture of converge's engine on one drawn input, in the form `converge verify` reads; the
verify command it prints passes, the same seed gives the same capture, a changed output diverges."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from converge.cli.main import main
from tests.support.paths import EXAMPLES

QUERY = EXAMPLES / "left_join_residual.sql"


def _capture(out: Path, capsys, *options: str, query: Path = QUERY) -> list[str]:
    assert main(["capture", str(query), "--out", str(out), *options]) == 0
    printed = capsys.readouterr().out.splitlines()
    command = next(line for line in printed if line.startswith("check it: converge verify "))
    return shlex.split(command.removeprefix("check it: converge "))


def test_the_printed_verify_command_passes_and_a_changed_output_diverges(tmp_path: Path, capsys) -> None:
    argv = _capture(tmp_path / "cap", capsys, "--seed", "2", "--events", "10")
    sources = sorted(p.name for p in (tmp_path / "cap").iterdir())
    assert sources == ["orders.jsonl", "output.jsonl", "payments.jsonl"]
    inputs = sum(len(p.read_text().splitlines()) for p in (tmp_path / "cap").iterdir() if p.name != "output.jsonl")
    assert inputs >= 10
    assert main([*argv, "--quiet"]) == 0
    assert capsys.readouterr().out.startswith("passed: the output equals the answer after every input record")
    output = tmp_path / "cap" / "output.jsonl"
    lines = output.read_text().splitlines()
    assert lines, "the drawn input gives no output: the divergence below would test nothing"
    output.write_text("\n".join(lines[1:]) + "\n")  # the first output record lost
    assert main([*argv, "--quiet"]) == 1


def test_the_same_seed_gives_the_same_capture(tmp_path: Path, capsys) -> None:
    _capture(tmp_path / "a", capsys, "--seed", "5")
    _capture(tmp_path / "b", capsys, "--seed", "5")
    for name in ("orders.jsonl", "payments.jsonl", "output.jsonl"):
        assert (tmp_path / "a" / name).read_text() == (tmp_path / "b" / name).read_text(), name


def test_an_out_that_is_a_file_is_a_usage_error(tmp_path: Path, capsys) -> None:
    (tmp_path / "f").write_text("")
    assert main(["capture", str(QUERY), "--out", str(tmp_path / "f")]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


def test_an_outer_interval_join_capture_ends_its_input_and_verifies(tmp_path: Path, capsys) -> None:
    """Each timed source ends as a bounded one does (Flink's MAX_WATERMARK), so the orders no shipment met come out
    padded and the printed verify command passes; before, verify found the padded rows missing from converge's own
    capture."""
    argv = _capture(tmp_path / "cap", capsys, "--seed", "0", query=EXAMPLES / "interval_join_residual.sql")
    output = (tmp_path / "cap" / "output.jsonl").read_text().splitlines()
    padded = [line for line in output if '"shipment_id": null' in line]
    assert padded, "the drawn input pads no order: the end of input would test nothing"
    assert main([*argv, "--quiet"]) == 0
    assert capsys.readouterr().out.startswith("passed: the final output equals the batch answer")
    (tmp_path / "cap" / "output.jsonl").write_text("".join(f"{line}\n" for line in output if line not in padded))
    assert main([*argv, "--quiet"]) == 1  # without the padded rows: the divergence the capture used to hold


def test_a_table_read_in_several_places_is_captured_once_and_verifies(tmp_path: Path, capsys) -> None:
    """A self-join's table is one stream: one capture file, one --source, its end of input on the stream (before,
    the regular self-join crashed with a KeyError and the interval one put its MAX_WATERMARK on a reader)."""
    for name in ("self_join_managers", "self_interval_join"):
        out = tmp_path / name
        argv = _capture(out, capsys, "--seed", "1", query=EXAMPLES / f"{name}.sql")
        table = "emp" if name == "self_join_managers" else "logins"
        assert sorted(p.name for p in out.iterdir()) == [f"{table}.jsonl", "output.jsonl"]
        assert [a for a in argv if a.startswith(f"{table}=")] == [f"{table}={out / f'{table}.jsonl'}"]
        output = (out / "output.jsonl").read_text().splitlines()
        assert output, f"{name}: the drawn input gives no output: the divergence below would test nothing"
        assert main([*argv, "--quiet"]) == 0
        (out / "output.jsonl").write_text("".join(f"{line}\n" for line in output[1:]))  # one output record lost
        assert main([*argv, "--quiet"]) == 1


def test_a_capture_of_computed_columns_writes_the_declared_columns_and_verifies(tmp_path: Path, capsys) -> None:
    """A source with computed columns (here a rowtime parsed from text) is captured as its declared physical columns,
    the records a job's source reads; the capture crashed before (it wrote the columns the join sees)."""
    argv = _capture(tmp_path / "cap", capsys, "--seed", "0", query=EXAMPLES / "text_rowtime.sql")
    first = (tmp_path / "cap" / "clicks.jsonl").read_text().splitlines()[0]
    assert set(json.loads(first)) == {"op", "pos", "user_id", "page", "click_time"}
    assert main([*argv, "--quiet"]) == 0
    assert capsys.readouterr().out.startswith("passed: the final output equals the batch answer")
