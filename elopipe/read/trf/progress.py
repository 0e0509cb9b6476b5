"""Whether a TRF file reports an event still in progress (trf-format.md §5; issue 25).

The evidence is the last round that has pairings. A pairing written on both rows with an
opponent and a colour but a blank result (flag ``trf_scheduled``, `elopipe.read.trf.rounds`) is
a board paired and not yet played. The event is in progress when, in that last paired round,
some boards wait for a result and

* no board of the round has a result (the file was written after the pairing: the Sharly-Chess
  team sample, Bilkent's round 2), or
* the file declares more rounds (142, XXR) than that round: the round is under way and more
  follow, or
* at least half of its boards have no result.

An event whose last round is its last declared one, with results on most boards and a few
without, is complete: those games were not played (they are stored as not played and never
rated), and the event is rated. Nor is a file in progress only because it declares more rounds
than it has played, with no board waiting (JaVaFo's Gros 2010 sample: 4 of 9 rounds, round-5
byes entered ahead): nothing is paired, and an event may end early.
"""

from __future__ import annotations

import operator
from collections import Counter
from dataclasses import dataclass

from elopipe.read.trf import game_rows as G

SCHEDULED = "trf_scheduled"
_FLAGS = operator.itemgetter(G.FLAGS)


@dataclass(frozen=True)
class Unfinished:
    """The round that keeps an event from being complete: its number, the declared rounds
    (None: not declared), its boards without a result, its boards in all, and the file line of
    its first waiting board."""

    round: int
    declared: int | None
    waiting: int
    boards: int
    line: int | None

    def describe(self) -> str:
        """'round 2 of 3 is paired with no result on 12 of 12 boards'."""
        of = f" of {self.declared}" if self.declared else ""
        return f"round {self.round}{of} is paired with no result on {self.waiting} of {self.boards} boards"


def unfinished_round(games: list[list[object]], declared: int | None) -> Unfinished | None:
    """The round that shows the event in progress (see the module docstring), or None when the
    file reports a complete event. `games`: the file's games as `RoundResolver` gives them (rows
    of `game_rows.COLUMNS`); `declared`: the rounds the header declares (142 / XXR), None if it
    does not. Never raises."""
    if not any(SCHEDULED in flags for flags in map(_FLAGS, games)):
        return None  # no board waits for a result (a complete file): the count below would find none
    waiting: Counter[int] = Counter()
    decided: Counter[int] = Counter()
    first_line: dict[int, int] = {}
    for g in games:
        rnd, line = g[G.ROUND], g[G.LINE]
        if not isinstance(rnd, int) or g[G.WHITE_REF] is None or g[G.BLACK_REF] is None:
            continue
        if SCHEDULED in g[G.FLAGS]:  # type: ignore[operator]
            waiting[rnd] += 1
            if isinstance(line, int):
                first_line[rnd] = min(first_line.get(rnd, line), line)
        else:
            decided[rnd] += 1
    if not waiting:
        return None
    last = max(max(waiting), max(decided, default=0))
    n_wait, n_done = waiting[last], decided[last]
    if n_wait == 0:
        return None
    more_to_come = declared is not None and last < declared
    if n_done == 0 or more_to_come or n_wait >= n_done:
        return Unfinished(last, declared, n_wait, n_wait + n_done, first_line.get(last))
    return None
