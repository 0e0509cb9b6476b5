"""Refs of one analysed chunk of raw games, set-wise (the column path of elopipe.read.pgn.reader).

The one-by-one reader gives a game's tournament and players their refs in file order: a
tournament or player is made (`_tournament`, `_player`) the first time a game names it, and a
player met again takes the first rating a later game writes. For the games the column path
vouches for (`pgn_columns.analyse`: no issue, no flag), every other game of a tournament or
player changes nothing, so only these games need Python:

- the first game of each (Event, Site, EventDate, year) key;
- for each side, the first game of each (key, name, FideId) and the first of those with a rating;
- the games read one by one (not fast), in their place.

`assign` runs them in file order (the same calls, so the same refs, records and issues as the
loop over every game), then gives every fast game its refs with Polars joins. The tournaments'
dates, time controls and rounds are aggregated per tournament (only the earliest and latest date
of a tournament are ever used). A chunk with a fast game without an Event tag (its tournament may
be the game before's: `_tournament`) is left to the loop over every game (`assign` returns None).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    import datetime as dt

    import polars as pl

    from elopipe.read.pgn.split import RawGame
    from elopipe.read.records import PlayerRec

__all__ = ["assign", "assign_loop"]

_T_COLS = ["Event", "Site", "EventDate", "year"]
_SIDES = (("White", "WhiteFideId", "white_rating"), ("Black", "BlackFideId", "black_rating"))
# the columns of the fast games `assign` reads
_USED = [
    "g", *_T_COLS, "game_date", "date_precision", "event_date", "event_precision", "time_control", "round",
    *(c for side in _SIDES for c in side), "WhiteElo", "BlackElo",
]  # fmt: skip


class _Reader(Protocol):
    """What `assign` uses of the PGN reader's refs (`file_refs.FileRefs`)."""

    _t_cache: dict[tuple[Any, ...], int]
    _p_cache: dict[tuple[Any, ...], int]
    _players: dict[int, PlayerRec]
    _prev_tref: int | None
    t_dates: dict[int, list[dt.date]]
    t_rough: dict[int, list[dt.date]]
    t_tc: dict[int, set[str]]
    t_rounds: dict[int, int]

    def _tournament(self, tags: dict[str, str], gdate: Any, edate: Any, eprec: str) -> int: ...
    def _player(
        self, tref: int, side: str, name: str, fid: str | None, elo: str | None,
        tags_of: Callable[[], dict[str, str]], line: int, gi: int,
    ) -> int: ...  # fmt: skip


def assign(
    reader: _Reader, read_one: Callable[[RawGame, int, int], int], res: Any, fast: pl.DataFrame,
    raw_games: list[RawGame], lines: list[int], gi: int, refs: dict[str, list[int]],
) -> int | None:  # fmt: skip
    """Read the chunk `raw_games` (their start `lines`, game indexes from `gi`): the fast games
    (`fast`: `res.games` filtered on `fast`, with a `year` column) appended to `refs` in file
    order, the others read one by one (`read_one`: the builder's `_raw_game`). Returns the next
    game index, or None (nothing done) when a fast game has no Event tag."""
    import polars as pl

    if fast.get_column("Event").null_count():
        return None
    # the columns used below only: every filter and join then copies a few columns, not all
    fast = _with_keys(fast.select(_USED))
    firsts = _firsts(fast)
    events, player_keys = _events(fast, firsts, len(raw_games))
    dicts: dict[int, dict[str, str]] = res.tag_dicts(_prefetch(firsts, reader))

    def tags_of(g: int) -> dict[str, str]:
        tags = dicts.get(g)
        if tags is None:
            tags = dicts[g] = res.tag_dicts([g])[g]
        return tags

    n_t = fast.get_column("tid").n_unique()
    tref_of = [-1] * n_t
    tid_of_row = dict(zip(fast.get_column("g").to_list(), fast.get_column("tid").to_list(), strict=True))
    extra_at: list[int] = []  # rows read one by one, and the game indexes used after each beyond one
    extra_n: list[int] = []
    extra = 0
    t_cache, p_cache, players = reader._t_cache, reader._p_cache, reader._players
    for g, kind, a, b in events:
        if kind == 3:  # a game read one by one, in its place
            prev = tid_of_row.get(g - 1)
            if prev is not None:
                reader._prev_tref = tref_of[prev]
            extra += read_one(raw_games[g], lines[g], gi + g + extra) - 1
            extra_at.append(g)
            extra_n.append(extra)
        elif kind == 0:  # a tournament key's first game
            tid, (event, site, edate_raw, year, gdate, edate, eprec) = a, b
            tkey = (event, site, edate_raw, year, None)
            tref = t_cache.get(tkey)
            if tref is None:
                tref = t_cache[tkey] = reader._tournament(tags_of(g), gdate, edate, eprec)
            tref_of[tid] = tref
        else:  # a player key's first game, or its first game with a rating
            side = _SIDES[kind - 1][0]
            (tid, name, fid), elo = a, b
            tref = tref_of[tid]
            ref = p_cache.get((tref, name, fid))
            if ref is None or (elo and players[ref].rating is None):
                reader._player(tref, side, name, fid, elo, partial(tags_of, g), lines[g], gi + g + extra)
    used = len(raw_games) + extra
    if fast.is_empty():
        return gi + used
    tids = fast.get_column("tid").to_numpy()
    fast = fast.with_columns(pl.Series("tref", np.asarray(tref_of, dtype=np.int32)[tids]))
    for (name, fid, _), keys in zip(_SIDES, player_keys, strict=True):
        prefs = [p_cache[(tref_of[t], n, f)] for t, n, f in keys.iter_rows()]
        keyed = keys.with_columns(pl.Series(f"{name}_ref", prefs, dtype=pl.Int32))
        fast = fast.join(keyed, on=["tid", name, fid], how="left", nulls_equal=True, maintain_order="left")
    g_fast = fast.get_column("g").to_numpy()
    shift = np.asarray([0, *extra_n], dtype=np.int64)[np.searchsorted(np.asarray(extra_at, dtype=np.int64), g_fast)]
    refs["tournament_ref"] += fast.get_column("tref").to_list()
    refs["white_ref"] += fast.get_column("White_ref").to_list()
    refs["black_ref"] += fast.get_column("Black_ref").to_list()
    refs["line"] += np.asarray(lines, dtype=np.int64)[g_fast].tolist()
    refs["game_index"] += (gi + g_fast + shift).tolist()
    if g_fast[-1] == len(raw_games) - 1:  # the chunk's last game is fast: the next may continue its event
        reader._prev_tref = tref_of[tid_of_row[int(g_fast[-1])]]
    _tournament_facts(reader, fast)
    return gi + used


def assign_loop(
    reader: _Reader, read_one: Callable[[RawGame, int, int], int], res: Any, fast: pl.DataFrame,
    raw_games: list[RawGame], lines: list[int], gi: int, refs: dict[str, list[int]],
) -> int:  # fmt: skip
    """`assign` by a loop over every game of the chunk (`read_loop.USE_CHUNK_REFS = False`, or
    a fast game without an Event tag): the same refs, records and issues. Returns the next game
    index."""
    import polars as pl

    fast_mask = res.games.get_column("fast").to_list()
    t_cols = ["Event", "Site", "EventDate", "year"]
    need = set()
    for cols in (t_cols, [*t_cols, "White", "WhiteFideId"], [*t_cols, "Black", "BlackFideId"]):
        # hashed keys: a collision only means a dict is built later, on demand (tags_of)
        need.update(fast.filter(pl.struct(cols).hash().is_first_distinct()).get_column("g").to_list())
    dicts: dict[int, dict[str, str]] = res.tag_dicts(sorted(need))
    names = (
        "g", "Event", "Site", "EventDate", "year", "White", "Black", "WhiteFideId", "BlackFideId", "WhiteElo",
        "BlackElo", "game_date", "date_precision", "event_date", "event_precision", "time_control", "round",
    )  # fmt: skip
    rows = zip(*(fast.get_column(c).to_list() for c in names), strict=True)
    t_cache, t_dates, t_tc, t_rounds = (
        reader._t_cache,
        reader.t_dates,
        reader.t_tc,
        reader.t_rounds,
    )
    p_cache, players, player = reader._p_cache, reader._players, reader._player

    def tags_of(g: int) -> dict[str, str]:
        # a hash collision in `need` only means this game's dict is built now
        tags = dicts.get(g)
        if tags is None:
            tags = dicts[g] = res.tag_dicts([g])[g]
        return tags

    trefs, wrefs, brefs = refs["tournament_ref"], refs["white_ref"], refs["black_ref"]
    fast_lines, gis = refs["line"], refs["game_index"]
    for rg, is_fast, ln in zip(raw_games, fast_mask, lines, strict=True):
        if not is_fast:
            gi += read_one(rg, ln, gi)
            continue
        g, event, site, edate_raw, year, white, black, wfid, bfid, welo, belo, gdate, gprec, edate, eprec, tc, rnd = (
            next(rows)
        )
        tkey = (event, site, edate_raw, year, None if event is not None else reader._prev_tref)
        tref = t_cache.get(tkey)
        if tref is None:
            tref = t_cache[tkey] = reader._tournament(tags_of(g), gdate, edate, eprec)
        reader._prev_tref = tref
        if gdate is not None:  # the event's span from the dates given to the day (`FileRefs`)
            (t_dates if gprec == "day" else reader.t_rough)[tref].append(gdate)
        if tc:
            t_tc.setdefault(tref, set()).add(tc)
        # `_player`, with its usual case (a player met before, rating known; a fast game's FIDE ID
        # is valid or a placeholder) inline
        wref = p_cache.get((tref, white, wfid))
        if wref is None or (welo and players[wref].rating is None):
            wref = player(tref, "White", white, wfid, welo, partial(tags_of, g), ln, gi)
        bref = p_cache.get((tref, black, bfid))
        if bref is None or (belo and players[bref].rating is None):
            bref = player(tref, "Black", black, bfid, belo, partial(tags_of, g), ln, gi)
        if rnd is not None and rnd > t_rounds.get(tref, 0):
            t_rounds[tref] = rnd
        trefs.append(tref)
        wrefs.append(wref)
        brefs.append(bref)
        fast_lines.append(ln)
        gis.append(gi)
        gi += 1
    return gi


def _with_keys(fast: pl.DataFrame) -> pl.DataFrame:
    """`fast` with `tid`: the tournament key's number, in the order of its first game."""
    import polars as pl

    keys = fast.select(_T_COLS).unique(maintain_order=True).with_row_index("tid")
    keys = keys.with_columns(pl.col.tid.cast(pl.Int64))
    return fast.join(keys, on=_T_COLS, how="left", nulls_equal=True, maintain_order="left")


def _firsts(fast: pl.DataFrame) -> tuple[pl.DataFrame, list[pl.DataFrame]]:
    """The first game of each tournament key (`tid`), and per side the first game of each
    (tid, name, FideId) key: what `_events` and `_prefetch` both look at, filtered once."""
    import polars as pl

    t_first = fast.filter(pl.col.tid.is_first_distinct())
    return t_first, [fast.filter(pl.struct("tid", name, fid).is_first_distinct()) for name, fid, _ in _SIDES]


def _events(
    fast: pl.DataFrame, firsts: tuple[pl.DataFrame, list[pl.DataFrame]], n_raw: int
) -> tuple[list[tuple[int, int, Any, Any]], list[pl.DataFrame]]:
    """The games Python must see, in file order (row, kind 0 tournament / 1 White / 2 Black /
    3 read one by one, ...), and per side the distinct (tid, name, FideId) keys. `firsts`: `_firsts(fast)`."""
    import polars as pl

    events: list[tuple[int, int, Any, Any]] = []
    t_first, side_firsts = firsts
    t_vals = ("g", "tid", "Event", "Site", "EventDate", "year", "game_date", "event_date", "event_precision")
    for g, tid, *rest in t_first.select(t_vals).iter_rows():
        events.append((g, 0, tid, tuple(rest)))
    player_keys = []
    for kind, ((name, fid, rating), first) in enumerate(zip(_SIDES, side_firsts, strict=True), start=1):
        key = pl.struct("tid", name, fid)
        rated = fast.filter(pl.col(rating).is_not_null()).filter(key.is_first_distinct())
        rows = pl.concat([first.select("g", "tid", name, fid), rated.select("g", "tid", name, fid)]).unique(
            "g", maintain_order=True
        )
        elo = name + "Elo"
        rows = rows.join(fast.select("g", elo), on="g", how="left")
        for g, tid, n, f, e in rows.iter_rows():
            events.append((g, kind, (tid, n, f), e))
        player_keys.append(first.select("tid", name, fid))
    fast_rows = set(fast.get_column("g").to_list())
    events += [(g, 3, None, None) for g in range(n_raw) if g not in fast_rows]
    events.sort(key=lambda e: (e[0], e[1]))
    return events, player_keys


def _prefetch(firsts: tuple[pl.DataFrame, list[pl.DataFrame]], reader: _Reader) -> list[int]:
    """The fast games whose tags the events will likely need (a tournament or player not met
    before), to build their dicts at once; any other is built when needed. `firsts`: `_firsts`
    of the fast games."""
    t_cache, p_cache = reader._t_cache, reader._p_cache
    need: set[int] = set()
    t_first, side_firsts = firsts
    known: dict[int, int] = {}
    for g, tid, event, site, edate_raw, year in t_first.select("g", "tid", *_T_COLS).iter_rows():
        tref = t_cache.get((event, site, edate_raw, year, None))
        if tref is None:
            need.add(g)
        else:
            known[tid] = tref
    for (name, fid, _), first in zip(_SIDES, side_firsts, strict=True):
        for g, tid, n, f in first.select("g", "tid", name, fid).iter_rows():
            tref = known.get(tid)
            if tref is None or (tref, n, f) not in p_cache:
                need.add(g)
    return sorted(need)


def _tournament_facts(reader: _Reader, fast: pl.DataFrame) -> None:
    """The fast games' dates (earliest, latest), time controls and highest round, per tournament."""
    import polars as pl

    c = pl.col
    day = c.date_precision == "day"
    facts = fast.group_by("tref").agg(
        c.game_date.filter(day).min().alias("first"),
        c.game_date.filter(day).max().alias("last"),
        # the dates not given to the day (`2024.??.??`): the span only of an event that has no other
        c.game_date.filter(~day).min().alias("rough_first"),
        c.game_date.filter(~day).max().alias("rough_last"),
        c.time_control.filter(c.time_control.is_not_null() & (c.time_control != "")).unique().alias("tcs"),
        pl.col("round").max().alias("rnd"),
    )
    t_dates, t_rough, t_tc, t_rounds = reader.t_dates, reader.t_rough, reader.t_tc, reader.t_rounds
    for tref, first, last, rough_first, rough_last, tcs, rnd in facts.iter_rows():
        if first is not None:
            t_dates[tref] += [first, last]
        if rough_first is not None:
            t_rough[tref] += [rough_first, rough_last]
        if tcs:
            t_tc.setdefault(tref, set()).update(tcs)
        if rnd is not None and rnd > t_rounds.get(tref, 0):
            t_rounds[tref] = rnd
