"""A timeline picture of a counterexample: what each input did, when, and where the output went wrong.

Top panel: one lane per input (and one for the output), x = event position,
a marker per change (colour and direction by row kind), watermarks and idle
marks; a red line where the divergence appears. Bottom panel: processing
time, each input's watermark and the event time of rows that carry one,
against the same positions. Drawn with matplotlib's Agg backend, so no
display is needed.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Sequence

from converge.engine.model.changelog import ACCUMULATE_KINDS, RETRACT_KINDS
from converge.engine.model.files import replacing
from converge.engine.model.scenario import ChangeEvent, IdleEvent, ProcessingTimeEvent, Scenario, WatermarkEvent

_KIND_STYLE = {  # marker, colour
    "+I": ("^", "#2ca02c"),
    "+U": ("^", "#1f77b4"),
    "-U": ("v", "#ff7f0e"),
    "-D": ("v", "#d62728"),
}
_LABEL_LIMIT = 40  # events; beyond this the row labels would only be ink


INSTALL_HINT = 'pip install "converge[pictures]"'


def pictures_available() -> bool:
    """matplotlib is an optional dependency (the `pictures` extra): without it, reports have no picture."""
    return importlib.util.find_spec("matplotlib") is not None


def _short(row: Sequence[object]) -> str:
    text = ",".join("∅" if v is None else str(v) for v in row)
    return text if len(text) <= 18 else text[:17] + "…"


def draw_timeline(scenario: Scenario, path: Path, *, event_index: int | None = None,
                  output_per_event: Sequence[Sequence[object]] | None = None) -> Path:
    """Write the timeline PNG of `scenario` to `path` (whole or not at all); `output_per_event` adds the output
    lane."""
    # matplotlib takes about 0.4 s to import; its OO API keeps no global pyplot state
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # lazy: matplotlib only when a picture is drawn
    from matplotlib.figure import Figure  # lazy: matplotlib only when a picture is drawn

    events = scenario.events
    names = [s.name for s in scenario.inputs]
    lanes = {n: i for i, n in enumerate(names)}
    out_lane = len(names)
    n = len(events)
    label = n <= _LABEL_LIMIT
    fig = Figure(figsize=(max(6.0, min(0.42 * n + 2.5, 18.0)), 5.2), dpi=100)
    FigureCanvasAgg(fig)
    top, bottom = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 2]})

    time_cols = {s.name: (s.index_of(s.time_column) if s.time_column else None) for s in scenario.inputs}
    now = 0
    proc: list[int] = []
    wms: dict[str, list[tuple[int, int]]] = {nm: [] for nm in names}
    event_times: dict[str, list[tuple[int, object]]] = {nm: [] for nm in names}
    for i, e in enumerate(events):
        if isinstance(e, ProcessingTimeEvent):
            now = e.processing_time
            top.axvline(i, color="#bbbbbb", lw=0.8, ls=":")
        elif isinstance(e, ChangeEvent):
            marker, colour = _KIND_STYLE.get(e.kind, ("o", "black"))
            y = lanes[e.input]
            top.scatter([i], [y], marker=marker, color=colour, s=70, zorder=3)
            if label:
                top.annotate(f"{e.kind} {_short(e.row)}", (i, y), xytext=(2, 7), textcoords="offset points",
                             fontsize=6.5, rotation=35)
            tc = time_cols.get(e.input)
            if tc is not None and e.row[tc] is not None:
                event_times[e.input].append((i, e.row[tc]))
        elif isinstance(e, WatermarkEvent):
            y = lanes[e.input]
            top.scatter([i], [y], marker="|", color="#9467bd", s=300, zorder=3)
            top.annotate(f"wm {e.watermark}", (i, y), xytext=(2, -12), textcoords="offset points", fontsize=6.5,
                         color="#9467bd")
            wms[e.input].append((i, e.watermark))
        elif isinstance(e, IdleEvent):
            top.scatter([i], [lanes[e.input]], marker="x", color="#7f7f7f", s=50, zorder=3)
        proc.append(now)

    if output_per_event is not None:
        for i, items in enumerate(output_per_event):
            kinds = [getattr(c, "kind", None) for c in items]
            plus = sum(k in ACCUMULATE_KINDS for k in kinds)
            minus = sum(k in RETRACT_KINDS for k in kinds)
            if plus or minus:
                top.scatter([i], [out_lane], marker="s", color="#444444", s=30 + 12 * (plus + minus), zorder=3)
                top.annotate(f"+{plus}/-{minus}", (i, out_lane), xytext=(2, 7), textcoords="offset points",
                             fontsize=6.5)
    from matplotlib.lines import Line2D  # lazy: matplotlib only when a picture is drawn
    from matplotlib.ticker import MaxNLocator  # lazy: matplotlib only when a picture is drawn

    handles = [Line2D([], [], ls="", marker=m, color=c, label=k) for k, (m, c) in _KIND_STYLE.items()]
    top.legend(handles=handles, fontsize=6.5, loc="upper left", ncols=4, frameon=False)
    top.set_yticks(list(range(len(names) + 1)), names + ["output"])
    top.set_ylim(-0.6, len(names) + 0.9)
    top.set_title(f"{scenario.name}: events per input", fontsize=9)
    top.grid(axis="y", color="#eeeeee")

    xs = list(range(n))
    bottom.step(xs, proc, where="post", color="#555555", label="processing time")
    for nm in names:
        if wms[nm]:
            pts = wms[nm] + [(n - 1, wms[nm][-1][1])]
            bottom.step([p for p, _ in pts], [w for _, w in pts], where="post", label=f"watermark {nm}")
        if event_times[nm]:
            bottom.scatter([p for p, _ in event_times[nm]], [t for _, t in event_times[nm]], s=14,
                           label=f"event time {nm}")
    lo, hi = bottom.get_ylim()
    if hi - lo < 2:
        bottom.set_ylim(min(proc, default=0) - 1, max(proc, default=0) + 1)
    bottom.xaxis.set_major_locator(MaxNLocator(integer=True))
    bottom.yaxis.set_major_locator(MaxNLocator(integer=True))
    bottom.set_ylabel("time (ms)", fontsize=8)
    bottom.set_xlabel("event position (processing order)", fontsize=8)
    bottom.legend(fontsize=6.5, loc="upper left")

    if event_index is not None:
        for ax in (top, bottom):
            ax.axvline(event_index, color="#d62728", lw=1.6, ls="--")
        top.annotate("diverges", (event_index, len(names) + 0.55), color="#d62728", fontsize=8, ha="center")
    top.set_xlim(-0.7, max(n - 0.3, 0.7))
    fig.tight_layout()
    with replacing(path) as tmp:  # whole or not at all: a full disk leaves no half picture
        fig.savefig(tmp, format="png")
    return Path(path)
