"""The FFE systems rate no event from before the national rating began (1 September 1977,
`elopipe.rating.ffe.params.NATIONAL_RATING_FROM`), and the run's summary counts the lists it stored
(issue 25 item 5)."""

from __future__ import annotations

import datetime as dt

import duckdb

from elopipe.rating.ffe.params import NATIONAL_RATING_FROM
from elopipe.rating.run import rate
from elopipe.store.connect import open_writer
from tests.helpers.ffe_store import build_store, d

TC = "90 min + 30 sec"


def _event(tid: int, start: dt.date, name: str) -> dict:
    """Player 1 (national 1800) draws eight games with players 2..9 (national 1800 each)."""
    entries = {p: (None, 1800, "N") for p in range(1, 10)}
    games = [(tid * 100 + p, 1, p, "1/2-1/2", start, True) for p in range(2, 10)]
    return dict(tournament_id=tid, name=name, start=start, end=start + dt.timedelta(days=1), time_control=TC,
                entries=entries, games=games)  # fmt: skip


def test_events_before_the_national_rating_are_refused_and_the_summary_counts_the_stored_lists(tmp_path):
    assert NATIONAL_RATING_FROM == dt.date(1977, 9, 1)
    events = [
        _event(1, d("1864-03-10"), "London Match 1864"),
        _event(2, d("1977-08-30"), "Summer Open 1977"),
        _event(3, d("1977-09-01"), "Autumn Open 1977"),
        _event(4, d("2023-10-01"), "Open 2023"),
    ]
    db = build_store(tmp_path / "s.duckdb", [(i, f"P{i}", 1980) for i in range(1, 10)], events)
    with open_writer(db) as con:
        summary = rate(con, "ffe")
    con = duckdb.connect(str(db), read_only=True)
    try:
        skips = con.execute("SELECT tournament_id, reason, n_games FROM rating_skips ORDER BY 1").fetchall()
        stored = con.execute(
            "SELECT count(DISTINCT list_date), min(list_date), max(list_date) FROM rating_lists WHERE system = 'ffe'"
        ).fetchone()
        rated = con.execute("SELECT DISTINCT tournament_id FROM rating_changes WHERE system = 'ffe' ORDER BY 1")
        rated_ids = [r[0] for r in rated.fetchall()]
    finally:
        con.close()
    assert skips == [(1, "before_rating_from", 8), (2, "before_rating_from", 8)]
    assert rated_ids == [3, 4]
    # the first season's January list and the 2023 event's list: what the summary says is what is stored
    assert stored == (2, d("1978-01-01"), d("2024-01-01"))
    assert (summary.lists, summary.first_list, summary.last_list) == stored
    assert summary.events_skipped == {"before_rating_from": 2}


def test_a_period_with_nothing_to_store_is_not_counted(tmp_path):
    """A period whose only games count for nobody (forfeits) stores no list, and the summary
    does not count one."""
    forfeits = _event(5, d("1990-02-10"), "Forfeited 1990")
    forfeits["games"] = [(gid, w, b, "1-0", day, False) for gid, w, b, _, day, _ in forfeits["games"]]
    players = [(i, f"P{i}", 1980) for i in range(1, 10)]
    db = build_store(tmp_path / "s.duckdb", players, [forfeits, _event(4, d("2023-10-01"), "Open")])
    with open_writer(db) as con:
        summary = rate(con, "ffe")
        n = con.execute("SELECT count(DISTINCT list_date) FROM rating_lists WHERE system = 'ffe'").fetchone()[0]
    assert summary.lists == n
