"""Behaviour of the FIDE engine beyond the spec's numeric vectors: which games count,
bootstrap from files, discrepancies, floor, inactivity, pooling window, rapid/blitz."""

from __future__ import annotations

import datetime as dt

import polars as pl

from tests.helpers.fide import Scenario, row

D = dt.date


def test_unplayed_and_not_rated_games_do_not_count():
    s = Scenario()
    s.official(D(2024, 5, 1), 1, 2000, k=20)
    s.official(D(2024, 5, 1), 2, 2000, k=20)
    s.event(D(2024, 5, 10), D(2024, 5, 12), [(1, 2, "W")], played=False)
    tid = s.event(D(2024, 5, 13), D(2024, 5, 14), [(1, 2, "W"), (1, 2, "D"), (1, 2, "L")])
    # TRF 'W/D/L' codes: played but not rated; a PGN game without moves
    s.con.execute("UPDATE games SET unplayed_code = 'W' WHERE tournament_id = ? AND result = '1-0'", [tid])
    s.con.execute("UPDATE games SET ply_count = 0 WHERE tournament_id = ? AND result = '1/2-1/2'", [tid])
    r = s.run()
    ch = r.rating_changes
    reasons = sorted(ch.filter(pl.col("player_id") == 1)["reason"].to_list(), key=lambda x: x or "")
    assert reasons == [None, "forfeit", "no_moves", "not_rated_code"]
    got = row(r.rating_lists, player_id=1, list_date=D(2024, 6, 1))
    assert (got["games"], got["change"]) == (1, -10)


def test_rated_player_ignores_unrated_opponent_who_pools_the_game():
    s = Scenario()
    s.official(D(2024, 5, 1), 1, 2000, k=20)
    s.event(D(2024, 5, 10), D(2024, 5, 12), [(1, 3, "L")])
    r = s.run()
    assert row(r.rating_changes, player_id=1)["reason"] == "unrated_opponent"
    assert row(r.rating_changes, player_id=3)["reason"] == "pooled_unrated"
    lst = r.rating_lists
    assert row(lst, player_id=1, list_date=D(2024, 6, 1))["change"] == 0
    pooled = row(lst, player_id=3, list_date=D(2024, 6, 1))
    assert pooled["rating"] is None and pooled["games"] == 1 and "pool" in pooled["flags"]
    tr = row(r.tournament_ratings, player_id=3)
    assert tr["unrated"] and tr["ra"] == 2000 and tr["ro"] is None


def test_bootstrap_from_file_then_store_wins_and_discrepancy_recorded():
    s = Scenario()
    s.player(1, birth_year=1980)
    s.player(2, birth_year=1980)
    s.event(D(2024, 5, 10), D(2024, 5, 12), [(1, 2, "W")], file_ratings={1: 2000, 2: 2000})
    later = s.event(D(2024, 7, 10), D(2024, 7, 12), [(1, 2, "W")], file_ratings={1: 2100, 2: 1990})
    r = s.run()
    june = row(r.rating_lists, player_id=1, list_date=D(2024, 6, 1))
    assert (june["rating"], june["source"], june["k"]) == (2010, "bootstrap", 20)
    aug = row(r.rating_changes, player_id=1, tournament_id=later)
    assert aug["ro"] == 2010 and aug["rc"] == 1990  # the store's July list, not the file
    disc = r.rating_discrepancies
    # player 2's file says 1990, as the store's July list: no discrepancy
    assert disc.select("player_id", "file_rating", "list_rating").rows() == [(1, 2100, 2010)]
    assert all(d == D(2024, 7, 1) for d in disc["list_date"])


def test_events_without_dates_are_skipped_and_end_date_falls_back_to_games():
    s = Scenario()
    s.official(D(2024, 5, 1), 1, 2000, k=20)
    s.official(D(2024, 5, 1), 2, 2000, k=20)
    nodate = s.event(None, None, [(1, 2, "W")])
    late = s.event(D(2024, 5, 10), None, [(1, 2, "W")], game_date=D(2024, 5, 30))
    r = s.run()
    assert r.skips.filter(pl.col("tournament_id") == nodate)["reason"].to_list() == ["no_dates"]
    # end date = last game (30 May) misses the June closing date (29 May) -> July list
    assert row(r.rating_changes, player_id=1, tournament_id=late)["list_date"] == D(2024, 7, 1)


def test_falling_below_the_floor_makes_the_player_unrated():
    s = Scenario()
    s.official(D(2024, 5, 1), 1, 1405, k=40)
    s.official(D(2024, 5, 1), 2, 1500, k=20)
    s.event(D(2024, 5, 10), D(2024, 5, 12), [(1, 2, "L")])
    got = row(s.run().rating_lists, player_id=1, list_date=D(2024, 6, 1))
    assert got["rating"] is None and "delisted" in got["flags"]


def test_inactive_after_twelve_months_without_a_rated_game():
    s = Scenario()
    s.official(D(2023, 1, 1), 1, 2000, k=20)
    s.official(D(2023, 1, 1), 2, 2000, k=20)
    s.official(D(2023, 1, 1), 3, 2000, k=20)
    s.event(D(2023, 1, 10), D(2023, 1, 12), [(1, 2, "D")])
    s.event(D(2024, 2, 10), D(2024, 2, 12), [(1, 3, "D")])
    lst = s.run().rating_lists
    p2 = lst.filter(pl.col("player_id") == 2).sort("list_date")
    assert row(p2, list_date=D(2024, 1, 1))["flags"] is None
    assert row(p2, list_date=D(2024, 2, 1))["flags"] == "i"
    assert row(p2, list_date=D(2024, 2, 1))["rating"] == 2000  # the rating is kept
    assert row(lst, player_id=1, list_date=D(2024, 3, 1))["flags"] is None


def test_pool_keeps_at_most_26_months():
    s = Scenario()
    for i in range(5):
        s.official(D(2021, 1, 1), 10 + i, 1800, k=20)
    s.event(D(2021, 1, 10), D(2021, 1, 12), [(1, 10, "W"), (1, 11, "W"), (1, 12, "W")])
    s.event(D(2023, 6, 10), D(2023, 6, 12), [(1, 13, "D"), (1, 14, "D")])
    lst = s.run().rating_lists.filter(pl.col("player_id") == 1)
    # 3 games of Jan 2021 are older than 26 months in Jul 2023: only 2 games pooled
    got = row(lst, list_date=D(2023, 7, 1))
    assert got["rating"] is None and got["total_games"] == 2


def test_late_report_rated_player_counts_own_games_opponents_ignore():
    """8.2.4: an event starting before the first rating is rated for the (now rated) player
    at the current rating; the opponents treat them as unrated."""
    s = Scenario()
    for i in range(5):
        s.official(D(2024, 4, 1), 10 + i, 1800, k=20)
    s.official(D(2024, 4, 1), 20, 1900, k=20)
    s.event(D(2024, 4, 3), D(2024, 4, 5), [(1, 10 + i, "D") for i in range(5)])
    late = s.event(D(2024, 4, 20), D(2024, 5, 27), [(1, 20, "W")])
    r = s.run()
    first = row(r.rating_lists, player_id=1, list_date=D(2024, 5, 1))
    assert first["rating"] == 1800 and "new" in first["flags"]
    mine = row(r.rating_changes, player_id=1, tournament_id=late)
    theirs = row(r.rating_changes, player_id=20, tournament_id=late)
    assert mine["counted"] and mine["ro"] == 1800
    assert not theirs["counted"] and theirs["reason"] == "unrated_opponent"


def test_rapid_600_point_rule_and_standard_rating_seeds_rapid():
    s = Scenario()
    s.official(D(2025, 1, 1), 1, 2650, k=10, system="fide-rapid")
    s.official(D(2025, 1, 1), 2, 2000, k=20, system="fide-rapid")
    s.official(D(2025, 1, 1), 3, 2300, k=20, system="fide-rapid")
    s.event(D(2025, 1, 10), D(2025, 1, 10), [(1, 2, "W"), (1, 3, "W"), (4, 3, "D")], rate_class="rapid")
    std = pl.DataFrame(
        {"player_id": [4], "list_date": [D(2025, 1, 1)], "rating": [2100]},
        schema={"player_id": pl.Int64, "list_date": pl.Date, "rating": pl.Int64},
    )
    from elopipe.rating.fide.engine import run_periods, to_contract
    from elopipe.rating.fide.params import FideParams
    from elopipe.rating.fide.prepare import prepare
    from elopipe.rating.fide.run import load_inputs
    from elopipe.rating.periods import get_scheme

    inputs = load_inputs(s.con, "fide-rapid")
    inputs.standard_lists = std
    fp = FideParams(system="fide-rapid")
    r = to_contract(run_periods(prepare(inputs, fp, get_scheme("fide")), fp))
    ch = r.rating_changes
    assert row(ch, player_id=1, opponent_id=2)["reason"] == "rb_600_points"
    assert row(ch, player_id=1, opponent_id=3)["counted"]
    # player 4: unrated in rapid, rated 2100 in standard -> rated at 2100 (R&B 7.2.1)
    p4 = row(ch, player_id=4)
    assert p4["counted"] and p4["ro"] == 2100


def test_official_inactive_flag_is_kept_until_the_player_plays():
    s = Scenario()
    s.official(D(2024, 5, 1), 1, 2000, k=20)
    s.official(D(2024, 5, 1), 2, 2000, k=20)
    s.official(D(2024, 5, 1), 3, 2000, k=20)
    s.con.execute("UPDATE official_lists SET flag = 'wi' WHERE player_id IN (1, 3)")
    s.event(D(2024, 5, 10), D(2024, 5, 12), [(1, 2, "D")])
    lst = s.run().rating_lists
    assert row(lst, player_id=1, list_date=D(2024, 6, 1))["flags"] is None
    assert row(lst, player_id=3, list_date=D(2024, 6, 1))["flags"] == "i"


def test_event_rated_a_period_later_uses_the_bootstrapped_list_in_force_at_its_start():
    # two events start under the 1 May list (never computed: no games before), one is
    # rated on June, the other spans the June closing date and is rated on July; both must
    # use the ratings bootstrapped from the files for 1 May
    s = Scenario()
    fr = {1: 2000, 2: 2100, 3: 2200}
    s.event(D(2024, 5, 10), D(2024, 5, 12), [(1, 2, "W"), (2, 3, "D")], file_ratings=fr)
    late = s.event(D(2024, 5, 11), D(2024, 6, 5), [(1, 3, "D"), (3, 2, "W"), (1, 2, "L")], file_ratings=fr)
    r = s.run()
    ch = r.rating_changes.filter(pl.col("tournament_id") == late)
    assert ch.height == 6 and ch["list_date"].unique().to_list() == [D(2024, 7, 1)]
    assert ch["counted"].all(), ch
    for p in ch.iter_rows(named=True):
        assert (p["ro"], p["rc"]) == (fr[p["player_id"]], fr[p["opponent_id"]])
    # the files agree with the bootstrapped 1 May list: nothing to report
    assert r.rating_discrepancies.height == 0
    july = row(r.rating_lists, player_id=1, list_date=D(2024, 7, 1))
    june = row(r.rating_lists, player_id=1, list_date=D(2024, 6, 1))
    assert july["games"] == 2 and july["rating"] == june["rating"] + july["change"]


def test_player_bootstrapped_later_for_an_older_list_in_force():
    # player 3 first appears in July's period in an event that started under the 1 May
    # list; a later event starting under the June list (computed before player 3 was
    # known) must still see player 3's 1 May rating, not 'unrated'
    s = Scenario()
    s.event(D(2024, 5, 10), D(2024, 5, 12), [(1, 2, "W")], file_ratings={1: 2000, 2: 2000})
    s.event(D(2024, 5, 20), D(2024, 6, 10), [(1, 3, "D")], file_ratings={1: 2000, 3: 1900})
    after = s.event(D(2024, 6, 15), D(2024, 7, 20), [(2, 3, "D")], file_ratings={2: 1990, 3: 1900})
    r = s.run()
    got = row(r.rating_changes, tournament_id=after, player_id=2)
    assert (got["counted"], got["ro"], got["rc"]) == (True, 1990, 1900)
    got3 = row(r.rating_changes, tournament_id=after, player_id=3)
    assert (got3["counted"], got3["ro"], got3["rc"]) == (True, 1900, 1990)


def test_events_before_july_2009_are_not_rated_unless_asked():
    """FIDE's rules before 1 Jul 2009 (350-point rule, quarterly lists) cannot be confirmed:
    such events are skipped, and a rating_from before it is refused, naming the period, unless
    a forced version asks for a what-if run."""
    import pytest

    s = Scenario()
    s.player(1, birth_year=1980)
    s.player(2, birth_year=1980)
    old = s.event(D(2005, 7, 28), D(2005, 7, 31), [(1, 2, "W")], file_ratings={1: 2000, 2: 2000})
    r = s.run()
    assert r.skips.filter(pl.col("tournament_id") == old)["reason"].to_list() == ["before_rating_from"]
    assert r.rating_lists.height == 0
    with pytest.raises(ValueError, match="from 2005-01-01 to 2009-06-30 cannot be confirmed"):
        s.run(rating_from="2005-01-01")
    what_if = s.run(rating_from="2005-01-01", rules="V2017")
    assert what_if.rating_changes.filter(pl.col("tournament_id") == old).height == 2


def test_negative_ids_of_a_hand_edited_store_are_refused():
    import pytest

    s = Scenario()
    s.official(D(2024, 5, 1), 1, 2000, k=20)
    s.official(D(2024, 5, 1), 2, 2000, k=20)
    s.event(D(2024, 5, 10), D(2024, 5, 12), [(1, 2, "W")])
    s.con.execute("UPDATE games SET white_id = -white_id")
    with pytest.raises(ValueError, match="negative ids"):
        s.run()


def test_birth_date_for_the_junior_rule_comes_from_the_files_not_their_order():
    """players.birth_date keeps the first file's value; the engine reads the latest date the
    stored entries write, so a file without dates loaded first changes nothing."""
    from elopipe.rating.store_io import load_players

    s = Scenario()
    s.player(1, birth_year=2001)
    t1 = s.event(D(2019, 5, 10), D(2019, 5, 10), [(1, 2, "W")])
    t2 = s.event(D(2019, 6, 10), D(2019, 6, 10), [(1, 2, "W")])
    s.con.execute("UPDATE players SET birth_date = NULL")
    s.con.execute("UPDATE tournament_players SET birth_date = NULL")
    s.con.execute(
        "UPDATE tournament_players SET birth_date = DATE '2001-05-01' WHERE player_id = 1 AND tournament_id = ?", [t2]
    )
    got = load_players(s.con).filter(pl.col("player_id") == 1)["birth_date"].to_list()
    assert got == [D(2001, 5, 1)] and t1 != t2


def _k_with_file_birth_years(years: tuple[int, int], player_year: int | None = None) -> int:
    """K on the April 2024 list of a player (many games, no list birth year) whose entries in two
    March events write `years`, the player row holding `player_year`."""
    s = Scenario()
    s.official(D(2024, 3, 1), 1, 1800, k=None, birth_year=None)
    s.official(D(2024, 3, 1), 2, 1800, k=20)
    s.con.execute("UPDATE official_lists SET games = 40, birth_year = NULL")
    t1 = s.event(D(2024, 3, 10), D(2024, 3, 10), [(1, 2, "W")])
    t2 = s.event(D(2024, 3, 12), D(2024, 3, 12), [(1, 2, "W")])
    s.con.execute("UPDATE players SET birth_year = ? WHERE player_id = 1", [player_year])
    for tid, year in zip((t1, t2), years, strict=True):
        s.con.execute(
            "UPDATE tournament_players SET birth_year = ? WHERE player_id = 1 AND tournament_id = ?", [year, tid]
        )
    return row(s.run().rating_lists, player_id=1, list_date=D(2024, 4, 1))["k"]


def test_birth_year_for_the_junior_rule_does_not_depend_on_which_file_came_first():
    """players.birth_year keeps the first file's year; two files writing 2005 and 2007 give the
    same K whatever their order: the largest year the files write (2024 - 2007 = 17: a junior)."""
    assert [_k_with_file_birth_years((2005, 2007), first) for first in (2005, 2007)] == [40, 40]


def test_a_birth_year_after_the_event_does_not_hide_a_valid_one():
    assert _k_with_file_birth_years((2007, 2030)) == 40  # born 2007: a junior


def test_k_floor_and_newcomers_follow_the_rules_of_their_era():
    """Issue 15, item 5: K 15 below 2400 and 10 from 2400 until June 2014, 20 after; the floor
    1200 until June 2012, 1000 after; no initial rating before July 2014 (the rule of that era
    cannot be confirmed), one from five games after (`fide` module docstring)."""
    per_era = {}
    for year, list_before, list_after in ((2010, D(2010, 1, 1), D(2010, 3, 1)), (2015, D(2015, 1, 1), D(2015, 2, 1))):
        s = Scenario()
        s.official(list_before, 1, 2100)
        s.official(list_before, 2, 2100)
        s.official(list_before, 3, 2450)
        s.official(list_before, 4, 2450)
        s.event(D(year, 1, 10), D(year, 1, 12), [(1, 2, "W"), (3, 4, "W")])
        r = s.run()
        per_era[year] = [row(r.rating_lists, player_id=p, list_date=list_after)["change"] for p in (1, 3)]
    # W - We = 0.5: 15 x 0.5 = 7.5 -> 8 (halves away from zero); 10 x 0.5 = 5; 20 x 0.5 = 10
    assert per_era == {2010: [8, 5], 2015: [10, 5]}

    def floor_case(start: dt.date, list_before: dt.date):
        s = Scenario()
        s.official(list_before, 1, 1210)
        s.official(list_before, 2, 1250)
        s.event(start, start + dt.timedelta(days=2), [(1, 2, "L")] * 3)
        return s.run()

    early = floor_case(D(2010, 1, 10), D(2010, 1, 1))
    assert row(early.rating_lists, player_id=1, list_date=D(2010, 3, 1))["rating"] is None  # below 1200
    late = floor_case(D(2013, 1, 10), D(2013, 1, 1))
    assert row(late.rating_lists, player_id=1, list_date=D(2013, 2, 1))["rating"] < 1200  # above 1000

    def newcomer(start: dt.date, list_before: dt.date):
        s = Scenario()
        for p in range(2, 11):
            s.official(list_before, p, 2000)
        s.event(start, start + dt.timedelta(days=8), [(1, p, "D") for p in range(2, 11)])
        return s.run()

    assert (
        newcomer(D(2010, 5, 3), D(2010, 5, 1))
        .rating_lists.filter((pl.col("player_id") == 1) & pl.col("rating").is_not_null())
        .is_empty()
    )
    after = newcomer(D(2015, 5, 3), D(2015, 5, 1)).rating_lists
    assert row(after, player_id=1, list_date=D(2015, 6, 1))["rating"] == 2000
