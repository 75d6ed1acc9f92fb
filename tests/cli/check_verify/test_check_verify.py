"""`converge check` on the three example queries, and `converge verify` on captures of converge's own engine."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from converge.cli.main import main
from converge.engine.model.errors import BadInputError, DivergenceError
from converge.engine.model.flinksql import load_query
from converge.engine.model.flinksql.captures import read_capture
from converge.properties.verify_capture import verify_capture
from tests.support.captures import LEFT_JOIN, left_join_capture, write_output
from tests.support.paths import EXAMPLES
from tests.support.queries import PLAIN_LEFT_JOIN


@pytest.mark.parametrize("name", ["left_join_residual", "interval_join_watermark", "three_way_common_key"])
def test_check_runs_end_to_end_on_the_examples(name: str, capsys, tmp_path: Path) -> None:
    code = main(["check", str(EXAMPLES / f"{name}.sql"), "--examples", "8", "--seed", "3", "--ttl", "4",
                 "--multi-join", "on", "--reports-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    reading = next(line for line in out.splitlines() if line.startswith("check/reading_equals_query"))
    assert reading.split()[1] == "passed", out  # the unplanted reader reads the example as written
    for section in ("plan:", "properties:", "findings:", "check/system_final_answer", "* MapState order",
                    "* state TTL", "* late rows", "* multi-way join"):
        assert section in out
    if name == "interval_join_watermark":
        assert "IntervalJoin(joinType=[LeftOuterJoin]" in out and "interval/no_late_equals_oracle" in out
        assert "the interval join does not cache it" in out and "In the example: event " in out  # found, shown
    if name == "three_way_common_key":
        assert "multiway/prefix_consistency" in out and "multi-way join: applies" in out
    if name == "left_join_residual":
        assert "ChangelogNormalize" in out and "a TTL of 4 ms changes the answer" in out


def test_verify_passes_on_the_engines_own_capture(tmp_path: Path, capsys) -> None:
    orders, payments, out, _ = left_join_capture(tmp_path)
    code = main(["verify", str(LEFT_JOIN), "--source", f"orders={orders}", "--source", f"payments={payments}",
                 "--output", str(out)])
    assert code == 0
    assert "the output equals the answer after every input record (8 input records" in capsys.readouterr().out


def test_verify_fails_at_the_position_of_a_removed_output_row(tmp_path: Path, capsys) -> None:
    orders, payments, out, outputs = left_join_capture(tmp_path)
    query = load_query(LEFT_JOIN)
    at = next(k for k, (i, kind, row) in enumerate(outputs) if i == 2 and kind == "+I")
    write_output(out, query, outputs[:at] + outputs[at + 1:])
    with pytest.raises(DivergenceError, match=r"after input record 2 \(pos 2, .*payments.jsonl:2\)") as info:
        verify_capture(query, {"orders": orders, "payments": payments}, out)
    assert "1 missing: (order_id=1, amount=5.00, payment_id=101, paid=6.00, method='cash')" in str(info.value)
    code = main(["verify", str(LEFT_JOIN), "--source", f"orders={orders}", "--source", f"payments={payments}",
                 "--output", str(out)])
    assert code == 1 and "after input record 2" in capsys.readouterr().err


def test_verify_reads_a_debezium_capture_and_checks_the_final_answer(tmp_path: Path) -> None:
    orders, _, out, _ = left_join_capture(tmp_path)
    payments = tmp_path / "payments-debezium.json"
    before_after = [
        {"op": "c", "after": {"payment_id": 100, "order_id": 1, "paid": "3.00", "method": "card"}},
        {"op": "c", "after": {"payment_id": 101, "order_id": 1, "paid": 6.0, "method": "cash"}},
        {"payload": {"op": "u", "before": {"payment_id": 101, "order_id": 1, "paid": 6.0, "method": "cash"},
                     "after": {"payment_id": 101, "order_id": 1, "paid": 1.0, "method": "cash"}}},
        {"op": "d", "before": {"payment_id": 100, "order_id": 1, "paid": 3.0, "method": "card"}},
    ]
    payments.write_text("".join(json.dumps(d) + "\n" for d in before_after))
    result = verify_capture(load_query(LEFT_JOIN), {"orders": orders, "payments": payments}, out)
    assert result.mode == "final" and result.input_events == 8  # positions only on one side: final answer
    payments.write_text("".join(json.dumps(d) + "\n" for d in before_after[:-1]))  # the delete never captured
    with pytest.raises(DivergenceError, match="at the end of the capture"):
        verify_capture(load_query(LEFT_JOIN), {"orders": orders, "payments": payments}, out)


def test_print_and_csv_captures(tmp_path: Path) -> None:
    query = load_query(LEFT_JOIN)
    printed = tmp_path / "out.txt"
    printed.write_text("print:1> +I[1, 5.00, null, null, null]\n-D[1, 5.00, null, null, null]\n")
    assert [(r.kind, r.row) for r in read_capture(printed, [(o.name, o.type) for o in query.output])] == [
        ("+I", (1, 500, None, None, None)), ("-D", (1, 500, None, None, None))]
    table = tmp_path / "payments.csv"
    table.write_text("op,payment_id,order_id,paid,method\n+I,7,1,2.5,a b\nINSERT,8,,0.125,\n")
    rows = [(r.kind, r.row) for r in read_capture(table, query.table_of("p").columns)]
    assert rows == [("+I", (7, 1, 250, "a b")), ("+I", (8, None, 13, None))]  # 0.125 -> 0.13, HALF_UP


@pytest.mark.parametrize("text, fmt, where", [
    ('{"op": "+I", "payment_id": 1}\n', "jsonl", ":1:1: column 'order_id' is missing"),
    ('{"op": "+I", "payment_id": 1, "order_id": 1, "paid": 1, "method": "a"}\n{"op": "X"}\n', "jsonl",
     ":2:2: row kind 'X'"),
    ('{"op": "u", "after": {}}\n', "debezium", ":1:1: op 'u' needs a 'before' object"),
    ("+I[1, 2]\n", "print", ":1:1: 2 values for 4 columns"),
    ('{"op": "+I", "payment_id": "x", "order_id": 1, "paid": 1, "method": "a"}\n', "jsonl", ":1:14: column 'payment_id'"),
])
def test_bad_capture_lines_name_file_line_and_column(tmp_path: Path, text: str, fmt: str, where: str) -> None:
    path = tmp_path / "cap.jsonl"
    path.write_text(text)
    with pytest.raises(BadInputError) as info:
        list(read_capture(path, load_query(LEFT_JOIN).table_of("p").columns, fmt))
    assert str(info.value).startswith(f"{path}{where}")


def test_verify_refuses_a_row_kind_the_source_cannot_produce(tmp_path: Path) -> None:
    orders, payments, out, _ = left_join_capture(tmp_path)
    orders.write_text('{"op": "-U", "order_id": 1, "customer_id": 1, "amount": 1}\n')
    with pytest.raises(BadInputError, match=r"orders.jsonl:1:1: row kind -U on 'orders'"):
        verify_capture(load_query(LEFT_JOIN), {"orders": orders, "payments": payments}, out)


def test_check_judges_the_system_named_by_system(capsys, tmp_path: Path) -> None:
    """`check --system SPEC` sends the cases of the query's schema to that system: the documented example
    adapter passes, the same adapter with LEFT joins run as INNER joins fails system_final_answer (and only
    it: the other properties check converge's engine)."""
    from tests.support.example_adapter import EXAMPLE, PADDING
    query = tmp_path / "plain_left.sql"
    query.write_text(PLAIN_LEFT_JOIN)
    commands = {}
    for name, code in (("example", EXAMPLE), ("inner", EXAMPLE.replace(PADDING, 'keyword = "JOIN"'))):
        path = tmp_path / f"{name}.py"
        path.write_text(code)
        commands[name] = f"cmd:{sys.executable} {path}"
    args = ["check", str(query), "--examples", "10", "--seed", "1", "--reports-dir", str(tmp_path / "r")]
    assert main(args + ["--system", commands["example"]]) == 0
    out = capsys.readouterr().out
    assert "system under test: sqlite-naive" in out and "on sqlite-naive" in out
    assert main(args + ["--system", commands["inner"]]) == 1
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines()
            if line.startswith(("check/", "regular/"))}
    assert rows == {"check/reading_equals_query": "passed", "check/system_final_answer": "diverged",
                    "regular/prefix_consistency": "passed",
                    "regular/final_convergence": "passed"}, out
    assert "oracle = reference engine ≠ sqlite-naive" in out


def test_check_reports_a_system_that_expresses_no_case_as_not_run(capsys, tmp_path: Path) -> None:
    """The example adapter takes no upsert input, so no case of the LEFT_JOIN example can go to it: the
    property is "not run" with the reason, never "passed"."""
    from tests.support.example_adapter import EXAMPLE
    path = tmp_path / "example.py"
    path.write_text(EXAMPLE)
    code = main(["check", str(LEFT_JOIN), "--examples", "5", "--seed", "1", "--no-reports",
                 "--system", f"cmd:{sys.executable} {path}"])
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("check/system_final_answer"))
    assert line.split()[1:3] == ["not", "run"] and "not applicable: sqlite-naive does not take upsert inputs" in line, out
    assert code == 0
