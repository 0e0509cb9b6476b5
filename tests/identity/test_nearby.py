"""`nearby.reused_near`: within it, the tournaments near the same ones are read once per
connection, with the answer a read would give (issue 27, item 5: a batch's resolution, same-game
evidence and re-link each asked it of the batch's tournaments)."""

from __future__ import annotations

import datetime as dt

import duckdb
import pytest

from elopipe.identity import nearby
from tests.helpers.schema_store import schema_connect


def _store() -> duckdb.DuckDBPyConnection:
    """Four tournaments: 1 and 2 the same week, 3 a month later, 4 the same event key as 1, no days."""
    con = schema_connect()
    rows = [
        (1, "open", dt.date(2025, 4, 1), dt.date(2025, 4, 5)),
        (2, "rapid", dt.date(2025, 4, 3), dt.date(2025, 4, 3)),
        (3, "league", dt.date(2025, 5, 10), dt.date(2025, 5, 11)),
        (4, "open", None, None),
    ]
    for tid, key, first, last in rows:
        con.execute(
            "INSERT INTO tournaments (tournament_id, file_id, source_format, event_key, first_day, last_day)"
            " VALUES (?, 1, 'trf', ?, ?, ?)",
            [tid, key, first, last],
        )
    return con


def test_reused_near_reads_once_and_answers_as_a_read(monkeypatch: pytest.MonkeyPatch) -> None:
    con, other = _store(), _store()
    plain = nearby.near_tournaments(con, [1])
    assert plain == {1, 2, 4}
    reads: list[list[int]] = []
    real = nearby._near

    def counted(c: duckdb.DuckDBPyConnection, ids: list[int]) -> set[int]:
        reads.append(ids)
        return real(c, ids)

    monkeypatch.setattr(nearby, "_near", counted)
    with nearby.reused_near(con):
        first = nearby.near_tournaments(con, [1])
        first.add(99)  # a caller's change does not reach the next caller
        assert nearby.near_tournaments(con, {1}) == plain
        assert nearby.near_tournaments(con, [3]) == {3}
        assert nearby.near_tournaments(other, [1]) == plain  # another connection: read, not reused
    assert reads == [[1], [3], [1]]
    nearby.near_tournaments(con, [1])  # outside: read again
    assert len(reads) == 4


def test_near_pair_sql_holds_for_exactly_the_pairs_near_pairs_gives() -> None:
    """`near_pair_sql` (one pair at a time: `event_sources.pair_verdicts`) and `NEAR_PAIRS_SQL` (all
    pairs, by joins) are one rule: the same ordered pairs, on the edges of the slack, unknown
    first or last days, empty and shared event keys, a tournament with itself."""
    con = schema_connect()
    slack = nearby.DATE_SLACK_DAYS
    day = dt.date(2025, 4, 10)
    rows = [
        (1, "open", day, day + dt.timedelta(days=4)),
        (2, "open", day + dt.timedelta(days=4 + slack), None),  # last day unknown: the first; at the slack
        (3, "open", day + dt.timedelta(days=5 + slack), day + dt.timedelta(days=6 + slack)),  # a day past it
        (4, "open", None, None),  # no days, the same key: one event with any "open"
        (5, "", None, None),  # no days, no key: near nothing
        (6, "", day - dt.timedelta(days=slack), day - dt.timedelta(days=slack)),  # overlaps 1 at the slack
        (7, "league", day - dt.timedelta(days=slack + 1), day - dt.timedelta(days=slack + 1)),
        (8, "league", None, day),  # first day unknown, last known
        (9, "rapid", day + dt.timedelta(days=2), day + dt.timedelta(days=2)),  # inside 1, another key
    ]
    for tid, key, first, last in rows:
        con.execute(
            "INSERT INTO tournaments (tournament_id, file_id, source_format, event_key, first_day, last_day)"
            " VALUES (?, 1, 'trf', ?, ?, ?)",
            [tid, key, first, last],
        )
    ids = [r[0] for r in rows]
    joined = set(nearby.near_pairs(con, ids, ids).iter_rows())
    every = "SELECT a.tournament_id, b.tournament_id FROM tournaments a, tournaments b"
    tested = set(con.execute(f"{every} WHERE {nearby.near_pair_sql('a', 'b')}").fetchall())
    assert tested == joined
    assert (1, 2) in joined and (1, 3) not in joined and (4, 1) in joined and (1, 6) in joined
    assert not any(5 in pair for pair in joined) and not any(a == b for a, b in joined)
