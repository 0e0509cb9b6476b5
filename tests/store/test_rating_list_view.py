"""`v_rating_lists`: the rank FIDE's lists give (active players with the list's ID), the national
rank, and the players shown apart because they lack the list's ID."""

import datetime as dt

from tests.helpers.schema_store import schema_connect
from tests.helpers.store_build import add_rows

D = dt.date(2025, 10, 1)


def _store(rows: list[tuple[int, str, int | None, str | None, str | None, int, str | None]], system: str):
    """rows: player_id, name, fide_id, national_id, federation, rating, flags."""
    con = schema_connect()
    add_rows(
        con,
        players=[{"player_id": pid, "name": name, "name_key": name.lower(), "fide_id": fid, "national_id": nid,
                  "federation": fed} for pid, name, fid, nid, fed, _, _ in rows],
        rating_lists=[{"system": system, "list_date": D, "player_id": pid, "rating": rating, "games": 0, "k": 20,
                       "change": 0, "flags": flags, "source": "computed"} for pid, *_, rating, flags in rows],
    )  # fmt: skip
    return con


def test_rank_skips_inactive_players_and_players_without_a_fide_id() -> None:
    con = _store(
        [
            (1, "Alpha, A", 100001, None, "IRL", 2800, "i"),
            (2, "Beta, B", 100002, None, "IRL", 2750, None),
            (3, "Gamma, G", 100003, None, "ENG", 2750, "new"),
            (4, "Delta", 100004, None, "IRL", 2700, ""),
            # rated from an Irish file that gave an ICU number, no FIDE ID: never ranked
            (5, "Irish, Top", None, "12345", "IRL", 2900, None),
            (6, "Echo", 100006, None, None, 2600, None),
        ],
        "fide",
    )
    got = con.execute(
        "SELECT name, rank, fed_rank, inactive, no_id, fide_flag FROM v_rating_list ORDER BY rank NULLS LAST, name"
    ).fetchall()
    assert got == [
        ("Beta, B", 1, 1, False, False, ""),
        ("Gamma, G", 1, 1, False, False, ""),
        ("Delta", 3, 2, False, False, ""),
        ("Echo", 4, None, False, False, ""),
        ("Alpha, A", None, None, True, False, "i"),
        ("Irish, Top", None, None, False, True, ""),
    ]


def test_ffe_list_ranks_licensees() -> None:
    """An FFE list ranks the players with an FFE licence (a letter, a letter or digit, 4 digits);
    a foreigner known by FIDE ID only, or an ICU number, is shown apart."""
    con = _store(
        [
            (1, "Licencie, A", None, "A01450", "FRA", 2100, "F"),
            (2, "Etranger, B", 100002, None, "ESP", 2300, "F"),
            (3, "Licencie, C", 100003, "K59857", "FRA", 2000, "N"),
            (4, "Icu, D", None, "12345", "IRL", 2400, None),
        ],
        "ffe",
    )
    got = con.execute("SELECT name, rank, no_id FROM v_rating_list ORDER BY rank NULLS LAST, name").fetchall()
    assert got == [
        ("Licencie, A", 1, False),
        ("Licencie, C", 2, False),
        ("Etranger, B", None, True),
        ("Icu, D", None, True),
    ]
