"""Damaged scenario files: the project's own scenarios with bytes flipped, keys lost, types swapped.

A damage is a list of small operations drawn by Hypothesis and applied in
order, so a failure shrinks to the one operation that matters. Operations
work either on the parsed JSON tree (delete, add or retype a key, drop or
repeat a list element, swap two values) or on the text (flip bytes, cut the
file, insert a token JSON readers disagree on, nest very deeply, repeat a key).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"
SEED_FILES: tuple[Path, ...] = tuple(sorted(SCENARIOS.rglob("*.json")))
SEED_BYTES: tuple[bytes, ...] = tuple(p.read_bytes() for p in SEED_FILES)

# Values that break readers: wrong types, range edges, text a database or an encoder refuses.
EXTREME_VALUES: tuple[Any, ...] = (
    None, True, False, 0, -1, 1, 2**31, 2**63, -(2**63) - 1, 10**400, -(10**30), 1e308, -0.0, 0.5, 1e-320,
    "", " ", "x", "K", "k", "\x00", "a\x00b", "\ud800", "x\udfff", "🙂", "é", "+X", "-U", "+U", "-D", "upsert",
    "insert_only", "processing", "event", "semi", "anti", "full", "a.k = b.k", "a.k = b.k); DROP TABLE a; --",
    "x" * 5000, [], {}, [None], [[1, 2]], {"k": 1}, [1, "p"], ["k", "BIGINT"], {"emits": []},
)
# Tokens spliced into the text where a value starts.
TEXT_TOKENS: tuple[str, ...] = (
    "NaN", "Infinity", "-Infinity", "1e999", "-1e999", "9" * 5000, '"\\ud800"', '"\\u0000"', "[" * 3000 + "]" * 3000,
    "{" * 20 + "}" * 20, "tru", "nul", '"', "'x'", "0x10", "+1", ".5", "01", "1.", '"\\x"',
)
# Byte sequences that are not UTF-8 (or are, only in a lax reader).
BAD_BYTES: tuple[bytes, ...] = (b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf8\x88\x80\x80\x80", b"\x00",
                                b"\xef\xbb\xbf", b"\x80")


@dataclass(frozen=True)
class Op:
    """One damage: `kind`, and numbers that pick where and what (taken modulo what is there). Each fuzz surface
    has its own subclass, so a shrunk example names the surface it damages."""

    kind: str
    where: int
    what: int

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.kind!r}, {self.where}, {self.what})"


def byte_damage(op: Op, data: bytes, bad: tuple[bytes, ...] | None = None) -> bytes | None:
    """The damages every surface shares, done to the bytes: `cut` (a prefix), `flip` (one byte replaced) and
    `bad_bytes` (one of the surface's `bad` byte sequences inserted); None for any other kind."""
    bad = bad or BAD_BYTES
    n = len(data)
    if op.kind == "cut":
        return data[: op.where % (n + 1)]
    if op.kind == "flip" and n:
        i = op.where % n
        return data[:i] + bytes([op.what % 256]) + data[i + 1:]
    if op.kind == "bad_bytes":
        i = op.where % (n + 1)
        return data[:i] + bad[op.what % len(bad)] + data[i:]
    return None


def damage_ops(op: type[Op], kinds: tuple[str, ...]) -> st.SearchStrategy[Op]:
    """Damages of one surface: a kind, and where and what to damage."""
    return st.builds(op, st.sampled_from(kinds), st.integers(0, 10**6), st.integers(0, 10**6))


TREE_OPS = ("delete_key", "add_key", "retype", "swap", "drop_item", "repeat_item", "rename_key")
TEXT_OPS = ("flip_byte", "cut", "token", "bad_bytes", "repeat_key")

ops = damage_ops(Op, TREE_OPS + TEXT_OPS)


def _nodes(tree: Any) -> list[tuple[Any, Any]]:
    """Every (container, key-or-index) position of the tree, in a fixed order."""
    out: list[tuple[Any, Any]] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, value in items:
            out.append((node, key))
            if isinstance(value, (dict, list)):
                stack.append(value)
    return out


def _typo(key: str, n: int) -> str:
    if len(key) < 2:
        return key + "_"
    i = n % (len(key) - 1)
    variants = (key[:i] + key[i + 1:], key[:i] + key[i + 1] + key[i] + key[i + 2:], key.upper(), key + "s")
    return variants[(n // len(key)) % len(variants)]


def apply_tree_op(tree: Any, op: Op) -> None:
    nodes = _nodes(tree)
    if not nodes:
        return
    parent, key = nodes[op.where % len(nodes)]
    if op.kind == "delete_key" and isinstance(parent, dict):
        del parent[key]
    elif op.kind == "add_key" and isinstance(parent, dict):
        parent[_typo(str(key), op.what)] = EXTREME_VALUES[op.what % len(EXTREME_VALUES)]
    elif op.kind == "rename_key" and isinstance(parent, dict):
        parent[_typo(str(key), op.what)] = parent.pop(key)
    elif op.kind == "retype":
        parent[key] = EXTREME_VALUES[op.what % len(EXTREME_VALUES)]
    elif op.kind == "swap":
        other_parent, other_key = nodes[op.what % len(nodes)]
        parent[key], other_parent[other_key] = other_parent[other_key], parent[key]
    elif op.kind == "drop_item" and isinstance(parent, list):
        del parent[key]
    elif op.kind == "repeat_item" and isinstance(parent, list):
        parent.insert(key, json.loads(json.dumps(parent[key])))


def apply_text_op(data: bytes, op: Op) -> bytes:
    if not data:
        return data
    at = op.where % len(data)
    if op.kind == "flip_byte":
        return data[:at] + bytes([data[at] ^ (1 << (op.what % 8))]) + data[at + 1:]
    if op.kind == "cut":
        return data[:at]
    if op.kind == "bad_bytes":
        return data[:at] + BAD_BYTES[op.what % len(BAD_BYTES)] + data[at:]
    if op.kind == "token":
        starts = [i for i in range(len(data)) if data[i:i + 1] in (b":", b"[", b",")]
        if not starts:
            return data
        i = starts[op.where % len(starts)] + 1
        end = i
        while end < len(data) and data[end:end + 1] not in (b",", b"]", b"}"):
            end += 1
        return data[:i] + TEXT_TOKENS[op.what % len(TEXT_TOKENS)].encode() + data[end:]
    if op.kind == "repeat_key":
        keys = [i for i in range(len(data)) if data[i:i + 2] == b'{"']
        if not keys:
            return data
        i = keys[op.where % len(keys)] + 1
        end = data.index(b",", i) + 1 if b"," in data[i:] else i
        return data[:i] + data[i:end] + data[i:end] + data[end:] if end > i else data
    return data


def damage(seed: bytes, damages: list[Op]) -> bytes:
    """Apply the damages in order: tree operations to the parsed file, text operations to its bytes."""
    data = seed
    for op in damages:
        if op.kind in TREE_OPS:
            try:
                tree = json.loads(data)
            except (ValueError, RecursionError):
                continue  # the text is already broken; tree damage has nothing to hold on to
            apply_tree_op(tree, op)
            data = json.dumps(tree, indent=1).encode("utf-8", "surrogatepass")
        else:
            data = apply_text_op(data, op)
    return data


damaged_files = st.tuples(st.integers(0, len(SEED_BYTES) - 1), st.lists(ops, min_size=1, max_size=4)).map(
    lambda t: (SEED_FILES[t[0]].name, damage(SEED_BYTES[t[0]], t[1]), t[1]))
