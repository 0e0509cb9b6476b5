"""The rating chart as SVG text written from a template, without matplotlib.

A published player page carries its chart; matplotlib draws one in about 95 CPU-ms (a PNG: its
layout and the Agg rasteriser, under Python's interpreter lock), this template in a few ms
(`bench/publish_chart.py`). The drawing follows `charts.series_figure`: a 700 × 320 px figure
(7 × 3.2 in at 100 dpi) with the same margins, each rating a step line (a list's rating holds until
the next; an unrated list leaves a gap), each rated tournament a marker with a hover `<title>`
(`<g id="event-N">`), each labelled step (the 1 March 2024 adjustment) an orange segment titled
`<g id="step-N">` and written beside it, the lines of a two-line chart named in a legend and in a
`<title>` (`<g id="series-N">`), the first line's tournaments named when at most `MAX_NAMED`,
turned towards the middle of the plot so that no text runs past its edge. The axes' limits are
matplotlib's defaults (5 % margins; a flat history gets ±25 points; a short one `MIN_SPAN`),
the ticks round numbers and month starts. The same series always give the same bytes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from html import escape

from elopipe.publish.chart_data import MAX_NAMED, Chart, Hotspot, Series, Style, x_range

WIDTH, HEIGHT = 700, 320
# the plot area: charts.series_figure's subplots_adjust(left=0.1, right=0.98, top=0.9, bottom=0.2)
X0, X1 = 0.1 * WIDTH, 0.98 * WIDTH
Y0, Y1 = (1 - 0.9) * HEIGHT, (1 - 0.2) * HEIGHT
PT = 100 / 72  # px per typographic point at 100 dpi (matplotlib's offsets are in points)
# the width of a character at 7 pt, for keeping names inside the plot (DejaVu Sans averages 0.6 em)
CHAR_PX = 7 * PT * 0.6
_Y_STEPS = (1, 2, 2.5, 5, 10)
_MONTH_STEPS = (1, 2, 3, 6, 12, 24, 60, 120, 240)


def _f(x: float) -> str:
    return f"{x:.2f}"


def _y_limits(values: list[int]) -> tuple[float, float]:
    lo, hi = min(values), max(values)
    if hi - lo < 50:  # as charts.series_figure: a flat history is not drawn as a collapse
        mid = (hi + lo) / 2
        return mid - 25, mid + 25
    pad = 0.05 * (hi - lo)
    return lo - pad, hi + pad


def _x_limits(days: list[dt.date], window: tuple[dt.date, dt.date] | None) -> tuple[float, float]:
    if window is not None:
        return float(window[0].toordinal()), float(window[1].toordinal())
    lo, hi = min(days).toordinal(), max(days).toordinal()
    pad = 0.05 * (hi - lo)
    return lo - pad, hi + pad


def _y_ticks(lo: float, hi: float) -> list[int]:
    """Round rating values between `lo` and `hi`, 4 to 8 of them."""
    span, scale = hi - lo, 1
    while span / scale >= 100:  # a tenth of the span's order of magnitude
        scale *= 10
    step = next((s * scale for s in _Y_STEPS if span / (s * scale) <= 8), 10 * scale)
    first = int(-(-lo // step) * step)
    return [int(first + i * step) for i in range(int((hi - first) // step) + 1)]


def _x_ticks(lo: float, hi: float) -> list[tuple[int, str]]:
    """(day ordinal, label) of month starts between `lo` and `hi`, at most 8, every N months."""
    start, end = dt.date.fromordinal(int(lo)), dt.date.fromordinal(int(hi))
    months = (end.year - start.year) * 12 + end.month - start.month + 1
    step = next((s for s in _MONTH_STEPS if months / s <= 8), _MONTH_STEPS[-1])
    m = start.year * 12 + start.month - 1
    m += -m % step
    out: list[tuple[int, str]] = []
    while True:
        day = dt.date(m // 12, m % 12 + 1, 1)
        if day.toordinal() > hi:
            return out
        if day.toordinal() >= lo:
            out.append((day.toordinal(), str(day.year) if step >= 12 else day.strftime("%Y-%m")))
        m += step


class _Axes:
    """Data to pixels: x a day's ordinal, y rating points."""

    def __init__(self, xlim: tuple[float, float], ylim: tuple[float, float]) -> None:
        self.xlim, self.ylim = xlim, ylim

    def x(self, day: dt.date | float) -> float:
        value = day.toordinal() if isinstance(day, dt.date) else day
        return X0 + (value - self.xlim[0]) / ((self.xlim[1] - self.xlim[0]) or 1) * (X1 - X0)

    def y(self, rating: float) -> float:
        return Y1 - (rating - self.ylim[0]) / ((self.ylim[1] - self.ylim[0]) or 1) * (Y1 - Y0)


def _step_path(ax: _Axes, dates: list[dt.date], ratings: list[int | None]) -> str:
    """The path of a post-step line; an unrated list breaks it."""
    parts: list[str] = []
    prev: tuple[float, float] | None = None
    for day, rating in zip(dates, ratings, strict=True):
        x = ax.x(day)
        if rating is None:
            prev = None
            continue
        y = ax.y(rating)
        parts.append(f"M{_f(x)} {_f(y)}" if prev is None else f"H{_f(x)} V{_f(y)}")
        prev = (x, y)
    return " ".join(parts)


def _lone_points(ratings: list[int | None]) -> list[tuple[int, int]]:
    """(index, rating) of the rated lists with no rated neighbour: a step line through them has
    no length, so they are drawn as dots (a player on a single list)."""
    rated = [r is not None for r in ratings]
    return [
        (i, r)
        for i, r in enumerate(ratings)
        if r is not None and not (i > 0 and rated[i - 1]) and not (i + 1 < len(rated) and rated[i + 1])
    ]


def _marker(shape: str, x: float, y: float, colour: str) -> str:
    r = 5 * PT * 0.65  # matplotlib's markersize 5 (points), its diamond drawn a little larger
    if shape == "D":
        d = f"M{_f(x)} {_f(y - r)} L{_f(x + r)} {_f(y)} L{_f(x)} {_f(y + r)} L{_f(x - r)} {_f(y)} Z"
    else:
        d = f"M{_f(x - r * 0.8)} {_f(y - r * 0.8)} h{_f(1.6 * r)} v{_f(1.6 * r)} h{_f(-1.6 * r)} Z"
    return f'<path d="{d}" fill="{colour}" stroke="{colour}"/>'


def _text(x: float, y: float, text: str, right: bool, colour: str, size: float = 7, dx: float = 3) -> str:
    """A name `dx` points beside (x, y), ending there when `right` (the right half of the plot),
    clipped to what fits between the marker and the plot's edge."""
    room = (x - X0 if right else X1 - x) - dx * PT
    text = text[: max(1, int(room / CHAR_PX))]
    anchor, tx = ("end", x - dx * PT) if right else ("start", x + dx * PT)
    return (
        f'<text x="{_f(tx)}" y="{_f(y)}" font-size="{size:g}pt" fill="{colour}" text-anchor="{anchor}">'
        f"{escape(text)}</text>"
    )


def svg_chart(series: Sequence[Series], title: str, styles: Sequence[Style]) -> Chart:
    """The chart of `series` (`charts.render_series`'s SVG): SVG bytes and the markers' places
    (`charts.Hotspot`, percent from the top-left). `styles`: (line colour, dashes '-' or '--',
    marker 'D' or 's', marker colour) per line. The caller checks the series."""
    days = [d for s in series for d in [*s.dates, *(e.day for e in s.events)]]
    known = [r for s in series for r in s.ratings if r is not None] + [e.rating for s in series for e in s.events]
    known += [v for s in series for st in s.steps for v in (st.before, st.after)]
    ax = _Axes(_x_limits(days, x_range(days)), _y_limits(known or [0]))
    out = [
        '<?xml version="1.0" encoding="utf-8" standalone="no"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}"'
        ' font-family="DejaVu Sans, Arial, sans-serif">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>',
        f'<text x="{_f((X0 + X1) / 2)}" y="{_f(Y0 - 8)}" font-size="11pt" text-anchor="middle">{escape(title)}</text>',
    ]
    out += _grid(ax)
    spots: list[Hotspot] = []
    n_event = n_step = 0
    drawn: set[tuple[dt.date, int, int]] = set()
    for i, (s, (line, dashes, shape, colour)) in enumerate(zip(series, styles, strict=False)):
        dash = ' stroke-dasharray="5.9 2.5"' if dashes == "--" else ""
        out.append(f'<g id="series-{i}">' + (f"\n <title>{escape(s.label)}</title>" if s.label else ""))
        out.append(
            f' <path d="{_step_path(ax, s.dates, s.ratings)}" fill="none" stroke="{line}" stroke-width="2.2"{dash}/>'
        )
        if s.points:
            for d, r in zip(s.dates, s.ratings, strict=True):
                if r is not None:
                    out.append(f' <circle cx="{_f(ax.x(d))}" cy="{_f(ax.y(r))}" r="2.1" fill="{line}"/>')
        else:
            for k, r in _lone_points(s.ratings):
                out.append(f' <circle cx="{_f(ax.x(s.dates[k]))}" cy="{_f(ax.y(r))}" r="3" fill="{line}"/>')
        out.append("</g>")
        for k, e in enumerate(s.events):
            x, y = ax.x(e.day), ax.y(e.rating)
            out.append(
                f'<g id="event-{n_event}">\n <title>{escape(e.title)}</title>\n {_marker(shape, x, y, colour)}\n</g>'
            )
            spots.append(Hotspot(100 * x / WIDTH, 100 * y / HEIGHT, e.title))
            if i == 0 and len(s.events) <= MAX_NAMED:
                fy = (e.rating - ax.ylim[0]) / ((ax.ylim[1] - ax.ylim[0]) or 1)
                dy = 6 if k % 2 == 0 else -12  # alternate above and below, as charts._draw_marks
                dy = -12 if fy > 0.85 else 6 if fy < 0.15 else dy
                name = e.title.split(" (")[0][:28]
                out.append(_text(x, y - dy * PT, name, x > (X0 + X1) / 2, "#7b241c"))
            n_event += 1
        for st in s.steps:
            x = ax.x(st.day)
            seg = (
                f'<path d="M{_f(x)} {_f(ax.y(st.before))} V{_f(ax.y(st.after))}" stroke="#e67e22" stroke-width="3.3"/>'
            )
            out.append(f'<g id="step-{n_step}">\n <title>{escape(st.label)}</title>\n {seg}\n</g>')
            n_step += 1
            if (st.day, st.before, st.after) not in drawn:
                drawn.add((st.day, st.before, st.after))
                mid = ax.y((st.before + st.after) / 2) + 3
                out.append(_text(x, mid, st.label, x > (X0 + X1) / 2, "#a04000", dx=5))
    out += _legend(ax, series, styles)
    out.append("</svg>\n")
    return Chart("\n".join(out).encode("utf-8"), spots)


def _grid(ax: _Axes) -> list[str]:
    """The frame, the grid, the ticks' labels and the y axis's name."""
    out: list[str] = []
    for value in _y_ticks(*ax.ylim):
        y = ax.y(value)
        out.append(f'<path d="M{_f(X0)} {_f(y)} H{_f(X1)}" stroke="#b0b0b0" stroke-opacity="0.3"/>')
        out.append(f'<text x="{_f(X0 - 5)}" y="{_f(y + 3.5)}" font-size="10pt" text-anchor="end">{value}</text>')
    for day, label in _x_ticks(*ax.xlim):
        x = ax.x(float(day))
        out.append(f'<path d="M{_f(x)} {_f(Y0)} V{_f(Y1)}" stroke="#b0b0b0" stroke-opacity="0.3"/>')
        out.append(
            f'<text transform="translate({_f(x)} {_f(Y1 + 14)}) rotate(-30)" font-size="10pt" text-anchor="end">'
            f"{label}</text>"
        )
    out.append(
        f'<rect x="{_f(X0)}" y="{_f(Y0)}" width="{_f(X1 - X0)}" height="{_f(Y1 - Y0)}" fill="none" stroke="#000000"/>'
    )
    middle = f"translate(16 {_f((Y0 + Y1) / 2)}) rotate(-90)"
    out.append(f'<text transform="{middle}" font-size="10pt" text-anchor="middle">rating</text>')
    return out


def _legend(ax: _Axes, series: Sequence[Series], styles: Sequence[Style]) -> list[str]:
    """The lines' names in a box, in the plot's corner that the fewest points fall in."""
    named = [(s.label, st) for s, st in zip(series, styles, strict=False) if s.label]
    if not named:
        return []
    w = 40 + CHAR_PX * 8 / 7 * max(len(label) for label, _ in named)
    h = 8 + 15 * len(named)
    points = [(ax.x(d), ax.y(r)) for s in series for d, r in zip(s.dates, s.ratings, strict=True) if r is not None]
    corners = [(X1 - w - 6, Y0 + 6), (X0 + 6, Y0 + 6), (X1 - w - 6, Y1 - h - 6), (X0 + 6, Y1 - h - 6)]
    x, y = min(corners, key=lambda c: sum(c[0] <= px <= c[0] + w and c[1] <= py <= c[1] + h for px, py in points))
    box = f'x="{_f(x)}" y="{_f(y)}" width="{_f(w)}" height="{h}"'
    out = [f'<rect {box} fill="#ffffff" fill-opacity="0.8" stroke="#cccccc"/>']
    for k, (label, (line, dashes, _, _)) in enumerate(named):
        ly = y + 12 + 15 * k
        dash = ' stroke-dasharray="5.9 2.5"' if dashes == "--" else ""
        out.append(f'<path d="M{_f(x + 6)} {_f(ly - 3)} h24" stroke="{line}" stroke-width="2.2"{dash}/>')
        out.append(f'<text x="{_f(x + 36)}" y="{_f(ly)}" font-size="8pt">{escape(label)}</text>')
    return out
