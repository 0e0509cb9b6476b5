"""`elopipe compare`: two sides' lists of one date, player by player, with the cause of each difference."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.publish.compare import CompareError, compare, write_outputs
from elopipe.rating.run import rate
from elopipe.read.names import name_key
from elopipe.store.schema import ensure_schema
from tests.helpers.fide import Scenario
from tests.helpers.store_build import add_rows

NOV = dt.date(2025, 11, 1)  # V2024 as amended from 1 Oct 2025: no 400-point cap for a player rated 2650+
DEC = dt.date(2025, 12, 1)


def _store() -> Scenario:
    """Player 1 (2700, K 10) beats 2 (2000) and 5 (2200): D over 400 for player 1. Players 3 and 4
    (1300 and 1350, under the floor of 1400 from March 2024, over V2017's 1000) draw twice."""
    s = Scenario()
    for pid, rating, k in ((1, 2700, 10), (2, 2000, 20), (3, 1300, 20), (4, 1350, 20), (5, 2200, 20)):
        s.player(pid, fide_id=1000 + pid)
        s.official(NOV, pid, rating, k=k)
    s.event(dt.date(2025, 11, 10), dt.date(2025, 11, 12), [(1, 2, "W"), (5, 1, "L"), (3, 4, "D"), (4, 3, "D")])
    return s


def _row(df: pl.DataFrame, pid: int) -> dict:
    rows = df.filter(pl.col("player_id") == pid)
    assert rows.height == 1, rows
    return rows.row(0, named=True)


def test_a_system_against_itself_shows_no_difference() -> None:
    s = _store()
    rate(s.con, "fide")
    cmp = compare(s.con, "fide", "fide")
    assert cmp.list_date == DEC
    assert cmp.summary.compared == cmp.rows.height > 0
    assert (cmp.summary.changed, cmp.summary.mean_abs_diff, cmp.summary.causes) == (0, 0, {})
    assert set(cmp.rows["status"]) == {"same"} and cmp.rows["cause"].null_count() == cmp.rows.height
    assert (cmp.rows["diff"] == 0).all() and (cmp.rows["rank_a"] == cmp.rows["rank_b"]).all()
    assert cmp.up.height == cmp.down.height == 0


def test_v2017_against_v2024_shows_the_cap_and_the_floor() -> None:
    s = _store()
    rate(s.con, "fide@v2017", rules="V2017")
    rate(s.con, "fide", rules="V2024")
    cmp = compare(s.con, "fide@v2017", "fide", DEC)
    # player 1 (2700): capped to D 400 under V2017 (PD .92 both games), raw D under V2024 as amended
    p1 = _row(cmp.rows, 1)
    assert p1["status"] == "changed" and p1["cause"] == "cap_400"
    assert p1["cap_differs"] == 2 and p1["c_cap"] and not p1["c_games"]
    assert (p1["games_a"], p1["games_b"], p1["games_only_a"], p1["games_only_b"]) == (2, 2, 0, 0)
    assert p1["diff"] == p1["rating_b"] - p1["rating_a"] != 0
    # player 2 (2000) is capped on both sides: no difference
    assert _row(cmp.rows, 2)["status"] == "same"
    # players 3 and 4 stay rated under V2017 (floor 1000) and fall off the V2024 list (floor 1400)
    for pid in (3, 4):
        row = _row(cmp.rows, pid)
        assert (row["status"], row["cause"], row["rating_b"]) == ("only_a", "floor", None)
        assert row["delisted_b"] > 0 and row["delisted_a"] == 0
    # each changed player counted once, by its main cause; the players on one side only apart
    assert cmp.summary.causes == {"cap_400": 1} and sum(cmp.summary.causes.values()) == cmp.summary.changed
    assert cmp.summary.one_side_causes == {"floor": 2}
    assert cmp.summary.only_a == 2
    # the same rows are in the view, for SQL users
    view = s.con.sql(
        "SELECT player_id, cause FROM v_compare WHERE side_a = 'fide@v2017' AND side_b = 'fide' "
        "AND list_date = DATE '2025-12-01' AND cause IS NOT NULL ORDER BY player_id"
    ).fetchall()
    assert view == [(1, "cap_400"), (3, "floor"), (4, "floor")]


def test_a_computed_list_against_an_imported_official_list() -> None:
    s = _store()
    rate(s.con, "fide")
    computed = dict(s.con.execute("SELECT player_id, rating FROM rating_lists WHERE list_date = ?", [DEC]).fetchall())
    # the official December list: player 2 as computed, player 5 five points off with one game more
    add_rows(
        s.con,
        official_lists=[
            {"system": "fide", "list_date": DEC, "fide_id": 1002, "name": "Player 2", "rating": computed[2],
             "games": 1, "k": 20, "player_id": 2},
            {"system": "fide", "list_date": DEC, "fide_id": 1005, "name": "Player 5", "rating": computed[5] + 5,
             "games": 2, "k": 20, "player_id": 5},
        ],
    )  # fmt: skip
    cmp = compare(s.con, "fide", "official")
    assert (cmp.side_b, cmp.list_date) == ("official:fide", DEC)
    p2, p5 = _row(cmp.rows, 2), _row(cmp.rows, 5)
    assert (p2["status"], p2["match_key"]) == ("same", "fide_id")
    assert (p5["status"], p5["diff"], p5["cause"], p5["match_key"]) == ("changed", 5, "games_one_side", "fide_id")
    assert (p5["games_a"], p5["games_b"]) == (1, 2)
    assert cmp.summary.compared == 2 and cmp.summary.changed == 1
    # player 1 is not on this official list: nothing there tells why
    assert (_row(cmp.rows, 1)["status"], _row(cmp.rows, 1)["cause"]) == ("only_a", None)


def test_an_official_row_matched_by_name_and_birth_year() -> None:
    s = _store()
    s.con.execute("UPDATE players SET birth_year = 1990, name_key = ? WHERE player_id = 1", [name_key("Player 1")])
    rate(s.con, "fide")
    rating = s.con.execute("SELECT rating FROM rating_lists WHERE list_date = ? AND player_id = 1", [DEC]).fetchall()
    # the import found no FIDE ID or national ID in the store and made player 50 for the row
    add_rows(
        s.con,
        players=[{"player_id": 50, "name": "PLAYER 1", "name_key": "player 1", "birth_year": 1990}],
        official_lists=[{"system": "fide", "list_date": DEC, "name": "PLAYER 1", "birth_year": 1990,
                         "rating": rating[0][0], "games": 2, "player_id": 50}],
    )  # fmt: skip
    row = _row(compare(s.con, "fide", "official:fide").rows, 1)
    assert (row["match_key"], row["status"], row["rating_b"]) == ("name_birth_year", "same", rating[0][0])


def test_unknown_side_and_no_common_date_are_one_sentence() -> None:
    s = _store()
    rate(s.con, "fide")
    with pytest.raises(CompareError, match="the store has no list for 'ffe'; sides it has: fide"):
        compare(s.con, "fide", "ffe")
    with pytest.raises(CompareError, match="no list date in common"):
        add_rows(
            s.con, official_lists=[{"system": "fide", "list_date": dt.date(2020, 1, 1), "player_id": 1, "rating": 2700}]
        )
        compare(s.con, "fide", "official:fide")


def test_outputs_and_the_command(tmp_path: Path) -> None:
    s = _store()
    rate(s.con, "fide@v2017", rules="V2017")
    rate(s.con, "fide", rules="V2024")
    paths = write_outputs(compare(s.con, "fide@v2017", "fide"), tmp_path / "direct").paths
    assert [p.name for p in paths] == ["compare-fide_v2017-vs-fide-2025-12-01.csv",
                                       "compare-fide_v2017-vs-fide-2025-12-01.html"]  # fmt: skip
    csv = pl.read_csv(paths[0])
    assert csv.height == 5 and {"rating_a", "rating_b", "diff", "rank_a", "rank_b", "cause"} <= set(csv.columns)
    html = paths[1].read_text(encoding="utf-8")
    assert "cap_400" in html and 'id="compared">3<' in html and "<script>" in html
    assert html.count('<tr class="cause">') == 1 and html.count('<tr class="one-side-cause">') == 1
    db = tmp_path / "c.duckdb"
    s.con.execute(f"ATTACH '{db}' AS f")
    s.con.execute("COPY FROM DATABASE memory TO f")
    s.con.execute("DETACH f")
    res = CliRunner().invoke(app, ["compare", "fide@v2017", "fide", "--db", str(db), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0] == "fide@v2017 (A) against fide (B), list of 2025-12-01"
    assert "players compared: 3; changed: 1;" in lines[1] and "rated on A only: 2; on B only: 0" in lines[1]
    assert lines[2] == "main causes of the 1 changed (each player once, by the first that applies): cap_400 1"
    assert lines[3] == "rated on one side only, by cause: floor 2"
    assert "Largest rises of B against A" in res.output or "Largest falls of B against A" in res.output
    assert (tmp_path / "o" / "compare-fide_v2017-vs-fide-2025-12-01.html").exists()
    # a user's file under the CSV's name (his own notes) is kept first, said in one line: it was
    # overwritten without a copy (hostile tester)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "compare-fide_v2017-vs-fide-2025-12-01.csv").write_text("USER DATA\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["compare", "fide@v2017", "fide", "--db", str(db), "--out", str(mine)])
    assert res.exit_code == 0, res.output
    kept = mine / ".elopipe-kept" / "compare-fide_v2017-vs-fide-2025-12-01.csv"
    assert kept.read_text(encoding="utf-8") == "USER DATA\n" and ".elopipe-kept" in res.output, res.output
    assert pl.read_csv(mine / "compare-fide_v2017-vs-fide-2025-12-01.csv").height == 5
    # a folder under the CSV's name is said before the comparison is made (it was said after it)
    blocked = tmp_path / "blocked"
    (blocked / "compare-fide_v2017-vs-fide-2025-12-01.csv").mkdir(parents=True)
    res = CliRunner().invoke(app, ["compare", "fide@v2017", "fide", "--db", str(db), "--out", str(blocked)])
    assert res.exit_code == 2 and "players compared" not in res.output
    assert res.output.splitlines()[-1].endswith(
        "compare-fide_v2017-vs-fide-2025-12-01.csv: a folder of that name is there"
    )
    bad = CliRunner().invoke(app, ["compare", "fide", "nope", "--db", str(db)])
    assert bad.exit_code == 2 and "the store has no list for 'nope'" in bad.output and "Traceback" not in bad.output


def test_a_date_that_is_no_list_date_or_after_a_sides_last_list_is_refused() -> None:
    # the lists used must be the date's: a date between lists, or past a side's last list, was
    # labelled "list of D" over a comparison of older lists
    s = _store()
    rate(s.con, "fide")
    rate(s.con, "fide@v2017", rules="V2017")
    with pytest.raises(CompareError, match=f"^neither side has a list dated 1990-01-01; nearest lists: fide: {DEC};"):
        compare(s.con, "fide", "fide@v2017", dt.date(1990, 1, 1))
    with pytest.raises(CompareError, match=f"^neither side has a list dated 2025-11-20; nearest lists: fide: {DEC}"):
        compare(s.con, "fide", "fide@v2017", dt.date(2025, 11, 20))
    # the official list is of November: December is past its last list
    with pytest.raises(CompareError, match=f"^official:fide's last list is {NOV}, before {DEC}: give a date up to"):
        compare(s.con, "fide", "official", DEC)
    # a side whose first list comes after the date: its ratings there would be none, not a difference
    with pytest.raises(CompareError, match=f"^fide's first list is {DEC}, after {NOV}: give a date from {DEC}"):
        compare(s.con, "fide", "official", NOV)
    # an imported list counts on its own date only: between two of its lists there is none
    s.official(dt.date(2026, 1, 1), 1, 2700, k=10)
    with pytest.raises(CompareError, match=f"^official:fide has no list dated {DEC}; its nearest: {NOV}, 2026-01-01"):
        compare(s.con, "fide", "official", DEC)
    assert compare(s.con, "fide", "fide@v2017", DEC).list_date == DEC


def test_a_newcomer_rated_by_two_initial_rating_rules() -> None:
    # B.02 8.2: V2017's Ru is Ra at 50 %; V2024 adds two draws against 1800 (so Ru falls below Ra 2000)
    s = Scenario()
    for pid in range(1, 6):
        s.player(pid, fide_id=2000 + pid)
        s.official(NOV, pid, 2000, k=20)
    s.player(9)
    games = [(9, 1, "W"), (2, 9, "W"), (9, 3, "D"), (4, 9, "D"), (9, 5, "D"), (1, 2, "D")]
    s.event(dt.date(2025, 11, 10), dt.date(2025, 11, 14), games)
    rate(s.con, "fide@v2017", rules="V2017")
    rate(s.con, "fide", rules="V2024")
    row = _row(compare(s.con, "fide@v2017", "fide", DEC).rows, 9)
    assert (row["start_a"], row["start_b"]) == (None, None)
    assert row["first_rating_a"] == row["rating_a"] == 2000
    assert row["first_rating_b"] == row["rating_b"] == 1943  # spec TV-29: 2000, 2.5 / 5
    assert (row["status"], row["cause"]) == ("changed", "initial_rating")


@pytest.mark.parametrize("stem", ["a", "b", "sa", "f"])
def test_the_view_is_made_in_a_store_named_like_an_alias(tmp_path: Path, stem: str) -> None:
    # a store file a.duckdb is the catalog `a`: the view must not read `a.x.y` as catalog.table.column
    con = duckdb.connect(str(tmp_path / f"{stem}.duckdb"))
    try:
        ensure_schema(con)
        assert con.execute("SELECT count(*) FROM v_compare").fetchall() == [(0,)]
    finally:
        con.close()


def test_main_causes_add_up_to_the_changed_players() -> None:
    # player 1 has two causes at once (a game counted on one side only and the cap): counted once
    s = _store()
    rate(s.con, "fide@v2017", rules="V2017")
    rate(s.con, "fide", rules="V2024")
    s.con.execute("UPDATE rating_changes SET counted = FALSE WHERE system = 'fide' AND player_id = 1 AND game_id = "
                  "(SELECT min(game_id) FROM rating_changes WHERE system = 'fide' AND player_id = 1)")  # fmt: skip
    cmp = compare(s.con, "fide@v2017", "fide", DEC)
    p1 = _row(cmp.rows, 1)
    assert p1["c_games"] and p1["c_cap"] is not None and p1["cause"] == "games_one_side"
    assert (
        sum(cmp.summary.causes.values()) == cmp.summary.changed == cmp.rows.filter(pl.col("status") == "changed").height
    )


def test_ranks_are_the_lists_own_ranks() -> None:
    # the list ranks active players with a FIDE ID only: player 9 (no FIDE ID) and an inactive
    # player have a rating and no rank, and the others are ranked without them
    s = Scenario()
    for pid in range(1, 6):
        s.player(pid, fide_id=2000 + pid)
        s.official(NOV, pid, 2000 + 10 * pid, k=20)
    s.player(9)
    s.event(
        dt.date(2025, 11, 10), dt.date(2025, 11, 14), [(9, 1, "W"), (2, 9, "W"), (9, 3, "D"), (4, 9, "D"), (9, 5, "D")]
    )
    rate(s.con, "fide")
    s.con.execute("UPDATE rating_lists SET flags = 'i' WHERE player_id = 5 AND list_date = ?", [DEC])
    # the official December list: player 3 inactive ('i'), a row no store player matches ranked first
    add_rows(
        s.con,
        official_lists=[
            {"system": "fide", "list_date": DEC, "fide_id": fid, "name": name, "rating": r, "flag": flag,
             "player_id": pid}
            for fid, name, r, flag, pid in [(9999, "Nobody", 2900, None, None), (2001, "P1", 2010, None, 1),
                                            (2003, "P3", 2030, "i", 3), (2004, "P4", 2040, None, 4)]
        ],
    )  # fmt: skip
    listed = dict(s.con.execute(
        "SELECT player_id, rank FROM v_rating_lists WHERE system = 'fide' AND list_date = ?", [DEC]
    ).fetchall())  # fmt: skip
    assert listed[9] is None and listed[5] is None
    cmp = compare(s.con, "fide", "fide", DEC)
    assert dict(zip(cmp.rows["player_id"], cmp.rows["rank_a"], strict=True)) == listed
    assert dict(zip(cmp.rows["player_id"], cmp.rows["rank_b"], strict=True)) == listed
    off = compare(s.con, "fide", "official:fide", DEC)
    assert {
        r["player_id"]: r["rank_b"] for r in off.rows.filter(pl.col("rating_b").is_not_null()).iter_rows(named=True)
    } == {1: 3, 3: None, 4: 2}
