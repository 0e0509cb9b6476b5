"""The rating chart's data, whatever draws it (`charts`: matplotlib; `chart_svg`: a template):
the lines, their marked tournaments and labelled steps, the drawn chart and its markers' places,
and the x-axis window of a short history."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import NamedTuple


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


class Style(NamedTuple):
    line: str
    dashes: str
    marker: str
    marker_colour: str


# The first line solid blue with red diamonds, the second dashed green with purple squares: two
# identical lines stay both visible (the dashes over the solid line)
STYLES = (Style("#1f5fa8", "-", "D", "#c0392b"), Style("#1e8449", "--", "s", "#7d3c98"))


class Chart(NamedTuple):
    """The chart's bytes (PNG or SVG) and its markers' places (`Hotspot`)."""

    data: bytes
    hotspots: list[Hotspot]


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
