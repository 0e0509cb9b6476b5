"""Dedup of one file holding many small events whose players recur (a club's weekly events) pairs
only the tournaments near each other: the candidate pairs grow with the events, not with their
square (issue 26, the one-file case of `bench/smallfiles.py`). Counts, never times."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import pytest

from elopipe.identity import dedup
from elopipe.identity.nearby import DATE_SLACK_DAYS
from elopipe.ingest.loader import load_parsed_source
from elopipe.read.parse import parse_source
from elopipe.read.sources import Source
from tests.helpers.paths import REPO
from tests.helpers.schema_store import schema_connect

REAL = REPO.parent / "shared" / "data" / "pgn" / "wchcand22.pgn"
pytestmark = pytest.mark.skipif(not REAL.exists(), reason="shared data not present")

FIRST_DAY = dt.date(2023, 1, 2)


def _real_game() -> tuple[str, str]:
    """(result, movetext) of the first game of a real file: long moves, evidence on their own."""
    text = REAL.read_text(encoding="utf-8")
    head, body = text.split("\n\n", 2)[:2]
    result = next(line.split('"')[1] for line in head.splitlines() if line.startswith("[Result "))
    return result, body.strip()


def _club(n: int, extra: tuple[str, str]) -> str:
    """`n` weekly events of 8 games (2 rounds of 4 boards) between the same 8 players with FIDE
    IDs, every game the real game's moves; `extra`: one more tag, so a second file differs."""
    result, moves = _real_game()
    games = []
    for k in range(n):
        day = (FIRST_DAY + dt.timedelta(weeks=k)).strftime("%Y.%m.%d")
        for r in (1, 2):
            for b in range(4):
                w, bl = (b + r) % 8, (7 - b + r) % 8
                tags = [("Event", f"Event {k}"), ("Site", "Dublin IRL"), ("Date", day), ("EventDate", day),
                        ("Round", str(r)), ("White", f"P{w}, X"), ("Black", f"P{bl}, X"), ("Result", result),
                        ("WhiteFideId", str(2500000 + w)), ("BlackFideId", str(2500000 + bl)), extra]  # fmt: skip
                games.append("".join(f'[{t} "{v}"]\n' for t, v in tags) + "\n" + moves + "\n")
    return "\n".join(games)


def _ingest_twice(tmp_path: Path, n: int, monkeypatch: pytest.MonkeyPatch) -> tuple[duckdb.DuckDBPyConnection, list]:
    """A store holding the `n` weekly events from two files (two sources of each event); returns
    it and the class pairs `dedup._candidate_pairs` gave while loading the second file."""
    con = schema_connect()
    seen: list = []
    real = dedup._candidate_pairs

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        out = real(*args, **kwargs)
        seen.append((args[0], out))
        return out

    for i, extra in enumerate((("Annotator", "a"), ("Annotator", "b"))):
        path = tmp_path / f"club{n}_{i}.pgn"
        path.write_text(_club(n, extra), encoding="utf-8")
        if i == 1:
            monkeypatch.setattr(dedup, "_candidate_pairs", spy)
        load_parsed_source(con, parse_source(Source(str(path))))
    return con, seen


def _days(con: duckdb.DuckDBPyConnection) -> dict[int, dt.date]:
    return dict(con.execute("SELECT tournament_id, first_day FROM tournaments").fetchall())


def test_candidate_pairs_grow_linearly_with_weekly_events_of_recurring_players(tmp_path, monkeypatch) -> None:
    counts = {}
    for n in (3, 12):
        con, seen = _ingest_twice(tmp_path, n, monkeypatch)
        assert seen, "the second file was de-duplicated against the first"
        days = _days(con)
        pairs = 0
        for classes, cands in seen:
            tid = dict(zip(classes["cls"].to_list(), classes["tournament_id"].to_list(), strict=True))
            for a, b in cands:
                # only tournaments whose days allow one event: the same week, not every week
                assert abs((days[tid[a]] - days[tid[b]]).days) <= DATE_SLACK_DAYS
            pairs += len(cands)
        counts[n] = pairs
        monkeypatch.undo()
    # each game of a week pairs with its twin of the other file only: 8 pairs an event, where all
    # pairs of the same players and moves would be 8 x n x (2n - 1)
    assert counts == {3: 8 * 3, 12: 8 * 12}


def test_weekly_events_with_the_same_moves_stay_games_of_their_own_week(tmp_path, monkeypatch) -> None:
    n = 5
    con, _ = _ingest_twice(tmp_path, n, monkeypatch)
    # the two files are two sources of each event: one game counted per board and round and week
    assert con.execute("SELECT count(*) FROM games").fetchone() == (2 * 8 * n,)
    assert con.execute("SELECT count(*) FROM canonical_games").fetchone() == (8 * n,)
    cross = con.execute(
        """
        SELECT count(*) FROM game_sources s JOIN games a ON a.game_id = s.game_id
        JOIN games b ON b.game_id = s.source_game_id JOIN tournaments ta ON ta.tournament_id = a.tournament_id
        JOIN tournaments tb ON tb.tournament_id = b.tournament_id WHERE ta.event_key <> tb.event_key
        """
    ).fetchone()
    assert cross == (0,)
