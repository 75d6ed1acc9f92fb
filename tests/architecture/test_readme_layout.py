"""The README's layout section is the packages' own first docstring lines, layer by layer.

Read from the source (ast): a package whose job changes says so in its
docstring, and this test then asks for the README to say the same.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.support.layers import LAYERS
from tests.support.paths import ROOT

# Each layer's folder, bottom to top, then the package's own __init__ (docs/architecture.md has the picture).
FOLDERS = {"model": "engine/model/", "engine": "engine/", "oracle": "oracle/", "generators": "generators/",
           "properties": "properties/", "reports": "reports/", "systems": "converge/systems/",
           "cli": "converge/cli/"}
NOT_PACKAGES = ("tests/             the pytest suite, grouped by layer and command; the map is in tests/README.md",
                "docs/              semantics notes, where Flink differs from the source documents, architecture.md")
WIDTH = 19


def first_docstring_line(init: Path) -> str:
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
    assert doc, f"{init.relative_to(ROOT)} has no docstring"
    line = doc.splitlines()[0]
    assert line.endswith("."), f"{init.relative_to(ROOT)}: the docstring's first line is not a sentence: {line!r}"
    return line


def layout_block() -> str:
    """The block the README must show."""
    lines = [f"{'converge/':<{WIDTH}}{first_docstring_line(ROOT / 'converge' / '__init__.py')}"]
    lines += [f"{FOLDERS[name]:<{WIDTH}}{first_docstring_line(ROOT / FOLDERS[name] / '__init__.py')}"
              for name, _ in LAYERS]
    return "\n".join([*lines, *NOT_PACKAGES])


def readme_block() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"^## Layout\n.*?```\n(.*?)\n```", text, re.S | re.M)
    assert found, "README.md has no '## Layout' section with a code block"
    return found.group(1)


def test_every_layer_has_a_folder_here() -> None:
    assert set(FOLDERS) == {name for name, _ in LAYERS}


def test_the_readme_layout_is_the_package_docstrings() -> None:
    assert readme_block() == layout_block(), "paste this block into README.md's Layout section:\n" + layout_block()
