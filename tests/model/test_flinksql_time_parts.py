"""QUARTER(ts), YEAR, MONTH, DAYOFMONTH, HOUR, MINUTE, SECOND and EXTRACT(<unit> FROM ts) in a join condition
(issue 40; Flink's IntervalJoinITCase joins on `QUARTER(t1.rowtime) = t2.a`). The reading is written by hand;
each field is then computed by the engine and by the DuckDB oracle from the one reading, on hand values whose
answers are worked out here from Flink's ExtractCallGen (Java's truncating `/` and `%` on epoch milliseconds:
before 1970 off a day boundary a timestamp takes the next day's date, and its clock fields are negative), NULL
included."""

from __future__ import annotations

import pytest

from converge.engine.model.errors import BadInputError, UnsupportedError
from converge.engine.model.flinksql import parse_query
from converge.engine.model.scenario import ChangeEvent
from converge.engine.runtime.local import run_scenario
from converge.oracle.duckdb_oracle import DuckDBOracle

K = "WITH ('connector' = 'kafka', 'format' = 'json')"
T = f"""CREATE TABLE a (k INT, ts TIMESTAMP(3), d DATE) {K};
CREATE TABLE b (k INT, v BIGINT) {K};
"""
DAY = "((a.ts) // 86400000) * 86400000"

# Flink SQL of the field -> the reading's model SQL, written by hand
READINGS = {
    "QUARTER(a.ts)": f"quarter(epoch_ms({DAY}))",
    "YEAR(a.ts)": f"year(epoch_ms({DAY}))",
    "MONTH(a.ts)": f"month(epoch_ms({DAY}))",
    "DAYOFMONTH(a.ts)": f"day(epoch_ms({DAY}))",
    "EXTRACT(QUARTER FROM a.ts)": f"quarter(epoch_ms({DAY}))",
    "EXTRACT(DAY FROM a.ts)": f"day(epoch_ms({DAY}))",
    "HOUR(a.ts)": "(((a.ts) % 86400000) // 3600000)",
    "EXTRACT(MINUTE FROM a.ts)": "(((a.ts) % 3600000) // 60000)",
    "SECOND(a.ts)": "(((a.ts) % 60000) // 1000)",
    "YEAR(a.d)": "year(epoch_ms(CAST(a.d AS BIGINT) * 86400000))",
    "EXTRACT(MONTH FROM a.d)": "month(epoch_ms(CAST(a.d AS BIGINT) * 86400000))",
}


def condition(field: str) -> str:
    return parse_query(T + f"SELECT a.k FROM a JOIN b ON a.k = b.k AND {field} IS NOT DISTINCT FROM b.v").join \
        .conditions[0]


@pytest.mark.parametrize("field", READINGS)
def test_the_reading_is_written_by_hand(field: str) -> None:
    assert condition(field) == f"(a.k = b.k) AND ({READINGS[field]} IS NOT DISTINCT FROM b.v)"


# epoch ms -> (year, quarter, month, day, hour, minute, second), worked out by hand from Flink's rules
LEAP_DAY = 951_782_400_000            # 2000-02-29 00:00:00.000
HAND = {
    0: (1970, 1, 1, 1, 0, 0, 0),
    1_700_000_000_123: (2023, 4, 11, 14, 22, 13, 20),   # 2023-11-14 22:13:20.123
    LEAP_DAY: (2000, 1, 2, 29, 0, 0, 0),
    LEAP_DAY - 1: (2000, 1, 2, 28, 23, 59, 59),           # 2000-02-28 23:59:59.999
    -1: (1970, 1, 1, 1, 0, 0, 0),                       # 1969-12-31 23:59:59.999: day 0 and clock -0 in Flink
    -3_661_000: (1970, 1, 1, 1, -1, -1, -1),            # 1969-12-31 22:58:59: -3661000 % 86400000 // 3600000
    -86_400_000: (1969, 4, 12, 31, 0, 0, 0),            # 1969-12-31 00:00:00, on a day boundary
    None: (None,) * 7,
}
FIELDS = ("YEAR(a.ts)", "QUARTER(a.ts)", "MONTH(a.ts)", "EXTRACT(DAY FROM a.ts)", "EXTRACT(HOUR FROM a.ts)",
          "MINUTE(a.ts)", "SECOND(a.ts)")


def joined(field: str, ms: int | None, want: int | None, date: int | None = None) -> tuple[set, set]:
    """The pairs the engine and the oracle join when a's field is compared with b.v = want and with want + 1."""
    q = parse_query(T + f"SELECT a.k FROM a JOIN b ON a.k = b.k AND {field} IS NOT DISTINCT FROM b.v")
    decoy = 1 if want is None else want + 1
    events = [ChangeEvent("b", "+I", (1, want)), ChangeEvent("b", "+I", (1, decoy)),
              ChangeEvent("a", "+I", (1, ms, date))]
    scenario = q.scenario(events)
    return set(run_scenario(scenario).final), set(DuckDBOracle().final(scenario))


@pytest.mark.parametrize("ms", list(HAND), ids=repr)
@pytest.mark.parametrize("index", range(len(FIELDS)), ids=lambda i: FIELDS[i])
def test_engine_and_duckdb_compute_flinks_field_on_hand_values(index: int, ms: int | None) -> None:
    want = HAND[ms][index]
    engine, oracle = joined(FIELDS[index], ms, want)
    assert engine == oracle == {(1, ms, None, 1, want)}


@pytest.mark.parametrize("field, days, want", [
    ("YEAR(a.d)", 11_016, 2000), ("QUARTER(a.d)", 11_016, 1), ("MONTH(a.d)", 11_016, 2),
    ("DAYOFMONTH(a.d)", 11_016, 29), ("YEAR(a.d)", -1, 1969), ("DAYOFMONTH(a.d)", -1, 31),
    ("EXTRACT(YEAR FROM a.d)", None, None)])
def test_the_fields_of_a_date(field: str, days: int | None, want: int | None) -> None:
    engine, oracle = joined(field, None, want, date=days)
    assert engine == oracle == {(1, None, days, 1, want)}


@pytest.mark.parametrize("sql, error", [
    ("EXTRACT(WEEK FROM a.ts)", UnsupportedError),      # other units: not modelled
    ("EXTRACT(MILLISECOND FROM a.ts)", UnsupportedError),
    ("HOUR(a.d)", UnsupportedError),                     # a clock field of a DATE
    ("QUARTER(a.k)", BadInputError),                     # not a time value
])
def test_other_fields_are_refused_by_meaning(sql: str, error: type) -> None:
    with pytest.raises((BadInputError, UnsupportedError)) as info:
        parse_query(T + f"SELECT a.k FROM a JOIN b ON a.k = b.k AND {sql} = b.v", "q.sql")
    assert type(info.value) is error, str(info.value)
