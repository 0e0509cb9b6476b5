"""Games as one Polars frame (`model.GAME_FRAME_COLUMNS`), whichever way a reader returned them.

The loader inserts games from a frame. The PGN reader returns large files as a `GameTable`
(a frame already); the TRF reader and small PGN files return `GameRec` lists, transposed here.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Sequence

import polars as pl

from elopipe.read.records import GAME_FRAME_COLUMNS, GameRec, GameTable

__all__ = [
    "GAME_FRAME_SCHEMA", "build_frames", "games_frame", "records_frame", "records_table", "rows_frame", "rows_table",
]  # fmt: skip

GAME_FRAME_SCHEMA = pl.Schema(
    {
        name: pl.List(pl.String) if dtype == "List(String)" else getattr(pl, dtype)()
        for name, dtype in GAME_FRAME_COLUMNS.items()
    }
)

# GameRec fields copied as they are (all but the scores, flags and headers)
_PLAIN = tuple(c for c in GAME_FRAME_COLUMNS if c not in ("white_score", "black_score", "flags", "headers"))
_PLAIN_GET = operator.attrgetter(*_PLAIN)
_JSON = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps(..., ensure_ascii=False) without its wrapper


def games_frame(games: Sequence[GameRec]) -> pl.DataFrame:
    """The games as a frame with `GAME_FRAME_SCHEMA`, in their order."""
    if isinstance(games, GameTable):
        return games.frame
    return records_frame(list(games))


def records_table(games: list[GameRec]) -> GameTable:
    """`games` as a `GameTable` that keeps them; its frame (`records_frame`) is built on first
    use, or with the other tables of a batch by `build_frames`."""
    return GameTable(lambda: records_frame(games), records=games)


def rows_table(columns: tuple[str, ...], rows: list[list[object]]) -> GameTable:
    """Games given as `rows` of the `GameRec` fields `columns` (the other fields None) as a
    `GameTable`; its frame (`rows_frame`) is built on first use, or with the other tables of a
    batch by `build_frames`."""
    return GameTable(lambda: rows_frame(columns, rows), n_games=len(rows), rows=(columns, rows))


def build_frames(tables: Sequence[GameTable]) -> None:
    """Build the pending frames of `tables` (made by `records_table` or `rows_table`) in one
    `records_frame` (one `rows_frame` for the tables of the same columns), each table getting its
    slice (no copy). The same frames as built one by one; a frame costs about as much to make for
    a hundred games as for ten thousand, so a batch of small files (a month of TRF) pays that once
    rather than once a file."""
    groups: dict[tuple[str, ...] | None, list[GameTable]] = {}
    for t in tables:
        if t.frame_pending:
            rows = t.rows
            groups.setdefault(rows[0] if rows is not None else None, []).append(t)
    for columns, pending in groups.items():
        if len(pending) < 2:
            continue
        if columns is None:
            frame = records_frame([g for t in pending for g in t.records()])
        else:
            frame = rows_frame(columns, [r for t in pending for r in t.rows[1]])  # type: ignore[index]
        start = 0
        for t in pending:
            t.set_frame(frame.slice(start, len(t)))
            start += len(t)


def records_frame(games: list[GameRec]) -> pl.DataFrame:
    """`GameRec`s as a frame with `GAME_FRAME_SCHEMA` (scores as floats, headers as JSON text)."""
    if not games:
        return pl.DataFrame(schema=GAME_FRAME_SCHEMA)
    # the plain fields transposed in C (attrgetter + zip): far cheaper than a loop per game
    cols: dict[str, object] = dict(zip(_PLAIN, zip(*map(_PLAIN_GET, games), strict=True), strict=True))
    scores: dict[object, float | None] = {None: None}
    cols["white_score"] = [_score(scores, g.white_score) for g in games]
    cols["black_score"] = [_score(scores, g.black_score) for g in games]
    cols["flags"] = [g.flags or None for g in games]
    # "{}" (a game without tags) is kept apart from None (no tags at all: TRF); both load as NULL
    cols["headers"] = [_JSON(g.headers) if g.headers is not None else None for g in games]
    return pl.DataFrame({k: cols[k] for k in GAME_FRAME_SCHEMA}, schema=GAME_FRAME_SCHEMA)


def rows_frame(columns: tuple[str, ...], rows: list[list[object]]) -> pl.DataFrame:
    """Games given as rows of the `GameRec` fields `columns` (the other fields None) as a frame
    with `GAME_FRAME_SCHEMA`: the frame `records_frame` makes of the same games."""
    if not rows:
        return pl.DataFrame(schema=GAME_FRAME_SCHEMA)
    cols: dict[str, Sequence[object]] = dict(zip(columns, zip(*rows, strict=True), strict=True))
    for side in ("white_score", "black_score"):
        if side in cols:
            floats = {s: None if s is None else float(s) for s in set(cols[side])}  # type: ignore[arg-type]
            cols[side] = [floats[s] for s in cols[side]]
    if "flags" in cols:
        cols["flags"] = [f or None for f in cols["flags"]]
    if "headers" in cols:
        cols["headers"] = [_JSON(h) if h is not None else None for h in cols["headers"]]
    none = [None] * len(rows)
    return pl.DataFrame({k: cols.get(k, none) for k in GAME_FRAME_SCHEMA}, schema=GAME_FRAME_SCHEMA)


def _score(cache: dict[object, float | None], score: object) -> float | None:
    hit = cache.get(score, cache)
    if hit is cache:
        hit = cache[score] = float(score)  # type: ignore[arg-type]
    return hit  # type: ignore[return-value]
