"""`converge verify` on a long capture: one wrong output record among thousands is found at its position."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from converge.cli.benches.verify_capture import QUERY, write_capture
from converge.engine.model.errors import DivergenceError
from converge.engine.model.flinksql import load_query
from converge.properties.verify_capture import verify_capture


@pytest.fixture(scope="module")
def capture(tmp_path_factory) -> tuple[dict[str, Path], Path]:
    sources, output, outputs = write_capture(tmp_path_factory.mktemp("capture"), 1500)
    assert outputs > 2000  # many output records around the one changed
    return sources, output


def test_the_engines_long_capture_passes(capture) -> None:
    sources, output = capture
    result = verify_capture(load_query(QUERY), sources, output)
    assert (result.mode, result.input_events) == ("prefix", 1500)
    assert result.output_records == len(output.read_text().splitlines())


@pytest.mark.parametrize("field, value", [("amount", "0.01"), ("carrier", "nobody")])
def test_one_wrong_output_record_is_found_at_its_position(capture, tmp_path: Path, field: str, value: str) -> None:
    sources, output = capture
    lines = output.read_text().splitlines()
    n = len(lines) * 2 // 3
    while json.loads(lines[n])["op"] != "+I" or json.loads(lines[n])[field] is None:
        n += 1
    record = json.loads(lines[n])
    record[field] = value
    lines[n] = json.dumps(record)
    wrong = tmp_path / "output.jsonl"
    wrong.write_text("\n".join(lines) + "\n")
    with pytest.raises(DivergenceError) as info:
        verify_capture(load_query(QUERY), sources, wrong)
    message = str(info.value)
    assert f"after input record {record['pos']} (pos {record['pos']}," in message
    assert f"(output lines [{n + 1}" in message and "1 extra" in message and "1 missing" in message


def test_the_verify_bench_sets_its_figures_beside_the_budgets_and_the_machine() -> None:
    from converge.cli.benches.verify_capture import verify_speed
    out = verify_speed(400)
    assert (out["mode"], out["input_records"], out["budget_peak_rss_mb"]) == ("prefix", 400, 2048.0)
    assert out["budget_seconds"] == 0.036 and out["output_records"] > 400  # 90 s for 1M, held to its share
    assert out["peak_rss_mb"] > 0 and out["machine"].startswith(f"{os.cpu_count()} cores, load 1/5/15 min ")


def test_the_prefix_bench_draws_the_same_examples_for_its_ceiling() -> None:
    from converge.cli.benches.regular import _prefix_property_speed
    from converge.reports.options import BenchConfig
    out = _prefix_property_speed(BenchConfig(examples=4, rounds=1), "packed")
    assert out["budget_ratio"] == 0.5 and out["examples"] == 4
    assert out["ceiling_examples_per_second"] > 0 and out["ratio_to_ceiling"] > 0
