"""`converge check` output: every refusal in one run, --plan-only, --format json, and the late-row finding's text."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from converge.cli.check_json import finding
from converge.cli.check_plan import PLAN_ONLY_NOTE, fast_args
from converge.cli.main import main
from converge.engine.model.duckdb_params import inlined
from converge.engine.model.errors import BadInputError, UnsupportedError
from converge.engine.model.flinksql import load_query, parse_query
from converge.engine.model.scenario import ChangeEvent, WatermarkEvent
from converge.oracle.query import run_query
from converge.properties.findings import Finding, late_story
from tests.support.paths import ROOT

EXAMPLES = ROOT / "docs" / "examples"
TABLES = ("CREATE TABLE a (k INT, v INT) WITH ('connector' = 'kafka', 'format' = 'json');\n"
          "CREATE TABLE b (k INT, w INT) WITH ('connector' = 'kafka', 'format' = 'json');\n")


def test_two_unsupported_clauses_are_both_refused_in_one_run() -> None:
    text = TABLES + "SELECT a.k, UPPER(b.w)\nFROM a JOIN b ON a.k = b.k\nGROUP BY a.k;\n"
    with pytest.raises(UnsupportedError) as caught:
        parse_query(text, "q.sql")
    lines = str(caught.value).splitlines()
    assert lines[0] == "q.sql: 2 problems in the query (each with its file:line:column):"
    assert lines[1].startswith("  [unsupported] q.sql:3:13: `UPPER(b.w)` ")
    assert lines[2] == "  [unsupported] q.sql:5:10: `GROUP BY a.k` GROUP is not supported: converge checks joins"
    assert [(r.clause, type(r)) for r in caught.value.refusals] == [("UPPER(b.w)", UnsupportedError),
                                                                   ("GROUP BY a.k", UnsupportedError)]


def test_bad_input_beside_an_unsupported_clause_makes_the_run_bad_input_and_lists_both() -> None:
    """A mistake and an unsupported clause: both come back, the mistake first in file order; the run is bad input
    (the query must be fixed whatever converge supports)."""
    text = TABLES + "SELECT a.k, b.nope\nFROM a JOIN b ON a.k = b.k\nORDER BY a.k;\n"
    with pytest.raises(BadInputError) as caught:
        parse_query(text, "q.sql")
    assert str(caught.value).splitlines()[1:] == [
        "  [bad input] q.sql:3:13: `b.nope` 'b' has no column 'nope' (columns: k, w)",
        "  [unsupported] q.sql:5:10: `ORDER BY a.k` ORDER is not supported: converge checks joins"]


def _docs_json_block() -> dict:
    page = (ROOT / "docs" / "check-your-query.md").read_text(encoding="utf-8")
    return json.loads(re.search(r"^```json\n(.*?)^```", page, re.S | re.M).group(1))


@pytest.mark.parametrize("plan_only", [True, False])
def test_the_json_document_in_the_docs_is_what_check_prints(plan_only: bool, capsys, monkeypatch) -> None:
    """Both refusals, with their positions and clauses, from --plan-only and from a full run (the refusal comes
    before any property, so the full run is as cheap)."""
    monkeypatch.chdir(ROOT)
    argv = ["check", "docs/examples/refused/two_refusals.sql", "--format", "json"] + (["--plan-only"] if plan_only else [])
    assert main(argv) == 2
    doc = json.loads(capsys.readouterr().out)
    want = _docs_json_block()
    if not plan_only:
        want["mode"] = "full"
    assert doc == want


def test_plan_only_prints_the_plan_and_runs_nothing(capsys) -> None:
    query = str(EXAMPLES / "three_way_common_key.sql")
    assert fast_args(["check", query, "--plan-only", "--multi-join", "on"]) is not None  # no other command loaded
    assert main(["check", query, "--plan-only", "--multi-join", "on"]) == 0
    out = capsys.readouterr().out
    assert "join chain: o INNER p ON (p.order_id = o.order_id) LEFT s ON (s.order_id = o.order_id)" in out
    assert "MultiJoin(commonJoinKey=[o.order_id]" in out and "state view: step 1 (INNER p)" in out
    assert out.rstrip().endswith(PLAN_ONLY_NOTE) and "properties:" not in out and "findings:" not in out


def test_plan_only_refuses_an_option_only_a_run_reads(capsys) -> None:
    argv = ["check", str(EXAMPLES / "left_join_residual.sql"), "--plan-only", "--examples", "3"]
    assert fast_args(argv) is None  # the full parser reads it, and refuses it
    assert main(argv) == 2
    assert "--plan-only runs no property, so --examples would be ignored" in capsys.readouterr().err


def test_plan_only_imports_neither_hypothesis_nor_pandas() -> None:
    """What keeps it fast for an editor (measured in the closing note, never timed here)."""
    code = ("import sys; from converge.cli.main import main; "
            f"code = main(['check', {str(EXAMPLES / 'left_join_residual.sql')!r}, '--plan-only', '--format', 'json']); "
            "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'hypothesis', 'pandas', 'pyspark'}); "
            "print(code, heavy, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.stderr.strip().splitlines()[-1] == "0 []", done.stderr
    assert json.loads(done.stdout)["plan"]["join"]["steps"][0]["type"] == "left"


def test_a_findings_json_rows_are_keyed_by_the_select_list_in_its_order() -> None:
    query = parse_query(TABLES + "SELECT b.w AS weight, a.k FROM a JOIN b ON a.k = b.k", "q.sql")
    f = Finding("t", "text", query.scenario([ChangeEvent("a", "+I", (1, 2))]), ("input:",),
                (("batch answer:", (("2 x", (7, 1)), ("", (None, 3)))), ("output:", (("-U", (8, 1)),))))
    assert finding(query, f)["example"] == {
        "input": ["+I a(k=1, v=2)"],
        "outputs": [{"title": "batch answer", "columns": ["weight", "k"],
                     "rows": [{"count": 2, "row": {"weight": 7, "k": 1}}, {"count": 1, "row": {"weight": None, "k": 3}}]},
                    {"title": "output", "columns": ["weight", "k"], "rows": [{"kind": "-U", "row": {"weight": 8, "k": 1}}]}]}


# The late-row finding's text describes its own example. Lateness is worked out by hand here: a row is late when
# its time is not above the smaller of the two inputs' watermarks at its arrival. The interval example's bounds:
# s.ship_time - o.order_time in [0, 1 hour]; a cached s row is cleaned once its time <= watermark - 1.
INTERVAL = EXAMPLES / "interval_join_watermark.sql"


def _o(order_id, ms):
    return ChangeEvent("o", "+I", (order_id, 0, ms))


def _s(shipment_id, order_id, ms):
    return ChangeEvent("s", "+I", (shipment_id, order_id, ms))


def test_a_late_row_still_pairs_with_a_partner_still_cached_and_the_text_says_so() -> None:
    """o@1 arrives when both watermarks are 2501: late. s@1 was cleaned (1 <= 2500), s@7501 is still cached, so
    the streaming join pairs the late row once, the batch answer twice (s@1 and s@7501 are within the hour)."""
    query = load_query(INTERVAL)
    events = [_s(0, 0, 1), WatermarkEvent("s", -4999), _o(0, 7501), WatermarkEvent("o", 2501), _s(None, 0, 7501),
              WatermarkEvent("s", 2501), _o(0, 1)]
    assert late_story(query, query.scenario(events)) == (
        "event 6 (o, order_time 1970-01-01 00:00:00.001) arrives behind the join's watermark (2501 ms) and is "
        "late: the streaming join pairs it with 1 row still cached, the batch answer pairs it with 2 rows")


def test_a_late_outer_row_with_no_partner_is_padded_at_once_and_the_text_says_so() -> None:
    """Watermarks 1 and 1: s@1 is late (nothing of key 0 cached, not cached itself), then o@1 is late and finds no
    cached partner: the LEFT join pads it; the batch answer pairs each with the other."""
    query = load_query(INTERVAL)
    events = [_s(2, 1, 5001), WatermarkEvent("s", 1), _o(2, 5001), WatermarkEvent("o", 1), _s(0, 0, 1), _o(0, 1)]
    assert late_story(query, query.scenario(events)) == (
        "event 4 (s, ship_time 1970-01-01 00:00:00.001) arrives behind the join's watermark (1 ms) and is late: "
        "the streaming join pairs it with no row still cached, the batch answer pairs it with 1 row; "
        "event 5 (o, order_time 1970-01-01 00:00:00.001) arrives behind the join's watermark (1 ms) and is late: "
        "the streaming join pairs it with no row still cached and pads it, the batch answer pairs it with 1 row")


@pytest.mark.slow
def test_a_full_json_run_has_every_documented_field(capsys) -> None:
    """The whole document of a real run (a few examples): plan, verdicts that compared cases, findings whose
    example rows are keyed by the SELECT list."""
    argv = ["check", str(EXAMPLES / "left_join_residual.sql"), "--format", "json", "--examples", "3", "--seed", "1",
            "--ttl", "4", "--no-reports"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["mode"], doc["outcome"], doc["exit_code"], doc["refusals"]) == ("full", "passed", 0, [])
    names = ["order_id", "amount", "payment_id", "paid", "method"]
    assert [s["name"] for s in doc["plan"]["select"]] == names
    assert doc["plan"]["options"] == {"ttl_ms": 4, "semantics": "correct", "map_state_order": "rocksdb",
                                      "multi_join": "off", "examples": 3, "seed": 1, "system": "reference"}
    passed = [v for v in doc["verdicts"] if v["verdict"] == "passed"]
    assert passed and all(v["compared"] > 0 for v in passed)
    assert [f["topic"] for f in doc["findings"]] == ["MapState order", "state TTL", "late rows", "multi-way join"]
    shown = [f for f in doc["findings"] if f["example"] is not None]
    assert shown and all(block["columns"] == names and all(list(r["row"]) == names for r in block["rows"])
                         for f in shown for block in f["example"]["outputs"])


@pytest.mark.parametrize("text", ["it's", "a \\ b", "why?", "'; DROP TABLE x; --", "line\nbreak", "nul\x00byte"])
def test_a_text_parameter_written_as_a_literal_reaches_duckdb_unchanged(text: str) -> None:
    """--plan-only binds no parameter (binding one imports pandas): the literal must hold exactly the text."""
    sql, bound = inlined("SELECT ?, length(?)", [text, text])
    assert (bound == []) == ("\x00" not in text)  # a NUL is bound as before
    assert run_query("SELECT ?, length(?)", params=[text, text]) == [(text, len(text))]
