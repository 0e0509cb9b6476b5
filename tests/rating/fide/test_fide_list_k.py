"""The K column of a computed FIDE list (`rating_lists.k_next`, `k.list_k`): every rated player's K
for the period after the list, as FIDE's lists give it (B.02 8.3.3), also to a player without a
game in the period; `k` stays the K used in the period (after the 700 cap)."""

from __future__ import annotations

import datetime as dt

from tests.helpers.fide import Scenario, row

JAN, FEB = dt.date(2025, 1, 1), dt.date(2025, 2, 1)


def _lists() -> Scenario:
    """On the official January 2025 list (V2024: K 40 junior, 20, 10 once 2400): player 1, 2390
    K 20, who beats 2, 2390, twice in January and reaches 2410; 3, 1900, born 2010 (a junior) and 4,
    2000, neither of whom plays; 5, 1700, whom the February list imports with K 40."""
    s = Scenario()
    s.official(JAN, 1, 2390, k=20, birth_year=1990)
    s.official(JAN, 2, 2390, k=20, birth_year=1990)
    s.official(JAN, 3, 1900, k=40, birth_year=2010)
    s.player(3, birth_year=2010)
    s.official(JAN, 4, 2000, k=20, birth_year=1980)
    s.official(JAN, 5, 1700, k=20, birth_year=1980)
    s.event(dt.date(2025, 1, 10), dt.date(2025, 1, 11), [(1, 2, "W"), (2, 1, "L")])
    s.official(FEB, 5, 1700, k=40, birth_year=1980)
    return s


def test_every_rated_player_of_a_list_has_the_k_of_the_next_period() -> None:
    r = _lists().run().rating_lists
    feb = r.filter(r["list_date"] == FEB)
    one = row(feb, player_id=1)
    # K 20 in the period (his official K); he reached 2400, so 10 from now on (8.3.3)
    assert (one["rating"], one["k"], one["k_next"]) == (2410, 20, 10)
    assert (row(feb, player_id=2)["k"], row(feb, player_id=2)["k_next"]) == (20, 20)
    # no game in the period: no K used, and FIDE's list still gives his K
    three, four = row(feb, player_id=3), row(feb, player_id=4)
    assert (three["games"], three["k"], three["k_next"]) == (0, None, 40)  # a junior
    assert (four["games"], four["k"], four["k_next"]) == (0, None, 20)
    # an imported official list of the date gives the K it lists
    assert row(feb, player_id=5)["k_next"] == 40


def test_the_k_of_a_list_is_the_k_the_next_period_uses() -> None:
    """What the list says is what the engine does: each player of the February list plays in
    March, and the K used there (before the 700 cap: one game) is February's k_next."""
    s = _lists()
    s.event(dt.date(2025, 2, 10), dt.date(2025, 2, 11), [(1, 3, "D"), (4, 5, "D"), (2, 1, "D")])
    r = s.run().rating_lists
    feb, mar = r.filter(r["list_date"] == FEB), r.filter(r["list_date"] == dt.date(2025, 3, 1))
    for pid in (1, 2, 3, 4, 5):
        assert row(mar, player_id=pid)["k"] == row(feb, player_id=pid)["k_next"], pid
