"""Join keys as text, so that Pathway's join matches exactly what SQL's `=` and IS NOT DISTINCT FROM match.

Pathway's join matches None with None; SQL's `=` never matches NULL. A row with NULL in an `=` key
gets no key at all (None) and is filtered out before Pathway's join, so it pairs with nothing and is
padded by the outer join logic (graph.py). A null-safe key keeps its NULL, which then matches NULL
natively. Numbers compare as SQL compares them: an integer against a DOUBLE as a DOUBLE, -0.0 equal to
0.0, NaN equal to NaN. The case number is part of every key, so the cases of one request never meet.
"""

from __future__ import annotations

import json
import math


def normalize(value: object, as_double: bool) -> object:
    """A key value in the form whose JSON text is equal exactly when SQL says the values are equal."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if as_double or isinstance(value, float):
        value = float(value)
        if value != value:
            return "NaN:"  # JSON has no NaN; strings never meet numbers, as the two sides have one type
        if math.isinf(value):
            return "inf:" if value > 0 else "-inf:"
        return value + 0.0  # -0.0 + 0.0 is 0.0
    return value


def key_text(case: int, values: list[object], null_safe: list[bool], doubles: list[bool]) -> str | None:
    """The key of one row, or None when an `=` key is NULL (the row matches nothing)."""
    out: list[object] = [case]
    for value, safe, double in zip(values, null_safe, doubles):
        if value is None and not safe:
            return None
        out.append(normalize(value, double))
    return json.dumps(out, separators=(",", ":"))
