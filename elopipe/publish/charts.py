"""Rating-history charts with matplotlib's Agg backend (no display, safe in worker threads).

A `Figure` is built directly (not through pyplot), so no global state is touched.
"""

from __future__ import annotations

import datetime as dt
import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def rating_history_chart(dates: list[dt.date], ratings: list[int | None], title: str, fmt: str = "png") -> bytes:
    """A line chart of rating (rating points) per list date, as PNG or SVG bytes.

    Lists where the player was unrated (rating None) leave a gap in the line. `fmt` is
    'png' or 'svg'; raises ValueError for another format or when `dates` and `ratings`
    differ in length.
    """
    if fmt not in {"png", "svg"}:
        raise ValueError(f"chart format must be png or svg, not {fmt!r}")
    fig = history_figure(dates, ratings, title)
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt)
    return buf.getvalue()


# A history shorter than this gets a window of this width centred on it: matplotlib would
# otherwise widen a single date to years on both sides (an axis running far into the future).
MIN_SPAN = dt.timedelta(days=90)


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


def history_figure(dates: list[dt.date], ratings: list[int | None], title: str) -> Figure:
    """The matplotlib Figure of `rating_history_chart` (one Axes). Raises ValueError when
    `dates` and `ratings` differ in length."""
    if len(dates) != len(ratings):
        raise ValueError("dates and ratings differ in length")
    # imported here: matplotlib costs ~0.3 s, which every `elopipe` command would otherwise pay
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 3.2), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ys = [float("nan") if r is None else r for r in ratings]
    marker = "o" if len(dates) <= 60 else None  # dots would merge into a thick line
    # dates go through matplotlib's date converter; its stubs only list numbers and arrays
    ax.plot(dates, ys, marker=marker, markersize=3, linewidth=1.6, color="#1f5fa8")  # type: ignore[arg-type]
    known = [r for r in ratings if r is not None]
    if known and max(known) - min(known) < 50:
        # a flat history drawn over a 5-point axis would look like a collapse
        mid = (max(known) + min(known)) / 2
        ax.set_ylim(mid - 25, mid + 25)
    ax.set_title(title, fontsize=11)
    ax.set_ylabel("rating")
    ax.grid(True, alpha=0.3)
    for label in ax.get_xticklabels():
        label.set_rotation(30)
        label.set_horizontalalignment("right")
    window = x_range(dates)
    if window is not None:
        ax.set_xlim(*window)  # type: ignore[arg-type]  # dates, as for `plot` above
    # fixed margins: tight_layout/autofmt_xdate cost more than the plot itself
    fig.subplots_adjust(left=0.1, right=0.98, top=0.9, bottom=0.2)
    return fig
