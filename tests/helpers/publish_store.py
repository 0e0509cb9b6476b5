"""A small hand-made store for the publish tests (`build_store`).

Scenario (system 'fide', lists 2024-01-01 and 2024-02-01; tournament 1 rated on 2024-02-01):
four players, three rounds; A beat B, drew C, won by forfeit against D (not rated); B lost
to C in round 3; C drew unrated D in round 1; D had a bye ('H') in round 2... (D plays B in
round 2, see GAMES). The rating rows are FIDE-consistent (table 8.1.2), worked by hand:

- A, Ro 2100, K 20: vs B (1900, D=200 -> PD .76) 1; vs C (1500, D=600 capped 400 -> .92) ½;
  n=2, W=1.5, We=1.68, W-We=-0.18, K×(W-We)=-3.60 -> -4; Ra 1700, p=.75 -> dp 193, Rp 1893.
- B, Ro 1900, K 40: vs A (D=-200 -> .24) 0; vs C (D=400 -> .92) 0; W-We=-1.16 -> -46.40 -> -46.
- C, Ro 1500, K 40: vs A (D=-600 capped -400 -> .08) ½; vs B (D=-400 -> .08) 1;
  W-We=+1.34 -> +53.60 -> +54.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

from tests.helpers.schema_store import schema_connect
from tests.helpers.store_build import add_rows

JAN, FEB = dt.date(2024, 1, 1), dt.date(2024, 2, 1)

D = Decimal

PLAYERS = [
    # player_id, fide_id, national_id, name, federation, sex, birth_year, title
    (1, 100001, None, "Alpha, Anna", "FRA", "w", 1990, "WGM"),
    (2, 100002, "B12345", "Bravo, Bruno", "ESP", "m", 2005, None),
    (3, 100003, None, "Charlie, Chloé", "IRL", "w", 2010, None),
    (4, None, None, "Delta, Dan", "GER", "m", 2012, None),
    (5, 100005, None, "Echo, Emil", "FRA", "m", 1970, "FM"),
    (6, 100006, None, "Foxtrot, Fay", "ENG", "w", 1960, None),
    (7, 100007, None, "Golf, Gus", "USA", "m", 2000, None),
]

LISTS = [
    # list_date, player_id, rating, games, total_games, k, change, flags
    (JAN, 1, 2100, 0, 40, 20, 0, None),
    (JAN, 2, 1900, 0, 10, 40, 0, None),
    (JAN, 3, 1500, 0, 12, 40, 0, None),
    (JAN, 5, 1420, 0, 50, 20, 0, None),
    (JAN, 6, 1800, 0, 80, 20, 0, "i"),
    (FEB, 1, 2096, 2, 42, 20, -4, None),
    (FEB, 2, 1854, 2, 12, 40, -46, None),
    (FEB, 3, 1554, 2, 14, 40, 54, None),
    (FEB, 4, None, 2, 2, None, None, None),
    (FEB, 5, None, 0, 50, 20, None, None),
    (FEB, 7, 1600, 6, 6, 40, None, "new"),
]

# game_id, round, white, black, result, white_score, black_score, played, unplayed_code, line
GAMES = [
    (1, 1, 1, 2, "1-0", D(1), D(0), True, None, 5),
    (2, 1, 3, 4, "1/2-1/2", D("0.5"), D("0.5"), True, None, 7),
    (3, 2, 3, 1, "1/2-1/2", D("0.5"), D("0.5"), True, None, 7),
    (4, 2, 2, 4, "1-0", D(1), D(0), True, None, 6),
    (5, 3, 1, 4, "1-0", D(1), D(0), False, "+", 5),
    (6, 3, 2, 3, "0-1", D(0), D(1), True, None, 6),
]

# rating_changes: game_id, player, opponent, ro, rc, d_raw, d_used, pd, score, w-pd, k, counted, reason
CHANGES = [
    (1, 1, 2, 2100, 1900, 200, 200, D("0.76"), D(1), D("0.24"), 20, True, None),
    (3, 1, 3, 2100, 1500, 600, 400, D("0.92"), D("0.5"), D("-0.42"), 20, True, None),
    (5, 1, 4, 2100, None, None, None, None, D(1), None, 20, False, "forfeit"),
    (1, 2, 1, 1900, 2100, -200, -200, D("0.24"), D(0), D("-0.24"), 40, True, None),
    (6, 2, 3, 1900, 1500, 400, 400, D("0.92"), D(0), D("-0.92"), 40, True, None),
    (4, 2, 4, 1900, None, None, None, None, D(1), None, 40, False, "unrated_opponent"),
    (3, 3, 1, 1500, 2100, -600, -400, D("0.08"), D("0.5"), D("0.42"), 40, True, None),
    (6, 3, 2, 1500, 1900, -400, -400, D("0.08"), D(1), D("0.92"), 40, True, None),
    (2, 3, 4, 1500, None, None, None, None, D("0.5"), None, 40, False, "unrated_opponent"),
]

# tournament_ratings: player, ro, n, score, ra, we, w_we, k, change_x100, rp, unrated, ru
TOURNAMENT_RATINGS = [
    (1, 2100, 2, D("1.5"), 1700, D("1.68"), D("-0.18"), 20, -360, 1893, False, None),
    (2, 1900, 2, D(0), 1800, D("1.16"), D("-1.16"), 40, -4640, 1000, False, None),
    (3, 1500, 2, D("1.5"), 2000, D("0.16"), D("1.34"), 40, 5360, 2193, False, None),
    (4, None, 2, D("0.5"), 1700, None, None, None, None, None, True, 1615),
]


def build_store(path: Path) -> Path:
    """Create a store at `path` holding the scenario of this module; return the path."""
    ratings_in_file = {1: 2100, 2: 1900, 3: 1500, 4: None}
    points = {1: D(2.5), 2: D(1), 3: D(2), 4: D("0.5")}
    con = schema_connect(path)
    try:
        add_rows(
            con,
            source_files=[{"file_id": 1, "sha256": "x", "path": "/data/trf/spring_open.trf", "format": "trf",
                           "bytes": 100, "ingested_at": dt.datetime.now(), "status": "loaded"}],
            tournaments=[{"tournament_id": 1, "file_id": 1, "source_format": "trf", "name": "Spring Open 2024",
                          "city": "Cork", "start_date": dt.date(2024, 1, 10), "end_date": dt.date(2024, 1, 12),
                          "rounds": 3}],
            players=[{"player_id": pid, "fide_id": fid, "national_id": nid, "name": name, "name_key": name.lower(),
                      "federation": fed, "sex": sex, "birth_year": by, "title": title}
                     for pid, fid, nid, name, fed, sex, by, title in PLAYERS],
            tournament_players=[{"tournament_id": 1, "player_id": pid, "start_rank": pid,
                                 "name_as_written": PLAYERS[pid - 1][3], "rating_in_file": ratings_in_file[pid],
                                 "points_in_file": points[pid], "final_rank": None, "file_id": 1, "line": 4 + pid}
                                for pid in (1, 2, 3, 4)],
            games=[{"game_id": gid, "tournament_id": 1, "file_id": 1, "line": line, "game_index": gid, "round": rnd,
                    "round_label": str(rnd), "white_id": w, "black_id": b, "result": res, "white_score": ws,
                    "black_score": bs, "played": played, "unplayed_code": code}
                   for gid, rnd, w, b, res, ws, bs, played, code, line in GAMES],
            unplayed_rounds=[{"tournament_id": 1, "player_id": 4, "round": 4, "code": "H", "score": D("0.5"),
                              "opponent_id": None, "file_id": 1, "line": 8}],
            rating_lists=[{"system": "fide", "list_date": ld, "player_id": pid, "rating": rating, "games": games,
                           "total_games": total, "k": k, "change": change, "flags": flags, "source": "computed"}
                          for ld, pid, rating, games, total, k, change, flags in LISTS],
            rating_changes=[{"system": "fide", "list_date": FEB, "tournament_id": 1, "game_id": gid, "player_id": pid,
                             "opponent_id": opp, "ro": ro, "rc": rc, "d_raw": draw, "d_used": dused, "pd": pd,
                             "score": sc, "w_minus_pd": wpd, "k": k, "counted": counted, "reason": reason}
                            for gid, pid, opp, ro, rc, draw, dused, pd, sc, wpd, k, counted, reason in CHANGES],
            tournament_ratings=[{"system": "fide", "list_date": FEB, "tournament_id": 1, "player_id": pid,
                                 "rules_version": "V2024", "ro": ro, "n": n, "score": sc, "ra": ra, "we": we,
                                 "w_we": wwe, "k": k, "change_x100": x100, "rp": rp, "unrated": unrated,
                                 "ru_provisional": ru}
                                for pid, ro, n, sc, ra, we, wwe, k, x100, rp, unrated, ru in TOURNAMENT_RATINGS],
        )  # fmt: skip
    finally:
        con.close()
    return path


def remove_feb(db: Path) -> None:
    """What `rate` leaves when no game is rated on the February list (`FEB`) any more: its rows
    gone, the event rated on it no longer rated under the system."""
    import duckdb

    con = duckdb.connect(str(db))
    try:
        for table in ("rating_lists", "rating_changes", "tournament_ratings"):
            con.execute(f"DELETE FROM {table} WHERE system = 'fide' AND list_date = ?", [FEB])
    finally:
        con.close()
