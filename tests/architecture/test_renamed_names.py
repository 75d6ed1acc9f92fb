"""The names renamed in 0.3 so that one word names one thing (docs/architecture.md, "Vocabulary") still work for
one release: an old name is the new object, with a DeprecationWarning; the section lists every one of them."""

from __future__ import annotations

import importlib
import re

import pytest

import converge
from tests.support.fresh_interpreter import run_fresh
from tests.support.paths import ROOT

OLD_NAMES = [(module, old, new) for module, names in converge.RENAMED.items() for old, new in names.items()]
RENAMED_MODULES = {old: new for old, new in converge.MOVED_MODULES.items() if not old.startswith("converge.reports.")}


@pytest.mark.parametrize(("module", "old", "new"), OLD_NAMES, ids=[f"{m}.{o}" for m, o, _ in OLD_NAMES])
def test_an_old_name_is_the_new_object_and_warns(module: str, old: str, new: str) -> None:
    imported = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=rf"{re.escape(module)}\.{old} is called {new} since converge 0\.3"):
        assert getattr(imported, old) is getattr(imported, new)


def test_a_name_that_never_existed_is_still_an_attribute_error() -> None:
    from converge.systems import registry
    with pytest.raises(AttributeError, match="no attribute 'NO_SUCH_NAME'"):
        registry.NO_SUCH_NAME  # noqa: B018


@pytest.mark.parametrize(("old", "new"), RENAMED_MODULES.items())
def test_a_renamed_module_is_the_module_under_its_new_name(old: str, new: str) -> None:
    done = run_fresh(f"import importlib, sys\nprint(importlib.import_module({old!r}) is sys.modules[{new!r}])")
    assert done.stdout.strip() == "True", done.stderr
    assert f"DeprecationWarning: {old} moved to {new}" in done.stderr


def test_an_old_class_imported_from_its_pre_0_3_module_is_the_new_class() -> None:
    """`from converge.reports.systems.flink.kind import FlinkKind`, as written before 0.3: the module moved, was
    renamed, and so was the class."""
    done = run_fresh("from converge.reports.systems.flink.kind import FlinkKind\n"
                     "from converge.systems.flink.system_type import FlinkSystemType\n"
                     "print(FlinkKind is FlinkSystemType)", warnings="ignore::DeprecationWarning")
    assert done.stdout.strip() == "True", done.stderr


def test_the_vocabulary_section_names_every_old_name() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text[text.index("## Vocabulary"):]
    section = section[:section.find("\n## ", 1)] if "\n## " in section[1:] else section
    old = [o for _, o, _ in OLD_NAMES] + [m.rpartition(".")[2] for m in RENAMED_MODULES]
    assert [name for name in old if f"`{name}" not in section] == []
