"""Findings 3, 5 and 6 of docs/flink-findings.md with plain PyFlink (docs/examples/flink_multiway_*.py), no
converge in the job. Finding 6: the multi-way operator of 2.1.0 and 2.2.0 pads a row whose OR holds, 2.3.0 and the
binary chain do not. Findings 3 and 5: the multi-way operator of 2.1.0 (2.2.0) fails the job, 2.3.0 and the binary
chain run it. Slow (a JVM per run); each version that is not installed is a visible skip naming its install
command."""

from __future__ import annotations

import subprocess

import pytest

from tests.support.flink_versions import installed
from tests.support.paths import EXAMPLES

pytestmark = [pytest.mark.flink, pytest.mark.slow, pytest.mark.xdist_group("flink")]
SCRIPT = EXAMPLES / "flink_multiway_or_null.py"
RIGHT = "[((1, None, None, 'a', None, 1, 3, 0, 'a'), 1)]"  # worked by hand in docs/flink-findings.md, finding 6
PADDED = "[((1, None, None, 'a', None, None, None, None, None), 1)]"


def _output(version: str, *args: str) -> str:
    python = installed(version).interpreter
    done = subprocess.run([str(python), *args], capture_output=True, text=True, timeout=300, check=False)
    line = next((x for x in done.stdout.splitlines() if x.startswith(("multi-join", "classcast", "duplicate"))),
                None)
    assert line is not None, done.stderr[-2000:]
    return line


def _run(version: str, multi_join: str) -> str:
    return _output(version, str(SCRIPT), multi_join).split(" ", 2)[2]


@pytest.mark.parametrize(("version", "multi_join", "answer"), [
    ("2.1.0", "true", PADDED), ("2.2.0", "true", PADDED), ("2.1.0", "false", RIGHT), ("2.3.0", "true", RIGHT)])
def test_the_multiway_operator_answers_finding_6_as_measured(version: str, multi_join: str, answer: str) -> None:
    assert _run(version, multi_join) == answer


@pytest.mark.parametrize(("version", "case", "multi_join", "outcome"), [
    ("2.1.0", "classcast", "true", "failed Caused by: java.lang.ClassCastException"),
    ("2.1.0", "classcast", "false", "rows []"), ("2.3.0", "classcast", "true", "rows []"),
    ("2.2.0", "duplicate", "true", "failed Caused by: org.apache.flink.table.api.ValidationException: Field names "
                                   "must be unique. Found duplicates: [id_key]"),
    ("2.2.0", "duplicate", "false", "rows []"), ("2.3.0", "duplicate", "true", "rows []")])
def test_the_multiway_operator_fails_findings_3_and_5_as_measured(version: str, case: str, multi_join: str,
                                                                  outcome: str) -> None:
    line = _output(version, str(EXAMPLES / "flink_multiway_key_fields.py"), case, multi_join)
    assert line.startswith(f"{case} {multi_join} {outcome}"), line
