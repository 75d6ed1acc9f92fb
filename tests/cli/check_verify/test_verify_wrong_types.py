"""A captured value of the wrong JSON type, per column type: `converge verify` refuses it as bad input at
`file:line:col`, naming the column, never with a traceback (issue 41 row 10: a list in a DECIMAL column crashed
with "argument must be a sequence of length 3", and a list of three items was silently read as a Decimal tuple).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from converge.cli.main import main

QUERY = """CREATE TABLE l (
  k BIGINT, i INT, s SMALLINT, t TINYINT, d DOUBLE, b BOOLEAN, v STRING, m DECIMAL(10, 2), ts TIMESTAMP(3), dt DATE
) WITH ('connector' = 'kafka', 'topic' = 'l', 'format' = 'debezium-json');
CREATE TABLE r (k BIGINT, x INT) WITH ('connector' = 'kafka', 'topic' = 'r', 'format' = 'debezium-json');
SELECT l.k, l.m, l.ts, l.dt, r.x FROM l JOIN r ON l.k = r.k;
"""
GOOD = {"k": 1, "i": 2, "s": 3, "t": 4, "d": 1.5, "b": True, "v": "a", "m": "1.25", "ts": "2024-01-01 10:00:00.123",
        "dt": "2024-01-02"}
OUTPUT = {"k": 1, "m": "1.25", "ts": "2024-01-01 10:00:00.123", "dt": "2024-01-02", "x": 7}
LISTS = ([], [1, 2], [0, [1], 0], [0, [1, 2], -1], {}, {"a": 1})  # [0, [1], 0] is a Decimal tuple to Python
WRONG: dict[str, tuple] = {  # per column: JSON values of a type (or a range) the column's type does not hold
    "k": (True, 1.5, "x", 2**63, *LISTS),
    "i": (False, 2.5, "1.5", 2**31, *LISTS),
    "s": (True, 40000, "y", *LISTS),
    "t": (True, 128, -129, *LISTS),
    "d": (True, "z", *LISTS),
    "b": (1, 0.0, "yes", *LISTS),
    "v": (1, 1.5, True, *LISTS),
    "m": (True, "x", "1e999", 10**9, *LISTS),
    "ts": (True, 1.5, "x", 10**30, "0001-01-01 00:00:00+01:00", "9999-12-31T23:59:59-05:00", *LISTS),
    "dt": (True, 1.5, "x", 10**9, "2024-13-01", *LISTS),
}
CASES = [(column, value) for column, values in WRONG.items() for value in values]


def _verify(tmp_path: Path, left: dict, output: dict | None = None, debezium: bool = False) -> tuple[int, Path]:
    sql = tmp_path / "q.sql"
    sql.write_text(QUERY)
    lpath = tmp_path / ("l.json" if debezium else "l.jsonl")
    lpath.write_text(json.dumps({"op": "c", "after": left} if debezium else {"op": "+I", "pos": 0, **left}) + "\n")
    (tmp_path / "r.jsonl").write_text(json.dumps({"op": "+I", "pos": 1, "k": 1, "x": 7}) + "\n")
    (tmp_path / "out.jsonl").write_text(json.dumps({"op": "+I", "pos": 1, **(output or OUTPUT)}) + "\n")
    code = main(["verify", str(sql), "--source", f"l={lpath}", "--source", f"r={tmp_path / 'r.jsonl'}",
                 "--output", str(tmp_path / "out.jsonl"), "--quiet"])
    return code, lpath


def _one_refusal(capsys, path: Path, column: str) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "Traceback" not in err[0] and "crashed" not in err[0], err
    assert err[0].startswith(f"converge: bad input: {path}:1:"), err
    assert f"column {column!r}: " in err[0], err
    return err[0]


def test_the_well_typed_record_passes(tmp_path: Path, capsys) -> None:
    """The base every case below damages: verify passes it, so each refusal is the one wrong value's."""
    assert _verify(tmp_path, GOOD)[0] == 0, capsys.readouterr()


@pytest.mark.parametrize("column, value", CASES, ids=[f"{c}={json.dumps(v)}" for c, v in CASES])
def test_a_source_value_of_the_wrong_type_is_refused_at_its_column(tmp_path: Path, capsys, column: str,
                                                                   value: object) -> None:
    code, path = _verify(tmp_path, {**GOOD, column: value})
    message = _one_refusal(capsys, path, column)
    assert code == 2, message
    line = path.read_text()
    col = int(message.split(f"{path}:1:")[1].split(":")[0])
    assert line[col - 1:].startswith(json.dumps(column)), (message, line)  # the column's key, where it is written


@pytest.mark.parametrize("column, value", [(c, v) for c, v in CASES if c in ("m", "ts", "dt")][::3])
def test_a_wrong_value_in_a_debezium_after_image_is_refused(tmp_path: Path, capsys, column: str, value: object) -> None:
    code, path = _verify(tmp_path, {**GOOD, column: value}, debezium=True)
    assert code == 2 and _one_refusal(capsys, path, column)


@pytest.mark.parametrize("column", ["m", "ts", "dt", "x"])
def test_a_list_in_an_output_column_is_refused(tmp_path: Path, capsys, column: str) -> None:
    code, _ = _verify(tmp_path, GOOD, {**OUTPUT, column: [0, [1], 0]})
    assert code == 2 and _one_refusal(capsys, tmp_path / "out.jsonl", column)


def test_an_integer_beyond_double_reads_as_infinity_as_flinks_json_format_parses_its_text(tmp_path: Path,
                                                                                        capsys) -> None:
    """Flink's JsonToRowDataConverters.convertToDouble parses a non-double number's text: 1e400 -> Infinity."""
    assert _verify(tmp_path, {**GOOD, "d": 10**400})[0] == 0, capsys.readouterr()
