"""The state one reader of part of a PGN file leaves, and how the next reader takes it over as
if it had read that part itself: refs renumbered in file order, game indexes shifted.

Two kinds of parts: a *piece* of a large file (streaming, Dask: `PieceState`, `piece_state`,
`merge_piece`; read by `reader.read_pgn_piece`, joined by `reader.merge_pieces`), and a *range*
of the games of one text read by a worker process (`piece_state(..., packed=True)`,
`merge_chunk`; `read_pgn(workers=N)`). Both leave a `PieceState` and are joined by one
`merge_state`; only their games differ (a frame, or records packed as columns).
"""

from __future__ import annotations

import datetime as dt
import sys
from dataclasses import dataclass, fields, replace
from typing import Any

from elopipe.read.pgn.builder import GameBuilder
from elopipe.read.records import GameRec, IngestIssue, PlayerRec, TournamentRec, UnplayedRec


@dataclass
class PieceState:
    """What a reader of one piece of a file (`read_pgn_piece`) leaves for `merge_pieces`:
    picklable, refs its own (0-based, in the order the piece met them), game indexes from 0,
    line numbers the file's."""

    used: int  # game indexes used
    games: Any  # pl.DataFrame with `game_frame.GAME_FRAME_SCHEMA`
    any_tags: bool
    issues: list[IngestIssue]
    unplayed: list[UnplayedRec]
    tournaments: list[TournamentRec]  # by ref
    t_keys: list[tuple[Any, ...]]  # each tournament's identity (`FileRefs.t_refs`), by ref
    players: list[PlayerRec]  # by ref
    p_keys: list[tuple[Any, ...]]  # each player's identity (`FileRefs.p_refs`), by ref
    t_dates: dict[int, list[dt.date]]  # by tournament ref: the earliest and the latest game date
    t_rough: dict[int, list[dt.date]]  # the same of the dates not given to the day (`FileRefs`)
    t_tc: dict[int, set[str]]
    t_rounds: dict[int, int]
    headerless: list[list[bytes]]  # the moves of the first games without tags
    moveless: int = 0  # games flagged 'no_moves' (`finish.settle_moveless`)
    shows_moves: bool = False  # a game of the piece shows a move
    failure: str | None = None  # the reader failed: on what (see `_reader_failed`)


def piece_state(b: GameBuilder, used: int, packed: bool = False) -> PieceState:
    """This reader's state once it read one piece (`read_pgn_piece`), or, `packed`, a range of
    the games of a text (`read_pgn(workers=N)`: its games as `pack_games` gives them)."""
    from elopipe.read.game_frame import games_frame

    return PieceState(
        used=used,
        games=pack_games(b._games) if packed else games_frame(b.out.games),
        any_tags=b.any_tags,
        issues=b.out.issues,
        unplayed=b.out.unplayed,
        tournaments=b.out.tournaments,
        t_keys=list(b.refs.t_refs),
        players=[b.refs._players[ref] for ref in range(len(b.refs.p_refs))],
        p_keys=list(b.refs.p_refs),
        # all that `_finish_tournaments` takes of the dates: not one date per game
        t_dates={ref: [min(ds), max(ds)] for ref, ds in b.refs.t_dates.items() if ds},
        t_rough={ref: [min(ds), max(ds)] for ref, ds in b.refs.t_rough.items() if ds},
        t_tc=b.refs.t_tc,
        t_rounds=b.refs.t_rounds,
        headerless=b._headerless_tokens[:3],  # `_headerless_has_legal_moves` looks at no more
        moveless=b.moveless,
        shows_moves=b.shows_moves,
    )


def merge_piece(b: GameBuilder, st: PieceState, shift: int) -> Any:
    """Add the state of the next piece (`read_pgn_piece`; game indexes start at `shift`) to `b`
    (`merge_state`); returns the piece's games frame remapped."""
    t_map, p_map = merge_state(b, st, shift)
    return _remap(st.games, t_map, p_map, shift)


def merge_state(b: GameBuilder, st: PieceState, shift: int) -> tuple[list[int], list[int]]:
    """Add the state of the next part of a file (game indexes start at `shift`) to `b` as if `b`
    had read it, but for its games: tournaments and players first met there get the next refs, a
    player met before gets the rating the part found if it had none (as `_player` does). Returns
    the maps of the part's tournament and player refs (old ref i -> map[i]). The part's objects
    are copied where changed, never changed."""
    b.any_tags = b.any_tags or st.any_tags
    b.moveless += st.moveless
    b.shows_moves = b.shows_moves or st.shows_moves
    t_map: list[int] = []
    for key, t in zip(st.t_keys, st.tournaments, strict=True):
        new = b.refs.t_refs.get(key)
        if new is None:
            new = b.refs.t_refs[key] = len(b.refs.t_refs)
            # a copy even when its ref stays: `_finish_tournaments` fills in its dates
            b.out.tournaments.append(replace(t, ref=new))
        t_map.append(new)
    p_map: list[int] = []
    for (tref, who), p in zip(st.p_keys, st.players, strict=True):
        key = (t_map[tref], who)
        new = b.refs.p_refs.get(key)
        if new is None:
            new = b.refs.p_refs[key] = len(b.refs.p_refs)
            same = p.ref == new and p.tournament_ref == key[0]
            b.refs._players[new] = p if same else replace(p, ref=new, tournament_ref=key[0])
        elif b.refs._players[new].rating is None and p.rating is not None:
            b.refs._players[new] = replace(b.refs._players[new], rating=p.rating)
        p_map.append(new)
    b.out.issues.extend(
        i if not shift or i.game_index is None else replace(i, game_index=i.game_index + shift) for i in st.issues
    )
    for u in st.unplayed:
        opp = p_map[u.opponent_ref] if u.opponent_ref is not None else None
        b.out.unplayed.append(
            replace(u, tournament_ref=t_map[u.tournament_ref], player_ref=p_map[u.player_ref], opponent_ref=opp)
        )
    for ref, dates in st.t_dates.items():
        b.refs.t_dates[t_map[ref]].extend(dates)
    for ref, dates in st.t_rough.items():
        b.refs.t_rough[t_map[ref]].extend(dates)
    for ref, tcs in st.t_tc.items():
        b.refs.t_tc.setdefault(t_map[ref], set()).update(tcs)
    for ref, rnd in st.t_rounds.items():
        if rnd > b.refs.t_rounds.get(t_map[ref], 0):
            b.refs.t_rounds[t_map[ref]] = rnd
    b._headerless_tokens.extend(st.headerless)
    b.refs._prev_tref = None  # the part's last game is not this reader's: no event to continue
    return t_map, p_map


def _remap(frame: Any, t_map: list[int], p_map: list[int], gi_shift: int) -> Any:
    """`frame` (a piece's games) with its refs mapped (old ref i -> map[i]) and game indexes shifted."""
    import polars as pl

    c = pl.col
    exprs = []
    if t_map != list(range(len(t_map))):
        exprs.append(c.tournament_ref.replace_strict(range(len(t_map)), t_map, return_dtype=pl.Int32))
    if p_map != list(range(len(p_map))):
        for col in ("white_ref", "black_ref"):  # a null ref (no player) stays null
            exprs.append(c(col).replace_strict(range(len(p_map)), p_map, return_dtype=pl.Int32))
    if gi_shift:
        exprs.append((c.game_index + gi_shift).cast(pl.Int32))
    return frame.with_columns(exprs) if exprs and frame.height else frame


_GAME_FIELDS = tuple(f.name for f in fields(GameRec))


def pack_games(games: list[GameRec]) -> tuple[list[Any], ...]:
    """Games as one list per field: a worker's games cross the process boundary as columns,
    which pickle and unpickle several times faster than as objects. Header names are interned so
    that pickle writes each once."""
    intern = sys.intern
    for g in games:
        if g.headers:
            g.headers = {intern(k): v for k, v in g.headers.items()}
    return tuple([getattr(g, name) for g in games] for name in _GAME_FIELDS)


def unpack_games(cols: tuple[list[Any], ...]) -> list[GameRec]:
    return [GameRec(*values) for values in zip(*cols, strict=True)]


def merge_chunk(b: GameBuilder, st: PieceState, gi_shift: int) -> int:
    """Add the state of a worker's range of games (`piece_state(..., packed=True)`; its game
    indexes start at `gi_shift`) to `b` as `merge_piece` adds a piece's, its games appended to
    `b`'s records; returns how many game indexes they used."""
    t_map, p_map = merge_state(b, st, gi_shift)
    games = unpack_games(st.games)
    for g in games:
        g.tournament_ref = t_map[g.tournament_ref]
        if g.white_ref is not None:
            g.white_ref = p_map[g.white_ref]
        if g.black_ref is not None:
            g.black_ref = p_map[g.black_ref]
        assert g.game_index is not None  # the reader numbers every game it reads
        g.game_index += gi_shift
    b._games.extend(games)
    return st.used
