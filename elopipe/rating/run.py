"""`rate(con, system, ...)`: compute a rating system's lists and store what changed.

The function of each system comes from `elopipe.rating.systems`.  For the FIDE systems
(`elopipe.rating.fide_run`) only the earliest affected list and every later one are
rewritten; re-running with nothing new writes nothing.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import duckdb

from elopipe.rating import systems
from elopipe.rating.summary import RateSummary


def parse_month(text: str | None) -> dt.date | None:
    """'YYYY-MM' (or 'YYYY-MM-DD') → the date of that month's list (the 1st).

    Raises ValueError for anything else.
    """
    if text is None:
        return None
    parts = text.strip().split("-")
    if len(parts) not in (2, 3) or not all(p.isdigit() for p in parts):
        raise ValueError(f"expected YYYY-MM, got {text!r}")
    return dt.date(int(parts[0]), int(parts[1]), 1)


def rate(
    con: duckdb.DuckDBPyConnection,
    system: str,
    through: dt.date | str | None = None,
    rules: str | None = None,
    **params: Any,
) -> RateSummary:
    """Rate `system` over the store behind `con` (a writer connection).

    `through`: last list to compute (date or 'YYYY-MM'); `rules`: force a rules version
    ('V2017' | 'V2022' | 'V2024' for FIDE); `params`: options of the system's engine.
    Raises ValueError for an unknown system, version, month or parameter.
    """
    if isinstance(through, str):
        through = parse_month(through)
    fn = systems.get(system)
    summary: RateSummary = fn(con, system=system, through=through, rules=rules, **params)
    return summary
