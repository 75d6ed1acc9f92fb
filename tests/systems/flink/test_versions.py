"""What each Flink version has, as the adapter declares it, and what a campaign says about what it lacks (no Java).

The table is checked against facts read from the releases: MiniBatchStreamingJoinOperator (the mini-batch
regular join, FLIP-415) ships in flink-table-runtime from 1.19.0, StreamingMultiJoinOperator (FLIP-516) from
2.1.0 (docs/flink.md, "Versions"); the jars of the installed versions are checked too, where they are installed.
"""

from __future__ import annotations

import glob
import sys
import zipfile
from pathlib import Path

import pytest

from converge.cli.main import main
from converge.engine.model.system import Capabilities, System
from converge.properties.systems.specs import SYSTEM_PROPERTIES, not_applicable
from converge.systems.flink import environment
from tests.support.flink_versions import ADAPTER, NO_MULTI_JOIN, SUPPORTED
from tests.support.paths import FAKE_ADAPTERS

FAKE = str(FAKE_ADAPTERS / "fake.py")
OPERATORS = "org/apache/flink/table/runtime/operators/join/stream/"


@pytest.mark.parametrize(("version", "honours", "lacks"), [
    ("1.18.1", ["upsert_sink", "parallelism"], {"mini_batch": "Flink 1.18.1 has no mini-batch regular join (FLIP-415, from 1.19)",
                    "multi_join": f"Flink 1.18.1 {NO_MULTI_JOIN}",
                    "state_backend": "Flink 1.18.1 has no state backend per job checked by this adapter "
                                     "(state.backend.type, from 1.19)",
                    "restart": "Flink 1.18.1 has no stop-with-savepoint and restore checked by this adapter "
                               "(restart.py, from 1.19)"}),
    ("1.19.0", ["mini_batch", "state_backend", "restart", "upsert_sink", "parallelism"], {"multi_join": f"Flink 1.19.0 {NO_MULTI_JOIN}"}),
    ("1.20.3", ["mini_batch", "state_backend", "restart", "upsert_sink", "parallelism"], {"multi_join": f"Flink 1.20.3 {NO_MULTI_JOIN}"}),
    ("2.0.1", ["mini_batch", "state_backend", "restart", "upsert_sink", "parallelism"], {"multi_join": f"Flink 2.0.1 {NO_MULTI_JOIN}"}),
    ("2.1.0", ["mini_batch", "multi_join", "state_backend", "restart", "upsert_sink", "parallelism"], {}),
    ("2.2.0", ["mini_batch", "multi_join", "state_backend", "restart", "upsert_sink", "parallelism"], {}),
    ("2.3.0", ["mini_batch", "multi_join", "state_backend", "restart", "upsert_sink", "parallelism"], {}),
    ("2.4-SNAPSHOT", ["mini_batch", "multi_join", "state_backend", "restart", "upsert_sink", "parallelism"], {})])
def test_each_version_declares_what_it_honours_and_what_it_lacks(version: str, honours: list[str],
                                                                  lacks: dict[str, str]) -> None:
    assert ADAPTER.honoured_settings(version) == honours
    assert ADAPTER.lacked_settings(version) == lacks
    caps = Capabilities.from_json({**Capabilities.everything().to_json(), "settings": honours, "lacks": lacks})
    assert caps.settings == tuple(honours) and dict(caps.lacks) == lacks


class _Old(System):
    """Flink 1.19.0 as its hello describes it, without a process."""

    name, version = "flink", "1.19.0"

    def __init__(self) -> None:
        self.capabilities = Capabilities.from_json({**Capabilities.everything().to_json(),
                                                    "settings": ADAPTER.honoured_settings("1.19.0"),
                                                    "lacks": ADAPTER.lacked_settings("1.19.0")})

    def run_cases(self, cases):  # pragma: no cover - a property that is not applicable sends nothing
        raise AssertionError("nothing may be sent")


def test_a_property_about_a_feature_the_version_lacks_names_the_version_and_the_feature() -> None:
    reasons = {p.key: not_applicable(p, _Old()) for p in SYSTEM_PROPERTIES}
    assert reasons["multiway/multiway_equals_binary_chain"] == (
        f"Flink 1.19.0 {NO_MULTI_JOIN}, so the property would not exercise it")
    assert reasons["minibatch/final_equals_oracle"] is None  # 1.19 has the mini-batch join
    assert reasons["multiway/final_equals_oracle"] is None  # binary chains of 3 and 4 inputs still run


def test_a_campaign_on_an_old_flink_reports_the_property_not_applicable_in_those_words(
        capsys: pytest.CaptureFixture) -> None:
    main(["run", "--system", f"cmd:{sys.executable} {FAKE} flink-1.19.0", "--property",
          "multiway_equals_binary_chain", "--examples", "2", "--seed", "1", "--no-reports"])
    out = capsys.readouterr().out
    assert f"not applicable: Flink 1.19.0 {NO_MULTI_JOIN}, so the property would not exercise it" in out, out


def test_a_lacks_sentence_for_a_setting_that_is_honoured_is_refused() -> None:
    from converge.engine.model.errors import BadInputError

    obj = Capabilities.everything().to_json()
    with pytest.raises(BadInputError, match=r"capabilities\.lacks\.multi_join: 'multi_join' is in"):
        Capabilities.from_json({**obj, "lacks": {"multi_join": "no such operator"}})
    with pytest.raises(BadInputError, match=r"capabilities\.lacks\.mini_batch: expected one line"):
        Capabilities.from_json({**obj, "settings": [], "lacks": {"mini_batch": "two\nlines"}})


@pytest.mark.parametrize("version", SUPPORTED)
def test_the_installed_jars_hold_the_operators_the_table_declares(version: str) -> None:
    """Read from the installed release (no JVM): the operator classes are there exactly from the version the
    table names. A version that is not installed is skipped with the command that installs it."""
    folder = environment.systems_dir() / f"flink-{version}"
    jars = glob.glob(str(folder / "venv" / "lib" / "python*" / "site-packages" / "pyflink" / "lib" /
                         "flink-table-runtime-*.jar"))
    if not jars:
        pytest.skip(f"Flink {version} is not installed: run `converge systems install flink --version {version}`")
    names = set(zipfile.ZipFile(jars[0]).namelist())
    dist = set(zipfile.ZipFile(glob.glob(str(Path(jars[0]).parent / "flink-dist*.jar"))[0]).namelist())
    has = {"mini_batch": f"{OPERATORS}MiniBatchStreamingJoinOperator.class" in names,
           "multi_join": f"{OPERATORS}StreamingMultiJoinOperator.class" in names,
           # state_backend: the RocksDB backend ships in flink-dist (its package moved in 2.0)
           "state_backend": any(n.endswith("/EmbeddedRocksDBStateBackend.class") for n in dist),
           # restart: what restart.py calls, in flink-dist (the savepoint's metadata read and rewritten)
           "restart": {"org/apache/flink/runtime/checkpoint/Checkpoints.class",
                       "org/apache/flink/runtime/checkpoint/metadata/CheckpointMetadata.class",
                       "org/apache/flink/core/execution/SavepointFormatType.class"} <= dist}
    # upsert_sink and parallelism are Table API features of every supported version (adapter.FEATURES)
    assert [s for s in ("mini_batch", "multi_join", "state_backend", "restart") if has[s]] == \
        [s for s in ADAPTER.honoured_settings(version) if s in has]
