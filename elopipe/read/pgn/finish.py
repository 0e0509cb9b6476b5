"""The whole-file checks of a PGN file, once every game is read: a file that is not PGN, a file
whose games name no player, the tournaments' final form, players with implausibly many games,
and what the file's moveless games are (`settle_moveless`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from elopipe.read.field_bounds import GAMES_PER_PLAYER_PLAUSIBLE
from elopipe.read.pgn.builder import GameBuilder
from elopipe.read.records import GameRec, GameTable, ParsedFile


def finish(b: GameBuilder, fast_refs: dict[str, list[int]] | None, slow_games: list[GameRec]) -> ParsedFile:
    """The whole-file checks and the tournaments' and players' final form, once every game
    is read."""
    if not b.any_tags and not b.out.games:
        b.out.rejected_reason = "not PGN: no tag pairs and no moves"
    elif not b.any_tags and not b._headerless_has_legal_moves():
        b.out.rejected_reason = "not PGN: no tag pairs and no legal moves"
        b.out.games = []
        b.refs._players.clear()
        b.out.unplayed.clear()
        b.out.tournaments.clear()
    if b.out.games and not b.refs._players and b.out.rejected_reason is None:
        b.issue(
            "no_players",
            f"{len(b.out.games)} game(s) but no White or Black player in the whole file: nothing to rate",
            None,
            None,
            "error",
        )
    b.refs._finish_tournaments()
    implausible_games(b, fast_refs, slow_games)
    b.out.results_only = bool(b.out.games) and not b.shows_moves
    cut = _cut_game(b)
    b.out.cut_short = cut is not None
    if b.moveless:
        settle_moveless(b, cut)
    b.out.players = sorted(b.refs._players.values(), key=lambda p: p.ref)
    return b.out


def _cut_game(b: GameBuilder) -> int | None:
    """The game index of the file's last game when its movetext has no result marker (issue
    'no_result_marker'): the file was cut short there (a copy or download that stopped), as `watch`
    judges a file still arriving. None otherwise."""
    marks = [i.game_index for i in b.out.issues if i.code == "no_result_marker" and i.game_index is not None]
    if not marks or not b.out.games:
        return None
    games = b.out.games
    if isinstance(games, GameTable):
        last = games.frame.get_column("game_index").max()
    else:
        last = max((g.game_index for g in games if g.game_index is not None), default=None)
    return max(marks) if isinstance(last, int) and max(marks) >= last else None


def settle_moveless(b: GameBuilder, cut: int | None = None) -> None:
    """The file decides what its moveless games are (a result, no move, nothing marking them
    unplayed: flag 'no_moves').

    In a results export (no game of the file shows a move: `ParsedFile.results_only`) the
    moves are unknown, not absent: the games are played, flag 'moves_unknown', ply count NULL;
    whether they are rated is the rating's policy (`--no-moves`). In a file that shows moves
    elsewhere, the moves shown are the moves played: a decisive game is a forfeit
    (pgn-faults.md 12), a draw has fewer than two plies and is not rated (pgn-faults.md 13), but
    for the game `cut` (`_cut_game`: the file ends in it, before its moves), whose moves are
    unknown, as in a results export."""
    import polars as pl

    from elopipe.read.game_frame import games_frame

    frame = games_frame(b.out.games)
    # a bye (`_odd_players`) is no game whatever the file shows
    moveless = frame.get_column("flags").list.contains("no_moves").fill_null(False) & frame.get_column("played")
    decisive = pl.col("result").is_in(["1-0", "0-1"])
    if b.out.results_only:
        b.issue(
            "results_export",
            f"no game of the file shows a move: a results export; its {moveless.sum()} games with a result"
            " are stored as played, moves unknown (rated unless the rating's --no-moves policy says otherwise)",
            None,
            None,
            "info",
        )
        settled = frame.with_columns(
            pl.when(moveless).then(pl.lit(None, pl.Int32)).otherwise(pl.col("ply_count")).alias("ply_count"),
            pl.when(moveless).then(pl.lit(["moves_unknown"])).otherwise(pl.col("flags")).alias("flags"),
        )
    else:
        at_cut = frame.get_column("game_index") == (-1 if cut is None else cut)
        unknown, moveless = moveless & at_cut, moveless & ~at_cut
        for line, gi in frame.filter(unknown).select("line", "game_index").iter_rows():
            b.issue("cut_short_game", "the file ends in this game, before its moves: a copy cut short; stored as"
                    " played, moves unknown; load the complete file to replace it", line, gi, "warning")  # fmt: skip
        for line, gi, result in frame.filter(moveless).select("line", "game_index", "result").iter_rows():
            if result == "1/2-1/2":
                b.issue("fewer_than_two_plies", "no move shown in a file that shows moves: not rated", line,
                           gi, "info")  # fmt: skip
            else:
                b.issue("forfeit_no_moves", "decisive result with no moves: stored as a forfeit", line, gi,
                           "info")  # fmt: skip
        tag = pl.when(decisive).then(pl.lit("forfeit")).otherwise(pl.lit("fewer_than_two_plies"))
        settled = frame.with_columns(
            pl.when(moveless & decisive).then(False).otherwise(pl.col("played")).alias("played"),
            pl.when(moveless & decisive).then(pl.lit("forfeit")).otherwise(pl.col("unplayed_code"))
            .alias("unplayed_code"),
            pl.when(unknown).then(pl.lit(None, pl.Int32)).otherwise(pl.col("ply_count")).alias("ply_count"),
            pl.when(unknown).then(pl.lit(["moves_unknown"]))
            .when(moveless).then(pl.concat_list(tag, pl.lit("no_moves"))).otherwise(pl.col("flags"))
            .alias("flags"),
        )  # fmt: skip
    b.out.games = GameTable(settled, settled.height)


def implausible_games(b: GameBuilder, fast: dict[str, list[int]] | None, slow_games: list[GameRec]) -> None:
    """Warn (games kept) about a player with more games in one event than any real event
    gives (`field_bounds.GAMES_PER_PLAYER_PLAUSIBLE`), at the first game beyond it."""
    slow: list[GameRec] = slow_games if fast is not None else b.out.games  # type: ignore[assignment]
    frame = None
    if isinstance(b.out.games, GameTable) and fast is None:  # read in pieces: every piece's games
        frame = b.out.games.frame
        fast = {c: frame.get_column(c).to_list() for c in ("white_ref", "black_ref")}
        slow = []
    counts: Counter[int | None] = Counter()
    if fast is not None:
        counts.update(fast["white_ref"])
        counts.update(fast["black_ref"])
    counts.update(g.white_ref for g in slow)
    counts.update(g.black_ref for g in slow)
    many = {ref for ref, n in counts.items() if ref is not None and n > GAMES_PER_PLAYER_PLAUSIBLE}
    if not many:
        return
    import polars as pl

    if frame is not None:
        columns = frame.select(_REF_COLUMNS).cast(dict.fromkeys(_REF_COLUMNS, pl.Int64))
    else:
        columns = _ref_columns(fast or {})
    beyond = _game_beyond(pl.concat([_ref_columns(_records_columns(slow)), columns]), many)
    for ref in sorted(many):
        line, gi = beyond[ref]
        player = b.refs._players[ref]
        event = next((t.name for t in b.out.tournaments if t.ref == player.tournament_ref), None)
        b.issue(
            "implausible_games",
            f"{player.name!r} has {counts[ref]} games in event {event!r}: more than "
            f"{GAMES_PER_PLAYER_PLAUSIBLE}, which no real event gives (a merged or generated file?); "
            "loaded as written",
            line,
            gi,
        )


_REF_COLUMNS = ("white_ref", "black_ref", "line", "game_index")


def _records_columns(games: list[GameRec]) -> dict[str, list[Any]]:
    return {c: [getattr(g, c) for g in games] for c in _REF_COLUMNS}


def _ref_columns(cols: dict[str, list[Any]]) -> Any:
    """White and black refs, line and game index of games given as lists, as a Polars frame."""
    import polars as pl

    schema = dict.fromkeys(_REF_COLUMNS, pl.Int64)
    if not cols or "line" not in cols:
        return pl.DataFrame(schema=schema)
    return pl.DataFrame({c: cols[c] for c in _REF_COLUMNS}, schema=schema)


def _game_beyond(games: Any, refs: set[int]) -> dict[int, tuple[int | None, int | None]]:
    """For each player ref in `refs`: (line, game index) of its game number
    `GAMES_PER_PLAYER_PLAUSIBLE` + 1, the games taken by game index (a game without one counts as
    0) and then in the order given. One pass over the games, whatever the number of refs."""
    import polars as pl

    rows = games.cast(dict.fromkeys(_REF_COLUMNS, pl.Int64)).with_row_index("pos")
    sides = [rows.select("pos", "line", "game_index", ref=pl.col(side)) for side in ("white_ref", "black_ref")]
    hits = (
        pl.concat(sides)
        .filter(pl.col("ref").is_in(sorted(refs)))
        .unique(["pos", "ref"])  # a player on both sides of one game: one game
        .sort(pl.col("game_index").fill_null(0), "pos")
        .group_by("ref")
        .agg(pl.col("line").get(GAMES_PER_PLAYER_PLAUSIBLE), pl.col("game_index").get(GAMES_PER_PLAYER_PLAUSIBLE))
    )
    return {ref: (line, gi) for ref, line, gi in hits.iter_rows()}
