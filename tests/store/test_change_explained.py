"""`v_change_explained` explains every entry of an event rated in a period: the rating_changes
rows as they are, and for every player of the event, rated or not, the games the engine wrote no
row for and the unplayed rounds, each with its reason and no change (B.02: unplayed games are
not rated)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal as D
from pathlib import Path

from tests.helpers.store_build import build_store
from tests.helpers.store_rows import db_rows

FEB = dt.date(2024, 2, 1)


def _store(tmp_path: Path) -> Path:
    # Event 1 (rated on FEB): A (1) beats B (2), counted; C (3) has byes only (no rated game, no
    # tournament_ratings row); D (4) plays one game the engine wrote no row for (a tie-break) and
    # loses by forfeit to A. Event 2 (rated on FEB, rating_changes rows only: both players
    # unrated): E (5) has a bye in round 2. Event 3 is not rated: F's (6) bye stays out.
    def game(gid: int, tid: int, rnd: int, w: int, b: int, ws: str, bs: str, played: bool = True) -> dict:
        return {"game_id": gid, "tournament_id": tid, "file_id": 1, "line": 10 + gid, "round": rnd,
                "white_id": w, "black_id": b, "result": "1-0" if ws == "1" else "0-1", "white_score": D(ws),
                "black_score": D(bs), "played": played, "unplayed_code": None if played else "+"}  # fmt: skip

    def change(gid: int, tid: int, pid: int, opp: int, counted: bool, reason: str | None, **figures: object) -> dict:
        return {"system": "fide", "list_date": FEB, "tournament_id": tid, "game_id": gid, "player_id": pid,
                "opponent_id": opp, "counted": counted, "reason": reason, **figures}  # fmt: skip

    def bye(tid: int, pid: int, rnd: int, code: str) -> dict:
        return {"tournament_id": tid, "player_id": pid, "round": rnd, "code": code, "score": D(0), "file_id": 1,
                "line": 20 + pid}  # fmt: skip

    return build_store(
        tmp_path,
        source_files=[{"file_id": 1, "sha256": "x", "path": "/data/e.trf", "format": "trf", "bytes": 1,
                       "ingested_at": dt.datetime(2024, 1, 20), "status": "loaded"}],
        tournaments=[{"tournament_id": t, "file_id": 1, "source_format": "trf", "name": f"Event {t}"}
                     for t in (1, 2, 3)],
        players=[{"player_id": p, "name": f"Player {p}", "name_key": f"player {p}"} for p in range(1, 8)],
        tournament_players=[{"tournament_id": t, "player_id": p, "file_id": 1}
                            for t, p in ((1, 1), (1, 2), (1, 3), (1, 4), (2, 5), (2, 7), (3, 6))],
        games=[game(1, 1, 1, 1, 2, "1", "0"), game(2, 1, 2, 1, 4, "1", "0", played=False),
               game(3, 1, 2, 4, 2, "1", "0"), game(4, 2, 1, 5, 7, "1", "0")],
        unplayed_rounds=[bye(1, 3, 1, "Z"), bye(1, 3, 2, "U"), bye(2, 5, 2, "H"), bye(3, 6, 1, "Z")],
        rating_changes=[
            change(1, 1, 1, 2, True, None, ro=2000, ro_source="computed", rc=1900, d_raw=100, d_used=100,
                   pd=D("0.64"), score=D(1), w_minus_pd=D("0.36"), k=20),
            change(1, 1, 2, 1, True, None, ro=1900, ro_source="computed", rc=2000, d_raw=-100, d_used=-100,
                   pd=D("0.36"), score=D(0), w_minus_pd=D("-0.36"), k=20),
            change(2, 1, 1, 4, False, "forfeit", ro=2000, ro_source="computed", score=D(1), k=20),
            change(2, 1, 4, 1, False, "forfeit", score=D(0)),
            change(4, 2, 5, 7, False, "both_unrated", score=D(1)),
            change(4, 2, 7, 5, False, "both_unrated", score=D(0)),
        ],
        tournament_ratings=[{"system": "fide", "list_date": FEB, "tournament_id": 1, "player_id": p, "n": 1,
                             "ro": ro, "k": 20} for p, ro in ((1, 2000), (2, 1900))],
    )  # fmt: skip


def test_every_entry_of_a_rated_event_is_explained_rated_or_not(tmp_path: Path) -> None:
    db = _store(tmp_path)
    rows = db_rows(
        db,
        "SELECT tournament_id, player_id, round, kind, reason, unplayed_code, score, counted, k_w_minus_pd, line"
        " FROM v_change_explained WHERE player_id IN (3, 4, 5, 6) ORDER BY player_id, round, reason",
    )
    assert rows == [
        (1, 3, 1, "unplayed", "bye", "Z", D(0), False, None, 23),
        (1, 3, 2, "unplayed", "bye", "U", D(0), False, None, 23),
        (1, 4, 2, "game", "forfeit", None, D(0), False, None, 12),  # its rating_changes row
        (1, 4, 2, "game", "not_rated", None, D(1), False, None, 13),  # no rating_changes row
        (2, 5, 1, "game", "both_unrated", None, D(1), False, None, 14),
        (2, 5, 2, "unplayed", "bye", "H", D(0), False, None, 25),
    ]  # Event 3 is not rated: F's bye is no row


def test_rated_rows_are_rating_changes_as_they_are(tmp_path: Path) -> None:
    db = _store(tmp_path)
    view = db_rows(
        db,
        "SELECT game_id, player_id, ro, ro_source, rc, d_raw, d_used, pd, score, w_minus_pd, k, counted, reason"
        " FROM v_change_explained WHERE kind = 'game' AND game_id IN (1, 2, 4) ORDER BY game_id, player_id",
    )
    table = db_rows(
        db,
        "SELECT game_id, player_id, ro, ro_source, rc, d_raw, d_used, pd, score, w_minus_pd, k, counted, reason"
        " FROM rating_changes ORDER BY game_id, player_id",
    )
    assert view == table
    assert db_rows(db, "SELECT k_w_minus_pd FROM v_change_explained WHERE game_id = 1 ORDER BY player_id") == [
        (D("7.20"),),
        (D("-7.20"),),
    ]
