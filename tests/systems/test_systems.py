"""The systems-under-test abstraction: capabilities, applicability, the case encoding, the reference system."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest

from converge.cli.adapter_check import fixed_cases
from converge.engine.model.errors import (
    EXIT_INTERNAL,
    BadInputError,
    SystemUnderTestError,
    UsageError,
    exit_code,
    label,
)
from converge.engine.model.scenario import ChangeEvent, Config, InputSpec, JoinSpec, Scenario, WatermarkEvent
from converge.engine.model.system import Capabilities, CaseResult, applicability
from converge.engine.model.system_cases import case_to_json, shape_key
from converge.engine.reference_system import ReferenceSystem
from converge.properties.systems.answers import agreement, oracle_decides, oracle_final
from converge.systems.registry import open_system
from tests.support.paths import ROOT

FLINK_LIKE = dict(families=["regular", "interval", "multiway"], join_types=["inner", "left", "right", "full", "semi",
                  "anti"], changelog_modes=["insert_only", "retract", "upsert"],
                  column_types=["BIGINT", "INTEGER", "DOUBLE", "VARCHAR", "BOOLEAN"], time_domains=["event_time"],
                  state_ttl=False, output="final", deterministic_order=False, max_batch=500,
                  settings=["mini_batch"])


def _scenario(**config) -> Scenario:
    a = InputSpec("a", (("k", "BIGINT"), ("s", "VARCHAR")), None, "retract")
    b = InputSpec("b", (("k", "BIGINT"),), None, "insert_only")
    events = (ChangeEvent("a", "+I", (1, "x")), ChangeEvent("b", "+I", (1,)), ChangeEvent("a", "-D", (1, "x")),
              ChangeEvent("a", "+I", (2, None)))
    return Scenario("t", (a, b), JoinSpec(("a", "b"), ("left",), ("a.k = b.k",)), Config(**config), events,
                    expect_final=((2, None, None),), meta={"note": 1})


def test_a_system_error_exits_3_with_its_own_label() -> None:
    exc = SystemUnderTestError("adapter x: timed out")
    assert exit_code(exc) == EXIT_INTERNAL == 3
    assert label(exc) == "system error"


def test_capabilities_read_from_json_and_back() -> None:
    caps = Capabilities.from_json(FLINK_LIKE)
    assert caps.join_types[-1] == "anti" and caps.state_ttl is False and caps.max_batch == 500
    assert caps.to_json() == FLINK_LIKE


@pytest.mark.parametrize("change, message", [
    ({"colour": "blue"}, "unknown key 'colour'"),
    ({"output": "rows"}, "capabilities.output"),
    ({"join_types": ["inner", "cross"]}, r"capabilities\.join_types\[1\]"),
    ({"families": ["regular", "regular"]}, "names a value twice"),
    ({"max_batch": 0}, "capabilities.max_batch"),
    ({"state_ttl": "no"}, "capabilities.state_ttl"),
])
def test_capabilities_that_break_the_vocabulary_are_named(change: dict, message: str) -> None:
    with pytest.raises(BadInputError, match=message):
        Capabilities.from_json({**FLINK_LIKE, **change})


def test_settings_are_optional_and_none_is_honoured_when_absent() -> None:
    obj = dict(FLINK_LIKE)
    del obj["settings"]
    caps = Capabilities.from_json(obj)
    assert caps.settings == () and not caps.honours("mini_batch")
    with pytest.raises(BadInputError, match=r"capabilities\.settings\[0\]"):
        Capabilities.from_json({**FLINK_LIKE, "settings": ["state_ttl"]})


def test_a_case_asking_for_a_setting_the_system_ignores_is_not_applicable() -> None:
    caps = Capabilities.from_json(FLINK_LIKE)  # mini-batch, no multi-way operator
    three = fixed_cases()[8][1]
    assert applicability(replace(three, config=replace(three.config, multi_join="off")), caps, "x") is None
    assert applicability(replace(three, config=replace(three.config, multi_join="on")), caps, "x") == (
        "x does not honour config.multi_join=on (a multi-way join operator): it would ignore the setting")
    assert applicability(_scenario(mini_batch_size=3), caps, "x") is None
    assert "config.mini_batch_size" in applicability(
        _scenario(mini_batch_size=3), Capabilities.from_json({**FLINK_LIKE, "settings": []}), "x")


def test_a_missing_capability_is_an_error() -> None:
    obj = dict(FLINK_LIKE)
    del obj["time_domains"]
    with pytest.raises(BadInputError, match="missing key 'time_domains'"):
        Capabilities.from_json(obj)


def test_applicability_names_what_the_system_lacks() -> None:
    caps = Capabilities.from_json(FLINK_LIKE)
    assert applicability(_scenario(), caps, "flink") is None
    assert applicability(_scenario(state_ttl_ms=5), caps, "flink") == (
        "flink cannot drive state TTL (its TTL is not driven by the scenario's clock)")
    narrow = Capabilities.from_json({**FLINK_LIKE, "join_types": ["inner"], "column_types": ["BIGINT"]})
    assert applicability(_scenario(), narrow, "x") == "x does not run LEFT joins"
    inner = replace(_scenario(), join=JoinSpec(("a", "b"), ("inner",), ("a.k = b.k",)))
    assert applicability(inner, narrow, "x") == "x does not take VARCHAR columns"
    regular_only = Capabilities.from_json({**FLINK_LIKE, "families": ["regular"]})
    three = fixed_cases()[8][1]
    assert applicability(three, regular_only, "x") == "x does not run multiway joins"


def test_a_case_carries_the_scenario_without_answers_and_each_inputs_own_changelog() -> None:
    s = _scenario().with_events(_scenario().events + (WatermarkEvent("a", 3),))
    case = case_to_json("c4", s)
    assert set(case) == {"id", "scenario", "changelogs"} and case["id"] == "c4"
    assert case["changelogs"] == {"a": [["+I", 1, "x"], ["-D", 1, "x"], ["+I", 2, None]], "b": [["+I", 1]]}
    assert set(case["scenario"]) == {"name", "inputs", "join", "config", "events"}
    assert case["scenario"]["events"][-1] == {"input": "a", "watermark": 3}


def test_cases_of_one_shape_share_a_key_whatever_their_events() -> None:
    s = _scenario()
    assert shape_key(s) == shape_key(s.with_events(s.events[:1]))
    assert shape_key(s) != shape_key(_scenario(multi_join="on"))


def test_a_case_result_folds_its_changelog() -> None:
    from converge.engine.model.changelog import Change
    r = CaseResult.ok(changelog=[Change("+I", (1,)), Change("+I", (2,)), Change("-D", (1,))])
    assert r.folded() == Counter({(2,): 1})
    with pytest.raises(BadInputError):
        CaseResult("ok")
    assert CaseResult.unsupported("no FULL").status == "unsupported"


@pytest.mark.parametrize("name, scenario", fixed_cases(), ids=[n for n, _ in fixed_cases()])
def test_the_kits_hand_written_answers_are_the_oracles_and_the_reference_engines(name: str, scenario: Scenario
                                                                                 ) -> None:
    want = Counter(tuple(r) for r in scenario.expect_final)
    assert oracle_decides(scenario) is None
    assert oracle_final(scenario) == want
    with open_system("reference") as system:
        assert system.run_cases([scenario])[0].folded() == want


def test_the_reference_system_can_run_everything_and_answers_an_error_per_case() -> None:
    system = ReferenceSystem()
    assert system.title.startswith("reference ") and system.capabilities.output == "changelog"
    bad = _scenario().with_events((ChangeEvent("a", "-D", (9, "never inserted")),))
    results = system.run_cases([_scenario(), bad])
    assert results[0].folded() == Counter({(2, None, None): 1})
    assert results[1].status == "error" and "never inserted" not in results[0].message


def test_agreement_groups_equal_answers() -> None:
    one, two = Counter({(1,): 1}), Counter()
    assert agreement({"oracle": one, "reference engine": one, "flink 2.3.0": two}) == (
        "oracle = reference engine ≠ flink 2.3.0")


def test_an_unknown_system_spec_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="cmd:COMMAND"):
        open_system("spark-streaming")


def test_a_batch_holds_cases_of_one_shape_for_every_family() -> None:
    """Every system property's batches are of one shape, each property's own family drawn (seeded, so the
    family mix cannot leave one out by chance)."""
    from hypothesis import given, seed, settings

    from converge.properties.systems.specs import SYSTEM_PROPERTIES, batches

    caps = Capabilities.everything()
    seen = set()
    for prop in SYSTEM_PROPERTIES:
        @seed(1)
        @settings(max_examples=15, deadline=None, database=None)
        @given(batches(prop.draws(caps, "reference")[0](), 6))
        def check(drawn: tuple) -> None:
            (cases,) = drawn
            assert 1 <= len(cases) <= 6
            assert len({shape_key(c) for c in cases}) == 1
            seen.add(len(cases[0].join.inputs) + 10 * (cases[0].join.interval is not None))

        check()
    assert {2, 12} <= seen and seen & {3, 4}, seen


def test_a_campaign_against_the_reference_system_runs_every_property(capsys) -> None:
    from converge.cli.main import main
    from converge.properties.systems.specs import SYSTEM_PROPERTIES

    assert main(["run", "--system", "reference", "--examples", "12", "--seed", "2", "--no-reports"]) == 0
    out = capsys.readouterr().out
    # the one property that makes no claim on converge's own engine: a backend's MapState order is Flink's
    (row,) = [line for line in out.splitlines() if line.startswith("reference ") and "not applicable" in line]
    assert "emission_order_matches_backend" in row and "not applicable [1]" in row  # the reason: a footnote
    assert "\n[1] not applicable: reference orders its MapState by config.map_state_order" in out
    assert f"\n{len(SYSTEM_PROPERTIES) - 1} passed, 1 not applicable" in out


# ---------------------------------------------------------------- the registry of kinds


def test_every_kind_of_system_is_registered_by_its_schemes() -> None:
    """A SystemType written anywhere in converge/systems but missing from SYSTEM_TYPES would be unreachable."""
    import importlib
    import pkgutil

    import converge.systems as package
    from converge.systems.base import SystemType
    from converge.systems.registry import BY_SCHEME, SYSTEM_TYPES

    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        importlib.import_module(info.name)
    defined = {k for k in _subclasses(SystemType)  # kinds that tests define for themselves are not converge's
               if "schemes" in vars(k) and k.__module__.startswith("converge.")}
    assert defined == set(SYSTEM_TYPES)
    assert sorted(BY_SCHEME) == ["cmd", "flink", "pathway", "reference", "reference-spark", "spark"]


def _names_a_system(*nodes: object) -> bool:
    """A variable or attribute that holds a system spec (`spec`, `options.system`, `args.system`)."""
    import ast

    words = [n.id if isinstance(n, ast.Name) else n.attr for n in nodes if isinstance(n, (ast.Name, ast.Attribute))]
    return any("system" in w or "spec" in w for w in words)


def _subclasses(cls: type) -> set[type]:
    out = set()
    for sub in cls.__subclasses__():
        out |= {sub} | _subclasses(sub)
    return out


def test_each_kind_names_the_cases_it_runs() -> None:
    from converge.engine.model.native_join_case import NativeJoinCase
    from converge.systems.registry import system_type_of

    assert system_type_of("spark").case_type is NativeJoinCase
    for spec in ("reference", "reference-spark", "cmd:x", "flink", "flink:2.3.0"):
        assert system_type_of(spec).case_type is Scenario, spec


def test_the_spark_kind_refuses_converge_scenarios_instead_of_answering_unsupported() -> None:
    """It used to answer every converge case 'unsupported', so `check --system spark` passed having compared
    nothing."""
    with pytest.raises(UsageError, match="NativeJoinCase cases, not converge scenarios"):
        open_system("spark")


def test_no_command_or_campaign_compares_a_spec_with_a_system_name() -> None:
    """The kinds own their differences: outside the registry and the kinds' own modules, no code tests a string
    for a scheme (`spec == "spark"`, `spec.startswith("flink:")`)."""
    import ast
    from pathlib import Path

    from converge.systems.registry import BY_SCHEME, SYSTEM_TYPES

    root = ROOT
    own = ({Path(__import__("inspect").getfile(k)).resolve() for k in SYSTEM_TYPES}
           | {root / "converge" / "systems" / "registry.py"})
    names = set(BY_SCHEME) | {f"{s}:" for s in BY_SCHEME}
    found = []
    for path in sorted([*(root / "reports").rglob("*.py"), *(root / "converge").rglob("*.py")]):
        if path.resolve() in own:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            compared = []
            if isinstance(node, ast.Compare) and _names_a_system(node.left, *node.comparators):
                compared = [node.left, *node.comparators]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in ("startswith", "partition") and node.args and _names_a_system(node.func.value):
                compared = node.args[:1]
            found += [f"{path.relative_to(root)}:{node.lineno}" for c in compared
                      if isinstance(c, ast.Constant) and c.value in names]
    assert found == []
