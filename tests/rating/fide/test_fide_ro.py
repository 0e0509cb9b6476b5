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
