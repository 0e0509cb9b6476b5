"""Build a small store by direct inserts (no readers needed) for the national-engine tests."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from elopipe.store.connect import open_writer
from tests.helpers.store_build import add_rows


def build_store(
    db: Path,
    players: list[tuple[int, str, int | None]],
    events: list[dict],
) -> Path:
    """players: (player_id, name, birth_year). events: dicts with tournament_id, name,
    start, end, time_control, entries {player_id: (fide_rating, national, flag)},
    games [(game_id, white, black, result, date, played)]."""
    scores = {"1-0": (1, 0), "0-1": (0, 1), "1/2-1/2": (0.5, 0.5)}
    with open_writer(db) as con:
        add_rows(
            con,
            source_files=[{"file_id": 1, "sha256": "x", "path": "test", "format": "trf", "bytes": 0,
                           "ingested_at": dt.datetime.now(), "status": "loaded"}],
            players=[{"player_id": pid, "name": name, "name_key": name.lower(), "birth_year": by, "first_file_id": 1}
                     for pid, name, by in players],
            tournaments=[{"tournament_id": ev["tournament_id"], "file_id": 1, "source_format": "trf",
                          "name": ev["name"], "start_date": ev["start"], "end_date": ev["end"],
                          "time_control": ev.get("time_control")} for ev in events],
            tournament_players=[{"tournament_id": ev["tournament_id"], "player_id": pid, "rating_in_file": fide,
                                 "national_rating": nat, "national_rating_flag": flag, "file_id": 1}
                                for ev in events for pid, (fide, nat, flag) in ev["entries"].items()],
            games=[{"game_id": gid, "tournament_id": ev["tournament_id"], "file_id": 1, "line": gid,
                    "game_date": date, "white_id": w, "black_id": b, "result": res,
                    "white_score": scores.get(res, (None, None))[0], "black_score": scores.get(res, (None, None))[1],
                    "played": played, "time_control": ev.get("game_tc")}
                   for ev in events for gid, w, b, res, date, played in ev["games"]],
        )  # fmt: skip
    return db


def d(s: str) -> dt.date:
    return dt.date.fromisoformat(s)
