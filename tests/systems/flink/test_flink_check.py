"""`converge check --system flink` on queries with a WHERE clause: a filter on the join's output, and [NOT] EXISTS
as SEMI/ANTI steps.

These once ended in Hypothesis's "Inconsistent results from replaying a test case!": the first run request of
a fresh MiniCluster (check sends one case per request, with a limit of 31 s) paid the JVM's warm-up, about
21 s on a loaded two-core machine, and timed out under a little more load; Hypothesis then replayed the
example on the killed adapter and got a different error. Now the adapter warms up before its hello, and a
system's failure stops the property at once as one "system error". The check borrows the session's adapter.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from converge.cli.commands import check
from converge.cli.main import main
from converge.systems.adapter.client import AdapterSystem
from tests.support.paths import EXAMPLES
from tests.support.shared_adapter import Borrowed

pytestmark = [pytest.mark.flink, pytest.mark.xdist_group("flink")]

SHIPMENTS = ("CREATE TABLE shipments (shipment_id BIGINT, order_id BIGINT, carrier STRING)\n"
             "  WITH ('connector' = 'kafka', 'topic' = 'shipments', 'format' = 'json');\n")


def _query(where: str, *, shipments: bool = False) -> str:
    text = (EXAMPLES / "left_join_residual.sql").read_text()
    assert text.rstrip().endswith(";")
    tables, select = text.split("SELECT", 1)
    return tables + (SHIPMENTS if shipments else "") + "SELECT" + select.rstrip().rstrip(";") + f"\nWHERE {where};\n"


@pytest.mark.parametrize("where, shipments", [
    ("p.method IS NOT NULL AND o.amount > 1", False),
    # the subquery forms cost a job each on a MiniCluster: behind --run-slow (the default run keeps the filter)
    pytest.param("EXISTS (SELECT 1 FROM shipments s WHERE s.order_id = o.order_id)", True, marks=pytest.mark.slow),
    pytest.param("NOT EXISTS (SELECT 1 FROM shipments s WHERE s.order_id = p.order_id)", True,
                 marks=pytest.mark.slow),
])
def test_check_on_flink_with_a_where_clause_passes(flink_system: AdapterSystem, monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path, capsys, where: str, shipments: bool) -> None:
    opened: list[str | None] = []

    def borrow(spec: str | None, timeout: float | None = None) -> Borrowed:
        opened.append(spec)
        return Borrowed(flink_system)

    monkeypatch.setattr(check, "open_system_under_test", borrow)
    query = tmp_path / "where.sql"
    query.write_text(_query(where, shipments=shipments))
    code = main(["check", str(query), "--system", "flink", "--examples", "8", "--seed", "3", "--no-reports"])
    out = capsys.readouterr().out
    assert opened == ["flink"]
    assert "Inconsistent results" not in out
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines() if line.startswith("check/")}
    assert rows == {"check/reading_equals_query": "passed", "check/system_final_answer": "passed"}, out
    assert code == 0, out
