"""Small constructed PGN events for the tests of corrections and archives (issue 26): eight players
with FIDE IDs, four boards a round, every game won by White (`event_pgn`)."""

from __future__ import annotations


def event_pgn(event: str, rounds: list[int], date: str, site: str, first_id: int = 2500000) -> str:
    """A PGN of `event` at `site` on `date` (YYYY.MM.DD): for each round r of `rounds`, board b
    pairs player (b+r) mod 8 with player (7-b+r) mod 8, White winning. Players are 'P<n>, X' with
    FIDE ID `first_id` + n, so that two calls pair the same players in the same rounds."""
    games = []
    for r in rounds:
        for b in range(4):
            w, bl = (b + r) % 8, (7 - b + r) % 8
            games.append(
                f'[Event "{event}"]\n[Site "{site}"]\n[Date "{date}"]\n[EventDate "{date}"]\n[Round "{r}"]\n'
                f'[White "P{w}, X"]\n[Black "P{bl}, X"]\n[Result "1-0"]\n[WhiteFideId "{first_id + w}"]\n'
                f'[BlackFideId "{first_id + bl}"]\n[TimeControl "5400+30"]\n\n1. d4 d5 1-0\n'
            )
    return "\n".join(games)
