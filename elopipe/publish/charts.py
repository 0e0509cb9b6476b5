"""Rating-history charts with matplotlib's Agg backend (no display, safe in worker threads).

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
import re
from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.text import Annotation


class ChartEvent(NamedTuple):
    """A rated tournament on the chart: its last day, the rating drawn (Ro, rating points) and
    the hover title."""

    day: dt.date
    rating: int
    title: str


class ChartStep(NamedTuple):
    """A labelled jump of the rating at `day`, from `before` to `after` rating points."""

    day: dt.date
    before: int
    after: int
    label: str


class Hotspot(NamedTuple):
    """Where a marker is on the image, in percent of its width (`left`) and height (`top`) from
    the top-left corner, and its hover title."""

    left: float
    top: float
    title: str


class Series(NamedTuple):
    """One rating line: list dates and ratings (rating points, None: unrated, a gap), the rated
    tournaments marked on it, its labelled steps, its `label` in the legend (None: no legend, a
    chart of one line) and `points`: a dot on each list (a side of few lists far apart, such as
    the official lists a store holds)."""

    dates: list[dt.date]
    ratings: list[int | None]
    events: Sequence[ChartEvent] = ()
    steps: Sequence[ChartStep] = ()
    label: str | None = None
    points: bool = False


class _Style(NamedTuple):
    line: str
    dashes: str
    marker: str
    marker_colour: str


# The first line solid blue with red diamonds, the second dashed green with purple squares: two
# identical lines stay both visible (the dashes over the solid line)
_STYLES = (_Style("#1f5fa8", "-", "D", "#c0392b"), _Style("#1e8449", "--", "s", "#7d3c98"))


class Chart(NamedTuple):
    """The chart's bytes (PNG or SVG) and its markers' places (`Hotspot`)."""

    data: bytes
    hotspots: list[Hotspot]


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
    fig = series_figure(series, title)
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt)
    data = buf.getvalue()
    events = [e for s in series for e in s.events]
    if fmt == "svg":
        titles = {f"event-{i}": e.title for i, e in enumerate(events)}
        titles |= {f"step-{i}": st.label for i, st in enumerate(st for s in series for st in s.steps)}
        titles |= {f"series-{i}": s.label for i, s in enumerate(series) if s.label}
        data = _svg_titles(data, titles)
    return Chart(data, _hotspots(fig, events))


def _svg_titles(svg: bytes, titles: dict[str, str]) -> bytes:
    """`svg` with a `<title>` first in each group whose id is a key of `titles`."""

    def add(m: re.Match[str]) -> str:
        return f"{m.group(0)}\n   <title>{escape(titles[m.group(1)])}</title>"

    text = svg.decode("utf-8")
    groups = r'<g id="((?:event|step|series)-\d+)">'
    text = re.sub(groups, lambda m: add(m) if m.group(1) in titles else m.group(0), text)
    return text.encode("utf-8")


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


# A history shorter than this gets a window of this width centred on it: matplotlib would
# otherwise widen a single date to years on both sides (an axis running far into the future).
MIN_SPAN = dt.timedelta(days=90)

# Names are written next to the markers up to this many events; more would overlap (the hover
# titles still name every one)
MAX_NAMED = 6


def x_range(dates: list[dt.date]) -> tuple[dt.date, dt.date] | None:
    """The x-axis window for `dates`: None (matplotlib's own) when they span at least
    `MIN_SPAN`, else `MIN_SPAN` centred on them (a one-list history shows about a month and a
    half either side)."""
    if not dates:
        return None
    lo, hi = min(dates), max(dates)
    if hi - lo >= MIN_SPAN:
        return None
    pad = (MIN_SPAN - (hi - lo)) / 2
    return lo - pad, hi + pad


def series_figure(series: list[Series], title: str) -> Figure:
    """The matplotlib Figure of `render_series` (one Axes; the lines in order, gid 'series-N').
    Raises ValueError for no line, more than two, or a line whose dates and ratings differ in
    length."""
    if not 1 <= len(series) <= len(_STYLES):
        raise ValueError(f"a chart draws 1 to {len(_STYLES)} rating lines, not {len(series)}")
    if any(len(s.dates) != len(s.ratings) for s in series):
        raise ValueError("dates and ratings differ in length")
    # imported here: matplotlib costs ~0.3 s, which every `elopipe` command would otherwise pay
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 3.2), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    n_events = n_steps = 0
    names: list[Annotation] = []
    drawn_steps: set[tuple[dt.date, int, int]] = set()
    for i, (s, style) in enumerate(zip(series, _STYLES, strict=False)):
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
    style: _Style,
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
