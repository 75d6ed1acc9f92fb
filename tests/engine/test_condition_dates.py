"""The one date-part shape a condition holds, `year | quarter | month | day(epoch_ms(<integer>))`: the engine's
calendar (engine/condition_dates.py) on hand values, and every other use of epoch_ms or a date part refused by the
engine and by the oracle's guard alike."""

from __future__ import annotations

import pytest

from converge.engine.condition_dates import civil, date_part
from converge.engine.model.errors import BadInputError
from converge.engine.model.scenario_json import scenario_from_dict
from converge.engine.runtime.local import run_scenario
from converge.oracle.duckdb_oracle import DuckDBOracle


@pytest.mark.parametrize("days, date", [
    (0, (1970, 1, 1)), (-1, (1969, 12, 31)), (11_016, (2000, 2, 29)), (11_017, (2000, 3, 1)),
    (-25_508, (1900, 3, 1)), (-25_509, (1900, 2, 28)),      # 1900 is no leap year
    (-719_528, (0, 1, 1)), (-719_529, (-1, 12, 31)),        # year 0 is 1 BC (astronomical years, as DuckDB)
    (2_932_896, (9999, 12, 31)),
])
def test_the_proleptic_gregorian_date_of_a_day_number(days: int, date: tuple[int, int, int]) -> None:
    assert civil(days) == date


def test_a_date_part_floors_a_negative_millisecond_and_refuses_what_duckdb_cannot_convert() -> None:
    assert [date_part(p, -1) for p in ("year", "quarter", "month", "day")] == [1969, 4, 12, 31]
    assert date_part("year", 9_223_372_036_854_775) == 294_247
    with pytest.raises(BadInputError, match="out of range"):
        date_part("year", 9_223_372_036_854_776)


def scenario(condition: str) -> object:
    return scenario_from_dict({
        "inputs": [{"name": "a", "columns": [["k", "BIGINT"], ["t", "BIGINT"]]}, {"name": "b", "columns": [["k", "BIGINT"]]}],
        "join": {"inputs": ["a", "b"], "types": ["inner"], "conditions": [condition]},
        "events": [{"input": "b", "kind": "+I", "row": [4]}, {"input": "a", "kind": "+I", "row": [1, -1]}]})


def test_engine_and_oracle_agree_on_a_quarter_before_1970() -> None:
    s = scenario("quarter(epoch_ms(a.t)) = b.k")
    assert run_scenario(s).final == DuckDBOracle().final(s) == {(1, -1, 4): 1}


@pytest.mark.parametrize("condition", ["epoch_ms(a.t) IS NOT NULL", "quarter(a.t) = b.k",
                                       "year(epoch_ms(epoch_ms(a.t))) = b.k", "month(epoch_ms(a.t, 1)) = b.k"])
def test_any_other_shape_is_refused_by_both(condition: str) -> None:
    s = scenario(condition)
    for run in (run_scenario, DuckDBOracle().final):
        with pytest.raises(BadInputError):
            run(s)
