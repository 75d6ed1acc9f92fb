"""Suite-wide options: slow tests (long campaigns, the full Spark set) run only with --run-slow."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir

from converge.generators.profile import PROFILE_NAME, SUPPRESSED_HEALTH_CHECKS
from tests.support.paths import ROOT

# Hypothesis keeps its example database and constants cache in ./.hypothesis, written while tests are
# collected; the suite (and the processes it starts) keep them out of the checkout, in the temp dir.
HYPOTHESIS_HOME = Path(tempfile.gettempdir()) / "converge-suite-hypothesis"
CHECKOUT = ROOT
_BEFORE = pytest.StashKey[frozenset[str]]()

# `pytest -n auto` keeps each xdist_group on one worker (tests/support/xdist_groups.py)
pytest_plugins = ["tests.support.xdist_groups"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", default=False,
                     help="also run tests marked slow (long campaigns, the full Spark set)")


# Every test's Hypothesis settings start from converge's profile: no deadline. Hypothesis's default deadline
# (200 ms an example) and its too_slow health check measure wall-clock time, which a loaded shared CI machine
# stretches many times over, so the suite suppresses too_slow as well (a speed target: those live in
# `converge bench`); a test that sets `deadline=` or `suppress_health_check=` itself gets what it asks for.
settings.register_profile("converge-suite", parent=settings.get_profile(PROFILE_NAME),
                          suppress_health_check=(*SUPPRESSED_HEALTH_CHECKS, HealthCheck.too_slow))
settings.load_profile("converge-suite")


def pytest_configure(config: pytest.Config) -> None:
    set_hypothesis_home_dir(HYPOTHESIS_HOME)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` on this suite: two workers more than cores. Much of the suite waits rather than computes (Spark's
    micro-batches, a Flink job's start, adapter and pytest subprocesses): with one worker per core, measured on
    2 cores, the run used 1.1 cores on average (user + sys 8m45s in 7m52s of wall clock; docs/ci.md)."""
    return (os.cpu_count() or 1) + 2


# The default suite's budget is about 6 minutes on 2 cores. These tests are the longest of their kind (10 to 100 s
# each, measured with `pytest -n auto --durations=0`) and each repeats what a shorter default test already covers:
# they run with --run-slow (the weekly job, docs/ci.md). node id prefix -> what covers the same ground by default.
SLOW_IN_THE_DEFAULT_RUN: dict[str, str] = {
    # Spark: the default run keeps the docs' Spark example (converge's Spark runtime over three micro-batches),
    # MapState order, the native campaign (its cases four at once) and the Spark SQL oracle on generated batches.
    "tests/systems/spark/test_spark_oracle.py::test_both_materializations_agree_with_duckdb":
        "generated batches (default)",
    "tests/systems/spark/test_spark_runtime.py::test_hand_written_and_generated_scenarios_match_local_and_oracle":
        "the docs' Spark example (test_docs_spark.py) runs the Spark runtime",
    "tests/systems/spark/test_spark_runtime.py::"
    "test_stop_between_batches_and_a_failed_batch_restart_from_the_checkpoint":
        "the docs' Spark example runs a scenario over three micro-batches",
    "tests/systems/spark/test_spark_final_check.py::test_decoded_sink_folds_to_multiplicities_and_a_planted_difference":
        "the final check's unit tests",
    "tests/systems/spark/test_spark_native.py::test_outer_rows_only_after_the_watermark":
        "the six properties' campaign",
    "tests/systems/spark/test_spark_native.py::test_late_rows_use_the_previous_epochs_watermark": "the campaign",
    "tests/systems/spark/test_spark_native.py::test_a_null_key_row_does_not_move_the_watermark": "the campaign",
    "tests/systems/spark/test_spark_native.py::test_every_case_file_passes_every_property": "test_concurrent_cases.py",
    "tests/systems/spark/test_spark_native.py::test_the_max_policy_follows_the_faster_input":
        "test_concurrent_cases.py",
    "tests/systems/spark/test_spark_native.py::test_a_row_added_and_evicted_in_one_batch": "the campaign",
    "tests/systems/spark/test_spark_native.py::test_an_input_without_rows_holds_the_min_watermark": "the campaign",
    "tests/systems/spark/test_spark_native.py::test_semi_join_emits_a_left_row_once": "test_concurrent_cases.py (SEMI)",
    "tests/systems/spark/test_spark_native.py::test_bounds_are_inclusive": "the campaign",
    "tests/systems/spark/test_spark_native.py::test_spark_bug_full_outer_pairs_null_keys": "the campaign",
    "tests/systems/spark/test_native_batches_on_spark.py::test_every_hand_case_gives_the_same_runs_and_verdicts_alone":
        "the short native campaign (test_spark_native.py), whose cases run three to a query",
    # Flink: the smoke campaign runs every property on real Flink; the kit's own checks run on tests/support/adapters.
    "tests/systems/flink/test_flink_ttl.py::test_a_ttl_campaign_on_flink":
        "the Flink smoke campaign runs ttl/ttl_matches_model, and the hand-worked TTL case runs on both backends",
    "tests/systems/flink/test_flink_campaign.py::test_the_flink_adapter_passes_the_conformance_kit":
        "test_adapter_kit_mutants.py (the kit) and the Flink smoke campaign",
    "tests/systems/flink/test_flink_adapter.py::test_flinks_mini_batch_join_gives_the_same_hand_worked_answers[3]":
        "the same test at bundle size 1",
    "tests/systems/flink/test_flink_adapter.py::test_flinks_mini_batch_join_gives_the_same_hand_worked_answers[1000]":
        "the same test at bundle size 1",
    # converge check end to end: one documented example and the not-run verdict stay in the default run.
    "tests/cli/check_verify/test_check_verify.py::test_check_judges_the_system_named_by_system":
        "test_check_job_options.py",
    "tests/cli/check_verify/test_check_verify.py::test_check_runs_end_to_end_on_the_examples[three_way_common_key]":
        "the same test on left_join_residual",
    "tests/cli/check_verify/test_check_verify.py::test_check_runs_end_to_end_on_the_examples[interval_join_watermark]":
        "the same test on left_join_residual",
    "tests/cli/check_verify/test_check_job_options.py::"
    "test_check_sends_the_options_and_a_system_that_ignores_one_is_not_applicable"
    "[honoured1]": "the same test, honoured0",
    "tests/cli/check_verify/test_check_reading.py::"
    "test_check_catches_a_planted_reader_bug_on_the_documented_example[between":
        "the other planted reader bugs",
    "tests/cli/check_verify/test_check_reading.py::"
    "test_check_catches_a_planted_reader_bug_on_the_documented_example[decimal":
        "the other planted reader bugs",
    "tests/cli/check_verify/test_check_reading.py::test_check_catches_a_planted_reader_bug_on_the_documented_example"
    "[left_read_as_inner-three_way": "left_read_as_inner on left_join_residual",
    "tests/cli/check_verify/test_check_reading.py::test_check_catches_a_planted_reader_bug_on_the_documented_example"
    "[left_read_as_inner-interval": "left_read_as_inner on left_join_residual",
    # seeded bugs and shrinking: one of each kind stays
    "tests/engine/test_minibatch.py::test_broken_bundle_folds_are_killed_with_a_shrunk_counterexample[bundle_cancels":
        "the same test, bundle_pair_padding_not_netted",
    "tests/quality/test_shrink_quality.py::test_regular_join_bug_shrinks_small[ttl_refreshed_on_read]":
        "the same test on the other bugs",
    "tests/quality/test_shrink_quality.py::test_regular_join_bug_shrinks_small[unmatched_outer_retraction":
        "the same test on the other bugs",
    "tests/properties/test_existential.py::test_a_seeded_search_gives_the_same_witness_in_any_process[5]":
        "the same test, seed 2026",
    # adapters, the plugin, files
    "tests/fuzz/test_adapter_fuzz.py::test_a_fault_in_a_check_is_one_system_error":
        "the same faults in a campaign (test_a_fault_in_a_campaign_is_one_system_error)",
    "tests/reports/test_pytest_plugin.py::test_xdist_workers_share_one_run_directory":
        "test_each_run_writes_its_own_directory_and_latest_names_the_last",
    "tests/architecture/test_promised_files.py::test_check_keeps_hypothesis_constants_in_the_user_cache":
        "test_a_command_leaves_only_what_it_promises[check]",
    "tests/cli/adapter_kit/test_adapter_kit_mutants.py::test_batches_switching_shapes_catch_state_kept_per_shape":
        "the kit's other mutants",
    "tests/cli/adapter_kit/test_adapter_kit_mutants.py::test_a_final_table_adapter_gets_the_mini_batch_check_skipped":
        "the settings check runs in test_an_adapter_that_declares_mini_batch_and_ignores_it_fails_the_setting_check",
    "tests/cli/adapter_kit/test_adapter_kit_mutants.py::test_an_adapter_that_dies_on_a_malformed_request":
        "test_adapter_fuzz.py's faults",
    "tests/cli/adapter_kit/test_adapter_kit_mutants.py::test_a_v2_adapter_that_ignores_the_plans_residual":
        "the same mutant under version 1 (test_an_adapter_that_ignores_residuals_fails_naming_the_rows)",
    "tests/systems/spark/test_concurrent_cases.py::test_hand_worked_cases_at_once_match_their_expectations":
        "the native campaign (test_a_short_campaign_passes) runs its cases four at once",
    "tests/architecture/test_promised_files.py::test_a_command_leaves_only_what_it_promises[check]":
        "the same test on the other commands",
    "tests/reports/test_pytest_plugin.py::test_the_environment_variable_is_the_fallback":
        "test_a_failing_property_leaves_a_report_in_the_folder_given",
    "tests/reports/test_pytest_plugin.py::test_the_marker_overrides_the_option_for_one_test":
        "test_off_writes_nothing",
    "tests/reports/test_pytest_plugin.py::test_without_a_setting_reports_go_to_the_working_directory":
        "test_a_failing_property_leaves_a_report_in_the_folder_given",
    "tests/properties/test_multiway_mutants.py::test_padding_not_retracted_on_first_match_is_caught":
        "test_padding_not_reemitted_after_last_match_is_caught",
    "tests/reports/test_pytest_plugin.py::test_an_unwritable_folder_is_reported_not_crashed":
        "test_a_failing_property_leaves_a_report_in_the_folder_given",
    "tests/reports/test_pytest_plugin.py::test_off_writes_nothing":
        "test_a_failing_property_leaves_a_report_in_the_folder_given",
    "tests/quality/test_shrink_quality.py::test_regular_join_bug_shrinks_small[mapstate_arrival_order_in_rocksdb]":
        "the same test on padding_not_retracted_on_first_match",
    "tests/fuzz/test_adapter_fuzz.py::test_a_signal_ends_converge_and_every_process_of_its_adapter[SIGINT]":
        "the same test with SIGTERM",
    "tests/architecture/test_packaging.py::test_the_wheel_holds_only_the_converge_package":
        ".ci/run's install and the packaging tests on pyproject.toml",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if any(item.nodeid.startswith(prefix) for prefix in SLOW_IN_THE_DEFAULT_RUN):
            item.add_marker(pytest.mark.slow)
    if config.getoption("--run-slow") or os.environ.get("CONVERGE_RUN_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow: run with --run-slow (or CONVERGE_RUN_SLOW=1)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def _nothing_written_into_the_checkout(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory):
    """The suite's own failure reports go under pytest's temporary folder, never into the checkout,
    unless --converge-reports names a folder. The environment variable carries the same folder to
    code that reads the default (`reports_folder()`) and to the processes tests start."""
    folder = str(tmp_path_factory.getbasetemp() / "converge-reports")
    if pytestconfig.getoption("converge_reports") is None:
        pytestconfig.option.converge_reports = folder
    saved = os.environ.get("CONVERGE_REPORTS_DIR")
    os.environ["CONVERGE_REPORTS_DIR"] = pytestconfig.option.converge_reports
    yield
    if saved is None:
        os.environ.pop("CONVERGE_REPORTS_DIR", None)
    else:
        os.environ["CONVERGE_REPORTS_DIR"] = saved


def checkout_files() -> frozenset[str] | None:
    """`git status --porcelain --ignored` of the checkout, as a set of lines (None: not a git checkout).

    Python's own bytecode caches are left out: `.ci/run` keeps them away with PYTHONDONTWRITEBYTECODE."""
    try:
        done = subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all"], cwd=CHECKOUT,
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return frozenset(line for line in done.stdout.splitlines()
                     if "__pycache__/" not in line and not line.endswith(".pyc"))


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):  # the controller (or a run without xdist) checks
        before = checkout_files()
        if before is not None:
            session.config.stash[_BEFORE] = before


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run, loudly, when a test left a file in the checkout that was not there before."""
    before = session.config.stash.get(_BEFORE, None)
    after = checkout_files() if before is not None else None
    if after is None:
        return
    left = sorted(after - before)
    if left:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = "the test run left files in the checkout:\n" + "\n".join(f"  {line}" for line in left)
        if reporter is not None:
            reporter.write_sep("!", "files written into the checkout", red=True, bold=True)
            reporter.write_line(message, red=True)
        else:
            print(message)
        if session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def examples(default: int) -> int:
    """Examples per property test; CONVERGE_EXAMPLES scales the whole suite."""
    return int(os.environ.get("CONVERGE_EXAMPLES", default))
