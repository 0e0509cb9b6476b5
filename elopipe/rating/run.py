"""`rate(con, system, ...)`: compute a rating system's lists and store what changed.

The function of each system comes from `elopipe.rating.systems`.  For the FIDE systems
(`elopipe.rating.fide_run`) only the earliest affected list and every later one are
rewritten; re-running with nothing new writes nothing.

A scenario 'BASE@NAME' (`elopipe.rating.scenarios`) is rated with BASE's rules and the given
rules and options, stored under its own key, and its definition recorded in ``scenarios``;
the plain system's lists are never touched.  `through` computes a preview: the lists up to it
are computed and stored as usual, the later ones are kept as they were.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import duckdb

from elopipe.rating import scenarios, systems
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

    `system`: a system name or a scenario 'BASE@NAME' (see the module docstring).
    `through`: last list to compute (date or 'YYYY-MM'); the stored lists after it are kept
    (``RateSummary.kept_lists``). `rules`: force a rules version ('V2017' | 'V2022' | 'V2024'
    for FIDE); `params`: options of the system's engine.
    Raises ValueError for an unknown system, version, month or parameter, and
    `scenarios.ScenarioError` for a bad scenario name.
    """
    if isinstance(through, str):
        through = parse_month(through)
    base, name = scenarios.split_system(system)
    if name is not None:
        system = scenarios.scenario_system(base, name)  # the key as stored: the name folded
    fn = systems.get(system)
    summary: RateSummary = fn(con, system=system, through=through, rules=rules, **params)
    if name is not None:
        scenarios.record(con, system, rules=rules, params=params, through=through)
    if through is not None:
        rows = con.execute(
            "SELECT DISTINCT list_date FROM rating_lists WHERE system = ? AND list_date > ? ORDER BY 1",
            [system, through],
        ).fetchall()
        summary.kept_lists = [r[0] for r in rows]
    return summary
