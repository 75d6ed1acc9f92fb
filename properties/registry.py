"""Every property converge checks, by family: what feeds it and what decides it.

Each module in `properties/families/` defines `PROPERTIES`, a list of
PropertySpec, and is listed here; pytest and `converge run` both read the
union, so a property added there is covered by the suite and the campaign
alike (tests/architecture/test_layering.py fails on a family module missing from FAMILIES).
"""

from __future__ import annotations

from converge.properties.families import (
    anomalies,
    dense,
    interval,
    minibatch,
    multiway,
    raw_changelog,
    regular,
    state_order,
)
from converge.properties.spec import PropertySpec

__all__ = ["FAMILIES", "PROPERTIES", "PropertySpec", "families", "select"]

# The order of `converge run`'s table: the regular family first, then the others by module name.
FAMILIES = (regular, anomalies, dense, interval, minibatch, multiway, raw_changelog, state_order)

PROPERTIES: list[PropertySpec] = [spec for module in FAMILIES for spec in module.PROPERTIES]


def families() -> list[str]:
    seen: list[str] = []
    for p in PROPERTIES:
        if p.family not in seen:
            seen.append(p.family)
    return seen


def select(family: str | None = None, name: str | None = None) -> list[PropertySpec]:
    return [p for p in PROPERTIES if (family is None or p.family == family) and (name is None or p.name == name)]
