"""A namesake in another section of the same weekend is another person when the two TRFs rate
them far apart (`elopipe.identity.apart`): the challengers' 'Short, Nigel' (1800) does not become
the masters' GM Nigel Short (2658), whose rating his games would count for. On the Bunratty 2011
files of ../shared/data (four sections, one event key, the same days) and a variant of one."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import duckdb
import pytest

from elopipe.identity.apart import RatedEntry, apart, rated_entry
from elopipe.identity.suspects import suspects
from elopipe.ingest.driver import ingest_paths
from tests.helpers.paths import SHARED_DATA
from tests.helpers.store_rows import db_rows

MASTERS = SHARED_DATA / "trf" / "irl_bunratty_masters_2011_crlf.trf"
CHALLENGERS = SHARED_DATA / "trf" / "irl_bunratty_challengers_2011_crlf.trf"
# player 7 of the challengers: name (columns 15-47), rating (49-52: 0, unrated), federation (54-56)
HEBEL = b"Hebel, Jorn".ljust(33) + b"    0 GER"


def _challengers_with_short(tmp_path: Path, rating: int) -> Path:
    """The challengers section with its player 7 renamed 'Short, Nigel', federation IRL, rated
    `rating` (no FIDE ID), every TRF16 column in place."""
    text = CHALLENGERS.read_bytes()
    short = b"Short, Nigel".ljust(33) + b" " + str(rating).rjust(4).encode() + b" IRL"
    assert text.count(HEBEL) == 1 and len(short) == len(HEBEL)
    out = tmp_path / f"challengers_short_{rating}.trf"
    out.write_bytes(text.replace(HEBEL, short))
    return out


def _masters_with_fide_id(tmp_path: Path) -> Path:
    """The masters section with GM Short's FIDE ID (400041) in columns 58-68, which it leaves blank."""
    text = MASTERS.read_bytes()
    gm = b"GM " + b"Short, Nigel".ljust(33) + b" 2658 ENG" + b" " * 12
    assert text.count(gm) == 1
    out = tmp_path / "masters_fide_id.trf"
    out.write_bytes(text.replace(gm, gm[:-11] + b"400041".rjust(11)))
    return out


def _shorts(db: Path) -> list[tuple[int, int, str]]:
    """(tournament_id, player_id, match_rule) of the entries written 'Short, Nigel'."""
    return db_rows(
        db,
        "SELECT tournament_id, player_id, match_rule FROM player_aliases WHERE name_key = 'nigel short' ORDER BY 1",
    )


@pytest.mark.parametrize(
    "one_batch", [False, True], ids=["masters then challengers", "one batch, minor first, GM with FIDE ID"]
)
def test_a_namesake_rated_far_apart_on_the_same_days_is_another_player(tmp_path: Path, one_batch: bool) -> None:
    """Before: one entry was linked to the other's player by 'name_context' (a player of the
    same event's other sources), and the challengers' games counted for the GM."""
    minor = _challengers_with_short(tmp_path, 1800)
    db = tmp_path / "s.duckdb"
    if one_batch:
        ingest_paths([minor, _masters_with_fide_id(tmp_path)], db)
        assert db_rows(db, "SELECT name_key FROM players WHERE fide_id = 400041") == [("nigel short",)]
    else:
        ingest_paths([MASTERS], db)
        ingest_paths([minor], db)
    rows = _shorts(db)
    assert len(rows) == 2 and rows[0][1] != rows[1][1], rows
    assert {r[2] for r in rows} == {"new"}
    live = db_rows(db, "SELECT count(*) FROM players WHERE name_key = 'nigel short' AND merged_into IS NULL")
    assert live == [(2,)]
    assert db_rows(db, "SELECT count(*) FROM player_merges") == [(0,)]
    # the GM's games are the masters' only
    gm = db_rows(db, "SELECT player_id FROM tournament_players WHERE rating_in_file = 2658")[0][0]
    assert db_rows(db, "SELECT DISTINCT tournament_id FROM games WHERE ? IN (white_id, black_id)", [gm]) == [
        (db_rows(db, "SELECT tournament_id FROM tournament_players WHERE player_id = ?", [gm])[0][0],)
    ]
    con = duckdb.connect(str(db), read_only=True)
    try:
        pairs = [s for s in suspects(con) if s["name_a"] == s["name_b"] == "Short, Nigel"]
    finally:
        con.close()
    assert len(pairs) == 1 and pairs[0]["reason"] == "same_name", pairs
    said = re.search(r"rated (\d+) in tournament \d+ .* and (\d+) in tournament \d+ .*, standard on the same days",
                     pairs[0]["evidence"])  # fmt: skip
    assert said is not None and sorted(said.groups()) == ["1800", "2658"], pairs[0]["evidence"]
    assert "never merged automatically" in pairs[0]["evidence"]


def test_a_namesake_rated_near_is_still_linked_within_the_event(tmp_path: Path) -> None:
    """The ratings decide, not the sections: rated 2600, the challengers' 'Short, Nigel' is linked
    to the masters' player as before (a name in the same event's other sources)."""
    db = tmp_path / "s.duckdb"
    ingest_paths([MASTERS], db)
    ingest_paths([_challengers_with_short(tmp_path, 2600)], db)
    rows = _shorts(db)
    assert len(rows) == 2 and rows[0][1] == rows[1][1], rows
    assert [r[2] for r in rows] == ["new", "name_context"]


def _entry(tid: int, rating: int, rate_class: str = "standard", days: tuple[int, int] = (25, 27)) -> RatedEntry:
    e = rated_entry(tid, 1, rating, rate_class, dt.date(2011, 2, days[0]), dt.date(2011, 2, days[1]))
    assert e is not None
    return e


def test_apart_needs_one_rate_class_overlapping_days_and_400_points() -> None:
    gm, minor = _entry(1, 2658), _entry(2, 1800)
    assert apart(gm, minor) and apart(minor, gm)
    assert not apart(gm, _entry(2, 2259))  # 399 points
    assert apart(gm, _entry(2, 2258))
    assert not apart(gm, _entry(1, 1800))  # one tournament: its two entries are told apart elsewhere
    assert not apart(gm, _entry(2, 1800, "blitz"))  # a side event at another rate
    assert not apart(gm, _entry(2, 1800, days=(28, 28)))  # the day after: no slack
    assert apart(gm, _entry(2, 1800, days=(27, 28)))
    # no evidence: not a TRF entry (no start rank), unrated, rate class or days unknown
    day = dt.date(2011, 2, 25)
    assert rated_entry(2, None, 1800, "standard", day, day) is None
    assert rated_entry(2, 7, 0, "standard", day, day) is None
    assert rated_entry(2, 7, None, "standard", day, day) is None
    assert rated_entry(2, 7, 1800, None, day, day) is None
    assert rated_entry(2, 7, 1800, "standard", None, None) is None
    assert rated_entry(2, 7, 1800, "standard", day, None) == RatedEntry(2, 1800, "standard", day, day)
