"""A case for Spark's native join: two append-only inputs, explicit micro-batches, watermarks.

Not an interval `Scenario`: a scenario's watermarks are explicit events per
input, and Spark takes none. Spark derives one global watermark from each
input's largest event time minus its `withWatermark` delay (the minimum or
maximum over the inputs, `multipleWatermarkPolicy`) and applies it from the
next micro-batch; what steers it is which rows arrive in which micro-batch.
So a case carries the micro-batches themselves (docs/spark.md, "Spark's
native joins as a system").

Every column is a nullable BIGINT; the time column is event time in ms and is
never NULL. Each input row gets a hidden id (its position among that input's
rows, in batch order), so output pairs are identifiable; it is never part of
the condition.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, get_args

from converge.engine.model.errors import BadInputError
from converge.engine.model.files import write_text_whole
from converge.engine.model.scenario import check_int, check_literal, check_text, short_repr

CASE_FORMAT = "converge-spark-native/1"
NativeJoinType = Literal["inner", "left", "right", "full", "left_semi", "left_anti"]
WatermarkPolicy = Literal["min", "max"]
ResidualOp = Literal["<", "<=", ">", ">=", "=", "<>"]
Side = Literal["left", "right"]
SIDES: tuple[Side, Side] = ("left", "right")
MAX_TIME_MS = 10**12          # event times stay far below Spark's timestamp range (and the sentinel above them)
MAX_DELAY_MS = 10**9


def _object(value: Any, path: str, keys: Sequence[str], required: Sequence[str]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise BadInputError(f"expected an object, got {short_repr(value)}", path=path)
    for key in value:
        if key not in keys:
            raise BadInputError(f"unknown key {key!r} (known: {', '.join(keys)})", path=f"{path}.{key}")
    for key in required:
        if key not in value:
            raise BadInputError(f"missing key {key!r}", path=path)
    return value


def _list(value: Any, path: str) -> list | tuple:
    if not isinstance(value, (list, tuple)):
        raise BadInputError(f"expected a list, got {short_repr(value)}", path=path)
    return value


def _name(value: Any, path: str) -> str:
    text = check_text(value, path, what="a column name")
    if not text.isidentifier() or text.startswith("_"):
        raise BadInputError(f"{text!r} is not a plain column name (letters, digits, '_', not starting with '_')",
                            path=path)
    return text


@dataclass(frozen=True)
class NativeInput:
    """One input: its BIGINT columns, which is the event time (ms), and its `withWatermark` delay."""

    columns: tuple[str, ...]
    time: str
    delay_ms: int

    @classmethod
    def from_json(cls, obj: Any, path: str) -> NativeInput:
        obj = _object(obj, path, ("columns", "time", "delay_ms"), ("columns", "time", "delay_ms"))
        columns = tuple(_name(c, f"{path}.columns[{i}]") for i, c in enumerate(_list(obj["columns"],
                                                                                     f"{path}.columns")))
        if len(set(columns)) != len(columns):
            raise BadInputError(f"a column is named twice in {list(columns)}", path=f"{path}.columns")
        time = _name(obj["time"], f"{path}.time")
        if time not in columns:
            raise BadInputError(f"{time!r} is not one of the columns {list(columns)}", path=f"{path}.time")
        return cls(columns, time, check_int(obj["delay_ms"], f"{path}.delay_ms", lo=0, hi=MAX_DELAY_MS))

    def to_json(self) -> dict[str, Any]:
        return {"columns": list(self.columns), "time": self.time, "delay_ms": self.delay_ms}

    @property
    def time_index(self) -> int:
        return self.columns.index(self.time)


@dataclass(frozen=True)
class Residual:
    """`left.<column> <op> right.<column>`: the condition beyond the keys and the time range."""

    left: str
    op: ResidualOp
    right: str

    def to_json(self) -> dict[str, Any]:
        return {"left": self.left, "op": self.op, "right": self.right}


@dataclass(frozen=True)
class NativeJoinCase:
    """Two inputs joined as `keys AND right.time BETWEEN left.time + lower_ms AND left.time + upper_ms [AND residual]`;
    `batches[j][side]` are the rows `side` receives in micro-batch j."""

    name: str
    left: NativeInput
    right: NativeInput
    join: NativeJoinType
    keys: tuple[tuple[str, str], ...]
    lower_ms: int
    upper_ms: int
    residual: Residual | None
    policy: WatermarkPolicy
    batches: tuple[dict[str, tuple[tuple[int | None, ...], ...]], ...]
    meta: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        check_literal(self.join, NativeJoinType, "join")
        check_literal(self.policy, WatermarkPolicy, "watermark_policy")
        if not self.keys:
            raise BadInputError("an equi join needs at least one key pair", path="keys")
        for i, (lk, rk) in enumerate(self.keys):
            if lk not in self.left.columns:
                raise BadInputError(f"{lk!r} is not a left column {list(self.left.columns)}", path=f"keys[{i}][0]")
            if rk not in self.right.columns:
                raise BadInputError(f"{rk!r} is not a right column {list(self.right.columns)}", path=f"keys[{i}][1]")
        if self.lower_ms > self.upper_ms:
            raise BadInputError(f"lower bound {self.lower_ms} is above the upper bound {self.upper_ms}",
                                path="bounds_ms")
        if self.residual is not None:
            check_literal(self.residual.op, ResidualOp, "residual.op")
            if self.residual.left not in self.left.columns:
                raise BadInputError(f"{self.residual.left!r} is not a left column", path="residual.left")
            if self.residual.right not in self.right.columns:
                raise BadInputError(f"{self.residual.right!r} is not a right column", path="residual.right")
        if not self.batches:
            raise BadInputError("a case needs at least one micro-batch", path="batches")
        for j, batch in enumerate(self.batches):
            for side in SIDES:
                spec = self.input(side)
                for i, row in enumerate(batch[side]):
                    where = f"batches[{j}].{side}[{i}]"
                    if len(row) != len(spec.columns):
                        raise BadInputError(f"expected {len(spec.columns)} values {list(spec.columns)}, got "
                                            f"{short_repr(list(row))}", path=where)
                    for c, v in zip(spec.columns, row, strict=False):
                        if v is None and c == spec.time:
                            raise BadInputError(f"the event time {c!r} is NULL", path=f"{where}.{c}")
                        if v is not None:
                            check_int(v, f"{where}.{c}", **({"lo": 0, "hi": MAX_TIME_MS} if c == spec.time else {}))

    def input(self, side: Side) -> NativeInput:
        return self.left if side == "left" else self.right

    def rows(self, side: Side) -> list[tuple[int, int, tuple]]:
        """(hidden id, micro-batch, row) of every row of `side`, ids counted in batch order from 0."""
        out: list[tuple[int, int, tuple]] = []
        for j, batch in enumerate(self.batches):
            for row in batch[side]:
                out.append((len(out), j, row))
        return out

    def with_batches(self, batches: Sequence[Mapping[str, Sequence[Sequence[int | None]]]]) -> NativeJoinCase:
        return replace(self, batches=_batches(batches), meta=dict(self.meta))

    # ------------------------------------------------------------------ JSON

    def to_json(self) -> dict[str, Any]:
        obj: dict[str, Any] = {
            "format": CASE_FORMAT, "name": self.name, "left": self.left.to_json(), "right": self.right.to_json(),
            "join": self.join, "keys": [list(k) for k in self.keys], "bounds_ms": [self.lower_ms, self.upper_ms],
            "residual": None if self.residual is None else self.residual.to_json(), "watermark_policy": self.policy,
            "batches": [{side: [list(r) for r in b[side]] for side in SIDES} for b in self.batches],
        }
        if self.meta:
            obj["meta"] = self.meta
        return obj

    @classmethod
    def from_json(cls, obj: Any) -> NativeJoinCase:
        keys = ("format", "name", "left", "right", "join", "keys", "bounds_ms", "residual", "watermark_policy",
                "batches", "meta")
        obj = _object(obj, "case", keys, keys[:-2] + ("batches",))
        if obj["format"] != CASE_FORMAT:
            raise BadInputError(f"expected {CASE_FORMAT!r}, got {short_repr(obj['format'])}", path="format")
        pairs = []
        for i, pair in enumerate(_list(obj["keys"], "keys")):
            if not isinstance(pair, list) or len(pair) != 2:
                raise BadInputError(f"expected [left column, right column], got {short_repr(pair)}", path=f"keys[{i}]")
            pairs.append((check_text(pair[0], f"keys[{i}][0]"), check_text(pair[1], f"keys[{i}][1]")))
        bounds = _list(obj["bounds_ms"], "bounds_ms")
        if len(bounds) != 2:
            raise BadInputError(f"expected [lower, upper], got {short_repr(bounds)}", path="bounds_ms")
        lower = check_int(bounds[0], "bounds_ms[0]", lo=-MAX_DELAY_MS, hi=MAX_DELAY_MS)
        upper = check_int(bounds[1], "bounds_ms[1]", lo=-MAX_DELAY_MS, hi=MAX_DELAY_MS)
        residual = None
        if obj.get("residual") is not None:
            r = _object(obj["residual"], "residual", ("left", "op", "right"), ("left", "op", "right"))
            residual = Residual(check_text(r["left"], "residual.left"), check_literal(r["op"], ResidualOp,
                                                                                     "residual.op"),
                                check_text(r["right"], "residual.right"))
        meta = obj.get("meta", {})
        if not isinstance(meta, Mapping):
            raise BadInputError(f"expected an object, got {short_repr(meta)}", path="meta")
        return cls(check_text(obj["name"], "name"), NativeInput.from_json(obj["left"], "left"),
                   NativeInput.from_json(obj["right"], "right"), check_literal(obj["join"], NativeJoinType, "join"),
                   tuple(pairs), lower, upper, residual,
                   check_literal(obj["watermark_policy"], WatermarkPolicy, "watermark_policy"),
                   _batches(obj["batches"]), dict(meta))


def _batches(value: Any) -> tuple[dict[str, tuple[tuple[int | None, ...], ...]], ...]:
    out: list[dict[str, tuple[tuple[int | None, ...], ...]]] = []
    for j, batch in enumerate(_list(value, "batches")):
        b = _object(batch, f"batches[{j}]", SIDES, ())
        out.append({side: tuple(tuple(_list(row, f"batches[{j}].{side}[{i}]"))
                                for i, row in enumerate(_list(b.get(side, []), f"batches[{j}].{side}")))
                    for side in SIDES})
    return tuple(out)


def is_case_file(obj: Any) -> bool:
    """Whether a loaded JSON document is a native-join case (not a scenario file)."""
    return isinstance(obj, Mapping) and obj.get("format") == CASE_FORMAT


def load_case(path: str | Path) -> NativeJoinCase:
    """Read a case file; a file that is not valid JSON or not a case is bad input naming the file."""
    try:
        obj = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadInputError(f"{path}: {exc}") from None
    return NativeJoinCase.from_json(obj)


def dump_case(case: NativeJoinCase, path: str | Path) -> Path:
    """Write `case` to `path` whole or not at all (engine/model/files.py)."""
    return write_text_whole(path, json.dumps(case.to_json(), indent=1) + "\n")


JOIN_TYPES: tuple[str, ...] = get_args(NativeJoinType)

# The flush batch every case ends with when it runs (part of the case, not of a system: the rule's model
# appends the same rows): one sentinel row per input, with keys that match nothing (the two sides' differ)
# and an event time past every row's range plus every delay, so the watermark that follows it passes every
# row's range end. Sentinel rows get the ids after every real row's; their output is never judged.
SENTINEL_KEY = {"left": -(2**62) + 1, "right": -(2**62) + 2}   # never equal to each other or a drawn key
SENTINEL_MARGIN_MS = 1000


def sentinel_time(case: NativeJoinCase) -> int:
    """An event time whose watermark (whatever the policy) lies past every row's range: max time + |bounds| +
    every delay + a margin."""
    times = [row[case.input(s).time_index] for s in SIDES for _, _, row in case.rows(s)]
    return (max(times, default=0) + abs(case.lower_ms) + abs(case.upper_ms) + case.left.delay_ms
            + case.right.delay_ms + SENTINEL_MARGIN_MS)


def sentinel_row(case: NativeJoinCase, side: Side) -> tuple[int, ...]:
    spec = case.input(side)
    t = sentinel_time(case)
    return tuple(t if c == spec.time else SENTINEL_KEY[side] for c in spec.columns)


# What one run of a case on Spark gave back: the "got" side that the native-join properties judge.
RunStatus = Literal["ok", "unsupported"]
Pair = tuple  # (left id | None, right id | None)


@dataclass(frozen=True)
class Epoch:
    """One micro-batch of the query: what it emitted (sentinel rows removed) and what its progress reported."""

    batch_id: int
    output: tuple[Pair, ...]
    watermark_ms: int | None
    state_rows: int | None
    input_rows: int


@dataclass(frozen=True)
class NativeRun:
    status: RunStatus
    epochs: tuple[Epoch, ...] = ()
    message: str = ""
    seconds: float = 0.0

    def output(self) -> list[Pair]:
        return [pair for e in self.epochs for pair in e.output]
