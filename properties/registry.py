"""Every property converge checks, by family: what feeds it and what decides it.

Each module in `properties/families/` defines `PROPERTIES`, a list of
PropertySpec; pytest and `converge run` both read the union, so a property
added there is covered by the suite and the campaign alike.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, replace
from typing import Callable

from hypothesis import strategies as st


@dataclass(frozen=True)
class PropertySpec:
    family: str
    name: str
    strategy: Callable[[], st.SearchStrategy[tuple]]
    check: Callable[..., None]
    examples: int = 100          # default examples per run in `converge run`
    description: str = ""
    suite_examples: int = 40     # examples per run in the default pytest suite
    verdict: str | None = None   # shown by `converge run` when the property holds: "reproduced" / "fixed"


def _load() -> list[PropertySpec]:
    import properties.families as pkg

    out: list[PropertySpec] = []
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: (m.name != "regular", m.name)):
        module = importlib.import_module(f"properties.families.{info.name}")
        out.extend(getattr(module, "PROPERTIES", []))
    return out


PROPERTIES: list[PropertySpec] = _load()


def families() -> list[str]:
    seen: list[str] = []
    for p in PROPERTIES:
        if p.family not in seen:
            seen.append(p.family)
    return seen


def select(family: str | None = None, name: str | None = None) -> list[PropertySpec]:
    out = [p for p in PROPERTIES if (family is None or p.family == family) and (name is None or p.name == name)]
    return out


def with_examples(spec: PropertySpec, n: int) -> PropertySpec:
    return replace(spec, examples=n)
