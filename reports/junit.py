"""`converge run --junit-xml FILE`: the campaign as JUnit XML, the test report format every CI system reads.

One <testcase> per property (per system property with --system): a divergence
is a <failure>, bad input, an unsupported case, an oracle, system or internal
error and a crash are an <error>, and a property that did not run or compared nothing
(not applicable, not checked, not run after --maxfail) is <skipped> with its
reason. A failure's message names its report and the command that replays it.
Written with the stdlib's xml.etree.ElementTree.
"""

from __future__ import annotations

import re
import shlex
import socket
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from converge.engine.model.files import write_text_whole

__all__ = ["CaseStatus", "JUnitCase", "case_of", "status_of", "write_junit"]

CaseStatus = Literal["passed", "failure", "error", "skipped"]

# converge's outcome labels (engine/model/errors.py, plus the campaigns' own) as JUnit's four statuses.
_STATUS: dict[str, CaseStatus] = {
    "passed": "passed", "known": "passed", "diverged": "failure",
    "not checked": "skipped", "not applicable": "skipped", "not run": "skipped",
}


def status_of(outcome: str) -> CaseStatus:
    """A table's outcome as a JUnit status: anything that is not a pass, a divergence or a skip is an error."""
    return _STATUS.get(outcome, "error")


@dataclass(frozen=True)
class JUnitCase:
    """One property's testcase: `classname` is its family (or the system), `name` the property."""

    classname: str
    name: str
    outcome: str             # the table's outcome label ("passed", "diverged", "not run", ...)
    seconds: float = 0.0
    message: str = ""        # one line: why it failed or was skipped
    details: str = ""        # the failure's text, its reports and the replay command

    @property
    def status(self) -> CaseStatus:
        return status_of(self.outcome)


def write_junit(path: Path, suite: str, problems: list[str], cases: Sequence[JUnitCase]) -> bool:
    """Write `cases` as one <testsuite> inside <testsuites> to `path` (replaced whole). A file that cannot be
    written must not cost the user the results: the reason joins `problems` (RunReports.problems, which the
    command prints and turns into exit 2 when nothing worse happened) and False comes back."""
    counts = {s: sum(1 for c in cases if c.status == s) for s in ("failure", "error", "skipped")}
    seconds = sum(c.seconds for c in cases)
    root = ET.Element("testsuites", tests=str(len(cases)), failures=str(counts["failure"]),
                      errors=str(counts["error"]), skipped=str(counts["skipped"]), time=f"{seconds:.3f}")
    suite_el = ET.SubElement(root, "testsuite", name=suite, tests=str(len(cases)), failures=str(counts["failure"]),
                             errors=str(counts["error"]), skipped=str(counts["skipped"]), time=f"{seconds:.3f}",
                             timestamp=time.strftime("%Y-%m-%dT%H:%M:%S"), hostname=socket.gethostname())
    for c in cases:
        case = ET.SubElement(suite_el, "testcase", classname=c.classname, name=c.name, time=f"{c.seconds:.3f}")
        if c.status == "passed":
            continue
        child = ET.SubElement(case, c.status, message=c.message or c.outcome)
        if c.status != "skipped":
            child.set("type", c.outcome)
        if c.details:
            child.text = c.details
    ET.indent(root)
    try:
        write_text_whole(Path(path), ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n")
    except OSError as exc:
        problems.append(f"--junit-xml {path} not written: {exc.strerror or exc}")
        return False
    return True


def case_of(classname: str, name: str, outcome: str, *, seconds: float = 0.0, text: str = "",
            reports: Sequence[str] = (), seed: int | None = None, system: str | None = None,
            key: str | None = None) -> JUnitCase:
    """A property's testcase from its table row: `text` is its failure's or reason's text, `reports` its report
    files, `key` its family/property name (default classname/name); a failure's details end with the command
    that replays its report (or reruns the property)."""
    first = text.splitlines()[0] if text else outcome
    status = status_of(outcome)
    if status in ("passed", "skipped"):
        return JUnitCase(classname, name, outcome, seconds, first if status == "skipped" else "", "")
    on = f"--system {shlex.quote(system)} " if system else ""
    scenario = next((r for r in reports if r.endswith(".json")), None)
    lines = [text] if text else []
    lines += [f"report: {r}" for r in reports]
    if scenario is not None:
        replay = f"converge replay {on}{shlex.quote(scenario)}"
        lines.append(f"replay: {replay}")
        first = f"{first} (report {scenario}; replay: {replay})"
    else:
        rerun = f"converge run {on}-k {shlex.quote(key or f'{classname}/{name}')}"
        rerun += f" --seed {seed}" if seed is not None else ""
        lines.append(f"rerun: {rerun}")
        first = f"{first} (rerun: {rerun})"
    return JUnitCase(classname, name, outcome, seconds, first, _xml_text("\n".join(lines)))


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml_text(text: str) -> str:
    """XML 1.0 cannot hold most control characters, even escaped: each is shown as its escape."""
    return _NOT_XML.sub(lambda m: repr(m.group())[1:-1], text)
