"""A timeline picture of a counterexample: what each input did, when, and where the output went wrong.

Top panel: one lane per input and one for the output, x = event position. An
input's marker shows the row kind and is labelled with the row; the output
lane lists what the join emitted at that event (rows and output watermarks).
Watermarks, idle marks and processing-time advances are drawn where they
happen; a red dashed line marks the event where the divergence appears, and a
red box names the first row on which the engine and the expected answer
differ (the failure's evidence), circling it in the output lane where it was
emitted. The legend sits outside the data, right of the panels.

Bottom panel, only for the time domains the case uses: processing time (when
the case advances it or has a TTL or a processing-time interval), each input's
watermark and the event time of rows that carry one. A join without time has
no bottom panel. Drawn with matplotlib's Agg backend, so no display is needed.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from converge.engine.model.files import replacing
from converge.engine.model.scenario import ChangeEvent, IdleEvent, ProcessingTimeEvent, Scenario, WatermarkEvent

_KIND_STYLE = {  # marker, colour, what the kind means
    "+I": ("^", "#2ca02c", "+I insert"),
    "+U": ("^", "#1f77b4", "+U update (new row)"),
    "-U": ("v", "#ff7f0e", "-U update (old row retracted)"),
    "-D": ("v", "#d62728", "-D delete"),
}
_WATERMARK = "#9467bd"
_DIVERGE = "#d62728"
_LABEL_LIMIT = 40  # events; beyond this the row labels would only be ink
_OUTPUT_LINES = 2  # emitted items listed per event; the rest are counted
_FONT = 7.5
_LEGEND_FONT = 8.5

INSTALL_HINT = 'pip install "converge[pictures]"'

#: (sign, row, n) of bag_diff: "+" the engine has n more of `row` than expected, "-" n fewer
DivergingRow = tuple[str, Sequence[Any], int]


def pictures_available() -> bool:
    """matplotlib is an optional dependency (the `pictures` extra): without it, reports have no picture."""
    return importlib.util.find_spec("matplotlib") is not None


def _short(row: Sequence[object], width: int = 18) -> str:
    text = ",".join("∅" if v is None else str(v) for v in row)
    return text if len(text) <= width else text[:width - 1] + "…"


def time_domains(scenario: Scenario) -> tuple[bool, bool]:
    """(processing time, event time): whether the case uses each, so the picture draws a panel for it."""
    iv = scenario.join.interval
    processing = (scenario.config.state_ttl_ms is not None or (iv is not None and iv.time == "processing")
                  or any(isinstance(e, ProcessingTimeEvent) and e.processing_time != 0 for e in scenario.events))
    event = (any(isinstance(e, WatermarkEvent) for e in scenario.events)
             or any(s.time_column for s in scenario.inputs) or (iv is not None and iv.time == "event"))
    return processing, event


def _emitted_label(items: Sequence[object]) -> str:
    """What the join emitted at one event: its first items (rows with their kind, output watermarks), the rest
    counted."""
    shown = [f"{c.kind} {_short(c.row)}" if hasattr(c, "kind") else f"WM {getattr(c, 'watermark', '?')}"
             for c in items[:_OUTPUT_LINES]]
    if len(items) > _OUTPUT_LINES:
        shown.append(f"+{len(items) - _OUTPUT_LINES} more")
    return "\n".join(shown)


def _diverging_text(event_index: int | None, diverging: DivergingRow) -> str:
    sign, row, n = diverging
    where = f"after event {event_index}" if event_index is not None else "in the final answer"
    times = f" {n} times" if n > 1 else ""
    has = "has an extra" if sign == "+" else "lacks"
    return f"first differing row {where}:\n{list(row)}\n(the engine {has} one{times})"


def timeline_figure(scenario: Scenario, *, event_index: int | None = None,
                    output_per_event: Sequence[Sequence[object]] | None = None,
                    diverging_row: DivergingRow | None = None) -> Any:
    """The timeline as a matplotlib Figure (draw_timeline writes it; a test can read its axes and legend)."""
    # matplotlib takes about 0.4 s to import; its OO API keeps no global pyplot state
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # lazy: matplotlib only when a picture is drawn
    from matplotlib.figure import Figure  # lazy: matplotlib only when a picture is drawn
    from matplotlib.lines import Line2D  # lazy: matplotlib only when a picture is drawn
    from matplotlib.ticker import MaxNLocator  # lazy: matplotlib only when a picture is drawn

    events = scenario.events
    # one lane per stream the events name: an input that reads another's stream (`source`) has none of its own
    names = [s.name for s in scenario.inputs if s.source is None]
    readers = {nm: [s.name for s in scenario.inputs if s.source == nm] for nm in names}
    lanes = {n: i for i, n in enumerate(names)}
    out_lane = len(names)
    n = len(events)
    label = n <= _LABEL_LIMIT
    processing, event_time = time_domains(scenario)
    with_times = processing or event_time
    fig = Figure(figsize=(min(0.55 * n + 3.5, 20.0) + 3.5, 6.4 if with_times else 4.6), dpi=100,
                 layout="constrained")
    FigureCanvasAgg(fig)
    if with_times:
        top, bottom = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    else:
        top, bottom = fig.subplots(1, 1), None

    time_cols = {s.name: (s.index_of(s.time_column) if s.time_column else None) for s in scenario.inputs}
    now = 0
    proc: list[int] = []
    wms: dict[str, list[tuple[int, int]]] = {nm: [] for nm in names}
    event_times: dict[str, list[tuple[int, object]]] = {nm: [] for nm in names}
    for i, e in enumerate(events):
        if isinstance(e, ProcessingTimeEvent):
            now = e.processing_time
            top.axvline(i, color="#999999", lw=0.9, ls=":")
            top.annotate(f"t={now}", (i, -0.55), fontsize=_FONT, color="#666666", ha="center")
        elif isinstance(e, ChangeEvent):
            marker, colour, _ = _KIND_STYLE.get(e.kind, ("o", "black", ""))
            y = lanes[e.input]
            top.scatter([i], [y], marker=marker, color=colour, s=80, zorder=3)
            if label:
                top.annotate(f"{e.kind} {_short(e.row)}", (i, y), xytext=(3, 8), textcoords="offset points",
                             fontsize=_FONT, rotation=30)
            tc = time_cols.get(e.input)
            if tc is not None and e.row[tc] is not None:
                event_times[e.input].append((i, e.row[tc]))
        elif isinstance(e, WatermarkEvent):
            y = lanes[e.input]
            top.scatter([i], [y], marker="|", color=_WATERMARK, s=300, zorder=3)
            top.annotate(f"wm {e.watermark}", (i, y), xytext=(3, -13), textcoords="offset points", fontsize=_FONT,
                         color=_WATERMARK)
            wms[e.input].append((i, e.watermark))
        elif isinstance(e, IdleEvent):
            top.scatter([i], [lanes[e.input]], marker="x", color="#7f7f7f", s=60, zorder=3)
        proc.append(now)

    if output_per_event is not None:
        for i, items in enumerate(output_per_event):
            if not items:
                continue
            changes = [c for c in items if hasattr(c, "kind")]
            if changes:
                top.scatter([i], [out_lane], marker="s", color="#444444", s=45, zorder=3)
            else:  # only output watermarks
                top.scatter([i], [out_lane], marker="|", color=_WATERMARK, s=300, zorder=3)
            if label:
                top.annotate(_emitted_label(items), (i, out_lane), xytext=(4, 6), textcoords="offset points",
                             fontsize=_FONT, va="bottom")
            if (diverging_row is not None and i == event_index
                    and any(tuple(getattr(c, "row", ())) == tuple(diverging_row[1]) for c in changes)):
                top.scatter([i], [out_lane], marker="o", s=260, facecolors="none", edgecolors=_DIVERGE,
                            linewidths=2, zorder=4)

    handles = [Line2D([], [], ls="", marker=m, color=c, markersize=8, label=text)
               for m, c, text in _KIND_STYLE.values()]
    if any(isinstance(e, WatermarkEvent) for e in events) or any(
            not hasattr(c, "kind") for items in output_per_event or () for c in items):
        handles.append(Line2D([], [], ls="", marker="|", color=_WATERMARK, markersize=12,
                              label="watermark (wm N: an input's; WM N: the output's)"))
    if any(isinstance(e, IdleEvent) for e in events):
        handles.append(Line2D([], [], ls="", marker="x", color="#7f7f7f", markersize=8, label="input marked idle"))
    if any(isinstance(e, ProcessingTimeEvent) for e in events):
        handles.append(Line2D([], [], ls=":", color="#999999", label="processing time advances (t=N ms)"))
    if output_per_event is not None:
        handles.append(Line2D([], [], ls="", marker="s", color="#444444", markersize=7,
                              label=f"output: what the join emitted at\nthe event (first {_OUTPUT_LINES}, the rest "
                                    "counted)"))
    if event_index is not None:
        handles.append(Line2D([], [], ls="--", color=_DIVERGE, label="the event where it diverges"))
    if diverging_row is not None:
        handles.append(Line2D([], [], ls="", marker="o", markerfacecolor="none", markeredgecolor=_DIVERGE,
                              markersize=10, label="the first differing row, where\nthe engine emitted it"))
    top.legend(handles=handles, fontsize=_LEGEND_FONT, loc="upper left", bbox_to_anchor=(1.01, 1.0),
               borderaxespad=0, frameon=False)
    output_name = "output" if output_per_event is not None else "output\n(not in the\nevidence)"
    top.set_yticks(list(range(len(names) + 1)), [f"input {nm}" + (f" (read by {', '.join(readers[nm])})"
                                                                   if readers[nm] else "") for nm in names]
                   + [output_name])
    top.set_ylim(-0.8, len(names) + (1.9 if diverging_row is not None else 1.1))
    top.set_title(f"{scenario.name}: events per input, output per event", fontsize=10)
    top.grid(axis="y", color="#eeeeee")

    if bottom is not None:
        xs = list(range(n))
        if processing:
            bottom.step(xs, proc, where="post", color="#555555", label="processing time")
        for nm in names:
            if wms[nm]:
                pts = wms[nm] + [(n - 1, wms[nm][-1][1])]
                bottom.step([p for p, _ in pts], [w for _, w in pts], where="post", label=f"watermark of {nm}")
            if event_times[nm]:
                bottom.scatter([p for p, _ in event_times[nm]], [t for _, t in event_times[nm]], s=16,
                               label=f"event time of {nm}'s rows")
        lo, hi = bottom.get_ylim()
        if hi - lo < 2:
            bottom.set_ylim(lo - 1, hi + 1)
        bottom.yaxis.set_major_locator(MaxNLocator(integer=True))
        bottom.set_ylabel("time (ms)", fontsize=9)
        if bottom.get_legend_handles_labels()[0]:
            bottom.legend(fontsize=_LEGEND_FONT, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0,
                          frameon=False)
    last = bottom if bottom is not None else top
    last.xaxis.set_major_locator(MaxNLocator(integer=True))
    last.set_xlabel("event position (processing order)", fontsize=9)

    if event_index is not None:
        for ax in (top, bottom):
            if ax is not None:
                ax.axvline(event_index, color=_DIVERGE, lw=1.6, ls="--")
    if diverging_row is not None:
        x = event_index if event_index is not None else max(n - 1, 0)
        top.annotate(_diverging_text(event_index, diverging_row), (x, len(names) + 1.8), color=_DIVERGE,
                     fontsize=_FONT + 0.5, ha="right" if x > n / 2 else "left", va="top",
                     xytext=(-6 if x > n / 2 else 6, 0), textcoords="offset points",
                     bbox={"boxstyle": "round", "fc": "#fff3f3", "ec": _DIVERGE})
    elif event_index is not None:
        top.annotate("diverges", (event_index, len(names) + 0.75), color=_DIVERGE, fontsize=9, ha="center")
    top.set_xlim(-0.7, max(n - 0.3, 0.7))
    return fig


def draw_timeline(scenario: Scenario, path: Path, *, event_index: int | None = None,
                  output_per_event: Sequence[Sequence[object]] | None = None,
                  diverging_row: DivergingRow | None = None) -> Path:
    """Write the timeline PNG of `scenario` to `path` (whole or not at all); `output_per_event` adds the output
    lane, `diverging_row` (the first of bag_diff(engine, expected)) the row the failure is about."""
    fig = timeline_figure(scenario, event_index=event_index, output_per_event=output_per_event,
                          diverging_row=diverging_row)
    with replacing(path) as tmp:  # whole or not at all: a full disk leaves no half picture
        fig.savefig(tmp, format="png")
    return Path(path)
