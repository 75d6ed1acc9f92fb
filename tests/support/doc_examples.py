"""The Python code blocks of README.md and docs/*.md, and how to run one and check what it prints.

A `print(...)  # text` line in a block states what it prints: the run checks it.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from dataclasses import dataclass

from tests.support.paths import ROOT

_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
_STATED = re.compile(r"^\s*print\(.*\)\s+#\s(.+)$")


@dataclass(frozen=True)
class CodeBlock:
    page: str     # path relative to the repository root
    index: int    # the n-th Python block of the page
    code: str

    @property
    def name(self) -> str:
        return f"{self.page}#{self.index}"

    @property
    def needs_spark(self) -> bool:
        return "run_scenario_on_spark" in self.code

    @property
    def is_a_pytest_file(self) -> bool:
        return "@given" in self.code and "def test_" in self.code


def code_blocks() -> list[CodeBlock]:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return [CodeBlock(str(page.relative_to(ROOT)), i, match.group(1))
            for page in pages for i, match in enumerate(_BLOCK.finditer(page.read_text(encoding="utf-8")))]


def run_block(block: CodeBlock) -> list[str]:
    """Execute the block from the repository root; return what it printed, after checking the stated lines."""
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(block.code, block.name, "exec"), {"__name__": "__doc_example__"})  # noqa: S102
    finally:
        os.chdir(cwd)
    printed = out.getvalue().splitlines()
    stated = [m.group(1) for line in block.code.splitlines() if (m := _STATED.match(line))]
    assert printed == stated, f"{block.name} printed {printed}, its comments say {stated}"
    return printed
