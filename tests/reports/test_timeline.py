"""The failure report's timeline picture (issue 28): read from the figure's axes, legend and texts, not pixels."""

from __future__ import annotations

from pathlib import Path

import pytest

from converge import load_scenario, run_scenario, scenario_from_dict
from tests.support.paths import ROOT

pytest.importorskip("matplotlib")

from converge.reports.timeline import draw_timeline, time_domains, timeline_figure  # noqa: E402

RED = (0.8392156862745098, 0.15294117647058825, 0.1568627450980392, 1.0)  # #d62728


def _regular(**config: object):
    return scenario_from_dict({
        "name": "one key", "config": dict(config),
        "inputs": [{"name": "a", "columns": [["k", "BIGINT"], ["x", "BIGINT"]], "changelog_mode": "retract"},
                   {"name": "b", "columns": [["k", "BIGINT"], ["y", "BIGINT"]], "changelog_mode": "insert_only"}],
        "join": {"inputs": ["a", "b"], "types": ["left"], "conditions": ["a.k = b.k"]},
        "events": [{"input": "a", "kind": "+I", "row": [1, 1]}, {"input": "b", "kind": "+I", "row": [1, 2]},
                   {"input": "a", "kind": "-U", "row": [1, 1]}, {"input": "a", "kind": "+U", "row": [1, 5]}]})


def _texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def test_a_join_without_time_has_no_time_panel_and_its_legend_sits_outside_the_data() -> None:
    s = _regular()
    assert time_domains(s) == (False, False)
    fig = timeline_figure(s, event_index=3, output_per_event=run_scenario(s).per_event)
    (top,) = fig.axes
    legend = top.get_legend()
    fig.canvas.draw()
    assert legend.get_window_extent().x0 >= top.get_window_extent().x1  # right of the panel, not over the data
    labels = [t.get_text() for t in legend.get_texts()]
    assert "+I insert" in labels and "-U update (old row retracted)" in labels
    assert all(t.get_fontsize() >= 8 for t in legend.get_texts())
    assert not any("watermark" in label for label in labels)  # nothing of the kind in this case


def test_the_output_lane_says_what_was_emitted_not_counts() -> None:
    s = _regular()
    fig = timeline_figure(s, event_index=3, output_per_event=run_scenario(s).per_event)
    texts = _texts(fig.axes[0])
    assert "-D 1,1,∅,∅\n+I 1,1,1,2" in texts  # event 1: b's row replaces the NULL-padded row
    assert "+I 1,5,1,2" in texts
    assert not any(t.startswith("+1/-") for t in texts)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["input a", "input b", "output"]
    without = timeline_figure(s, event_index=3).axes[0]  # the evidence has no engine output: the lane says so
    assert without.get_yticklabels()[-1].get_text() == "output\n(not in the\nevidence)"


def test_the_diverging_row_is_named_and_circled_where_the_engine_emitted_it() -> None:
    s = _regular()
    fig = timeline_figure(s, event_index=3, output_per_event=run_scenario(s).per_event,
                          diverging_row=("+", (1, 5, 1, 2), 1))
    top = fig.axes[0]
    assert "first differing row after event 3:\n[1, 5, 1, 2]\n(the engine has an extra one)" in _texts(top)
    rings = [c for c in top.collections if list(c.get_sizes()) == [260]]
    assert len(rings) == 1 and tuple(rings[0].get_edgecolor()[0]) == pytest.approx(RED)
    assert list(rings[0].get_offsets()[0]) == [3, 2]  # event 3, the output lane (above inputs a and b)


def test_panels_only_for_the_time_domains_the_case_uses(tmp_path: Path) -> None:
    interval = load_scenario(ROOT / "tests/scenarios/interval/allowed_lateness_keeps_rows.json")
    assert time_domains(interval) == (False, True)
    top, bottom = timeline_figure(interval, output_per_event=run_scenario(interval).per_event).axes
    labels = bottom.get_legend_handles_labels()[1]
    assert "processing time" not in labels and "watermark of a" in labels and "event time of b's rows" in labels
    with_ttl = _regular(state_ttl_ms=5)
    assert time_domains(with_ttl) == (True, False)
    _, bottom = timeline_figure(with_ttl).axes
    assert bottom.get_legend_handles_labels()[1] == ["processing time"]
    path = draw_timeline(with_ttl, tmp_path / "t.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
