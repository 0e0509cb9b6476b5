"""The rows of a batch's readable files, inserted segment by segment, with their players resolved.

`load_contents` inserts the tournaments of the batch, then each segment of files (files that
resolve as one: `_resolve_segment`, `identity.settle`): its entries, games, unplayed rounds and
teams, the officers' decisions re-applied, its players consolidated and their facts refreshed;
then, once for the batch, the cross-source links of its games (`identity.dedup`), the events
held in several files (`identity.events`) and the players' display names. Called by
`elopipe.ingest.loader` inside the batch's transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import duckdb
import polars as pl

from elopipe.identity import consolidate, decisions, dedup, events, facts, nearby, rerate, resolve
from elopipe.ingest import rows as load_rows
from elopipe.ingest.ledger import FileResult
from elopipe.read.game_frame import build_frames, games_frame
from elopipe.read.records import GameTable, IngestIssue
from elopipe.store import write

if TYPE_CHECKING:
    from elopipe.read.parse import ParsedSource


# From this many games on, a transaction's rows are written to the store file as it goes (DuckDB's
# optimistic writes) rather than kept in memory until COMMIT: slower, bounded memory.
OPTIMISTIC_GAMES = 200_000


def draw(con: duckdb.DuckDBPyConnection, sequence: str, n: int) -> list[int]:
    """`n` values of `sequence`, in increasing order (one statement)."""
    if n == 0:
        return []
    # n distinct values from lo to hi with hi - lo + 1 = n are lo..hi: only a sequence that skipped
    # values sends them all (a FIDE month's 125k game ids fetched as rows and sorted: 0.03 CPU-s, twice this)
    lo, hi, values = con.execute(
        f"SELECT min(v), max(v), CASE WHEN max(v) - min(v) + 1 = count(*) THEN NULL ELSE list(v ORDER BY v) END"
        f" FROM (SELECT nextval('{sequence}') AS v FROM range(?))",
        [n],
    ).fetchall()[0]
    return list(range(lo, hi + 1)) if values is None else list(values)


def load_contents(
    con: duckdb.DuckDBPyConnection,
    contents: list[tuple[int, ParsedSource, FileResult, list[IngestIssue]]],
    relink: set[int],
) -> None:
    """Insert the rows of the batch's readable files, segment by segment (`_resolve_segment`),
    then link the games of the batch's tournaments and refresh its players' names once."""
    n_t = sum(len(ps.parsed.tournaments) for _, ps, _, _ in contents if ps.parsed is not None)
    t_pool = iter(draw(con, "tournament_id_seq", n_t))
    files: list[tuple[load_rows.FileRows, FileResult]] = []
    build_frames([ps.parsed.games for _, ps, _, _ in contents if ps.parsed and isinstance(ps.parsed.games, GameTable)])
    for fid, ps, res, _ in contents:
        assert ps.parsed is not None
        t_ids = {t.ref: next(t_pool) for t in ps.parsed.tournaments}
        res.n_tournaments = len(t_ids)
        files.append((load_rows.FileRows(fid, ps.parsed, games_frame(ps.parsed.games), t_ids), res))
    batch_tids = {t for f, _ in files for t in f.t_ids.values()}
    merged: list[int] = []
    tournaments = load_rows.tournaments_frame([f for f, _ in files])
    write.insert(con, "tournaments", tournaments, exprs={"extra": "CAST(extra AS JSON)"})
    # an officer's split is re-applied to a file's rows after it is resolved: one file a segment
    splits = con.execute("SELECT count(*) FROM player_merges WHERE action = 'split'").fetchall()[0][0]
    rest, window = files, len(files)
    # the tournaments' keys and days stay as inserted until the batch ends: the steps below that
    # ask which tournaments are near the batch's (resolution, same-game evidence, re-link) read it once
    with nearby.reused_near(con):
        while rest:
            links = _resolve_segment(con, [f for f, _ in rest[:window]], settle=not splits)
            merged += _load_segment(con, rest[: len(links)], links, batch_tids)
            rest = rest[len(links) :]
            # the next resolution reads the store for the files it may take: as far again as this
            # segment went, so that files that each end a segment cost what they cost one by one
            window = 2 * len(links)
        # the same game from another source counts once
        dedup.relink_tournaments(con, relink | batch_tids)
    if merged and files:
        # a game rated before under a player merged away now: those lists change (`players merge`'s test)
        files[0][1].rerate = rerate.moved_by_merges(con, merged)
    # one event held in several files is one event for the rating and the reports
    events.join_events(con, relink | batch_tids)
    # list names must not depend on which file came first
    decisions.refresh_display_names(con, {p for _, res in files for p in res.player_ids})


def _name_only(f: load_rows.FileRows) -> bool:
    """Whether the file holds a player with neither FIDE ID nor national ID."""
    return any(not (p.fide_id or p.national_id) for p in f.parsed.players)


def _resolve_segment(
    con: duckdb.DuckDBPyConnection, files: list[load_rows.FileRows], settle: bool
) -> list[dict[tuple[int, int], resolve.Resolution]]:
    """Resolve the players of the first files of `files` that make a segment; the resolutions,
    one per file of the segment.

    A segment is loaded as if its files were one: resolved in one pass, then consolidated and
    its facts refreshed once. Players found by identifier resolve the same whatever merges of
    name-only players are pending, so a run of files whose players all carry one is a segment.
    A name-only player is resolved against the store as the files before it left it, as when
    the files are loaded one by one: the segment ends before and after a file holding one,
    unless the steps after each file would change nothing a later file's resolution reads
    (`identity.settle`: no pending merge, no changed fact; with `settle`, no officer's split is
    stored). Then many small files whose players recur (club evenings, one game a file) are one
    segment, and the identity work runs once for them, not once a file."""
    cut = [_name_only(f) for f in files]

    def stop_after(i: int, settled: Callable[[], bool]) -> bool:
        if i + 1 >= len(files) or not (cut[i] or cut[i + 1]):
            return False
        return not (settle and settled())

    return resolve.resolve_batch(
        con,
        [resolve.FilePlayers(f.file_id, [p for p in f.parsed.players if p.tournament_ref in f.t_ids], f.t_ids)
         for f in files],
        stop_after=stop_after,
    )  # fmt: skip


def _load_segment(
    con: duckdb.DuckDBPyConnection,
    segment: list[tuple[load_rows.FileRows, FileResult]],
    links: list[dict[tuple[int, int], resolve.Resolution]],
    batch_tids: set[int],
) -> list[int]:
    """Insert one resolved segment's rows: entries, games, unplayed rounds, teams; then re-apply
    officers' decisions, consolidate its players and refresh their facts. Returns the players
    consolidation merged away."""
    files = [f for f, _ in segment]
    entries: list[load_rows.Row] = []
    aliases: list[load_rows.Row] = []
    unplayed: list[load_rows.Row] = []
    teams: list[load_rows.Row] = []
    for (f, res), link in zip(segment, links, strict=True):
        f.pid = {k: v.player_id for k, v in link.items()}
        res.player_ids = set(f.pid.values())
        res.n_players = len(res.player_ids)
        e, a = load_rows.entry_rows(f.parsed, f.file_id, f.t_ids, link)
        entries += e
        aliases += a
        u = load_rows.unplayed_rows(f.parsed, f.file_id, f.t_ids, f.pid)
        res.n_unplayed = len(u)
        unplayed += u
        teams += load_rows.team_rows(f.parsed, f.file_id, f.t_ids)
    # one frame a table for the segment (not one a file)
    write.insert(con, "tournament_players", load_rows.table_frame("tournament_players", entries))
    write.insert(con, "player_aliases", load_rows.table_frame("player_aliases", aliases))
    games, counts = load_rows.games_rows(files)
    for (_, res), n in zip(segment, counts, strict=True):
        res.n_games = n
    _insert_games(con, games)
    del games
    for f in files:
        f.games = f.games.clear()
        if len(f.parsed.games) >= OPTIMISTIC_GAMES:
            f.parsed.games = []  # stored: released before the steps below read them back from the store
    write.insert(con, "unplayed_rounds", load_rows.table_frame("unplayed_rounds", unplayed))
    write.insert(con, "teams", load_rows.table_frame("teams", teams))
    # issue 7: officer merges/splits survive re-ingest; the batch's games are re-linked after
    # the last segment, so consolidation need not re-link them itself
    file_ids = [f.file_id for f in files]
    decisions.apply_manual_decisions(con, file_ids)
    merged = consolidate.consolidate(con, file_ids, relinked_next=batch_tids)
    # a title or federation a later file gives: before the next segment resolves against them
    facts.refresh_player_facts(con, file_ids=file_ids)
    return merged


def _insert_games(con: duckdb.DuckDBPyConnection, df: pl.DataFrame) -> None:
    """The batch's games in one statement, their ids drawn in file order."""
    if df.is_empty():
        return
    ids = draw(con, "game_id_seq", df.height)
    df = df.with_columns(pl.Series("game_id", ids, dtype=pl.Int64))
    write.insert(con, "games", df, exprs=_GAME_CASTS)


# the frame's scores are floats (0, 0.5, 1) and its headers JSON text ('{}': none)
_GAME_CASTS = {
    "white_score": "CAST(white_score AS DECIMAL(2,1))",
    "black_score": "CAST(black_score AS DECIMAL(2,1))",
    "headers": "CAST(NULLIF(headers, '{}') AS JSON)",
}
