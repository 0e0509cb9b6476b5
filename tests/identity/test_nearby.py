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
