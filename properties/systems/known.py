"""Known divergences: confirmed, documented differences of a system, reported as "known" instead of failing.

A real engine may differ from the batch answer on purpose or by a confirmed
bug with an issue of its own; a campaign should still run green for it and
fail on anything new. The file (JSON) lists entries; each names the system,
what it matches (a property and/or a regular expression), why, and where
it is documented:

    {"known": [{"system": "flink", "property": "regular/semi_anti_equals_oracle",
                "matcher": "IS NOT DISTINCT FROM", "reason": "...", "link": "https://..."}]}
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import Scenario, short_repr
from converge.properties.divergence import Divergence

ENTRY_KEYS = ("system", "property", "matcher", "reason", "link")


@dataclass(frozen=True)
class KnownDivergence:
    system: str                    # the system's name, as its adapter reports it ("flink")
    reason: str
    link: str
    property: str | None = None    # "family/name" or "name"
    matcher: str | None = None     # a regular expression searched in the divergence's text (case_text)

    def matches(self, system: str, family: str, prop: str, d: Divergence) -> bool:
        if self.system != system:
            return False
        if self.property is not None and self.property not in (prop, f"{family}/{prop}"):
            return False
        return self.matcher is None or re.search(self.matcher, case_text(d)) is not None


def case_text(d: Divergence) -> str:
    """What a matcher is searched in: the divergence's message, then per join "TYPE JOIN input ON condition",
    then per input "input: changelog_mode"."""
    s: Scenario = d.scenario
    joins = [f"{t.upper()} JOIN {name} ON {cond}" for t, name, cond in zip(s.join.types, s.join.inputs[1:],
                                                                           s.join.conditions)]
    inputs = [f"{spec.name}: {spec.changelog_mode}" for spec in s.chain]
    return "\n".join([d.message, *joins, *inputs])


def _text(entry: dict, key: str, path: str, required: bool) -> str | None:
    value = entry.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise BadInputError(f"expected a non-empty string, got {short_repr(value)}", path=f"{path}.{key}")
    return value


def parse_known(doc: Any, source: str = "known divergences") -> list[KnownDivergence]:
    if not isinstance(doc, dict) or set(doc) != {"known"} or not isinstance(doc["known"], list):
        raise BadInputError(f"{source}: expected an object {{\"known\": [entries]}}")
    out: list[KnownDivergence] = []
    for i, entry in enumerate(doc["known"]):
        path = f"{source}: known[{i}]"
        if not isinstance(entry, dict):
            raise BadInputError(f"expected an object, got {short_repr(entry)}", path=path)
        unknown = [k for k in entry if k not in ENTRY_KEYS]
        if unknown:
            raise BadInputError(f"unknown key {unknown[0]!r} (known: {', '.join(ENTRY_KEYS)})", path=path)
        prop, matcher = _text(entry, "property", path, False), _text(entry, "matcher", path, False)
        if prop is None and matcher is None:
            raise BadInputError("an entry needs a property, a matcher or both", path=path)
        if matcher is not None:
            try:
                re.compile(matcher)
            except re.error as exc:
                raise BadInputError(f"not a regular expression: {exc}", path=f"{path}.matcher") from None
        out.append(KnownDivergence(_text(entry, "system", path, True), _text(entry, "reason", path, True),
                                   _text(entry, "link", path, True), prop, matcher))  # type: ignore[arg-type]
    return out


def load_known(path: Path) -> list[KnownDivergence]:
    """The entries of a known-divergences file; a missing or wrong one is bad input."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInputError(f"{path}: {exc.strerror or exc}") from None
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise BadInputError(f"{path}: not JSON: {exc}") from None
    return parse_known(doc, str(path))


def find_known(known: list[KnownDivergence], system: str, family: str, prop: str,
               d: Divergence) -> KnownDivergence | None:
    return next((k for k in known if k.matches(system, family, prop, d)), None)
