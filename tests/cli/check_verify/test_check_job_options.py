"""`converge check` reads the job's options from the query file (SET statements, the INSERT's sink) into every
case's config, says which it sends, and refuses at its position any SET it cannot send.

No Java: the reading is checked on its own, and the plumbing on converge's reference engine, once honouring
every setting and once honouring none (then the system's property is not applicable, with the reason).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings

from converge.cli.commands import check
from converge.cli.main import main
from converge.engine.model.errors import BadInputError, UnsupportedError
from converge.engine.model.flinksql import load_query, parse_query
from converge.engine.model.scenario import Config
from converge.engine.model.system import Capabilities
from converge.engine.reference_system import ReferenceSystem
from converge.properties.query_check import query_strategy
from tests.support.paths import EXAMPLES

EXAMPLE = EXAMPLES / "job_options.sql"
TABLES = """CREATE TABLE a (k BIGINT, x BIGINT) WITH ('connector' = 'kafka', 'format' = 'json');
CREATE TABLE b (k BIGINT, y BIGINT) WITH ('connector' = 'kafka', 'format' = 'json');
"""
SELECT = "SELECT a.k, a.x, b.y FROM a JOIN b ON a.k = b.k;\n"


def test_the_documented_example_sets_backend_parallelism_and_an_upsert_sink_keyed_by_output_columns() -> None:
    query = load_query(EXAMPLE)
    assert query.job_config() == {"state_backend": "rocksdb", "parallelism": 2, "sink": "upsert",
                                  "sink_key": ("o.order_id", "p.payment_id")}
    where = {s.option: s.where.rsplit(":", 2)[1:] for s in query.job}
    assert where["state_backend"] == ["2", "5"] and where["parallelism"] == ["3", "5"]
    assert where["sink"] == where["sink_key"] == ["26", "13"]  # the sink's name in INSERT INTO
    # the sink is no input: the join reads orders and payments only
    assert [alias for alias, _ in query.aliases] == ["o", "p"]
    config = query.scenario(config=Config(multi_join="off")).config
    assert (config.state_backend, config.parallelism, config.sink, config.multi_join) == \
        ("rocksdb", 2, "upsert", "off")


def test_a_sink_without_a_primary_key_is_retract_and_a_column_list_maps_the_key_by_name() -> None:
    plain = parse_query(TABLES + "CREATE TABLE s (k BIGINT, x BIGINT, y BIGINT) WITH ('connector' = 'print');\n"
                        "INSERT INTO s " + SELECT)
    assert plain.job_config() == {"sink": "retract"}
    listed = parse_query(TABLES + "SET 'table.exec.sink.upsert-materialize' = 'NONE';\n"
                         "CREATE TABLE s (p BIGINT, q BIGINT, r BIGINT, PRIMARY KEY (p) NOT ENFORCED) "
                         "WITH ('connector' = 'print');\nINSERT INTO s (r, q, p) " + SELECT)
    assert listed.job_config() == {"upsert_materialize": "none", "sink": "upsert", "sink_key": ("b.y",)}
    assert parse_query(TABLES + SELECT).job_config() == {}


@pytest.mark.parametrize("line, error, words", [
    ("SET 'execution.checkpointing.interval' = '10s';", UnsupportedError, "cannot send this option"),
    ("SET 'table.exec.source.idle-timeout' = '1 s';", UnsupportedError, "cannot send this option"),
    ("SET 'execution.runtime-mode' = 'batch';", UnsupportedError, "streaming jobs only"),
    ("SET 'parallelism.default' = '0';", BadInputError, "whole number of at least 1"),
    ("SET 'state.backend.type' = 'forst';", BadInputError, "hashmap, rocksdb"),
])
def test_a_set_converge_cannot_send_is_refused_at_its_position(line: str, error: type, words: str) -> None:
    with pytest.raises(error) as raised:
        parse_query(TABLES + line + "\n" + SELECT, "q.sql")
    assert str(raised.value).startswith("q.sql:3:5: ") and words in str(raised.value), raised.value


def test_upsert_materialize_without_an_upsert_sink_and_a_short_insert_are_refused() -> None:
    with pytest.raises(BadInputError, match=r"^q.sql:1:5: .*applies to an upsert sink"):
        parse_query("SET 'table.exec.sink.upsert-materialize' = 'FORCE';\n" + TABLES + SELECT, "q.sql")
    with pytest.raises(BadInputError, match="takes 2 columns; the SELECT gives 3"):
        parse_query(TABLES + "CREATE TABLE s (k BIGINT, x BIGINT) WITH ('connector' = 'print');\n"
                    "INSERT INTO s " + SELECT, "q.sql")


def test_every_drawn_case_carries_the_job_options() -> None:
    query = load_query(EXAMPLE)
    seen = []

    @settings(max_examples=10, deadline=None, database=None)
    @given(query_strategy(query, Config()))
    def draw(scenario) -> None:
        seen.append((scenario.config.state_backend, scenario.config.parallelism, scenario.config.sink_key))

    draw()
    assert seen and set(seen) == {("rocksdb", 2, ("o.order_id", "p.payment_id"))}


class _Reference(ReferenceSystem):
    """converge's engine as a system under test that honours only `honoured` of the settings."""

    def __init__(self, honoured: tuple) -> None:
        super().__init__()
        self.capabilities = replace(Capabilities.everything(), settings=honoured)

    def close(self) -> None:
        pass


@pytest.mark.parametrize("honoured", [("state_backend", "parallelism", "upsert_sink"), ()])
def test_check_sends_the_options_and_a_system_that_ignores_one_is_not_applicable(
        honoured: tuple, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    sent = []

    class Recording(_Reference):
        def run_cases(self, cases):
            sent.extend(c.config for c in cases)
            return super().run_cases(cases)

    monkeypatch.setattr(check, "open_system_under_test", lambda spec, timeout=None: Recording(honoured))
    code = main(["check", str(EXAMPLE), "--system", "cmd:x", "--examples", "5", "--seed", "1", "--no-reports"])
    out = capsys.readouterr().out
    assert "job options sent to reference with every case: state_backend=rocksdb, parallelism=2, sink=upsert, " \
           "sink_key=o.order_id,p.payment_id" in out
    assert "job options: state_backend=rocksdb (SET 'state.backend.type' = 'rocksdb' at " in out
    row = next(line for line in out.splitlines() if line.startswith("check/system_final_answer"))
    if honoured:
        assert row.split()[1] == "passed" and sent, out
        assert {(c.state_backend, c.parallelism, c.sink) for c in sent} == {("rocksdb", 2, "upsert")}
    else:  # never sent: the system would have run a job with its own defaults instead
        assert "not applicable" in row and "config.state_backend" in row and not sent, out
    assert code == 0, out


def test_check_refuses_a_query_with_an_option_it_cannot_send(tmp_path: Path, capsys) -> None:
    query = tmp_path / "q.sql"
    query.write_text("SET 'pipeline.object-reuse' = 'true';\n" + TABLES + SELECT)
    code = main(["check", str(query), "--examples", "2", "--no-reports"])
    err = capsys.readouterr().err
    assert code != 0 and f"{query}:1:5:" in err and "cannot send this option" in err, err
