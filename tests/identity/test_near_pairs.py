"""`nearby.NEAR_PAIRS_SQL` (`near_pairs`): the pairs of tournaments that can be sources of one event
or whose days overlap, each once, as the Python tests `same_event` and `dates_overlap` tell."""

from __future__ import annotations

import datetime as dt
import itertools

from elopipe.identity.nearby import dates_overlap, near_pairs, same_event
from tests.helpers.schema_store import schema_connect

D = dt.date(2024, 3, 1)

# (tournament_id, event key, first day, last day): one event's two sources with days and one
# without, namesakes a month apart, a tournament of unknown days alone, overlapping strangers
ROWS = [
    (1, "open", D, D + dt.timedelta(days=4)),
    (2, "open", D + dt.timedelta(days=1), D + dt.timedelta(days=5)),
    (3, "open", None, None),
    (4, "open", D + dt.timedelta(days=40), D + dt.timedelta(days=44)),
    (5, "", None, None),
    (6, "blitz", D + dt.timedelta(days=6), None),
    (7, "club", D + dt.timedelta(days=20), D + dt.timedelta(days=21)),
]


def test_near_pairs_are_the_pairs_python_finds_each_once() -> None:
    con = schema_connect()
    con.executemany(
        "INSERT INTO tournaments (tournament_id, file_id, source_format, event_key, first_day, last_day)"
        " VALUES (?, ?, 'trf', ?, ?, ?)",
        [(t, t, k, d0, d1) for t, k, d0, d1 in ROWS],
    )
    ids = [t for t, *_ in ROWS]
    got = near_pairs(con, ids, ids)
    pairs = list(zip(got["ta"].to_list(), got["tb"].to_list(), strict=True))
    assert len(pairs) == len(set(pairs))
    spans = {t: (k, d0, d1 or d0) for t, k, d0, d1 in ROWS}
    want = {
        (a, b)
        for a, b in itertools.permutations(ids, 2)
        if same_event(spans[a], spans[b]) or dates_overlap(*spans[a][1:], *spans[b][1:])
    }
    assert set(pairs) == want
    assert (1, 3) in want and (1, 2) in want and (1, 4) not in want
