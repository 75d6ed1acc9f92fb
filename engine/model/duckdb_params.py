"""Text parameters of a DuckDB statement written into it as string literals, so no parameter is bound.

Binding any parameter makes DuckDB's Python client import pandas (over a
second on a loaded machine) to inspect it; converge passes only short texts
(a condition to serialize, a serialized tree to read back) at compile time,
and `converge check --plan-only` must answer in well under a second. A DuckDB
string literal has one escape, a doubled quote (a backslash is an ordinary
character), so the written literal holds exactly the parameter's text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def inlined(sql: str, params: Sequence[Any] | None) -> tuple[str, list]:
    """(`sql` with each `?` replaced by its text parameter as a literal, []), or (`sql`, params) unchanged when
    a parameter is not text, holds a NUL character, or `?` does not occur exactly once per parameter."""
    params = list(params or ())
    parts = sql.split("?")
    if not params or len(parts) != len(params) + 1 or not all(isinstance(p, str) and "\x00" not in p
                                                              for p in params):
        return sql, params
    return parts[0] + "".join("'" + p.replace("'", "''") + "'" + rest for p, rest in zip(params, parts[1:], strict=False)), []


__all__ = ["inlined"]
