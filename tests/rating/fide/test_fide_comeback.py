"""K of a player rated again after a fall below the floor (FIDE B.02 8.3.3, issue 25 item 6).

8.3.3 gives K 40 to "a player new to the rating list" until he has completed events with 30
games. A player who was on the list, fell below the floor (7.2.1) and was rated again from 5
pooled games is not new to it: his earlier rated games count toward the 30, and a history the
store does not know counts as at least 30 (`elopipe.rating.fide.k.k_base`).
"""

from __future__ import annotations

import datetime as dt

from tests.helpers.fide import Scenario, row

D = dt.date
STRONG = range(10, 15)  # five 1800 players
WEAK = range(20, 25)  # five 1500 players


def _opponents(s: Scenario) -> None:
    for p in (*STRONG, *WEAK):
        s.official(D(2025, 1, 1), p, 1800 if p in STRONG else 1500, k=20, birth_year=1980)


def _fall_and_return(s: Scenario) -> int:
    """Player 1 loses 30 games to the 1500 players in March 2025 (below the 1400 floor on the
    April list), draws 5 games with them in April (rated again on the May list) and plays once
    in May: the id of the May event."""
    s.event(D(2025, 3, 10), D(2025, 3, 12), [(1, p, "L") for p in WEAK for _ in range(6)])
    s.event(D(2025, 4, 10), D(2025, 4, 12), [(1, p, "D") for p in WEAK])
    return s.event(D(2025, 5, 10), D(2025, 5, 12), [(1, 20, "D")])


def test_a_player_rated_again_keeps_his_earlier_games_toward_the_30() -> None:
    s = Scenario()
    _opponents(s)
    s.player(1, birth_year=1980)
    # a newcomer: 5 games give his first rating (February list), 30 more in February
    s.event(D(2025, 1, 10), D(2025, 1, 12), [(1, p, "D") for p in STRONG])
    s.event(D(2025, 2, 10), D(2025, 2, 12), [(1, p, "D") for p in STRONG for _ in range(6)])
    may = _fall_and_return(s)
    r = s.run()
    lists = r.rating_lists
    assert row(lists, player_id=1, list_date=D(2025, 2, 1))["total_games"] == 5
    assert row(lists, player_id=1, list_date=D(2025, 3, 1))["total_games"] == 35
    april = row(lists, player_id=1, list_date=D(2025, 4, 1))
    assert april["rating"] is None and "delisted" in april["flags"]
    back = row(lists, player_id=1, list_date=D(2025, 5, 1))
    assert back["rating"] is not None and "new" in back["flags"]
    # 35 + 30 games before the fall, 5 pooled since: 70, not 5
    assert back["total_games"] == 70
    # not new to the list: K 20 (non-junior below 2400), not the newcomer's 40
    assert row(r.tournament_ratings, player_id=1, tournament_id=may)["k"] == 20


def test_a_returning_player_whose_history_the_store_does_not_know_counts_as_30_games() -> None:
    """On an imported official list with no game count: his history is unknown, so at least 30."""
    s = Scenario()
    _opponents(s)
    s.official(D(2025, 1, 1), 1, 1800, k=20, birth_year=1980)
    may = _fall_and_return(s)
    r = s.run()
    assert row(r.rating_lists, player_id=1, list_date=D(2025, 4, 1))["rating"] is None
    back = row(r.rating_lists, player_id=1, list_date=D(2025, 5, 1))
    assert back["rating"] is not None and back["total_games"] is None
    assert row(r.tournament_ratings, player_id=1, tournament_id=may)["k"] == 20


def test_a_player_new_to_the_list_still_has_k_40() -> None:
    """The contrast: a first rating from 5 games, then K 40 until 30 games (8.3.3)."""
    s = Scenario()
    _opponents(s)
    s.player(1, birth_year=1980)
    s.event(D(2025, 4, 10), D(2025, 4, 12), [(1, p, "D") for p in WEAK])
    may = s.event(D(2025, 5, 10), D(2025, 5, 12), [(1, 20, "D")])
    r = s.run()
    assert row(r.rating_lists, player_id=1, list_date=D(2025, 5, 1))["total_games"] == 5
    assert row(r.tournament_ratings, player_id=1, tournament_id=may)["k"] == 40
