"""The calendar fields of epoch milliseconds, as DuckDB's `year(epoch_ms(x))` (and quarter, month, day) gives them.

The one shape of a date part a condition holds (engine/condition_compiler.py,
oracle/guard.py): `year | quarter | month | day` of `epoch_ms(<integer>)`, the
integer converge's encoding of a TIMESTAMP(3) (engine/model/flinksql/
expressions.py renders Flink's QUARTER(ts), EXTRACT(YEAR FROM ts), ... so).
DuckDB reads the milliseconds on the proleptic Gregorian calendar with
astronomical years (1 BC is year 0) and floors a negative value to the
millisecond before it; beyond +-9223372036854775 ms it cannot hold the value in
microseconds and fails, and so does this.
"""

from __future__ import annotations

from converge.engine.model.errors import BadInputError

DATE_PARTS = ("year", "quarter", "month", "day")
MS_PER_DAY = 86_400_000
MAX_MS = 9_223_372_036_854_775  # DuckDB turns epoch_ms into microseconds: beyond this, a conversion error


def civil(days: int) -> tuple[int, int, int]:
    """(year, month, day) of a day number counted from 1970-01-01, on the proleptic Gregorian calendar."""
    shifted = days + 719_468                     # from 0000-03-01: a leap day ends each year
    era, day_of_era = divmod(shifted, 146_097)   # 400-year eras, each 146097 days
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36_524 - day_of_era // 146_096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    month_from_march = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * month_from_march + 2) // 5 + 1
    month = month_from_march + 3 if month_from_march < 10 else month_from_march - 9
    return era * 400 + year_of_era + (month <= 2), month, day


def date_part(part: str, ms: int) -> int:
    """`part(epoch_ms(ms))` in DuckDB; bad input where DuckDB cannot convert the value (the compiled condition
    checks the range first and fails there, naming the condition)."""
    if not -MAX_MS <= ms <= MAX_MS:
        raise BadInputError(f"epoch_ms({ms}): the timestamp is out of range (at most {MAX_MS:,} ms from 1970)")
    year, month, day = civil(ms // MS_PER_DAY)
    return {"year": year, "quarter": (month + 2) // 3, "month": month, "day": day}[part]
