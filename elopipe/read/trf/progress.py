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

The event is in progress too when the file declares more rounds than its last paired one and
a later round holds byes entered ahead (``0000 - H``, ``0000 - Z``) and no pairing yet: the
arbiter is preparing that round (JaVaFo's Gros 2010 sample: 4 of 9 rounds played, round-5
absences entered; SOURCES.md calls it an in-progress file).

An event whose last round is its last declared one, with results on most boards and a few
without, is complete: those games were not played (they are stored as not played and never
rated), and the event is rated. Nor is a file in progress only because it declares more rounds
than it has played, with nothing paired and waiting and no round prepared: an event may end
early.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from elopipe.read.records import UnplayedRec
from elopipe.read.trf import game_rows as G

SCHEDULED = "trf_scheduled"
_ENTERED = frozenset("HZFU+-")  # a bye or absence code, as a round's block writes it
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
    ahead: int = 0  # byes entered ahead in a round not paired yet (then `boards` is 0)

    def describe(self) -> str:
        """'round 2 of 3 is paired with no result on 12 of 12 boards', or 'round 5 of 9 is not
        paired yet: 3 byes are entered ahead'."""
        of = f" of {self.declared}" if self.declared else ""
        if not self.boards:
            byes = "1 bye is" if self.ahead == 1 else f"{self.ahead} byes are"
            return f"round {self.round}{of} is not paired yet: {byes} entered ahead"
        return f"round {self.round}{of} is paired with no result on {self.waiting} of {self.boards} boards"


def unfinished_round(
    games: list[list[object]], declared: int | None, unplayed: Sequence[UnplayedRec] = ()
) -> Unfinished | None:
    """The round that shows the event in progress (see the module docstring), or None when the
    file reports a complete event. `games`: the file's games as `RoundResolver` gives them (rows
    of `game_rows.COLUMNS`); `declared`: the rounds the header declares (142 / XXR), None if it
    does not; `unplayed`: its byes and absences (a bye has no opponent). Never raises."""
    if not any(SCHEDULED in flags for flags in map(_FLAGS, games)):
        # no board waits for a result (most files, complete): only a round prepared ahead can say more
        return _prepared_round(games, declared, unplayed)
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
        return _prepared_round(games, declared, unplayed)
    last = max(max(waiting), max(decided, default=0))
    n_wait, n_done = waiting[last], decided[last]
    if n_wait == 0:
        return None
    more_to_come = declared is not None and last < declared
    if n_done == 0 or more_to_come or n_wait >= n_done:
        return Unfinished(last, declared, n_wait, n_wait + n_done, first_line.get(last))
    return None


def _prepared_round(
    games: list[list[object]], declared: int | None, unplayed: Sequence[UnplayedRec]
) -> Unfinished | None:
    """The first round after the last paired one that holds only byes entered ahead (no
    opponent), when the file declares more rounds than the last paired one; else None."""
    if declared is None:
        return None
    paired = {g[G.ROUND] for g in games if isinstance(g[G.ROUND], int)}
    last = max((r for r in paired if isinstance(r, int)), default=0)
    if not last or last >= declared:
        return None
    byes: Counter[int] = Counter()
    first_line: dict[int, int] = {}
    for u in unplayed:
        # a bye or absence written in the round's block (an empty block is no entry)
        if u.opponent_ref is None and u.round > last and u.code in _ENTERED:
            byes[u.round] += 1
            if u.line is not None:
                first_line[u.round] = min(first_line.get(u.round, u.line), u.line)
    if not byes:
        return None
    nxt = min(byes)
    return Unfinished(nxt, declared, 0, 0, first_line.get(nxt), ahead=byes[nxt])
