"""Rating-history charts: PNG with matplotlib's Agg backend (no display, safe in worker threads),
SVG from a template (`chart_svg`: the same drawing in a few ms, where matplotlib takes some 95).

A `Figure` is built directly (not through pyplot), so no global state is touched. The rating is
a step line (a list's rating holds until the next list); each rated tournament is a marker at
its last day and the player's Ro there, named in a hover title (`<title>` in the SVG, the
`Hotspot`s that a page lays over the PNG with `title=`); the 1 March 2024 adjustment (FIDE
B.02 (2024), R + 0.4 × (2000 − R) under 2000) is a step of its own, in another colour, labelled.
A chart may hold a second rating line (`Series`, `render_series`): the same player under another
side (`elopipe player --compare`), dashed, in its own colours, both named in a legend and, in the
SVG, in a `<title>` on each line.
"""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

from elopipe.publish.chart_data import (
    MAX_NAMED,
    MIN_SPAN,
    STYLES,
    Chart,
    ChartEvent,
    ChartStep,
    Hotspot,
    Series,
    Style,
    x_range,
)
from elopipe.publish.chart_svg import svg_chart

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.text import Annotation


def render_series(series: list[Series], title: str, fmt: str = "png") -> Chart:
    """One or two rating lines (`Series`) on one chart, as PNG or SVG bytes plus the markers'
    places: each line a step line (rating points per list date; a list where the player was
    unrated leaves a gap) with its markers and labelled steps; labelled lines are named in a
    legend. In SVG each marker, step and labelled line carries a `<title>` (a hover title). The
    `Hotspot`s are every line's markers, in order. `fmt` is 'png' or 'svg'. Raises ValueError for
    another format, for no line or more than two, or a line whose dates and ratings differ in
    length."""
    if fmt not in {"png", "svg"}:
        raise ValueError(f"chart format must be png or svg, not {fmt!r}")
    _check(series)
    if fmt == "svg":  # a few ms from a template, where matplotlib takes some 95 (chart_svg)
        return svg_chart(series, title, STYLES)
    fig = series_figure(series, title)
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt)
    return Chart(buf.getvalue(), _hotspots(fig, [e for s in series for e in s.events]))


def _check(series: list[Series]) -> None:
    if not 1 <= len(series) <= len(STYLES):
        raise ValueError(f"a chart draws 1 to {len(STYLES)} rating lines, not {len(series)}")
    if any(len(s.dates) != len(s.ratings) for s in series):
        raise ValueError("dates and ratings differ in length")


def _hotspots(fig: Figure, events: list[ChartEvent]) -> list[Hotspot]:
    """The places of `events`' markers on the drawn figure, in percent from the top-left."""
    if not events:
        return []
    ax = fig.axes[0]
    width, height = fig.bbox.width, fig.bbox.height
    out = []
    for e in events:
        x, y = ax.transData.transform((_num(e.day), e.rating))
        out.append(Hotspot(float(100 * x / width), float(100 * (1 - y / height)), e.title))
    return out


def _num(day: dt.date) -> float:
    """`day` as matplotlib's date number (days since its epoch)."""
    from matplotlib.dates import date2num

    return float(date2num(day))  # type: ignore[no-untyped-call]  # matplotlib ships no types for it


def series_figure(series: list[Series], title: str) -> Figure:
    """The matplotlib Figure of `render_series` (one Axes; the lines in order, gid 'series-N').
    Raises ValueError for no line, more than two, or a line whose dates and ratings differ in
    length."""
    _check(series)
    # imported here: matplotlib costs ~0.3 s, which every `elopipe` command would otherwise pay
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 3.2), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    n_events = n_steps = 0
    names: list[Annotation] = []
    drawn_steps: set[tuple[dt.date, int, int]] = set()
    for i, (s, style) in enumerate(zip(series, STYLES, strict=False)):
        ys = [float("nan") if r is None else r for r in s.ratings]
        # dates go through matplotlib's date converter; its stubs only list numbers and arrays
        ax.step(
            s.dates,  # type: ignore[arg-type]
            ys,
            where="post",
            linewidth=1.6,
            color=style.line,
            linestyle=style.dashes,
            marker="o" if s.points else None,
            markersize=3,
            label=s.label,
            gid=f"series-{i}",
        )
        # the first line's tournaments are named (when few); a second line's markers have titles
        names += _draw_marks(ax, s.events, s.steps, style, (n_events, n_steps), i == 0, drawn_steps)
        n_events, n_steps = n_events + len(s.events), n_steps + len(s.steps)
    known = [r for s in series for r in s.ratings if r is not None] + [e.rating for s in series for e in s.events]
    if known and max(known) - min(known) < 50:
        # a flat history drawn over a 5-point axis would look like a collapse
        mid = (max(known) + min(known)) / 2
        ax.set_ylim(mid - 25, mid + 25)
    if any(s.label for s in series):
        ax.legend(loc="best", fontsize=8)
    ax.set_title(title, fontsize=11)
    ax.set_ylabel("rating")
    ax.grid(True, alpha=0.3)
    for label in ax.get_xticklabels():
        label.set_rotation(30)
        label.set_horizontalalignment("right")
    window = x_range([d for s in series for d in [*s.dates, *(e.day for e in s.events)]])
    if window is not None:
        ax.set_xlim(*window)  # type: ignore[arg-type]  # dates, as for `step` above
    _keep_inside(ax, names)
    # fixed margins: tight_layout/autofmt_xdate cost more than the plot itself
    fig.subplots_adjust(left=0.1, right=0.98, top=0.9, bottom=0.2)
    return fig


def _keep_inside(ax: Axes, names: list[Annotation]) -> None:
    """Turn each tournament name and step label towards the middle of the axes, once their limits
    are final: a text in the right half ends at its marker, a name near the top goes below it,
    one near the bottom above, so no text runs past the plot's edge (the figure would cut it)."""
    if not names:
        return
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    for a in names:
        x, y = a.xy
        right = (float(x) - x0) / ((x1 - x0) or 1) > 0.5
        fy = (float(y) - y0) / ((y1 - y0) or 1)
        _, dy = a.xyann
        if dy:  # a tournament's name; a step's label stays level with the step's middle
            dy = -12 if fy > 0.85 else 6 if fy < 0.15 else dy
        dx = abs(a.xyann[0])
        a.xyann = (-dx if right else dx, dy)
        a.set_horizontalalignment("right" if right else "left")


def _draw_marks(
    ax: Axes,
    events: Sequence[ChartEvent],
    steps: Sequence[ChartStep],
    style: Style,
    first: tuple[int, int],
    named: bool,
    drawn_steps: set[tuple[dt.date, int, int]],
) -> list[Annotation]:
    """A marker per rated tournament (named when `named` and there are few) and each step as an
    orange segment with its label (a step another line drew already is not labelled twice);
    each artist gets a gid numbered from `first` (events, steps), for the SVG's `<title>`.
    Returns the names and labels written (`_keep_inside` turns them once the axes' limits are known)."""
    names = []
    for i, e in enumerate(events, start=first[0]):
        x = _num(e.day)
        colour = style.marker_colour
        ax.plot([x], [e.rating], marker=style.marker, markersize=5, color=colour, linestyle="none", gid=f"event-{i}")
        if named and len(events) <= MAX_NAMED:
            name = e.title.split(" (")[0][:28]
            # alternate above and below: the names of events close in time would overlap
            dy = 6 if (i - first[0]) % 2 == 0 else -12
            text = ax.annotate(name, (x, e.rating), xytext=(3, dy), textcoords="offset points", fontsize=7)
            text.set_color("#7b241c")
            names.append(text)
    for i, s in enumerate(steps, start=first[1]):
        x = _num(s.day)
        ax.plot([x, x], [s.before, s.after], color="#e67e22", linewidth=2.4, gid=f"step-{i}")
        if (s.day, s.before, s.after) in drawn_steps:
            continue
        drawn_steps.add((s.day, s.before, s.after))
        label = ax.annotate(
            s.label,
            (x, (s.before + s.after) / 2),
            xytext=(5, 0),
            textcoords="offset points",
            fontsize=7,
            color="#a04000",
            va="center",
        )
        names.append(label)
    return names


__all__ = [
    "MAX_NAMED",
    "MIN_SPAN",
    "Chart",
    "ChartEvent",
    "ChartStep",
    "Hotspot",
    "Series",
    "render_series",
    "series_figure",
    "x_range",
]
