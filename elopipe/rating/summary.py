"""What a rating run reports back (`elopipe.rating.run.rate`)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field


@dataclass
class RateSummary:
    """Counts of one `rate` run.

    lists: lists computed (in memory); first_list/last_list: their range;
    first_changed: earliest list rewritten in the store (None: nothing changed, nothing
    written); lists_written: lists stored by this run; changed_lists: their dates (FIDE: a
    list whose inputs changed but whose rows came out identical is not rewritten; None: not
    tracked, every list from first_changed on was rewritten); players_rated: players with a
    rating on the last list; new_ratings: first ratings published over all lists;
    games_counted: game sides counted for a rated player (each game counts up to twice);
    not_counted: game sides not counted, by reason; events_skipped: events left out, by
    reason (e.g. 'no_dates', 'rate_class:rapid'); unknown_tc_games: games whose time control
    was unknown (rate class assumed, flagged); discrepancies: file rating ≠ list in force.
    """

    system: str
    run_id: int | None = None
    lists: int = 0
    first_list: dt.date | None = None
    last_list: dt.date | None = None
    first_changed: dt.date | None = None
    lists_written: int = 0
    changed_lists: list[dt.date] | None = None
    players_rated: int = 0
    new_ratings: int = 0
    games_counted: int = 0
    not_counted: dict[str, int] = field(default_factory=dict)
    events_skipped: dict[str, int] = field(default_factory=dict)
    unknown_tc_games: int = 0
    discrepancies: int = 0
    seconds: float = 0.0
