"""A pytest plugin: a test that fails with a PropertyFailure leaves a failure report behind.

Properties run through `properties.campaign.run_property` (the suite's
tests/test_properties.py, `converge run`) already write reports. This plugin
covers tests that call a property directly under `@given`, as users do:

    pytest -p reports.pytest_plugin

Reports go to $CONVERGE_REPORTS_DIR (default ./converge-reports), and their
paths are added to the test's failure output; CONVERGE_REPORTS_DIR=off
turns reports off.
"""

from __future__ import annotations

import os

import pytest

from properties.campaign import reports_dir
from reports.failure import report_exception


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if call.when != "call" or call.excinfo is None or os.environ.get("CONVERGE_REPORTS_DIR") == "off":
        return
    try:
        seed = item.config.getoption("hypothesis_seed", None)
    except ValueError:
        seed = None
    paths = report_exception(call.excinfo.value, reports_dir(), seed=seed)
    if paths:
        report.sections.append(("converge failure reports", "\n".join(str(p) for p in paths)))
