"""The adapter protocol's messages, versions 1 and 2 (docs/adapter-protocol.md): building and strictly reading them.

Everything an adapter sends is checked before it is believed: unknown keys,
missing keys, a result for another case, a row of the wrong width or a value
of the wrong type are each a broken contract, reported as what is wrong and
where (`results[2].final[0][3]`), never silently read as an answer.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from typing import Any, Final

from converge.engine.condition_tree import condition_plan
from converge.engine.model.changelog import ROW_KINDS, Change
from converge.engine.model.errors import BadInputError, SystemUnderTestError
from converge.engine.model.scenario import Scenario, short_repr
from converge.engine.model.system import Capabilities, CaseResult
from converge.engine.model.system_cases import case_to_json

PROTOCOL: Final = "converge-adapter"
VERSIONS: Final = (1, 2)

HELLO_KEYS: Final = ("type", "protocol", "version", "system", "capabilities")
SYSTEM_KEYS: Final = ("name", "version")
RESULTS_KEYS: Final = ("type", "request", "results")
ERROR_KEYS: Final = ("type", "request", "message")
RESULT_KEYS: Final = {"ok": ("id", "status"), "unsupported": ("id", "status", "message"),
                      "error": ("id", "status", "message")}


def violation(what: str) -> SystemUnderTestError:
    return SystemUnderTestError(what)


def encode(message: dict[str, Any]) -> bytes:
    """One JSON line (no NaN or Infinity: they are not JSON)."""
    return (json.dumps(message, allow_nan=False, separators=(",", ":")) + "\n").encode("utf-8")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decode(line: bytes) -> dict[str, Any]:
    """A message from one line; a line that is not a JSON object is a protocol violation."""
    try:
        obj = json.loads(line.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise violation(f"a line that is not JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise violation(f"a JSON {type(obj).__name__}, not an object")
    if not isinstance(obj.get("type"), str):
        raise violation("a message without a string \"type\"")
    return obj


def _keys(obj: dict[str, Any], allowed: Sequence[str], path: str, required: Sequence[str] | None = None) -> None:
    for key in obj:
        if key not in allowed:
            raise violation(f"{path}: unknown key {key!r} (allowed: {', '.join(allowed)})")
    for key in allowed if required is None else required:
        if key not in obj:
            raise violation(f"{path}: missing key {key!r}")


def hello_request(versions: Sequence[int] = VERSIONS) -> dict[str, Any]:
    """converge's hello, offering `versions` (all it speaks unless a check forces one)."""
    return {"type": "hello", "protocol": PROTOCOL, "versions": list(versions)}


def negotiated_version(obj: dict[str, Any], offered: Sequence[int] = VERSIONS) -> int:
    """The version an adapter's hello answered: one of those offered, or a protocol violation."""
    version = obj.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version not in offered:
        raise violation(f"hello.version: {short_repr(version)} was not offered (offered: {list(offered)})")
    return version


def read_hello(obj: dict[str, Any], offered: Sequence[int] = VERSIONS) -> tuple[str, str, Capabilities]:
    """(system name, system version, capabilities) from the adapter's hello (its version: negotiated_version)."""
    if obj["type"] == "error":
        raise violation(f"the adapter speaks none of the protocol versions {list(offered)}: "
                        f"{short_repr(obj.get('message'), 200)}")
    if obj["type"] != "hello":
        raise violation(f"expected a hello, got a {short_repr(obj['type'])} message")
    _keys(obj, HELLO_KEYS, "hello")
    if obj["protocol"] != PROTOCOL:
        raise violation(f"hello.protocol: expected {PROTOCOL!r}, got {short_repr(obj['protocol'])}")
    negotiated_version(obj, offered)
    system = obj["system"]
    if not isinstance(system, dict):
        raise violation(f"hello.system: expected an object, got {short_repr(system)}")
    _keys(system, SYSTEM_KEYS, "hello.system")
    for key in SYSTEM_KEYS:
        if not isinstance(system[key], str) or not system[key].strip():
            raise violation(f"hello.system.{key}: expected a non-empty string, got {short_repr(system[key])}")
    try:
        caps = Capabilities.from_json(obj["capabilities"], "hello.capabilities")
    except BadInputError as exc:
        raise violation(str(exc)) from None
    return system["name"], system["version"], caps


def case_object(case_id: str, scenario: Scenario, version: int = 1) -> dict[str, Any]:
    """One CASE in the negotiated version: v1 with `changelogs`, v2 with the join as data (`plan`)."""
    if version == 2:
        return case_to_json(case_id, scenario, 2, plan=condition_plan(scenario))
    return case_to_json(case_id, scenario, version)


def run_request(request: int, cases: Sequence[tuple[str, Scenario]], version: int = 1) -> dict[str, Any]:
    """A run request in the negotiated `version` (1 unless the hello said otherwise)."""
    return {"type": "run", "request": request, "cases": [case_object(cid, s, version) for cid, s in cases]}


def output_types(scenario: Scenario) -> list[str]:
    """The column types of the join's output row: every input of the chain in order (SEMI/ANTI: the left side)."""
    chain = scenario.chain
    types = list(chain[0].column_types)
    for spec, jtype in zip(chain[1:], scenario.join.types, strict=False):
        if jtype not in ("semi", "anti"):
            types += spec.column_types
    return types


def _value(v: Any, ctype: str, path: str) -> Any:
    if v is None:
        return None
    if ctype in ("BIGINT", "INTEGER"):
        if isinstance(v, int) and not isinstance(v, bool):
            return v
        if isinstance(v, float) and v.is_integer():  # some JSON writers print every number with a point
            return int(v)
    elif ctype == "DOUBLE":
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            return float(v)
    elif ctype == "VARCHAR":
        if isinstance(v, str):
            return v
    elif ctype == "BOOLEAN":
        if isinstance(v, bool):
            return v
    raise violation(f"{path}: {short_repr(v)} is not a {ctype} value (or null)")


def _row(raw: Any, types: list[str], path: str) -> tuple:
    if not isinstance(raw, list) or len(raw) != len(types):
        got = f"{len(raw)} values" if isinstance(raw, list) else short_repr(raw)
        raise violation(f"{path}: expected a row of {len(types)} values (the join's output width), got {got}")
    return tuple(_value(v, t, f"{path}[{j}]") for j, (v, t) in enumerate(zip(raw, types, strict=False)))


def _list(value: Any, path: str) -> list:
    if not isinstance(value, list):
        raise violation(f"{path}: expected a list, got {short_repr(value)}")
    return value


def read_result(obj: Any, case_id: str, scenario: Scenario, output: str, path: str) -> CaseResult:
    """One RESULT, checked against its case (id, output width and types) and the declared output form."""
    if not isinstance(obj, dict):
        raise violation(f"{path}: expected an object, got {short_repr(obj)}")
    status = obj.get("status")
    if status not in RESULT_KEYS:
        raise violation(f"{path}.status: expected ok, unsupported or error, got {short_repr(status)}")
    answer = "final" if output == "final" else "changelog"
    allowed = RESULT_KEYS[status] + ((answer,) if status == "ok" else ())
    _keys(obj, allowed, path)
    if obj["id"] != case_id:
        raise violation(f"{path}.id: expected {case_id!r} (results come in the order of the cases), "
                        f"got {short_repr(obj['id'])}")
    if status != "ok":
        message = obj["message"]
        if not isinstance(message, str) or not message.strip():
            raise violation(f"{path}.message: expected a non-empty string, got {short_repr(message)}")
        return CaseResult.unsupported(message) if status == "unsupported" else CaseResult.error(message)
    types = output_types(scenario)
    rows = _list(obj[answer], f"{path}.{answer}")
    if answer == "final":
        return CaseResult.ok(final=Counter(_row(r, types, f"{path}.final[{i}]") for i, r in enumerate(rows)))
    changes = []
    for i, item in enumerate(rows):
        where = f"{path}.changelog[{i}]"
        if not isinstance(item, list) or not item or item[0] not in ROW_KINDS:
            raise violation(f"{where}: expected [kind, value, ...] with a kind of {', '.join(ROW_KINDS)}, "
                            f"got {short_repr(item)}")
        changes.append(Change(item[0], _row(item[1:], types, where)))
    return CaseResult.ok(changelog=changes)


def read_results(obj: dict[str, Any], request: int, cases: Sequence[tuple[str, Scenario]],
                 output: str) -> list[CaseResult]:
    """The answer to run request `request`: one result per case, in order."""
    if obj["type"] == "error":
        _keys(obj, ERROR_KEYS, "error", required=("type", "message"))
        raise violation(f"the adapter could not read request {request}: {short_repr(obj.get('message'), 300)}")
    if obj["type"] != "results":
        raise violation(f"expected results, got a {short_repr(obj['type'])} message")
    _keys(obj, RESULTS_KEYS, "results")
    if obj["request"] != request or isinstance(obj["request"], bool):
        raise violation(f"results.request: expected {request}, got {short_repr(obj['request'])}")
    results = _list(obj["results"], "results.results")
    if len(results) != len(cases):
        raise violation(f"results.results: {len(results)} results for {len(cases)} cases")
    return [read_result(r, cid, s, output, f"results[{i}]") for i, (r, (cid, s)) in enumerate(zip(results, cases, strict=False))]
