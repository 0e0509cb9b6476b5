"""Two TRF entries that cannot be one person: ratings far apart in one rate class on the same days.

A TRF writes each entry's rating at the start of the tournament (TRF16 player record, columns
49-52: the FIDE rating, 0 or blank when unrated). One person's entries in two tournaments whose
days of play overlap, both rated at the same rate of play (`tournaments.rate_class`, both known),
carry the same list's rating, or two lists a month apart: on the shared data the largest gap
between such entries of one player is 78 points. Two entries `RATING_APART` (400) points apart
or more are two people: the minor section's 'Short, Nigel' (1800) is not the masters' GM Nigel
Short (2658) of the same weekend. Entries without a start rank (PGN: an online account's rating
moves by hundreds within a "tournament" a year long), without a rating, without days or rate
class, or at two rates (a blitz beside the standard event), are no evidence either way; nor is a
differing federation (Irish TRFs write club codes there). Neither is a second entry on the same
days alone: one person plays a league season and a weekend congress, or two sections of one
championship (the shared Irish junior and intermediate files hold three such players).

Name-based resolution (`identity.resolve`: every rule but FIDE and national ID) and consolidation's
name merges (`identity.consolidate`: 'name', 'initials_context') never link two such entries;
`identity.suspects` says why such namesakes are two players. An officer's `players merge` may.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any, NamedTuple

import duckdb

RATING_APART = 400  # rating points (FIDE ratings are whole points)


class RatedEntry(NamedTuple):
    """A player's TRF entry with a rating: tournament_id, rating (points), the tournament's
    rate_class ('standard', 'rapid', ...) and first and last day of play."""

    tournament_id: int
    rating: int
    rate_class: str
    first_day: dt.date
    last_day: dt.date


def rated_entry(
    tournament_id: int,
    start_rank: int | None,
    rating: int | None,
    rate_class: str | None,
    first_day: dt.date | None,
    last_day: dt.date | None,
) -> RatedEntry | None:
    """The entry as evidence, or None when it is none: no start rank (not a TRF entry), no rating
    (0 is unrated), rate class or first day unknown (a missing last day: the first)."""
    if start_rank is None or not rating or rating <= 0 or not rate_class or first_day is None:
        return None
    return RatedEntry(tournament_id, rating, rate_class, first_day, last_day or first_day)


def apart(a: RatedEntry, b: RatedEntry) -> bool:
    """True when `a` and `b` cannot be one person's: two tournaments of one rate class whose days
    overlap (no slack), ratings `RATING_APART` or more apart."""
    return (
        a.tournament_id != b.tournament_id
        and a.rate_class == b.rate_class
        and a.first_day <= b.last_day
        and b.first_day <= a.last_day
        and abs(a.rating - b.rating) >= RATING_APART
    )


def any_apart(xs: Iterable[RatedEntry], ys: Iterable[RatedEntry]) -> bool:
    """True when an entry of `xs` and one of `ys` are `apart` (two players' entries)."""
    ys = list(ys)
    return any(apart(x, y) for x in xs for y in ys)


def rated_entries(con: duckdb.DuckDBPyConnection, player_ids: Iterable[int]) -> dict[int, list[RatedEntry]]:
    """{player_id: his `RatedEntry`s} of `player_ids` (the ids of `tournament_players`, as
    stored), by a join on the indexed player ids."""
    out: dict[int, list[RatedEntry]] = {}
    ids = sorted(set(player_ids))
    if not ids:
        return out
    for r in con.execute(
        "SELECT tp.player_id, tp.tournament_id, tp.start_rank, tp.rating_in_file, t.rate_class, t.first_day,"
        " t.last_day FROM tournament_players tp JOIN tournaments t USING (tournament_id)"
        " WHERE tp.player_id IN (SELECT UNNEST(?)) AND tp.start_rank IS NOT NULL AND tp.rating_in_file > 0",
        [ids],
    ).fetchall():
        e = rated_entry(*r[1:])
        if e is not None:
            out.setdefault(r[0], []).append(e)
    return out


def apart_notes(con: duckdb.DuckDBPyConnection, pairs: list[tuple[int, int]]) -> dict[tuple[int, int], str]:
    """{(player_a, player_b): a sentence} for the pairs of `pairs` whose entries are `apart`: the
    first such two entries (by tournament ids), with their ratings, rate class and tournaments."""
    entries = rated_entries(con, {x for pr in pairs for x in pr})
    if not entries:
        return {}
    names: dict[int, Any] = {}
    found: dict[tuple[int, int], tuple[RatedEntry, RatedEntry]] = {}
    for a, b in pairs:
        hits = [(x, y) for x in entries.get(a, ()) for y in entries.get(b, ()) if apart(x, y)]
        if hits:
            found[(a, b)] = min(hits, key=lambda h: (h[0].tournament_id, h[1].tournament_id))
    if found:
        tids = sorted({e.tournament_id for h in found.values() for e in h})
        names = dict(
            con.execute(
                "SELECT tournament_id, name FROM tournaments WHERE tournament_id IN (SELECT UNNEST(?))", [tids]
            ).fetchall()
        )

    def where(e: RatedEntry) -> str:
        name = names.get(e.tournament_id)
        return f"tournament {e.tournament_id}" + (f" ({name})" if name else "")

    return {
        pr: f"rated {x.rating} in {where(x)} and {y.rating} in {where(y)}, {x.rate_class} on the same days:"
        f" two people, never merged automatically"
        for pr, (x, y) in found.items()
    }
