"""Every query in docs/examples/ is read, planned and checked by `converge check` (issue 40): one example per form
the reader reads (an interval join with a residual, a comma join, IS NOT TRUE, an equality of time attributes, an
empty interval window, the file's own planner SETs, a processing-time interval join over `AS PROCTIME()`, one
behind a view passing the attribute on, NOT IN's null-aware anti join, computed rowtimes `TO_TIMESTAMP_LTZ(ms, 3)`,
rowtimes parsed from text `TO_TIMESTAMP(s)` or from epoch seconds), each with the reading written by hand here."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from converge.cli.commands.check import run_check
from converge.cli.mutant_catalog import READER_MUTANTS, applied
from converge.engine.model.flinksql import load_query
from converge.properties.query_check import CheckOptions, query_strategy
from converge.properties.query_plan import with_file_options
from converge.properties.query_reading import reading_equals_query
from tests.support.paths import EXAMPLES

QUERIES = sorted(EXAMPLES.glob("*.sql"))

# example -> (join types, conditions, interval bounds or None, where), written by hand from the SQL
READINGS = {
    "interval_join_residual": (("left",), ("(o.order_id = s.order_id) AND (s.shipped < o.amount)",),
                               (-3_600_000, 0), None),
    "comma_join": (("inner", "inner"), ("(o.customer_id = c.customer_id) AND (o.amount > 10)",
                                        "(r.region_id = c.region_id)"), None, None),
    "is_not_true": (("inner",), ("(b.item = l.item) AND (NOT (((b.price > l.max_price)) IS TRUE))",), None, None),
    "time_equality": (("inner",), ("(c.user_id = v.user_id)",), (0, 0), None),
    # s.t - o.t in [3000, 1000], so o.t - s.t in [-1000, -3000]: the lower bound is above the upper
    "empty_window": (("left",), ("(o.order_id = s.order_id)",), (-1000, -3000), None),
    "planner_sets": (("left",), ("(o.customer_id = c.customer_id)",), None, None),
    # o.order_time - s.checked in [0, 3000]; sku names item, the rowtimes name ms (no Calc)
    "computed_rowtime": (("left",), ("(o.item = s.item) AND (s.level < o.qty)",), (0, 3000), None),
    # p.ts BETWEEN c.ts AND c.ts + 5 s: c.ts - p.ts in [-5000, 0]; each ts parsed from text in a Calc
    "text_rowtime": (("left",), ("(c.user_id = p.user_id) AND (p.amount > 10)",), (-5000, 0), None),
    # r.ts BETWEEN a.ts - 2 s AND a.ts + 2 s: a.ts - r.ts in [-2000, 2000]; r.ts is epoch seconds * 1000
    "seconds_rowtime": (("right",), ("(a.sensor = r.sensor)",), (-2000, 2000), None),
    # c.pt BETWEEN i.pt - 2 s AND i.pt + 5 s: c.pt - i.pt in [-2000, 5000], each row's time its arrival
    "proctime_interval_join": (("left",), ("(c.ad_id = i.ad_id) AND (i.slot <> 'footer')",), (-2000, 5000), None),
    # the view passes pt on unchanged: c.pt - i.pt in [-1000, 4000], the join on the view's ad_id
    "proctime_view_interval_join": (("inner",), ("(c.ad_id = i.ad_id)",), (-1000, 4000), None),
    # FlinkSubQueryRemoveRule's null-aware anti join: the equality OR its being NULL, and the subquery's WHERE
    "not_in_null_aware": (("inner", "anti"), ("(o.customer_id = c.customer_id)",
                                               "(((o.order_id = r.order_id)) OR (((o.order_id = r.order_id)) IS NULL)) "
                                               "AND (r.reason <> 'mistake')"), None, None),
}


def test_every_form_has_its_example() -> None:
    assert set(READINGS) <= {p.stem for p in QUERIES}


@pytest.mark.parametrize("name", sorted(READINGS))
def test_the_example_reads_as_written_by_hand(name: str) -> None:
    q = load_query(EXAMPLES / f"{name}.sql")
    types, conditions, bounds, where = READINGS[name]
    iv = q.join.interval
    assert (q.join.types, q.join.conditions, None if iv is None else (iv.lower_ms, iv.upper_ms), q.where_sql) == \
        (types, conditions, bounds, where)


def test_the_planner_sets_example_runs_a_mini_batch_join_with_the_files_ttl() -> None:
    options, lines = with_file_options(load_query(EXAMPLES / "planner_sets.sql"), CheckOptions())
    assert (options.mini_batch_size, options.mini_batch_latency_ms, options.ttl_ms) == (4, 2000, 3_600_000)
    assert len(lines) == 2


@pytest.mark.parametrize("path", QUERIES, ids=lambda p: p.stem)
def test_the_two_paths_agree_on_every_example(path: Path) -> None:
    query = load_query(path)
    options, _ = with_file_options(query, CheckOptions())

    @settings(max_examples=10, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(query_strategy(query, options.config(ttl=False)))
    def agree(scenario) -> None:
        reading_equals_query(query, scenario)

    agree()


@pytest.mark.slow
@pytest.mark.parametrize("path", QUERIES, ids=lambda p: p.stem)
def test_converge_check_passes_every_example(path: Path) -> None:
    query = load_query(path)
    options, settings_ = with_file_options(query, CheckOptions(examples=5, seed=1))
    lines: list[str] = []
    code = run_check(query, options, echo=lines.append, settings=settings_)
    out = "\n".join(lines)
    assert code == 0, out
    rows = [line.split() for line in out.splitlines() if "/" in line.split(" ")[0] and "  " in line]
    assert rows and all(r[1] in ("passed", "not") for r in rows), out


def test_a_dropped_interval_residual_is_caught_on_its_example() -> None:
    """The reader slip that drops an interval join's conditions besides its time bounds: the second path sees it."""
    mutant = next(m for m in READER_MUTANTS if m.name == "interval_residual_dropped")
    with applied(mutant):
        query = load_query(EXAMPLES / "interval_join_residual.sql")
        lines: list[str] = []
        code = run_check(query, CheckOptions(examples=10, seed=1), echo=lines.append)
    out = "\n".join(lines)
    assert code == 3 and "converge misread your query" in out, out
