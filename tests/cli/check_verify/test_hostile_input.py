"""Hostile and damaged input to `converge check`, `verify` and `replay`: a typed refusal at file:line:col, never a
traceback (issue 24). One test per probe finding; tests/fuzz/ holds the fuzz suites that found more."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from converge.cli.main import main
from converge.engine.model.errors import BadInputError, DivergenceError, UnsupportedError
from converge.engine.model.flinksql import load_query, parse_query
from converge.engine.model.flinksql.captures import read_capture
from converge.engine.model.scenario import InputSpec
from converge.properties.query_guard import guard_query
from converge.properties.verify_capture import verify_capture
from tests.fuzz.outcomes import no_hang
from tests.support.captures import LEFT_JOIN, left_join_capture, write_output
from tests.support.paths import SCENARIOS

BASE = LEFT_JOIN.read_text()
ON = "ON o.order_id = p.order_id"
POSITION = re.compile(r"^q\.sql:(\d+):(\d+): ")


def _refused(sql: str, error: type = BadInputError) -> tuple[str, int, int]:
    with pytest.raises(error) as info:
        parse_query(sql, "q.sql")
    text = str(info.value)
    m = POSITION.match(text)
    assert m, text
    assert "\n" not in text and len(text) < 600, text
    return text, int(m.group(1)), int(m.group(2))


def _on(condition: str) -> str:
    return BASE.replace(ON, "ON " + condition)


# ---------------------------------------------------------------- converge check: crashes


def test_a_join_condition_nested_50_parentheses_deep_is_refused_where_the_nesting_gets_too_deep() -> None:
    text, line, col = _refused(_on("(" * 50 + "o.order_id = p.order_id" + ")" * 50))
    assert "nested more than 32 deep" in text and line == 19 and col == 6 + 32


def test_a_long_run_of_not_and_a_long_and_chain_are_refused_not_a_recursion_error() -> None:
    assert "nested too deeply" in _refused(_on("NOT " * 600 + "o.order_id = p.order_id"))[0]
    assert "nested more than 120 levels" in _refused(_on(" AND ".join(["o.order_id = p.order_id"] * 3000)))[0]


@pytest.mark.parametrize("literal, what, error", [
    ("1e999", "beyond the range of DOUBLE", BadInputError),
    ("9" * 400, "has 400 digits", BadInputError),
    ("9" * 40 + ".5", "has 41 digits", BadInputError),
    ("9223372036854775808", "beyond BIGINT", UnsupportedError),
])
def test_a_literal_beyond_its_range_is_refused_at_its_position(literal: str, what: str, error: type) -> None:
    text, line, col = _refused(_on(f"o.order_id = p.order_id AND o.order_id < {literal}"), error)
    assert what in text and (line, col) == (19, 47)


def test_converge_check_exits_2_with_one_line_on_a_huge_literal(tmp_path: Path, capsys) -> None:
    path = tmp_path / "q.sql"
    path.write_text(_on("o.order_id = p.order_id AND p.paid > 1e999"))
    assert main(["check", str(path), "--no-reports", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"converge: bad input: {path}:19:") and "Traceback" not in err[0]


# ---------------------------------------------------------------- converge check: messages


def test_an_unterminated_string_is_refused_where_it_opens() -> None:
    text, line, col = _refused(BASE + "\n'abc")
    assert (line, col) == (21, 1) and "never closed" in text


def test_a_second_select_is_named_and_a_missing_one_at_the_end() -> None:
    text, line, _ = _refused(BASE + ";\nSELECT * FROM orders;\n", UnsupportedError)
    assert line == 21 and "found 2 (this is the second)" in text
    text, line, _ = _refused(BASE.split("SELECT")[0])
    assert line == 14 and "found none" in text


def test_bytes_that_are_not_utf8_are_placed_at_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "q.sql"
    path.write_bytes(BASE.encode().replace(b"customer_id", b"cust\xffomer_id"))
    with pytest.raises(BadInputError, match=rf"^{re.escape(str(path))}:4:7: not UTF-8 text \(byte 139 is 0xff\)"):
        load_query(path)


def test_a_duplicate_column_is_declared_twice_and_only_a_case_difference_is_called_so() -> None:
    assert "column 'amount' is declared twice" in _refused(BASE.replace("amount DECIMAL(10, 2),",
                                                                        "amount DECIMAL(10, 2), amount INT,"))[0]
    assert "differ only in case" in _refused(BASE.replace("amount DECIMAL(10, 2),",
                                                          "amount DECIMAL(10, 2), AMOUNT INT,"))[0]
    with pytest.raises(BadInputError, match="column 'k' is declared twice"):
        InputSpec("t", (("k", "INTEGER"), ("k", "INTEGER")))


def test_a_column_the_model_refuses_is_named_by_its_position_not_by_a_key_path() -> None:
    text, line, col = _refused(BASE.replace("customer_id INT", "`` INT"))
    assert (line, col) == (4, 3) and "columns[" not in text


def test_a_5000_character_identifier_is_not_echoed_whole() -> None:
    text, _, _ = _refused(BASE.replace("FROM orders AS o", "FROM " + "x" * 5000 + " AS o"))
    assert "..." in text and len(text) < 400
    text, _, _ = _refused(BASE.replace("method STRING", "y" * 5000 + " STRING"))
    assert "5,000 characters" in text


@pytest.mark.parametrize("tail", ["-- the end\n", "/* the end */", ";\n-- c"])
def test_a_comment_after_the_last_semicolon_is_accepted(tail: str) -> None:
    assert parse_query(BASE + tail, "q.sql").aliases == (("o", "orders"), ("p", "payments"))


def test_a_condition_the_oracle_refuses_is_placed_at_its_on_clause() -> None:
    def balanced(n: int) -> str:
        return "o.order_id = p.order_id" if n == 0 else f"({balanced(n - 1)}) AND ({balanced(n - 1)})"

    query = parse_query(_on(balanced(9)), "q.sql")  # 512 comparisons: over 10,000 characters once rendered
    with pytest.raises(BadInputError, match=r"^q\.sql:19:\d+: condition of \d+ characters"):
        guard_query(query)


def test_a_query_file_over_256_kib_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "q.sql"
    path.write_text(BASE + "-- " + "x" * (256 << 10) + "\n")
    with pytest.raises(BadInputError, match=r":1:1: the file has 262,\d+ bytes; converge reads query files of at most "
                                            r"262,144"):
        load_query(path)


# ---------------------------------------------------------------- converge verify


def _cols():
    return list(load_query(LEFT_JOIN).table_of("p").columns)


def test_a_csv_field_over_131072_characters_is_read(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text("op,payment_id,order_id,paid,method\n+I,7,1,2.5," + "m" * 200_000 + "\n")
    (record,) = read_capture(path, _cols())
    assert record.row[3] == "m" * 200_000


def test_a_json_line_nested_100k_deep_is_refused_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"op": "+I", "payment_id": 1, "order_id": 1, "paid": 1, "method": "a"}\n'
                    + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(BadInputError, match=rf"^{re.escape(str(path))}:2:1: the JSON is nested too deeply"):
        list(read_capture(path, _cols(), "jsonl"))


@pytest.mark.parametrize("digits", ["1" * 27, "1" * 27 + ".5", "9" * 400])
def test_a_decimal_of_27_or_more_digits_is_refused_as_not_fitting(tmp_path: Path, digits: str) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"op": "+I", "payment_id": 1, "order_id": 1, "paid": digits, "method": "a"}) + "\n")
    with pytest.raises(BadInputError, match=rf"^{re.escape(str(path))}:1:\d+: column 'paid': .* does not fit"):
        list(read_capture(path, _cols()))


@pytest.mark.parametrize("kind, what", [("directory", "is a directory"), ("fifo", "is a FIFO"),
                                        ("devnull", "is a character device")])
def test_a_capture_that_is_not_a_regular_file_is_named_as_what_it_is(tmp_path: Path, capsys, kind: str,
                                                                      what: str) -> None:
    path = tmp_path / "p.jsonl"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path = Path(os.devnull)
    orders, _, out, _ = left_join_capture(tmp_path)
    with no_hang(10):  # a FIFO is never opened (it would block until a writer came)
        with pytest.raises(BadInputError, match=f"^{re.escape(str(path))}: {what}"):
            read_capture(path, _cols())
        code = main(["verify", str(LEFT_JOIN), "--source", f"orders={orders}", "--source", f"payments={path}",
                     "--output", str(out)])
    assert code == 2 and f"{path}: {what}" in capsys.readouterr().err


def test_an_empty_csv_is_refused_not_read_as_zero_records(tmp_path: Path, capsys) -> None:
    orders, _, out, _ = left_join_capture(tmp_path)
    empty = tmp_path / "payments.csv"
    empty.write_text("")
    with pytest.raises(BadInputError, match=r":1:1: the CSV capture is empty"):
        list(read_capture(empty, _cols()))
    assert main(["verify", str(LEFT_JOIN), "--source", f"orders={orders}", "--source", f"payments={empty}",
                 "--output", str(out)]) == 2


@pytest.mark.parametrize("fmt", ["print", "csv"])
def test_positioned_sources_with_an_unpositioned_output_check_the_final_answer(tmp_path: Path, fmt: str) -> None:
    orders, payments, out, outputs = left_join_capture(tmp_path)
    query = load_query(LEFT_JOIN)
    shown = [[o.type.display(v) if v is not None else None for o, v in zip(query.output, row, strict=False)]
             for _, _, row in outputs]
    if fmt == "print":
        text = "".join(f"{k}[{', '.join('null' if v is None else str(v) for v in vs)}]\n"
                       for (_, k, _), vs in zip(outputs, shown, strict=False))
    else:
        text = "op," + ",".join(o.name for o in query.output) + "\n" + "".join(
            k + "," + ",".join("" if v is None else str(v).strip("'") for v in vs) + "\n"
            for (_, k, _), vs in zip(outputs, shown, strict=False))
    out = tmp_path / f"out.{'txt' if fmt == 'print' else 'csv'}"
    out.write_text(text)
    result = verify_capture(query, {"orders": orders, "payments": payments}, out)
    assert result.mode == "final"


def test_a_dropped_row_later_retracted_is_reported_where_the_output_first_differs(tmp_path: Path) -> None:
    orders, payments, out, outputs = left_join_capture(tmp_path)
    query = load_query(LEFT_JOIN)
    k = next(k for k, (i, kind, row) in enumerate(outputs) if kind in ("+I", "+U")
             and any(later_row == row and later_kind in ("-U", "-D") for _, later_kind, later_row in outputs[k + 1:]))
    at = outputs[k][0]
    write_output(out, query, outputs[:k] + outputs[k + 1:])
    with pytest.raises(DivergenceError, match=rf"after input record {at} \(pos {at},") as info:
        verify_capture(query, {"orders": orders, "payments": payments}, out)
    assert "1 missing" in str(info.value)


def test_without_positions_a_dropped_row_and_its_kept_retraction_still_diverge(tmp_path: Path) -> None:
    orders, payments, out, outputs = left_join_capture(tmp_path)
    query = load_query(LEFT_JOIN)
    k = next(k for k, (i, kind, row) in enumerate(outputs) if kind in ("+I", "+U")
             and any(later_row == row and later_kind in ("-U", "-D") for _, later_kind, later_row in outputs[k + 1:]))
    write_output(out, query, outputs[:k] + outputs[k + 1:])
    out.write_text(re.sub(r', "pos": \d+', "", out.read_text()))
    with pytest.raises(DivergenceError, match="at the end of the capture") as info:
        verify_capture(query, {"orders": orders, "payments": payments}, out)
    assert "1 missing (the output retracts it at line" in str(info.value)


# ---------------------------------------------------------------- converge replay


@pytest.mark.parametrize("args, where", [
    (5, "meta.converge_failure.args: expected a list"),
    ([{"$scenario": 3}], r"meta.converge_failure.args\[0\].\$scenario: expected \"self\""),
    ([{"$scenario": {"inputs": 1}}], r"meta.converge_failure.args\[0\].\$scenario: missing key"),
    (["self", 1, 2, 3, 4, 5], "meta.converge_failure.args: 6 recorded arguments do not fit"),
])
def test_replay_of_a_report_with_damaged_args_is_bad_input_naming_the_key(tmp_path: Path, capsys, args,
                                                                         where: str) -> None:
    seed = SCENARIOS / "anomalies" / "flink_40681_duplicate_insert_correct.json"
    doc = {k: v for k, v in json.loads(seed.read_text()).items() if k not in ("expect_final", "expect_changelog")}
    doc["meta"] = {**(doc.get("meta") or {}),
                   "converge_failure": {"property": "prefix_consistency", "family": "regular", "args": args}}
    path = tmp_path / "report.json"
    path.write_text(json.dumps(doc))
    assert main(["replay", str(path)]) == 2
    out = capsys.readouterr()
    assert re.search(f"bad input: BadInputError: {where}", out.out + out.err), out
    assert "TypeError" not in out.out + out.err


def test_a_final_answer_that_agrees_only_by_a_dropped_row_and_a_kept_retraction_still_diverges(tmp_path: Path) -> None:
    orders, payments, out, outputs = left_join_capture(tmp_path)
    query = load_query(LEFT_JOIN)
    k = next(k for k, (i, kind, row) in enumerate(outputs) if kind in ("+I", "+U")
             and any(later_row == row and later_kind in ("-U", "-D") for _, later_kind, later_row in outputs[k + 1:]))
    damaged = outputs[:k] + outputs[k + 1:] + [(outputs[-1][0], "+I", outputs[k][2])]  # dropped, then re-added
    write_output(out, query, damaged)
    out.write_text(re.sub(r', "pos": \d+', "", out.read_text()))
    with pytest.raises(DivergenceError, match=r":\d+:1: a retraction of a row the output does not hold"):
        verify_capture(query, {"orders": orders, "payments": payments}, out)


def test_a_line_break_inside_a_quoted_name_is_escaped_so_the_refusal_stays_one_line(tmp_path: Path) -> None:
    text, _, _ = _refused(BASE.replace("FROM orders AS o", "FROM `or\u2028ders` AS o"))
    assert "or\\u2028ders" in text
    path = tmp_path / "out.csv"
    path.write_text("op,pos,order_id,amount,p\x0byment_id,paid,method\n+I,0,1,5.00,,,\n")
    with pytest.raises(BadInputError) as info:
        list(read_capture(path, [(o.name, o.type) for o in load_query(LEFT_JOIN).output]))
    assert "'p\\x0byment_id'" in str(info.value) and len(str(info.value).splitlines()) == 1
