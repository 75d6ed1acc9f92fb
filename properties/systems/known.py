"""Known divergences: confirmed, documented differences of a system, recognised inside the check.

A real engine may differ from the batch answer on purpose or by a confirmed
bug with an issue of its own; a campaign should spend nothing on it and fail
on anything new. So a case whose divergence an entry matches is counted as
"known" where it is checked (properties/systems/checks.py) and does not fail
its example: Hypothesis never shrinks it again, and the other cases of its
batch are still judged. The built-in list ships in the package
(known_divergences/*.json beside this module) and applies by default;
`converge run --system ... --known FILE` adds a file, `--no-known` drops the
built-in list. Each file (JSON) lists entries (docs/systems.md):

    {"known": [{"id": "flink-exists-null", "system": "flink", "versions": ["2.3.0"],
                "property": "regular/semi_anti_equals_oracle", "matcher": "SEMI JOIN",
                "reason": "...", "link": "https://...", "case": "cases/flink_exists.json"}]}
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario import Scenario, short_repr
from converge.properties.divergence import Divergence, bag_diff

ENTRY_KEYS = ("id", "system", "versions", "property", "matcher", "reason", "link", "case", "repro")
BUILTIN = Path(__file__).resolve().parent / "known_divergences"


@dataclass(frozen=True)
class KnownDivergence:
    id: str                        # a short name, unique in a campaign's list: what a case's count is kept under
    system: str                    # the system's name, as its adapter reports it ("flink")
    reason: str
    link: str
    property: str | None = None    # "family/name" or "name"
    matcher: str | None = None     # a regular expression searched in the divergence's text (case_text)
    versions: tuple[str, ...] | None = None   # the system versions it holds for (None: every version)
    case: Path | None = None       # the minimal scenario file, reduced and checked by hand
    repro: str | None = None       # the `converge repro` command that turns `case` into a standalone program

    def matches(self, system: str, version: str, family: str, prop: str, d: Divergence) -> bool:
        if self.system != system or not version_matches(self.versions, version):
            return False
        if self.property is not None and self.property not in (prop, f"{family}/{prop}"):
            return False
        return self.matcher is None or re.search(self.matcher, case_text(d)) is not None


def version_matches(versions: tuple[str, ...] | None, version: str) -> bool:
    """Whether a system's version is one of `versions`: each is a version ("2.3.0") or a PEP 440 range
    (">=2.0,<2.3"). A version that is not PEP 440 (an adapter's own scheme) matches only itself, exactly."""
    if versions is None:
        return True
    try:
        parsed: Version | None = Version(version)
    except InvalidVersion:
        parsed = None
    for item in versions:
        if item == version:
            return True
        if parsed is not None and _is_range(item) and SpecifierSet(item).contains(parsed, prereleases=True):
            return True
        if parsed is not None and not _is_range(item) and _same_version(item, parsed):
            return True
    return False


def _same_version(item: str, version: Version) -> bool:
    try:
        return Version(item) == version
    except InvalidVersion:
        return False


def _is_range(item: str) -> bool:
    return item.lstrip()[:1] in ("<", ">", "=", "!", "~")


def _row(row: tuple) -> str:
    return "[" + ", ".join("NULL" if v is None else repr(v) for v in row) + "]"


def case_text(d: Divergence) -> str:
    """What a matcher is searched in, one fact a line: the divergence's message; per join "TYPE JOIN input ON
    condition"; per input "input: changelog_mode"; "config: key=value ..." (the options that differ from the
    defaults, e.g. mini_batch_size); then the answer's difference, "missing: [1, NULL]" (a row the compared
    answer has and the system lacks) and "extra: [...]" (the other way)."""
    s: Scenario = d.scenario
    joins = [f"{t.upper()} JOIN {name} ON {cond}" for t, name, cond in zip(s.join.types, s.join.inputs[1:],
                                                                           s.join.conditions, strict=False)]
    inputs = [f"{spec.name}: {spec.changelog_mode}" for spec in s.chain]
    config = ["config: " + " ".join(f"{k}={v}" for k, v in s.config.optional_settings().items())]
    diff = []
    if d.engine is not None and d.expected is not None:
        for sign, row, _ in bag_diff(d.engine, d.expected):
            diff.append(f"{'extra' if sign == '+' else 'missing'}: {_row(row)}")
    return "\n".join([d.message, *joins, *inputs, *config, *diff])


def _text(entry: dict, key: str, path: str, required: bool) -> str | None:
    value = entry.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise BadInputError(f"expected a non-empty string, got {short_repr(value)}", path=f"{path}.{key}")
    return value


def _versions(entry: dict, path: str) -> tuple[str, ...] | None:
    """The entry's `versions`: a non-empty list of versions ("2.3.0", compared as PEP 440 versions when both
    sides are one, otherwise as text) or PEP 440 ranges (">=2.0,<2.3", recognised by their leading operator)."""
    if "versions" not in entry:
        return None
    value = entry["versions"]
    if not isinstance(value, list) or not value:
        raise BadInputError(f"expected a non-empty list of versions or ranges, got {short_repr(value)}",
                            path=f"{path}.versions")
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise BadInputError(f"expected a version (\"2.3.0\") or a range (\">=2.0,<2.3\"), got "
                                f"{short_repr(item)}", path=f"{path}.versions")
        if _is_range(item):
            try:
                SpecifierSet(item)
            except InvalidSpecifier:
                raise BadInputError(f"{item!r} is not a range of versions (\">=2.0,<2.3\", PEP 440)",
                                    path=f"{path}.versions") from None
    return tuple(value)


def _case(entry: dict, path: str, folder: Path | None) -> Path | None:
    """The entry's minimal scenario file, relative to the list's own folder; it must exist."""
    text = _text(entry, "case", path, False)
    if text is None:
        return None
    case = (folder / text) if folder is not None else Path(text)
    if not case.is_file():
        raise BadInputError(f"no such scenario file: {case}", path=f"{path}.case")
    return case


def parse_known(doc: Any, source: str = "known divergences", folder: Path | None = None) -> list[KnownDivergence]:
    """The entries of one list; `folder` is where its `case` paths are read from (the list's folder)."""
    if not isinstance(doc, dict) or set(doc) != {"known"} or not isinstance(doc["known"], list):
        raise BadInputError(f"{source}: expected an object {{\"known\": [entries]}}")
    out: list[KnownDivergence] = []
    for i, entry in enumerate(doc["known"]):
        path = f"{source}: known[{i}]"
        if not isinstance(entry, dict):
            raise BadInputError(f"expected an object, got {short_repr(entry)}", path=path)
        if isinstance(entry.get("id"), str):
            path += f" ({entry['id']})"
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
        system = _text(entry, "system", path, True)
        name = _text(entry, "id", path, False) or f"{system}#{i + 1}"
        out.append(KnownDivergence(name, system, _text(entry, "reason", path, True),  # type: ignore[arg-type]
                                   _text(entry, "link", path, True), prop, matcher,  # type: ignore[arg-type]
                                   _versions(entry, path), _case(entry, path, folder), _repro(entry, path)))
    return out


def _repro(entry: dict, path: str) -> str | None:
    """The entry's `converge repro` command: it must name the entry's case file."""
    text = _text(entry, "repro", path, False)
    if text is None:
        return None
    case = _text(entry, "case", path, False)
    if not text.startswith("converge repro ") or case is None \
            or not any(Path(word).name == Path(case).name for word in text.split()):
        raise BadInputError("repro: expected the `converge repro FILE --system ...` command of the entry's case "
                            f"file, got {short_repr(text)}", path=f"{path}.repro")
    return text


def load_known(path: Path) -> list[KnownDivergence]:
    """The entries of a known-divergences file; a missing or wrong one is bad input."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInputError(f"{path}: {exc.strerror or exc}") from None
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise BadInputError(f"{path}: not JSON: {exc}") from None
    return parse_known(doc, str(path), path.parent)


def builtin_known() -> list[KnownDivergence]:
    """The list shipped in the package: every known_divergences/*.json beside this module."""
    return [k for path in sorted(BUILTIN.glob("*.json")) for k in load_known(path)]


def campaign_known(files: Sequence[Path] = (), *, builtin: bool = True) -> list[KnownDivergence]:
    """The list a campaign applies: the built-in one (unless `builtin` is off), then each file's; two entries
    with one id are bad input (a case's count is kept under its entry's id)."""
    entries = (builtin_known() if builtin else []) + [k for f in files for k in load_known(f)]
    twice = [i for i, n in Counter(k.id for k in entries).items() if n > 1]
    if twice:
        raise BadInputError(f"known divergences: the id {twice[0]!r} names two entries; give one of them another id")
    return entries


def find_known(known: Sequence[KnownDivergence], system: str, family: str, prop: str,
               d: Divergence, version: str = "") -> KnownDivergence | None:
    return next((k for k in known if k.matches(system, version, family, prop, d)), None)


@dataclass(frozen=True)
class Recogniser:
    """The entries that apply to one property on one system: what a check asks about each divergence."""

    known: tuple[KnownDivergence, ...]
    system: str
    version: str
    family: str
    prop: str

    def __call__(self, d: Divergence) -> KnownDivergence | None:
        return find_known(self.known, self.system, self.family, self.prop, d, self.version)
