"""Upsert sinks without Java: the fold by key, the sink keys the generator draws, the adapter's key mapping."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings

from converge.engine.model.changelog import Change
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import Config, InputSpec, JoinSpec, Scenario
from converge.engine.model.scenario_json import load_scenario, scenario_from_dict, scenario_to_dict
from converge.engine.model.system import Capabilities, CaseResult, System
from converge.generators.job_options import equated, sink_key, upsert_sink_scenarios
from converge.properties.divergence import PropertyFailure
from converge.properties.systems.answers import oracle_final
from converge.properties.systems.known import Recogniser, builtin_known
from converge.properties.systems.sinks import duplicate_keys, output_columns, upsert_fold, upsert_sink_equals_oracle
from converge.systems.flink.environment import program_module
from tests.support.flink_client import bigint_input, case


def _scenario(jtype: str, condition: str, uk_b: tuple[str, ...] | None) -> Scenario:
    a = InputSpec("a", (("id", "BIGINT"), ("k", "BIGINT")), ("id",), "upsert")
    b = InputSpec("b", (("k", "BIGINT"), ("v", "BIGINT")), uk_b, "upsert" if uk_b else "retract")
    return Scenario(name="s", inputs=(a, b), join=JoinSpec(("a", "b"), (jtype,), (condition,)), config=Config(),
                    events=())


def test_the_fold_keeps_the_last_row_of_each_key() -> None:
    changes = [("+I", (1, 10, None)), ("+U", (1, 10, 5)), ("+I", (2, 20, None)), ("-D", (2, 20, None)),
               ("+I", (3, 30, 7)), ("+U", (3, 30, 8))]
    assert upsert_fold(changes, (0,)) == Counter({(1, 10, 5): 1, (3, 30, 8): 1})


def test_the_fold_reads_update_before_as_a_delete_and_ignores_an_absent_key() -> None:
    changes = [("+I", (1, 10, 5)), ("-U", (1, 10, 5)), ("-D", (9, 9, 9)), ("+I", (2, 2, 2)), ("-U", (2, 0, 0))]
    assert upsert_fold(changes, (0,)) == Counter()


def test_the_fold_by_key_is_not_the_multiset_fold() -> None:
    # the padding's loss of FLINK-40681 as an upsert sink sees it: the joined row is replaced, then deleted
    changes = [("+I", (1, 10, None, None)), ("+U", (1, 10, 10, 1)), ("+U", (1, 10, 10, 2)), ("-D", (1, 10, 10, 2))]
    assert upsert_fold(changes, (0,)) == Counter()
    assert upsert_fold(changes[:3], (0,)) == Counter({(1, 10, 10, 2): 1})


def test_duplicate_keys_names_a_key_with_two_rows() -> None:
    assert duplicate_keys(Counter({(1, "x"): 1, (1, "y"): 1, (2, "z"): 1}), (0,)) == [(1,)]
    assert duplicate_keys(Counter({(1, "x"): 2}), (0,)) == [(1,)]
    assert duplicate_keys(Counter({(1, "x"): 1, (2, "x"): 1}), (0,)) == []


def test_equated_reads_top_level_equalities_only() -> None:
    assert ("b", "k", "a", "k") in equated("a.k = b.k AND (a.x > b.y)")
    assert ("a", "id", "b", "k") in equated("a.k = b.id AND a.id = b.k")
    assert equated("(a.k = b.k OR a.k = b.id)") == set()
    assert equated("a.k = b.k AND (a.id = b.id OR a.x = b.y)") == {("a", "k", "b", "k"), ("b", "k", "a", "k")}


@pytest.mark.parametrize(("jtype", "condition", "uk_b", "key"), [
    ("left", "a.k = b.k", ("k",), ("a.id",)),                 # b unique on the join key: one match per a row
    ("left", "a.k = b.k AND (a.id > b.v)", ("k",), ("a.id",)),
    ("left", "a.k = b.k", ("v",), None),                      # several b rows per a row, b's key may be padded
    ("left", "(a.k = b.k OR a.id = b.k)", ("k",), None),      # an OR: no certain equality
    ("inner", "a.k = b.k", ("v",), ("a.id", "b.v")),
    ("inner", "a.k = b.k", None, None),
    ("semi", "a.k = b.k", None, ("a.id",)),
    ("full", "a.k = b.k", ("k",), None),
    ("right", "a.k = b.k", ("k",), None),                     # a is not unique on its join key
])
def test_sink_key(jtype: str, condition: str, uk_b: tuple[str, ...] | None, key: tuple[str, ...] | None) -> None:
    assert sink_key(_scenario(jtype, condition, uk_b)) == key


def test_output_columns_follow_the_row() -> None:
    assert output_columns(_scenario("left", "a.k = b.k", ("k",))) == ["a.id", "a.k", "b.k", "b.v"]
    assert output_columns(_scenario("anti", "a.k = b.k", ("k",))) == ["a.id", "a.k"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(upsert_sink_scenarios())
def test_every_drawn_case_has_a_batch_answer_unique_per_sink_key(scenario: Scenario) -> None:
    """The oracle (DuckDB), not the generator, says the answer is a table with that key."""
    cfg = scenario.config
    assert cfg.sink == "upsert" and cfg.sink_key and cfg.upsert_materialize in ("auto", "force", "none")
    columns = output_columns(scenario)
    positions = tuple(columns.index(c) for c in cfg.sink_key)
    assert duplicate_keys(oracle_final(scenario), positions) == []


def test_the_check_refuses_a_case_whose_answer_repeats_a_key() -> None:
    s = _scenario("inner", "a.k = b.k", ("v",))
    data = scenario_to_dict(s)
    data["config"] = {"sink": "upsert", "sink_key": ["a.k"]}   # a.k repeats: two a rows meet one b row
    data["events"] = [{"input": "a", "kind": "+I", "row": [1, 5]}, {"input": "a", "kind": "+I", "row": [2, 5]},
                      {"input": "b", "kind": "+I", "row": [5, 1]}]
    bad = scenario_from_dict(data)

    class _Never:
        name = "never"

        def run_cases(self, cases):  # pragma: no cover - refused before anything is sent
            raise AssertionError("a refused case is never sent")

    with pytest.raises(BadInputError, match="not an upsert-sink case"):
        upsert_sink_equals_oracle(_Never(), [bad])  # type: ignore[arg-type]


# ---------------------------------------------------------------- the adapter program's side (no Java)

A = bigint_input("a", ["id", "k"], unique_key=["id"], mode="upsert")
B = bigint_input("b", ["k", "v"], unique_key=["k"], mode="upsert")


def _plan(jtype: str, key: list[str]):
    config = {"sink": "upsert", "sink_key": key, "upsert_materialize": "none"}
    return program_module("case_plan").plan(case("x", [A, B], [jtype], ["a.k = b.k"], {}, config=config))


def test_the_adapter_maps_the_sink_key_to_flink_columns_and_row_positions() -> None:
    sinks = program_module("sinks")
    planned = _plan("left", ["a.id"])
    assert planned.shape.sink_columns == ("t0c0",)
    query, names, primary = sinks.upsert_queries(planned.shape.select, planned.shape.sink_columns)
    assert names == ["scid", "t0c0", "t0c1", "t1c0", "t1c1"] and primary == ["scid", "t0c0"]
    assert query.startswith("SELECT t0cid AS scid, t0c0, t0c1, t1c0, t1c1 FROM ")
    assert _plan("inner", ["a.id", "b.k"]).shape.sink_columns == ("t0c0", "t1c0")


@pytest.mark.parametrize(("jtype", "key", "why"), [
    ("left", ["b.k"], "pads 'b' with NULLs"), ("full", ["a.id"], "pads 'a' with NULLs"),
    ("inner", ["a.k"], "unique key, so it is nullable"), ("semi", ["b.k"], "not a column of the join's output"),
    ("inner", ["a.nope"], "not a column")])
def test_the_adapter_refuses_a_key_flink_cannot_declare(jtype: str, key: list[str], why: str) -> None:
    with pytest.raises(program_module("condition_sql").Untranslatable, match=why):
        _plan(jtype, key)


def test_the_materializer_is_found_in_a_job_graph() -> None:
    sinks = program_module("sinks")
    graph = {"nodes": [{"id": 1, "type": "Join[9]", "parallelism": 2},
                       {"id": 2, "type": "SinkMaterializer[11]", "parallelism": 2}]}
    assert sinks.materializer_present(json.dumps(graph))
    assert not sinks.materializer_present(json.dumps({"nodes": graph["nodes"][:1]}))
    assert program_module("parallel").operator_parallelism(json.dumps(graph)) == {"Join[9]": 2,
                                                                                 "SinkMaterializer[11]": 2}


# ---------------------------------------------------------------- FLINK-40681 (docs/flink-findings.md #10)

FINDING = "tests/scenarios/systems/flink_upsert_sink_left_padding_lost.json"


class _Flink23(System):
    """Flink 2.3.0 as measured on the finding's case: what its upsert sink received (any materializer mode)."""

    name, version = "flink", "2.3.0"

    def __init__(self) -> None:
        self.capabilities = Capabilities.everything()

    def run_cases(self, cases):
        sent = [("+I", (1, 10, None, None)), ("-D", (1, 10, None, None)), ("+I", (1, 10, 10, 1)),
                ("+U", (1, 10, 10, 2)), ("-D", (1, 10, 10, 2))]
        return [CaseResult.ok(changelog=[Change(k, r) for k, r in sent]) for _ in cases]


def test_the_finding_diverges_and_the_builtin_entry_knows_it() -> None:
    scenario = load_scenario(FINDING)
    with pytest.raises(PropertyFailure) as failure:
        upsert_sink_equals_oracle(_Flink23(), [scenario])
    d = failure.value.divergence
    assert d.expected == Counter({(1, 10, None, None): 1}) and d.engine == Counter()
    recognise = Recogniser(tuple(builtin_known()), "flink", "2.3.0", "sinks", "upsert_sink_equals_oracle")
    entry = recognise(d)
    assert entry is not None and entry.id == "flink-upsert-sink-outer-padding-lost"
    assert Recogniser(tuple(builtin_known()), "flink", "2.2.0", "sinks", "upsert_sink_equals_oracle")(d) is None
    # the retract sink's fold of the same changes is no such table: the entry is about the upsert sink only
    assert recognise.__class__(tuple(builtin_known()), "flink", "2.3.0", "regular", "final_equals_oracle")(d) is None


def test_the_adapter_refuses_a_parallelism_beyond_its_slots() -> None:
    plan = program_module("case_plan").plan
    config = {"parallelism": 8}
    with pytest.raises(program_module("condition_sql").Untranslatable, match="4 task slots"):
        plan(case("x", [A, B], ["inner"], ["a.k = b.k"], {}, config=config))
    assert plan(case("x", [A, B], ["inner"], ["a.k = b.k"], {}, config={"parallelism": 4})).shape.job.parallelism == 4


class _Flink23KeyOnly(_Flink23):
    """Flink 2.3.0 on finding #11's case: the sink keeps the joined row (measured by the campaign that found it)."""

    def run_cases(self, cases):
        return [CaseResult.ok(final=Counter({(1, 1, 1, "a", 1, 1, 0, None): 1})) for _ in cases]


def test_the_key_only_delete_finding_diverges_and_its_entry_knows_it() -> None:
    scenario = load_scenario("tests/scenarios/systems/flink_upsert_sink_right_key_only_delete.json")
    with pytest.raises(PropertyFailure) as failure:
        upsert_sink_equals_oracle(_Flink23KeyOnly(), [scenario])
    d = failure.value.divergence
    assert d.expected == Counter({(None, None, None, None, 1, 1, 0, None): 1})
    entry = Recogniser(tuple(builtin_known()), "flink", "2.3.0", "sinks", "upsert_sink_equals_oracle")(d)
    assert entry is not None and entry.id == "flink-upsert-sink-key-only-delete"
    # FLINK-40681's entry (only missing rows) is not this one, and this one needs a residual condition
    padding = load_scenario(FINDING)
    with pytest.raises(PropertyFailure) as lost:
        upsert_sink_equals_oracle(_Flink23(), [padding])
    assert Recogniser(tuple(builtin_known()), "flink", "2.3.0", "sinks",
                      "upsert_sink_equals_oracle")(lost.value.divergence).id == "flink-upsert-sink-outer-padding-lost"


class _Flink23SemiKept(_Flink23):
    """Flink 2.3.0 (and 1.20.1, 2.1.0, 2.2.0) on finding #14's case: the sink keeps a's row (replayed; with a retract
    sink the same job emits +I then -U of it, and no +U)."""

    def run_cases(self, cases):
        return [CaseResult.ok(final=Counter({(2, 1, 1, "ab"): 1})) for _ in cases]


def test_the_semi_join_update_before_finding_diverges_and_its_entry_knows_it() -> None:
    """By hand: a's row (2, 1, 1, 'ab') meets b's (0, 1, 'ab', 2) (x = 1 is BETWEEN 0 and 1); b's update to y NULL
    ends the match (BETWEEN NULL ... is UNKNOWN), so the SEMI join's answer, and the sink's table, is empty."""
    scenario = load_scenario("tests/scenarios/systems/flink_upsert_sink_semi_update_before.json")
    with pytest.raises(PropertyFailure) as failure:
        upsert_sink_equals_oracle(_Flink23SemiKept(), [scenario])
    d = failure.value.divergence
    assert d.expected == Counter() and d.engine == Counter({(2, 1, 1, "ab"): 1})
    recognise = Recogniser(tuple(builtin_known()), "flink", "2.3.0", "sinks", "upsert_sink_equals_oracle")
    entry = recognise(d)
    assert entry is not None and entry.id == "flink-upsert-sink-semi-update-before"
    assert Recogniser(tuple(builtin_known()), "flink", "1.19.0", "sinks", "upsert_sink_equals_oracle")(d) is None
    # a missing row is not this class
    with pytest.raises(PropertyFailure) as missing:
        upsert_sink_equals_oracle(_Flink23(), [load_scenario(FINDING)])
    assert recognise(missing.value.divergence).id != entry.id
