"""Protocol version 2 on converge's side: the negotiation, the v2 CASE, and a campaign through a v2 stub adapter.

The stub (tests/support/adapters/v2.py) answers from the plan alone, with its own tree evaluator: a campaign that passes
through it shows the plan is enough to answer right, and one whose stub misreads NULL keys shows it is checked.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from converge.cli.main import main
from converge.engine.condition_tree import condition_plan
from converge.engine.model.errors import SystemUnderTestError
from converge.engine.model.scenario import ChangeEvent, InputSpec, JoinSpec, Scenario
from converge.engine.model.scenario_json import parse_scenario_text
from converge.engine.model.system_cases import case_to_json
from converge.properties.divergence import PropertyFailure
from converge.properties.systems import checks
from converge.properties.systems.specs import SYSTEM_PROPERTIES, not_applicable
from converge.systems.adapter import protocol
from converge.systems.adapter.client import AdapterSystem, Timeouts
from tests.support.paths import FAKE_ADAPTERS, ROOT

STUB = str(FAKE_ADAPTERS / "v2.py")
QUICK = Timeouts(hello=20, run_base=20, run_per_case=0, run_per_event=0, shutdown=5)


def stub(mode: str, dump: Path | None = None) -> AdapterSystem:
    argv = [sys.executable, STUB, mode] + ([str(dump)] if dump else [])
    return AdapterSystem(argv, label=f"v2 stub {mode}", timeouts=QUICK)


def scenario() -> Scenario:
    a = InputSpec("a", (("k", "BIGINT"), ("s", "VARCHAR")), None, "retract")
    b = InputSpec("b", (("k", "BIGINT"), ("x", "BIGINT")), None, "insert_only")
    events = (ChangeEvent("a", "+I", (1, "x")), ChangeEvent("b", "+I", (1, 5)), ChangeEvent("a", "+I", (None, "n")),
              ChangeEvent("b", "+I", (None, 7)), ChangeEvent("a", "-D", (1, "x")), ChangeEvent("a", "+I", (1, "y")))
    return Scenario("v2", (a, b), JoinSpec(("a", "b"), ("left",), ("a.k = b.k AND b.x > 2",)), events=events)


def dumped(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_hello_offers_both_versions() -> None:
    assert protocol.VERSIONS == (1, 2)
    assert protocol.hello_request() == {"type": "hello", "protocol": "converge-adapter", "versions": [1, 2]}
    assert protocol.hello_request([1])["versions"] == [1]


def test_an_adapter_answering_2_gets_v2_cases_the_scenario_and_the_plan(tmp_path: Path) -> None:
    dump, s = tmp_path / "cases.jsonl", scenario()
    with stub("v2", dump) as system:
        assert system.protocol_version == 2
        (result,) = system.run_cases([s])
    (case,) = dumped(dump)
    assert set(case) == {"id", "scenario", "plan"}  # no changelogs: scenario.events is the one source
    assert case["plan"] == condition_plan(s) == {
        "first": "a", "interval": None, "steps": [{
            "input": "b", "type": "left",
            "keys": [{"left": {"input": "a", "column": "k"}, "right": {"input": "b", "column": "k"},
                      "null_safe": False}],
            "residual": {"node": "call", "op": ">", "type": "BOOLEAN", "args": [
                {"node": "column", "input": "b", "column": "x", "type": "BIGINT"},
                {"node": "literal", "value": 2, "type": "INTEGER"}]}}]}
    assert case["scenario"] == case_to_json("c0", s)["scenario"]
    # answered from the plan: the NULL key matches nothing (a NULL-padded row), 1 matches 1
    assert result.folded() == {(1, "y", 1, 5): 1, (None, "n", None, None): 1}


def test_an_adapter_answering_1_gets_v1_cases_exactly_as_before(tmp_path: Path) -> None:
    dump, s = tmp_path / "cases.jsonl", scenario()
    with stub("v1", dump) as system:
        assert system.protocol_version == 1
        system.run_cases([s])
    (case,) = dumped(dump)
    assert case == case_to_json("c0", s) and set(case) == {"id", "scenario", "changelogs"}
    assert case["changelogs"] == {"a": [["+I", 1, "x"], ["+I", None, "n"], ["-D", 1, "x"], ["+I", 1, "y"]],
                                  "b": [["+I", 1, 5], ["+I", None, 7]]}
    assert protocol.run_request(3, [("c0", s)]) == protocol.run_request(3, [("c0", s)], 1)


def test_a_version_not_offered_is_refused_with_a_message() -> None:
    with pytest.raises(SystemUnderTestError, match=r"hello\.version: 3 was not offered \(offered: \[1, 2\]\)"):
        stub("v3")
    hello = {"type": "hello", "version": 2}
    assert protocol.negotiated_version(hello) == 2
    for bad in (True, "2", None, 0):
        with pytest.raises(SystemUnderTestError, match="was not offered"):
            protocol.negotiated_version({**hello, "version": bad})
    with pytest.raises(SystemUnderTestError, match=r"offered: \[1\]"):
        protocol.negotiated_version(hello, offered=[1])


def test_an_adapter_refusing_every_offered_version_says_so() -> None:
    error = {"type": "error", "message": "this stub speaks protocol version 2 only"}
    with pytest.raises(SystemUnderTestError, match=r"none of the protocol versions \[1\]: .*version 2 only"):
        protocol.read_hello(error, offered=[1])


def test_cases_of_both_versions_come_from_the_same_events() -> None:
    """v1's changelogs are the change events of each input, in order: v2 drops the copy, not information."""
    s = scenario()
    v1, v2 = protocol.case_object("c0", s, 1), protocol.case_object("c0", s, 2)
    assert v1["scenario"] == v2["scenario"]
    rebuilt: dict[str, list] = {spec["name"]: [] for spec in v2["scenario"]["inputs"]}
    for e in v2["scenario"]["events"]:
        rebuilt[e["input"]].append([e["kind"], *e["row"]])
    assert rebuilt == v1["changelogs"]


def test_a_restart_must_negotiate_the_same_version(tmp_path: Path) -> None:
    """The restart after a first timeout re-checks the hello: a version change is a failure, not a new session."""
    system = stub("v2")
    try:
        system.argv = [sys.executable, STUB, "v1"]  # the command now starts an adapter that answers 1
        system.process.kill()
        with pytest.raises(SystemUnderTestError, match=r"\(protocol 1\) with other capabilities or protocol than "
                                                       r"v2-stub 0 \(protocol 2\)"):
            system._restart(1, [("c0", scenario())], 6)
    finally:
        system.close()


def test_settings_the_stub_does_not_declare_make_their_properties_not_applicable() -> None:
    with stub("v2") as system:
        reasons = {p.key: not_applicable(p, system) for p in SYSTEM_PROPERTIES}
    assert reasons["multiway/multiway_equals_binary_chain"] == (
        "v2-stub does not honour config.multi_join=on (a multi-way join operator), so the property would not "
        "exercise it")
    assert reasons["minibatch/final_equals_oracle"] == (
        "the v2 stub has no mini-batch join, so the property would not exercise it")
    assert reasons["regular/final_equals_oracle"] is None and reasons["multiway/final_equals_oracle"] is None


def _row(out: str, family: str, prop: str) -> list[str]:
    (line,) = [x for x in out.splitlines() if x.startswith("v2-stub 0 ") and f" {family} " in x and f" {prop} " in x]
    return re.split(r"\s{2,}", line.strip())


def test_a_campaign_through_the_v2_stub_compares_cases_and_names_what_is_not_applicable(
        capsys: pytest.CaptureFixture) -> None:
    """The stub answers from the plan alone (its own evaluator): converge's checks compare it and it passes."""
    code = main(["run", "--system", f"cmd:{sys.executable} {STUB} v2", "--family", "regular", "--property",
                 "final_equals_oracle", "--examples", "30", "--seed", "3", "--no-reports"])
    out = capsys.readouterr().out
    assert code == 0, out
    _, _, _, outcome, examples, batches, cases, compared, *_ = _row(out, "regular", "final_equals_oracle")
    assert outcome == "passed" and int(examples) == int(cases) == int(compared) == 30 and int(batches) >= 2, out
    main(["run", "--system", f"cmd:{sys.executable} {STUB} v2", "--family", "minibatch", "--examples", "2",
          "--seed", "1", "--no-reports"])
    out = capsys.readouterr().out
    assert _row(out, "minibatch", "final_equals_oracle")[3] == "not applicable [1]", out  # reasons: footnotes
    assert "\n[1] not applicable: the v2 stub has no mini-batch join, so the property would not exercise it" in out


def test_a_stub_that_matches_null_keys_fails_the_same_check() -> None:
    """The same check can fail: `=` read as null-safe (a native NULL-matching join, Pathway's) is a divergence."""
    with stub("v2") as good:
        checks.final_equals_oracle(good, [scenario()])
    with stub("v2-nullmatch") as wrong, pytest.raises(PropertyFailure, match="final_equals_oracle"):
        checks.final_equals_oracle(wrong, [scenario()])


def _json_blocks(section: str) -> list[str]:
    text = (ROOT / "docs" / "adapter-protocol.md").read_text(encoding="utf-8")
    body = text.partition(f"\n## {section}\n")[2].partition("\n## ")[0]
    assert body, f"docs/adapter-protocol.md has no section {section!r}"
    return re.findall(r"^```json\n(.*?)^```", body, re.S | re.M)


def test_the_docs_hello_is_the_one_converge_sends() -> None:
    offer, answer = _json_blocks("1. Handshake")
    assert json.loads(offer) == protocol.hello_request()
    assert protocol.negotiated_version(json.loads(answer)) == 1
    protocol.read_hello(json.loads(answer))


def test_the_docs_v2_case_is_the_one_converge_builds() -> None:
    """The complete v2 CASE of "Running cases" is what converge sends for its scenario, plan and all."""
    example = json.loads(next(b for b in _json_blocks("2. Running cases") if '"plan"' in b))
    s = parse_scenario_text(json.dumps(example["scenario"]))
    assert protocol.case_object("c0", s, 2) == example
    assert protocol.case_object("c0", s, 1)["changelogs"] == {"a": [["+I", 1, "x"], ["-D", 1, None]],
                                                              "b": [["+I", 1, 5], ["+I", None, 7]]}
