"""`summary.assumed_events`: the events whose rated games took the assumed rate of play, named for
`rate` and `run`; an event without a name is told apart by its id (four nameless events printed
as four identical "(no name)" lines: hostile tester)."""

from __future__ import annotations

import polars as pl

from elopipe.rating.summary import assumed_events


def test_events_are_named_by_games_and_a_nameless_one_by_its_id() -> None:
    changes = pl.DataFrame(
        {
            "tournament_id": [1, 1, 1, 2, 3, 4, 4, 5],
            "game_id": [10, 10, 11, 20, 30, 40, 41, 50],  # a game's two sides count once
            "tc_assumed": [True, True, True, True, True, True, True, False],
        }
    )
    tournaments = pl.DataFrame({"tournament_id": [1, 2, 3, 4, 5], "name": ["Open", None, "  ", "Cup", "Blitz"]})
    assert assumed_events(changes, tournaments) == [
        ("Cup", 2),
        ("Open", 2),
        ("(no name, event 2)", 1),
        ("(no name, event 3)", 1),
    ]
