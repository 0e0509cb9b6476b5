"""A small FIDE store rated under V2024 (`fide`) and as the scenario `fide@v2017`, for comparing a
player's history under the two (`elopipe player --compare`)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from elopipe.rating.run import rate
from tests.helpers.fide import Scenario

NOV, DEC, JAN = dt.date(2025, 11, 1), dt.date(2025, 12, 1), dt.date(2026, 1, 1)


def two_rules_store(scenario: bool = True) -> Scenario:
    """Player 1 (2700, K 10) beats 2 (2000) and 5 (2200) in November 2025, then draws with 5 in
    December; players 2, 3, 4, 5 as in tests/publish/test_compare.py. Rated as `fide` (V2024 as
    amended from 1 Oct 2025: no 400-point cap for a player rated 2650+) and, with `scenario`, as
    `fide@v2017` (V2017: D capped at 400)."""
    s = Scenario()
    for pid, rating, k in ((1, 2700, 10), (2, 2000, 20), (3, 1300, 20), (4, 1350, 20), (5, 2200, 20)):
        s.player(pid, fide_id=1000 + pid)
        s.official(NOV, pid, rating, k=k)
    s.event(dt.date(2025, 11, 10), dt.date(2025, 11, 12), [(1, 2, "W"), (5, 1, "L"), (3, 4, "D"), (4, 3, "D")])
    s.event(dt.date(2025, 12, 10), dt.date(2025, 12, 12), [(1, 5, "D")])
    rate(s.con, "fide", rules="V2024")
    if scenario:
        rate(s.con, "fide@v2017", rules="V2017")
    return s


def to_file(s: Scenario, db: Path) -> Path:
    """The in-memory store of `s` copied to the DuckDB file `db` (for the CLI)."""
    s.con.execute(f"ATTACH '{db}' AS f")
    s.con.execute("COPY FROM DATABASE memory TO f")
    s.con.execute("DETACH f")
    return db
