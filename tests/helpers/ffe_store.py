"""Build a small store by direct inserts (no readers needed) for the national-engine tests."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from elopipe.store.connect import open_writer


def build_store(
    db: Path,
    players: list[tuple[int, str, int | None]],
    events: list[dict],
) -> Path:
    """players: (player_id, name, birth_year). events: dicts with tournament_id, name,
    start, end, time_control, entries {player_id: (fide_rating, national, flag)},
    games [(game_id, white, black, result, date, played)]."""
    with open_writer(db) as con:
        con.execute(
            "INSERT INTO source_files (file_id, sha256, path, format, bytes, ingested_at, status)"
            " VALUES (1, 'x', 'test', 'trf', 0, now(), 'loaded')"
        )
        for pid, name, by in players:
            con.execute(
                "INSERT INTO players (player_id, name, name_key, birth_year, first_file_id) VALUES (?, ?, ?, ?, 1)",
                [pid, name, name.lower(), by],
            )
        for ev in events:
            con.execute(
                "INSERT INTO tournaments (tournament_id, file_id, source_format, name, start_date,"
                " end_date, time_control) VALUES (?, 1, 'trf', ?, ?, ?, ?)",
                [ev["tournament_id"], ev["name"], ev["start"], ev["end"], ev.get("time_control")],
            )
            for pid, (fide, nat, flag) in ev["entries"].items():
                con.execute(
                    "INSERT INTO tournament_players (tournament_id, player_id, rating_in_file,"
                    " national_rating, national_rating_flag, file_id) VALUES (?, ?, ?, ?, ?, 1)",
                    [ev["tournament_id"], pid, fide, nat, flag],
                )
            for gid, w, b, res, date, played in ev["games"]:
                ws, bs = {"1-0": (1, 0), "0-1": (0, 1), "1/2-1/2": (0.5, 0.5)}.get(res, (None, None))
                con.execute(
                    "INSERT INTO games (game_id, tournament_id, file_id, line, game_date, white_id,"
                    " black_id, result, white_score, black_score, played, time_control)"
                    " VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [gid, ev["tournament_id"], gid, date, w, b, res, ws, bs, played, ev.get("game_tc")],
                )
    return db


def d(s: str) -> dt.date:
    return dt.date.fromisoformat(s)
