"""The engine's parse of a time attribute's text (engine/model/time_text.py), for the Calc in front of a join.

Flink's TO_TIMESTAMP (DateTimeUtils.parseTimestampData, precision 3) and
`CAST(s AS TIMESTAMP(3))` read `yyyy-MM-dd HH:mm:ss[.S..SSS]` as a local date
and time, the fraction's first three digits its milliseconds; converge holds it
as epoch milliseconds. Only the canonical text is computed: Flink reads other
forms by rules converge does not model (single-digit fields, a bare date, more
fraction digits floored, the 30th of February clamped), so they are refused.
"""

from __future__ import annotations

import datetime as dt

from converge.engine.model.errors import UnsupportedError
from converge.engine.model.time_text import CANONICAL_TIME_TEXT

__all__ = ["text_time_ms"]

_EPOCH = dt.datetime(1970, 1, 1)


def text_time_ms(text: str) -> int:
    """A canonical `yyyy-MM-dd HH:mm:ss[.SSS]` text as epoch milliseconds, as Flink's TO_TIMESTAMP reads it
    (DateTimeUtils.parseTimestampData: the fraction's first three digits, no time zone); other text is refused."""
    m = CANONICAL_TIME_TEXT.fullmatch(text)
    at = None
    if m is not None:
        year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
        try:
            at = dt.datetime(year, month, day, hour, minute, second)
        except ValueError:  # no such date, or hour 24
            at = None
    if at is None or m is None:
        raise UnsupportedError(f"the time text {text!r} is not in the form converge computes ('yyyy-MM-dd "
                               f"HH:mm:ss' with up to 3 fraction digits, a real date, hours 00-23); Flink reads "
                               f"other forms by rules converge does not model")
    fraction = (m.group(7) or "").ljust(3, "0")
    return (at - _EPOCH).days * 86_400_000 + (at - _EPOCH).seconds * 1000 + int(fraction)
