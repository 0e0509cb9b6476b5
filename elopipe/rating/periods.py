"""Rating periods and lists in force, shared by every rating system.

A *list* is identified by its date (the day it is published, e.g. the 1st of a month).
A *rating period* is the set of events rated on one list. Two questions are asked of a
period scheme, and both are answered here, as scalars and as vectorised Polars joins:

* **Which list rates an event?**  The first list whose *closing date* is on or after the
  event's end date (or game date).  FIDE: closing date = list date − 3 days
  (FIDE B.02 (2024) 7.1.3; same in V2017/V2022).  FFE: the period ends the day before the
  list (FFE classic, three lists a year: January, May, September).
* **Which list is in force on a date?**  The latest list dated on or before that date.
  FIDE: each tournament uses the ratings of the list in force on its *start* date
  (FIDE B.02 (2024) 8.3; published calculations F-P02/F-P05, see the spec §3.1).

Schemes provided (see `SCHEMES`):

==================  ===========================================================  =========
name                list dates                                                   closing
==================  ===========================================================  =========
``fide``            quarterly (1 January, April, July, October) until 2009-07-01,  −7 days
                    then the 1st of odd months until 2012-07-01, then the 1st of   in the
                    every month (FIDE monthly lists since August 2012, spec §6.2)  bi-monthly
                                                                                    era, else −3
``fide-monthly``    the 1st of every month (no bi-monthly era)                    −3 days
``ffe``             1 January, 1 May, 1 September                                 −1 day
``monthly``         the 1st of every month                                        −1 day
==================  ===========================================================  =========

A per-tournament scheme (Elo/Glicko "one period per event") is not a calendar; use
`per_event_calendar` to turn the events' end dates into list dates (list = end date + 1 day,
closing = end date).

All dates are `datetime.date`; Polars columns are ``pl.Date``.  Nothing here reads the
store.  Errors: `ValueError` for an unknown scheme name or an empty date range.

Calendars stay within `elopipe.read.dates.DATE_MIN` .. `DATE_LAST` (year 9000): near year 1 or
9999, a list before or after would overflow Python's dates.  The readers refuse dates after
today + a month, and `elopipe.rating.store_io` treats such a date of an older store as
unknown, so that no calendar of the engines runs past today + a month.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import polars as pl

from elopipe.read.dates import DATE_MIN

#: Last date a calendar reaches (see the module docstring); far beyond any plausible date
DATE_LAST = dt.date(9000, 1, 1)

#: First monthly FIDE list (spec §6.2; NOT VERIFIED against a primary source).
FIDE_MONTHLY_FROM = dt.date(2012, 8, 1)
#: First bi-monthly FIDE list (odd months); quarterly lists before it (spec §6.2, issue 15).
FIDE_BIMONTHLY_FROM = dt.date(2009, 7, 1)


def month_start(d: dt.date) -> dt.date:
    """The 1st of the month of `d`."""
    return d.replace(day=1)


def add_months(d: dt.date, months: int) -> dt.date:
    """`d` (a 1st of month) shifted by `months` months (may be negative)."""
    y, m = divmod(d.year * 12 + (d.month - 1) + months, 12)
    return dt.date(y, m + 1, 1)


def fide_closing_days(list_date: dt.date) -> int:
    """Days between a FIDE list's closing date and the list: 7 in the bi-monthly era ("The
    closing date ... 7 days before", FIDE news of 13 July 2009), 3 since (B.02 7.1.3; the
    2014 text). The quarterly lists closed "usually one month before": too loose a rule to
    rate by, and those periods are not rated (`fide.b02.RATED_FROM`)."""
    if FIDE_BIMONTHLY_FROM < list_date < FIDE_MONTHLY_FROM:
        return 7
    return 3


def _fide_is_list(d: dt.date) -> bool:
    if d >= FIDE_MONTHLY_FROM:
        return True
    if d >= FIDE_BIMONTHLY_FROM:
        return d.month % 2 == 1
    return d.month in (1, 4, 7, 10)


def _every_month(d: dt.date) -> bool:
    return True


def _ffe_is_list(d: dt.date) -> bool:
    return d.month in (1, 5, 9)


@dataclass(frozen=True)
class PeriodScheme:
    """A calendar of lists (all on the 1st of some months) and its closing rule.

    Attributes:
        name: scheme name (key of `SCHEMES`).
        is_list_month: predicate on a 1st-of-month date: is a list published that day?
        closing_days: an event ending on day E is rated on the first list L with
            ``L − closing_days ≥ E``  (FIDE 3, FFE/monthly 1); a function of the list date
            where the rule changed with the calendar (`fide_closing_days`).
    """

    name: str
    is_list_month: Callable[[dt.date], bool]
    closing_days: int | Callable[[dt.date], int]

    # ---- scalar API ---------------------------------------------------------
    def closing_date(self, list_date: dt.date) -> dt.date:
        """Last end date an event may have to be rated on `list_date`."""
        days = self.closing_days if isinstance(self.closing_days, int) else self.closing_days(list_date)
        return list_date - dt.timedelta(days=days)

    def next_list(self, d: dt.date) -> dt.date:
        """First list dated on or after `d`."""
        cur = month_start(d)
        if cur < d:
            cur = add_months(cur, 1)
        while not self.is_list_month(cur):
            cur = add_months(cur, 1)
        return cur

    def previous_list(self, list_date: dt.date) -> dt.date:
        """The list before `list_date` (which must itself be a list date)."""
        cur = add_months(month_start(list_date), -1)
        while not self.is_list_month(cur):
            cur = add_months(cur, -1)
        return cur

    def rated_on(self, end_date: dt.date) -> dt.date:
        """The list an event ending on `end_date` is rated on (first list whose closing
        date is on or after the end date).  FIDE: an event ending 2026-08-30 misses the
        2026-09-01 list (closing 08-29) and is rated on 2026-10-01 (spec F-P05)."""
        cur = self.next_list(end_date)
        while self.closing_date(cur) < end_date:
            cur = self.next_list(cur + dt.timedelta(days=1))
        return cur

    def in_force(self, d: dt.date) -> dt.date:
        """The list in force on date `d` (latest list dated on or before `d`)."""
        cur = month_start(d)
        while not self.is_list_month(cur):
            cur = add_months(cur, -1)
        return cur

    def period_bounds(self, list_date: dt.date) -> tuple[dt.date, dt.date]:
        """(first, last) end dates of the events rated on `list_date`, inclusive."""
        prev = self.previous_list(list_date)
        return self.closing_date(prev) + dt.timedelta(days=1), self.closing_date(list_date)

    def lists_between(self, first: dt.date, last: dt.date) -> list[dt.date]:
        """Every list date L with first ≤ L ≤ last (both dates of any day), ascending.

        The range is clamped to DATE_MIN..DATE_LAST (see the module docstring)."""
        first, last = max(first, DATE_MIN), min(last, DATE_LAST)
        if last < first:
            return []
        out: list[dt.date] = []
        cur = self.next_list(first)
        while cur <= last:
            out.append(cur)
            cur = self.next_list(cur + dt.timedelta(days=1))
        return out

    # ---- Polars API ---------------------------------------------------------
    def calendar(self, first: dt.date, last: dt.date) -> pl.DataFrame:
        """Lists covering [first, last] plus one list on each side, as a frame.

        Columns: ``list_date`` Date, ``closing_date`` Date, ``prev_list`` Date
        (the list before; its ratings are the ones the period starts from).
        Raises ValueError if last < first.  [first, last] is clamped to DATE_MIN..DATE_LAST
        (the lists around it may lie a little outside).
        """
        if last < first:
            raise ValueError(f"empty date range {first}..{last}")
        first, last = max(first, DATE_MIN), max(min(last, DATE_LAST), DATE_MIN)
        first = min(first, last)
        lo = self.in_force(first)
        lo = self.previous_list(lo)
        hi = self.rated_on(last)
        hi = self.next_list(hi + dt.timedelta(days=1))
        dates = self.lists_between(lo, hi)
        return pl.DataFrame(
            {
                "list_date": dates,
                "closing_date": [self.closing_date(d) for d in dates],
                "prev_list": [None, *dates[:-1]],
            },
            schema={"list_date": pl.Date, "closing_date": pl.Date, "prev_list": pl.Date},
        )

    def assign(
        self,
        df: pl.DataFrame,
        *,
        end_col: str | None = "end_date",
        start_col: str | None = "start_date",
        rated_on_col: str = "list_date",
        in_force_col: str = "in_force",
    ) -> pl.DataFrame:
        """Add the list each row is rated on and the list in force at its start.

        `df[end_col]` (Date) → ``rated_on_col`` (Date): first list with closing ≥ end.
        `df[start_col]` (Date) → ``in_force_col`` (Date): latest list ≤ start.
        Pass None for either column name to skip that output.  Rows with a null date get
        a null output, and so do rows dated outside DATE_MIN..DATE_LAST.
        Vectorised with `join_asof`; the row order of `df` is kept.
        """
        dates = [c for c in (end_col, start_col) if c is not None]
        lo_ok, hi_ok = DATE_MIN, DATE_LAST

        def ok(c: str) -> pl.Expr:
            return pl.col(c).filter(pl.col(c).is_between(lo_ok, hi_ok))

        bounds = (
            df.select(
                pl.min_horizontal([ok(c).min() for c in dates]).alias("lo"),
                pl.max_horizontal([ok(c).max() for c in dates]).alias("hi"),
            ).row(0)
            if dates and df.height
            else (None, None)
        )
        if bounds[0] is None:
            nulls = []
            if end_col is not None:
                nulls.append(pl.lit(None, pl.Date).alias(rated_on_col))
            if start_col is not None:
                nulls.append(pl.lit(None, pl.Date).alias(in_force_col))
            return df.with_columns(nulls)
        cal = self.calendar(bounds[0], bounds[1])
        out = df.with_row_index("__row")
        if end_col is not None:
            closing = cal.select(pl.col("closing_date").alias("__key"), pl.col("list_date").alias(rated_on_col))
            part = out.select("__row", pl.col(end_col).alias("__key")).filter(pl.col("__key").is_between(lo_ok, hi_ok))
            part = part.sort("__key").join_asof(closing, on="__key", strategy="forward")
            out = out.join(part.select("__row", rated_on_col), on="__row", how="left")
        if start_col is not None:
            lists = cal.select(pl.col("list_date").alias("__key"), pl.col("list_date").alias(in_force_col))
            part = out.select("__row", pl.col(start_col).alias("__key")).filter(
                pl.col("__key").is_between(lo_ok, hi_ok)
            )
            part = part.sort("__key").join_asof(lists, on="__key", strategy="backward")
            out = out.join(part.select("__row", in_force_col), on="__row", how="left")
        return out.sort("__row").drop("__row")


SCHEMES: dict[str, PeriodScheme] = {
    "fide": PeriodScheme("fide", _fide_is_list, fide_closing_days),
    "fide-monthly": PeriodScheme("fide-monthly", _every_month, 3),
    "ffe": PeriodScheme("ffe", _ffe_is_list, 1),
    "monthly": PeriodScheme("monthly", _every_month, 1),
}


def get_scheme(name: str) -> PeriodScheme:
    """The scheme called `name` (see `SCHEMES`). Raises ValueError if unknown."""
    try:
        return SCHEMES[name]
    except KeyError:
        raise ValueError(f"unknown period scheme {name!r}; known: {sorted(SCHEMES)}") from None


def per_event_calendar(end_dates: Iterable[dt.date]) -> list[dt.date]:
    """One list per distinct event end date, dated the next day (ascending).

    For per-tournament systems (generic Elo/Glicko run event by event): an event ending on
    E is rated on list E + 1 day; events ending the same day share a period.  Dates outside
    DATE_MIN..DATE_LAST give no list.
    """
    lo, hi = DATE_MIN, DATE_LAST
    return sorted({d + dt.timedelta(days=1) for d in end_dates if d is not None and lo <= d <= hi})
