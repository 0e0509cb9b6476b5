"""Dropping rounds to meet a norm's requirements, FIDE B.01 (2024) 1.4.1e and 1.4.1f.

* 1.4.1e: in an event without pre-determined pairings (a Swiss), once a title result is
  reached the later games may be ignored: the rounds dropped are a whole tail of the schedule.
  A round robin must use every scheduled round.
* 1.4.1f: games against opponents the applicant *defeated* may be ignored, in any combination;
  in a round robin (or double round robin) the opponent mix must make a norm possible for the
  complete event.
* Either way at least 9 games must remain (1.4.1a), with the opponent mix still valid: every
  clause is checked again on what remains (`elopipe.rating.fide.norms.evaluate`).

`best_outcome` tries the full game set first, then the allowed drops, fewest rounds first and,
among as many, the weakest opponents first (dropping them raises Ra most). The first set that
makes the norm is kept and its dropped rounds are named in the outcome.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import combinations

from elopipe.rating.fide.norms import Applicant, Era, Event, Game, Outcome, evaluate

#: At most this many drop sets are tried per norm (a 21-round Swiss with 15 wins would
#: otherwise offer tens of thousands); the smallest sets come first, so a norm found is the
#: one with fewest drops.
MAX_CANDIDATES = 4096
MIN_GAMES = 9
#: Clauses of the opponent mix (1.4.1f: in a round robin the full event must allow a norm).
MIX_CLAUSES = frozenset({"1.4.3", "1.4.4", "1.4.5a", "1.4.5"})


def drop_candidates(games: Sequence[Game], event: Event, era: Era) -> Iterator[frozenset[int]]:
    """The round sets that 1.4.1e/f allow to drop from `games` (the counted games), leaving at
    least 9; by size, then by the dropped opponents' ratings (unrated as `era.unrated`), lowest
    first; at most `MAX_CANDIDATES`."""
    counted = sorted((g for g in games if g.excluded is None), key=lambda g: g.round)
    spare = len(counted) - MIN_GAMES
    if spare <= 0:
        return
    value = {g.round: (g.rating if g.rating is not None else era.unrated) for g in counted}
    won = [g.round for g in counted if g.points_x2 == 2]
    rounds = [g.round for g in counted]
    # 1.4.1e: no tail in a round robin (pre-determined pairings use every round)
    tails = range(1) if event.round_robin else range(spare + 1)
    sets: set[frozenset[int]] = set()
    for t in tails:
        tail = frozenset(rounds[len(rounds) - t :]) if t else frozenset()
        prefix_won = [r for r in won if r not in tail]
        for k in range(spare - t + 1):
            for combo in combinations(prefix_won, k):
                cand = tail | frozenset(combo)
                if cand:
                    sets.add(cand)
            if len(sets) > MAX_CANDIDATES:
                break
    ordered = sorted(sets, key=lambda s: (len(s), sum(value[r] for r in s), sorted(s)))
    yield from ordered[:MAX_CANDIDATES]


def best_outcome(games: Sequence[Game], event: Event, applicant: Applicant, norm: str, era: Era) -> Outcome:
    """The decision of `norm` for `applicant`: on the full game set, else on the first drop set
    (`drop_candidates`) that makes the norm, with `Outcome.dropped` set. When none does, the full
    set's outcome (its first failing clause); when none does but one would if a missing fact
    were known, that set's 'unknown' outcome."""
    base = evaluate(games, event, applicant, norm, era)
    if base.decision in ("norm", "not_eligible"):
        return base
    if event.round_robin and MIX_CLAUSES & set(base.failed):
        return base
    # 1.4.3 counts the federations among the opponents: a drop only removes opponents, so no drop
    # set meets it when the full set does not (the facts, the exemption and the event's kind are
    # the same for every set). A 1001-round event of two players tried 4096 sets of 1000 games.
    if "1.4.3" in base.failed:
        return base
    unknown: Outcome | None = None
    for cand in drop_candidates(games, event, era):
        kept = [g for g in games if g.round not in cand]
        out = evaluate(kept, event, applicant, norm, era)
        if out.decision == "norm":
            out.dropped = tuple(sorted(cand))
            out.reason += f" (rounds {', '.join(map(str, out.dropped))} left out, 1.4.1e/f)"
            return out
        if out.decision == "unknown" and unknown is None and base.decision == "missed":
            out.dropped = tuple(sorted(cand))
            unknown = out
    return unknown or base
