"""Where each Ro comes from (`elopipe.rating.fide.ro`) and the `ro_from` policy (FIDE B.02 7.1.3):
the source of every Ro, and the 'file' policy's Ro and Rc, on small stores built game by game."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.helpers.fide import Scenario, row


def round_x100(x100: int) -> int:
    """Hundredths to rating points, halves away from zero (B.02 8.3.4)."""
    return (abs(x100) + 50) // 100 * (1 if x100 >= 0 else -1)


D = dt.date


def _two_events(s: Scenario) -> tuple[int, int]:
    """Players 1 and 2 (FIDE IDs) and 3 (none) start from their files in May; in July the files
    give other ratings than the store's June list (the players' other games are not in the store)."""
    s.player(1, birth_year=1980, fide_id=1001)
    s.player(2, birth_year=1980, fide_id=1002)
    s.player(3, birth_year=1980)
    may = s.event(D(2024, 5, 10), D(2024, 5, 12), [(1, 2, "W"), (2, 3, "D")], file_ratings={1: 2000, 2: 2000, 3: 1900})
    july = s.event(D(2024, 7, 10), D(2024, 7, 12), [(1, 2, "W"), (2, 3, "D")], file_ratings={1: 2200, 2: 1950, 3: 1800})
    return may, july


def test_every_ro_says_where_it_came_from() -> None:
    s = Scenario()
    may, july = _two_events(s)
    r = s.run()
    tr = r.tournament_ratings
    # a first event: the file's rating (a bootstrap); later: the store's own list
    assert {row(tr, tournament_id=may, player_id=p)["ro_source"] for p in (1, 2, 3)} == {"file"}
    first = row(tr, tournament_id=july, player_id=1)
    assert (first["ro"], first["ro_source"], first["file_rating"]) == (2010, "computed", 2200)
    games = r.rating_changes.filter(r.rating_changes["tournament_id"] == july)
    assert set(games["ro_source"]) == {"computed"}


def test_an_imported_official_list_is_the_source_of_its_players() -> None:
    s = Scenario()
    s.player(1, fide_id=1001)
    s.official(D(2024, 7, 1), 1, 2150, k=20)
    s.official(D(2024, 7, 1), 2, 2050, k=20)
    tid = s.event(D(2024, 7, 10), D(2024, 7, 12), [(1, 2, "W"), (1, 3, "D")], file_ratings={1: 2150, 3: 1700})
    for policy in ("list", "file"):
        tr = s.run(ro_from=policy).tournament_ratings
        assert row(tr, tournament_id=tid, player_id=1)["ro_source"] == "official", policy
        assert row(tr, tournament_id=tid, player_id=1)["ro"] == 2150


def test_the_file_policy_starts_each_event_from_the_file() -> None:
    s = Scenario()
    _, july = _two_events(s)
    listed = s.run()
    by_file = s.run(ro_from="file")
    one = row(by_file.tournament_ratings, tournament_id=july, player_id=1)
    assert (one["ro"], one["ro_source"]) == (2200, "file")
    # his opponent's Rc is the file's too; player 3 has no FIDE ID: the store's list stays his Ro
    game = row(by_file.rating_changes, tournament_id=july, player_id=2, opponent_id=1)
    assert (game["ro"], game["rc"]) == (1950, 2200)
    three = row(by_file.tournament_ratings, tournament_id=july, player_id=3)
    assert three["ro_source"] == "computed"
    assert three["ro"] == row(listed.tournament_ratings, tournament_id=july, player_id=3)["ro"]
    # 1-0 at 2200 against 1950 earns less than at 2010 against 1990
    assert one["change_x100"] < row(listed.tournament_ratings, tournament_id=july, player_id=1)["change_x100"]
    # the change applies to the rating he started from (B.02 8.3.4): the list follows the file
    aug = row(by_file.rating_lists, player_id=1, list_date=D(2024, 8, 1))
    assert aug["rating"] == 2200 + aug["change"] and aug["change"] == round_x100(one["change_x100"])
    # player 3 (no FIDE ID) goes on from the store's list
    aug3 = row(by_file.rating_lists, player_id=3, list_date=D(2024, 8, 1))
    assert aug3["rating"] == three["ro"] + aug3["change"]


def test_an_unknown_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="ro_from must be list or file, not 'fide'"):
        Scenario().run(ro_from="fide")


@pytest.mark.parametrize("policy", ["list", "file"])
def test_a_file_rating_below_the_floor_of_its_era_is_no_rating(policy: str) -> None:
    """FIDE published no rating below 1200 until June 2012 (B.02 (2011)): a file's 1100 at a 2011
    event is a national rating or a mistake. The player is unrated there, so his games give his
    opponents nothing (an unrated opponent) and he is on no list; 1200 is a rating. Found on
    the Galway 2011 TRF, whose 1097 and 1151 moved Hensey by -17 where FIDE's rules give +1."""
    s = Scenario()
    for p in (1, 2, 3):
        s.player(p, birth_year=1980, fide_id=1000 + p)
    tid = s.event(D(2011, 8, 10), D(2011, 8, 12), [(1, 2, "W"), (1, 3, "L")], file_ratings={1: 1400, 2: 1100, 3: 1200})
    r = s.run(ro_from=policy)
    games = r.rating_changes.filter(r.rating_changes["tournament_id"] == tid)
    below = row(games, player_id=1, opponent_id=2)
    assert (below["rc"], below["counted"]) == (None, False)
    at_floor = row(games, player_id=1, opponent_id=3)
    assert (at_floor["rc"], at_floor["counted"]) == (1200, True)
    two = row(r.tournament_ratings, tournament_id=tid, player_id=2)
    assert (two["ro"], two["file_rating"]) == (None, 1100)
    assert r.rating_lists.filter(r.rating_lists["player_id"] == 2)["rating"].drop_nulls().len() == 0
    # 1400 beat by 1200: K 15 (B.02 (2011)), D 200, PD 0.76: -0.76 x 15 = -11.40
    assert row(r.tournament_ratings, tournament_id=tid, player_id=1)["change_x100"] == -1140


def test_the_floor_is_the_one_in_force_when_the_file_was_written_not_a_scenarios() -> None:
    """A 2018 file's 1202 was a FIDE rating (floor 1000): a scenario forcing the 2024 rules (floor
    1400) still starts the player from it, and its list close drops him below the floor; taken
    for no rating, the sample's Spanish juniors got initial ratings 300 points above their files."""
    s = Scenario()
    for p in (1, 2):
        s.player(p, birth_year=1980, fide_id=1000 + p)
    tid = s.event(D(2018, 8, 10), D(2018, 8, 12), [(1, 2, "W")], file_ratings={1: 1202, 2: 1500})
    for rules in (None, "V2024"):
        r = s.run(rules=rules)
        one = row(r.tournament_ratings, tournament_id=tid, player_id=1)
        assert (one["ro"], one["ro_source"]) == (1202, "file"), rules


def test_a_player_started_from_another_event_s_file_has_no_ro_source() -> None:
    """Bunratty Challengers 2011 writes every rating as 0; 20 of its players are rated by the
    file of another event of the same period (the Armstrong Cup 2010-11). At Bunratty no list in
    force rates them and their file gives no rating: they play at their current rating, the
    period's bootstrap (B.02 8.2.4), their opponents take them as unrated, and their Ro has no
    source: 'file' said the organiser's file gave it."""
    s = Scenario()
    league = s.event(D(2024, 5, 3), D(2024, 5, 5), [(1, 2, "W")], file_ratings={1: 2000, 2: 1900})
    weekend = s.event(D(2024, 5, 10), D(2024, 5, 12), [(1, 3, "D"), (2, 1, "D")], file_ratings={})
    r = s.run()
    rc = r.rating_changes
    at_league = rc.filter((rc["tournament_id"] == league) & (rc["player_id"] == 1)).row(0, named=True)
    assert (at_league["ro"], at_league["ro_source"]) == (2000, "file")
    at_weekend = rc.filter((rc["tournament_id"] == weekend) & (rc["player_id"] == 1)).sort("opponent_id")
    # the figures as before: played at 2000, the game against unrated 3 not counted
    assert at_weekend.select("opponent_id", "ro", "ro_source", "rc", "counted", "reason").rows() == [
        (2, 2000, None, None, False, "unrated_opponent"),
        (3, 2000, None, None, False, "unrated_opponent"),
    ]
