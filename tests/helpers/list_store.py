"""The publish store (`tests.helpers.publish_store`) with more players on its February 2024 list,
one for each case a list must get right (`build_list_store`).

February 2024 list (list year 2024: U20 = born 2004 or later, 50+ = born 1974 or earlier,
65+ = born 1959 or earlier), by rating:

=====  =====================  ======  =====  ===  ====  =====  =========  ========================
pid    name                   rating  fed    sex  born  title  FIDE ID    on the list
=====  =====================  ======  =====  ===  ====  =====  =========  ========================
8      Hotel, Hugh            2500    IRL    m    1980         none       no FIDE ID: shown apart
1      Alpha, Anna            2096    FRA    w    1990  WGM    100001     rank 1, FRA 1
9      India, Ivo             2000    ESP    m    1970         100009     inactive: no rank
2      Bravo, Bruno           1854    ESP    m    2005         100002     rank 2, ESP 1, U20
10     Juliet, Jana           1700    FRA    w    2006  WFM    100010     rank 3, FRA 2, U20
7      Golf, Gus              1600    USA    m    2000         100007     rank 4, USA 1
3      Charlie, Chloé         1554    IRL    w    2010         100003     rank 5, IRL 1, U20
11     Kilo, Karl             1554    ESP    m    1974  FM     100011     rank 5, ESP 2, 50+
12     Lima, Lea              1450    FRA    w    1959  GM     100012     rank 7, FRA 3, 50+ 65+
13     Mike, Mo               1300    IRL    m    1950         999999→    no FIDE ID: shown apart
=====  =====================  ======  =====  ===  ====  =====  =========  ========================

(13's file wrote 999999, which the reader turns into no ID.)
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from tests.helpers.publish_store import FEB, build_store
from tests.helpers.store_build import add_rows

EXTRA_PLAYERS = [
    # player_id, fide_id, national_id, name, federation, sex, birth_year, title, rating, flags
    (8, None, "5160", "Hotel, Hugh", "IRL", "m", 1980, None, 2500, None),
    (9, 100009, None, "India, Ivo", "ESP", "m", 1970, None, 2000, "i"),
    (10, 100010, None, "Juliet, Jana", "FRA", "w", 2006, "WFM", 1700, None),
    (11, 100011, None, "Kilo, Karl", "ESP", "m", 1974, "FM", 1554, None),
    (12, 100012, None, "Lima, Lea", "FRA", "w", 1959, "GM", 1450, None),
    (13, None, None, "Mike, Mo", "IRL", "m", 1950, None, 1300, None),
]


def build_list_store(path: Path) -> Path:
    """`build_store` plus `EXTRA_PLAYERS` on the February list; returns the path."""
    build_store(path)
    con = duckdb.connect(str(path))
    try:
        add_rows(
            con,
            players=[{"player_id": pid, "fide_id": fid, "national_id": nid, "name": name, "name_key": name.lower(),
                      "federation": fed, "sex": sex, "birth_year": by, "title": title}
                     for pid, fid, nid, name, fed, sex, by, title, _, _ in EXTRA_PLAYERS],
            rating_lists=[{"system": "fide", "list_date": FEB, "player_id": pid, "rating": rating, "games": 0,
                           "total_games": 40, "k": 20, "change": 0, "flags": flags, "source": "computed"}
                          for pid, *_, rating, flags in EXTRA_PLAYERS],
        )  # fmt: skip
    finally:
        con.close()
    return path
