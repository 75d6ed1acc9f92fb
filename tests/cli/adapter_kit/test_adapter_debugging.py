"""Debugging an adapter: `--adapter-log FILE`, the adapter's stderr per request in a divergence's report, and
`--examples N` as exactly N cases on a system (docs/adapter-protocol.md, "Debugging an adapter"; docs/systems.md).

The stub adapter is the documented example adapter, made to talk: it writes to stderr, for every line it reads,
the size of that line in bytes and the request it belongs to, and from run request WRONG_FROM on it adds a row of
NULLs to every answer (a wrong answer, found in any case it is sent)."""

from __future__ import annotations

import json
import re
import shlex
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from converge.cli.commands.run import cmd_run
from converge.cli.main import build_parser, main
from converge.engine.model.errors import UsageError
from converge.engine.model.scenario_json import load_scenario
from converge.properties.campaign import PropertyResult
from converge.properties.divergence import Divergence, PropertyFailure
from converge.properties.exercise import Exercised
from converge.properties.systems.quota import CaseQuota
from converge.properties.systems.specs import SYSTEM_PROPERTIES
from converge.systems.adapter.log import REQUEST_STDERR_LINES, Conversation, adapter_log
from converge.systems.adapter.requests import RequestHistory, RequestRecord, with_stderr
from converge.systems.campaign import SystemRun, closing_note
from converge.systems.reference import ReferenceSystem
from tests.support.example_adapter import EXAMPLE
from tests.support.paths import ROOT

READ = "        message = json.loads(line)\n"
ANSWER = '            send({"type": "results", "request": message["request"], "results": results})\n'
TALK = READ + ('        tag = message.get("request", message.get("type"))\n'
               '        sys.stderr.write(f"chatty: {len(line.encode())} bytes read for <{tag}>\\n")\n'
               '        sys.stderr.flush()\n')
WRONG = ('            if message["request"] >= WRONG_FROM:\n'
         '                for case, result in zip(message["cases"], results):\n'
         '                    if result["status"] == "ok":\n'
         '                        width = sum(len(spec["columns"]) for spec in case["scenario"]["inputs"])\n'
         '                        result["final"].append([None] * width)\n'
         '            sys.stderr.write(f"chatty: answering <{message[\'request\']}>\\n")\n'
         '            sys.stderr.flush()\n') + ANSWER
CASE_BYTES = re.compile(r"chatty: (\d+) bytes read for <(\w+)>")


def _stub(folder: Path, wrong_from: int) -> str:
    assert READ in EXAMPLE and ANSWER in EXAMPLE  # the documented example still reads and answers this way
    code = EXAMPLE.replace(READ, TALK).replace(ANSWER, WRONG).replace("def main():", f"WRONG_FROM = {wrong_from}\n\n\n"
                                                                                    "def main():")
    path = folder / f"chatty_{wrong_from}.py"
    path.write_text(code)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


def _log(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_adapter_log_records_every_message_and_stderr_line_with_its_request(tmp_path: Path, capsys) -> None:
    log = tmp_path / "adapter.jsonl"
    command = _stub(tmp_path, wrong_from=10**6)  # always right
    code = main(["run", "--system", f"cmd:{command}", "--family", "regular", "--property", "final_equals_oracle",
                 "--examples", "5", "--batch", "2", "--seed", "1", "--no-reports", "--adapter-log", str(log)])
    assert code == 0, capsys.readouterr().out
    entries = _log(log)
    sent = [e for e in entries if e["direction"] == "sent"]
    # the hello, three run requests (5 cases in batches of 2: 2, 2 and the last cut to 1), the shutdown
    assert [e["request"] for e in sent] == ["hello", 1, 2, 3, "shutdown"]
    assert [len(e["message"]["cases"]) for e in sent[1:4]] == [2, 2, 1]
    received = [e for e in entries if e["direction"] == "received"]
    assert [e["request"] for e in received] == ["hello", 1, 2, 3]
    assert [e["message"]["type"] for e in received] == ["hello", "results", "results", "results"]
    assert all(isinstance(e["seconds"], float) and e["seconds"] >= 0 for e in received)
    # the adapter says how many bytes it read for each request: the log's sizes of what was sent agree
    stderr = [e for e in entries if e["direction"] == "stderr"]
    said = [CASE_BYTES.match(e["text"]) for e in stderr]
    read = {m.group(2): int(m.group(1)) for m in said if m}
    assert read == {str(e["request"]): e["bytes"] for e in sent}
    # each stderr line is tagged with the request it was written for
    for e in stderr:
        tag = re.search(r"<(\w+)>", e["text"]).group(1)
        assert str(e["request"]) == tag, e
    assert {e["pid"] for e in entries} == {sent[0]["pid"]} and all(e["time"].endswith("+00:00") for e in entries)
    # the line the docs show has the keys of a real one, and its table names every key the log writes
    section = (ROOT / "docs" / "adapter-protocol.md").read_text().split("## Debugging an adapter", 1)[1]
    shown = json.loads(re.search(r"```json\n(.*?)\n```", section, re.S).group(1))
    assert set(shown) == set(received[0])
    documented = set(re.findall(r"^\| `(\w+)` \|", section, re.M))
    assert documented == {key for e in entries for key in e}


def test_a_divergence_report_shows_the_stderr_of_its_request_and_no_other(tmp_path: Path, capsys) -> None:
    command = _stub(tmp_path, wrong_from=3)  # requests 1 and 2 answered right, every later one wrong
    reports = tmp_path / "reports"
    code = main(["run", "--system", f"cmd:{command}", "--family", "regular", "--property", "final_equals_oracle",
                 "--examples", "60", "--seed", "2", "--reports-dir", str(reports)])
    out = capsys.readouterr().out
    assert code == 1, out
    (report,) = (reports / "latest").glob("final-equals-oracle-*.md")
    text = report.read_text()
    found = re.search(r"## stderr of the adapter during this request \(run request (\d+)\)\n\n```text\n(.*?)```",
                      text, re.S)
    assert found is not None, text
    number, block = int(found.group(1)), found.group(2)
    assert number >= 3  # the case that diverged was answered by a wrong request
    first, second = block.splitlines()  # what it wrote while it read and answered that request, nothing else
    assert CASE_BYTES.fullmatch(first).group(2) == str(number) and second == f"chatty: answering <{number}>"
    # replayed on an adapter wrong from its first request: the stderr of each request that carried the case
    (case,) = (reports / "latest").glob("final-equals-oracle-*.json")
    log = tmp_path / "replay.jsonl"
    assert main(["replay", "--system", f"cmd:{_stub(tmp_path, wrong_from=1)}", str(case), "--adapter-log",
                 str(log)]) == 1
    replayed = capsys.readouterr().out
    assert [e["request"] for e in _log(log) if e["direction"] == "sent"] == ["hello", 1, 2, 3, "shutdown"]
    for request in (1, 2, 3):  # final_equals_oracle, system_equals_reference, expect_final: a request each
        assert f"stderr of the adapter during run request {request} (this file's case):\n" in replayed, replayed
        assert f"  chatty: answering <{request}>" in replayed
    (prop,) = json.loads((reports / "latest" / "summary.json").read_text())["properties"]
    assert prop["system_seconds"] > 0 and prop["converge_seconds"] >= 0  # the wait for the adapter, measured
    for right in (1, 2):  # what the adapter wrote while it answered right is in no report
        assert f"<{right}>" not in text
        assert all(f"<{right}>" not in p.read_text() for p in (reports / "latest").iterdir() if p.suffix in (".md", ".json"))


def test_the_adapter_log_needs_a_system_and_the_kit_writes_one_for_every_process(tmp_path: Path, capsys) -> None:
    with pytest.raises(UsageError, match="--adapter-log applies to a system under test"):
        cmd_run(build_parser().parse_args(["run", "--adapter-log", str(tmp_path / "x.jsonl")]))
    log = tmp_path / "kit.jsonl"
    assert main(["adapter", "check", _stub(tmp_path, wrong_from=10**6), "--adapter-log", str(log)]) == 0
    capsys.readouterr()
    entries = _log(log)
    # the kit starts several processes (a fresh one after each check that must kill it): all in one log
    assert len({e["pid"] for e in entries}) > 1
    assert {"sent", "received", "stderr"} <= {e["direction"] for e in entries}


def test_a_quota_sends_full_batches_then_the_rest_and_freezes_at_a_failure() -> None:
    quota = CaseQuota(45, 20)
    sizes = []
    for _ in range(quota.planned_batches):
        sizes.append(quota.next_size())
        quota.checked(sizes[-1], ok=True)
    assert sizes == [20, 20, 5] and (quota.sent, quota.batches) == (45, 3)
    failing = CaseQuota(45, 20)
    failing.checked(failing.next_size(), ok=False)  # the first batch fails: its replay must draw 20 again
    assert failing.next_size() == 20 and failing.passed == 0
    with pytest.raises(Exception, match="positive integer"):
        CaseQuota(0, 20)


def test_examples_batches_and_cases_say_the_same_in_the_table_and_the_summary(tmp_path: Path, capsys) -> None:
    code = main(["run", "--system", "reference", "--family", "regular", "--property", "semi_anti_equals_oracle",
                 "--examples", "45", "--batch", "20", "--seed", "4", "--reports-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    header, _, row = out.splitlines()[:3]
    cells = dict(zip(header.split(), row.split()[1:], strict=False))  # "reference 0.3.0" is two words, its header one
    assert (cells["examples"], cells["batches"], cells["cases"]) == ("45", "3", "45")
    summary = json.loads((tmp_path / "latest" / "summary.json").read_text())
    (prop,) = summary["properties"]
    assert (prop["examples"], prop["batches"], prop["cases"]) == (45, 3, 45)
    assert "45 examples, 3 batches, 45 cases" in (tmp_path / "latest" / "summary.md").read_text()
    assert "system_seconds" not in prop  # the reference system is no adapter: nothing measured, nothing claimed


def test_a_failure_finds_its_request_by_what_was_sent_and_a_reporter_shows_it() -> None:
    sent = load_scenario(ROOT / "tests" / "scenarios" / "regular" / "acc_inner_no_match.json")
    other = replace(sent, events=sent.events[:1])
    history = RequestHistory()
    history.add(RequestRecord(1, (sent,), 0.1, ("first",)))
    history.add(RequestRecord(2, (other,), 0.1, ("second",), dropped=3))
    system = type("Adapter", (), {"history": history})()
    copy = replace(sent, meta={"a copy": True})  # what a check judged: equal as sent, another object
    failure = PropertyFailure(Divergence("p", copy, "differs"))
    seen = []
    with_stderr(system, seen.append)(type("Result", (), {"failure": failure})())
    assert seen and failure.divergence.extra["adapter_stderr"] == {"request": 1, "lines": ["first"]}
    assert history.find(other).stderr_block() == ["(3 earlier lines not kept)", "second"]
    assert with_stderr(system, None) is None  # no reports: nothing to write


def test_lines_that_are_not_json_objects_are_logged_as_text_and_stderr_is_bounded_per_request(tmp_path) -> None:
    path = tmp_path / "log.jsonl"
    with adapter_log(path) as log:
        talk = Conversation("stub", 7, log)
        talk.sent(b"garbage\n", 8)
        talk.received(b'{"type": "results", "x": NaN}\n')  # not JSON: the log keeps it as text, and stays JSON
        for n in range(REQUEST_STDERR_LINES + 5):
            talk.stderr_line(f"line {n}")
        lines, dropped = talk.request_stderr()
        talk.sent({"type": "run", "request": 4, "cases": []}, 40)
        assert talk.request_stderr() == ((), 0)  # a new request starts with no stderr of its own
    assert (len(lines), lines[0], lines[-1], dropped) == (REQUEST_STDERR_LINES, "line 5", "line 204", 5)
    first, second, *stderr, last = _log(path)
    assert (first["request"], first["text"], first["bytes"]) == ("unreadable", "garbage", 8)
    assert (second["direction"], second["text"]) == ("received", '{"type": "results", "x": NaN}')
    assert len(stderr) == REQUEST_STDERR_LINES + 5  # the log keeps every line; the report its request's last 200
    assert (last["request"], last["message"]["type"], last["bytes"]) == (4, "run", 40)


def test_a_property_that_held_with_fewer_cases_than_asked_says_so(capsys) -> None:
    prop = SYSTEM_PROPERTIES[0]
    short, full = CaseQuota(45, 20), CaseQuota(20, 20)
    short.checked(20, ok=True)  # Hypothesis stopped after one batch of the three planned
    full.checked(20, ok=True)
    runs = [SystemRun(prop, result=PropertyResult(prop.family, prop.name, examples=1, exercised=Exercised(compared=20)),
                      quota=quota) for quota in (short, full)]
    closing_note(ReferenceSystem(), runs, 0.0)
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("NOTE")]
    assert notes == [f"NOTE {prop.key}: 20 of the 45 cases asked were sent: Hypothesis stopped drawing batches early "
                     "(it found no new batch to draw, or too many draws overran its size limit; a smaller --batch "
                     "helps the second)"]
