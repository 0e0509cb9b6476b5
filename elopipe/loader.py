"""Loading one parsed file into the store, in one DuckDB transaction.

The content-hash ledger (`source_files.sha256`) makes loading idempotent: the same bytes are
loaded once. A file whose content changed at the same path (and archive member) is a correction:
its old rows are deleted and its ledger row marked 'replaced' in the same transaction as the new
load. A file that cannot be read, or is not chess, still gets a ledger row ('rejected') with the
reason and an excerpt in `ingest_errors`, so nothing a user dropped is silently lost.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import duckdb
import polars as pl

from elopipe import dedup, identity
from elopipe.errtext import first_line
from elopipe.game_frame import games_frame
from elopipe.model import IngestIssue, ParsedFile
from elopipe.store import StoreFullError, disk_full_message, is_disk_full

if TYPE_CHECKING:
    from elopipe.ingest import ParsedSource

RAW_LIMIT = 65536  # characters of raw text kept per error row
# From this many games on, a file's rows are written to the store file as the transaction goes
# (DuckDB's optimistic writes) rather than kept in memory until COMMIT: slower, bounded memory.
OPTIMISTIC_GAMES = 200_000


@dataclass
class FileResult:
    """Outcome of one source. status: 'loaded' | 'partial' | 'rejected' | 'skipped' (already in the store)."""

    name: str
    status: str
    file_id: int | None = None
    format: str = "unknown"
    n_tournaments: int = 0
    n_games: int = 0
    n_players: int = 0
    n_unplayed: int = 0
    n_errors: int = 0
    n_warnings: int = 0
    reason: str | None = None
    replaced_file_ids: list[int] = field(default_factory=list)
    player_ids: set[int] = field(default_factory=set)
    first_issues: list[IngestIssue] = field(default_factory=list)


def load_parsed_source(con: duckdb.DuckDBPyConnection, ps: ParsedSource) -> FileResult:
    """Write one parsed source (see module docstring). Never raises on bad content; a failure while
    writing rolls back and is recorded as a rejected file with the reason. The games of a large
    file (`OPTIMISTIC_GAMES` or more) are released from `ps.parsed` once they are inserted."""
    name = ps.source.display
    if ps.sha256 is not None:
        row = con.execute(
            "SELECT file_id, status FROM source_files WHERE sha256 = ? AND status NOT IN ('replaced', 'duplicate') "
            "ORDER BY file_id LIMIT 1",
            [ps.sha256],
        ).fetchall()
        row = row[0] if row else None
        if row is not None:
            dup = _record_duplicate_path(con, ps, row[0])
            why = f"same bytes as file_id {row[0]}" if dup else f"already ingested ({row[1]})"
            return FileResult(name, "skipped", file_id=row[0], format=ps.format, reason=why)
    elif _same_rejection_recorded(con, ps):
        return FileResult(name, "skipped", format=ps.format, reason="already recorded as unreadable")
    # Loading makes many short-lived objects next to the parsed file's millions: generational GC
    # passes over those cost about a quarter of a large file's load and find nothing to free.
    was_enabled = gc.isenabled()
    gc.disable()
    large = ps.parsed is not None and len(ps.parsed.games) >= OPTIMISTIC_GAMES
    if large:
        con.execute("SET enable_optimistic_write = true")
    try:
        return _load_transaction(con, ps)
    finally:
        if large:  # back to the store's setting (elopipe.store); a failure here must not hide the load's
            with contextlib.suppress(duckdb.Error):
                con.execute("SET enable_optimistic_write = false")
        if was_enabled:
            gc.enable()


def _load_transaction(con: duckdb.DuckDBPyConnection, ps: ParsedSource) -> FileResult:
    """Load `ps` in one transaction; if that fails, record the file as rejected with the reason.

    Raises StoreFullError when the disk holding the store is full (the file's rows are rolled
    back; its ledger row is kept, as rejected and without its sha256 so that the same bytes load
    once space allows, if that small write still fits)."""
    con.execute("BEGIN TRANSACTION")
    try:
        result = _load(con, ps)
        con.execute("COMMIT")
        return result
    except Exception as exc:  # keep the file on record even if writing failed
        _rollback(con)  # a failed COMMIT has already ended the transaction
        full = is_disk_full(exc)
        reason = "the store's disk was full" if full else f"could not be stored: {first_line(exc)}"
        fallback = _as_rejected(ps, reason, keep_sha256=not full)
        con.execute("BEGIN TRANSACTION")
        try:
            result = _load(con, fallback)
            con.execute("COMMIT")
        except Exception as again:
            _rollback(con)
            if not (full or is_disk_full(again)):
                raise
        if full:
            raise StoreFullError(disk_full_message(_store_path(con), ps.source.display)) from None
        return result


def _rollback(con: duckdb.DuckDBPyConnection) -> None:
    with contextlib.suppress(duckdb.TransactionException):  # no transaction is active
        con.execute("ROLLBACK")


def _store_path(con: duckdb.DuckDBPyConnection) -> str:
    row = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchall()
    return row[0][0] if row and row[0][0] else "the store"


def _as_rejected(ps: ParsedSource, reason: str, keep_sha256: bool = True) -> ParsedSource:
    from elopipe.ingest import ParsedSource

    sha = ps.sha256 if keep_sha256 else None
    return ParsedSource(ps.source, sha, ps.size, ps.format, ps.encoding, ps.newline, None, reason)


def _same_rejection_recorded(con: duckdb.DuckDBPyConnection, ps: ParsedSource) -> bool:
    row = con.execute(
        "SELECT 1 FROM source_files WHERE path = ? AND member IS NOT DISTINCT FROM ? AND sha256 = '' "
        "AND reason = ? LIMIT 1",
        [ps.source.stored_path, ps.source.member, ps.rejected_reason],
    ).fetchall()
    return bool(row)


def _replace_previous(con: duckdb.DuckDBPyConnection, ps: ParsedSource, new_id: int) -> list[int]:
    """Earlier versions of this path (and member) that the new bytes correct.

    A new version is a correction when it holds the same event (a tournament whose name's words,
    per `identity.event_key`, contain the other's, or that starts on the same day), or when the
    earlier version had no tournament at all (it was rejected). Unrelated content saved under a
    reused file name is loaded beside the old file, which is kept: a correction may delete rows,
    an accident must not."""
    candidates = con.execute(
        "SELECT file_id FROM source_files WHERE path = ? AND member IS NOT DISTINCT FROM ? "
        "AND status NOT IN ('replaced', 'duplicate') AND sha256 <> ?",
        [ps.source.stored_path, ps.source.member, ps.sha256 or ""],
    ).fetchall()
    new_events = [
        (set(identity.event_key(t.name).split()), t.start_date) for t in (ps.parsed.tournaments if ps.parsed else [])
    ]
    old = []
    for (fid,) in candidates:
        rows = con.execute("SELECT name, start_date FROM tournaments WHERE file_id = ?", [fid]).fetchall()
        olds = [(set(identity.event_key(n).split()), d) for n, d in rows]
        if not rows or any(_same_event(a, b) for a in new_events for b in olds):
            old.append(fid)
    touched: set[int] = set()
    for fid in old:
        touched.update(
            r[0] for r in con.execute("SELECT player_id FROM tournament_players WHERE file_id = ?", [fid]).fetchall()
        )
        delete_file_rows(con, fid)
        con.execute("UPDATE source_files SET status = 'replaced', replaced_by = ? WHERE file_id = ?", [new_id, fid])
    # a spelling only the old version wrote must not stay the name shown
    identity.refresh_display_names(con, touched)
    return old


def _same_event(a: tuple[set[str], object], b: tuple[set[str], object]) -> bool:
    """Same event for a correction: one name's words contain the other's, or the same start date."""
    (wa, da), (wb, db) = a, b
    if wa and wb and (wa <= wb or wb <= wa):
        return True
    return da is not None and da == db


def _record_duplicate_path(con: duckdb.DuckDBPyConnection, ps: ParsedSource, first_id: int) -> bool:
    """The same bytes under another name: keep the name on record (status 'duplicate'), load nothing."""
    seen = con.execute(
        "SELECT 1 FROM source_files WHERE sha256 = ? AND path = ? AND member IS NOT DISTINCT FROM ?",
        [ps.sha256, ps.source.stored_path, ps.source.member],
    ).fetchall()
    if seen:
        return False
    con.execute(
        "INSERT INTO source_files (file_id, sha256, path, member, format, bytes, encoding, newline, ingested_at,"
        " status, reason) VALUES (nextval('file_id_seq'), ?, ?, ?, ?, ?, ?, ?, ?, 'duplicate', ?)",
        [ps.sha256, ps.source.stored_path, ps.source.member, ps.format, ps.size, ps.encoding, ps.newline,
         dt.datetime.now(), f"same bytes as file_id {first_id}"],
    )  # fmt: skip
    return True


def delete_file_rows(con: duckdb.DuckDBPyConnection, file_id: int) -> None:
    """Remove every row a file contributed (not its ledger row, nor players it created)."""
    con.execute(
        "DELETE FROM game_sources WHERE file_id = ? OR game_id IN (SELECT game_id FROM games WHERE file_id = ?)",
        [file_id, file_id],
    )
    for table in ("games", "tournament_players", "unplayed_rounds", "teams", "ingest_errors", "player_aliases"):
        con.execute(f"DELETE FROM {table} WHERE file_id = ?", [file_id])
    con.execute("DELETE FROM tournaments WHERE file_id = ?", [file_id])


def _load(con: duckdb.DuckDBPyConnection, ps: ParsedSource) -> FileResult:
    file_id = con.execute("SELECT nextval('file_id_seq')").fetchall()[0][0]
    replaced = _replace_previous(con, ps, file_id) if ps.sha256 else []
    parsed = ps.parsed if ps.rejected_reason is None else None
    res = FileResult(ps.source.display, "rejected", file_id=file_id, format=ps.format, replaced_file_ids=replaced)
    issues: list[IngestIssue] = list(ps.parsed.issues) if ps.parsed is not None else []
    if parsed is None:
        res.reason = ps.rejected_reason or "rejected"
        # `ingest_errors.raw` is readable through `elopipe sql`: a rejected file, whatever its
        # name says (a key or a password file named .pgn), keeps its reasons but none of its bytes
        issues = [IngestIssue("rejected", res.reason, severity="error")] + [replace(i, raw=None) for i in issues]
    else:
        _load_content(con, parsed, file_id, res)
        n_err = sum(1 for i in issues if i.severity == "error")
        res.status = "partial" if n_err else "loaded"
        if n_err:
            res.reason = (
                f"{n_err} unreadable part(s); first: {next(i.message for i in issues if i.severity == 'error')}"
            )
    res.n_errors = sum(1 for i in issues if i.severity == "error")
    res.n_warnings = sum(1 for i in issues if i.severity == "warning")
    res.first_issues = [i for i in issues if i.severity == "error"][:5]
    con.execute(
        "INSERT INTO source_files (file_id, sha256, path, member, format, bytes, encoding, newline, ingested_at,"
        " status, n_tournaments, n_players, n_games, n_unplayed, n_errors, reason) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [
            file_id,
            ps.sha256 or "",
            ps.source.stored_path,
            ps.source.member,
            ps.format,
            ps.size,
            ps.encoding,
            ps.newline,
            dt.datetime.now(),
            res.status,
            res.n_tournaments,
            res.n_players,
            res.n_games,
            res.n_unplayed,
            res.n_errors,
            res.reason,
        ],
    )
    _insert_issues(con, file_id, issues)
    return res


def _insert_issues(con: duckdb.DuckDBPyConnection, file_id: int, issues: list[IngestIssue]) -> None:
    if not issues:
        return
    df = pl.DataFrame(
        {
            "file_id": [file_id] * len(issues),
            "line": [i.line for i in issues],
            "game_index": [i.game_index for i in issues],
            "severity": [i.severity for i in issues],
            "code": [i.code for i in issues],
            "message": [i.message for i in issues],
            "raw": [i.raw[:RAW_LIMIT] if i.raw else None for i in issues],
        },
        schema={
            "file_id": pl.Int32,
            "line": pl.Int32,
            "game_index": pl.Int32,
            "severity": pl.Utf8,
            "code": pl.Utf8,
            "message": pl.Utf8,
            "raw": pl.Utf8,
        },
    )
    con.register("_issues_df", df)
    con.execute(
        "INSERT INTO ingest_errors SELECT nextval('error_id_seq'), file_id, line, game_index, severity, code,"
        " message, raw FROM _issues_df"
    )
    con.unregister("_issues_df")


def _load_content(con: duckdb.DuckDBPyConnection, parsed: ParsedFile, file_id: int, res: FileResult) -> None:
    frame = games_frame(parsed.games)
    t_ids = _insert_tournaments(con, parsed, file_id, frame)
    res.n_tournaments = len(t_ids)
    players = [p for p in parsed.players if p.tournament_ref in t_ids]
    links = identity.resolve_players(con, players, file_id, tournament_ids=t_ids)
    pid = {k: v.player_id for k, v in links.items()}
    res.player_ids = set(pid.values())
    res.n_players = len(res.player_ids)
    _insert_entries(con, parsed, file_id, t_ids, links)
    res.n_games = _insert_games(con, frame, file_id, t_ids, pid)
    del frame
    if len(parsed.games) >= OPTIMISTIC_GAMES:
        parsed.games = []  # stored: released before the steps below read them back from the store
    res.n_unplayed = _insert_unplayed(con, parsed, file_id, t_ids, pid)
    _insert_teams(con, parsed, file_id, t_ids)
    # issue 7: officer merges/splits survive re-ingest; the same game from another source counts once
    identity.apply_manual_decisions(con, [file_id])
    identity.consolidate(con, [file_id], relinked_next=set(t_ids.values()))
    dedup.link_file(con, file_id)
    # list names must not depend on which file came first
    identity.refresh_display_names(
        con,
        (r[0] for r in con.execute("SELECT player_id FROM tournament_players WHERE file_id = ?", [file_id]).fetchall()),
    )


_TOURNAMENT_SCHEMA = {
    "tournament_id": pl.Int32,
    "file_id": pl.Int32,
    "source_format": pl.Utf8,
    "name": pl.Utf8,
    "city": pl.Utf8,
    "federation": pl.Utf8,
    "start_date": pl.Date,
    "end_date": pl.Date,
    "rounds": pl.Int32,
    "time_control": pl.Utf8,
    "rate_class": pl.Utf8,
    "tournament_type": pl.Utf8,
    "chief_arbiter": pl.Utf8,
    "is_team": pl.Boolean,
    "extra": pl.Utf8,
    "event_key": pl.Utf8,
}


def _insert_tournaments(
    con: duckdb.DuckDBPyConnection, parsed: ParsedFile, file_id: int, games: pl.DataFrame
) -> dict[int, int]:
    """Insert the file's tournaments in one statement; {tournament ref: tournament_id}, ids drawn
    from the sequence in file order. `games`: the file's games frame, whose day-precise dates
    give the days of play of a tournament without dates (`tournaments.first_day`, `last_day`)."""
    ts = parsed.tournaments
    if not ts:
        return {}
    ids = sorted(r[0] for r in con.execute("SELECT nextval('tournament_id_seq') FROM range(?)", [len(ts)]).fetchall())
    t_ids = {t.ref: tid for t, tid in zip(ts, ids, strict=True)}
    df = pl.DataFrame(
        {
            "tournament_id": ids,
            "file_id": [file_id] * len(ts),
            "source_format": [parsed.format] * len(ts),
            "name": [t.name for t in ts],
            "city": [t.city for t in ts],
            "federation": [t.federation for t in ts],
            "start_date": [t.start_date for t in ts],
            "end_date": [t.end_date for t in ts],
            "rounds": [t.rounds for t in ts],
            "time_control": [t.time_control for t in ts],
            "rate_class": [t.rate_class for t in ts],
            "tournament_type": [t.tournament_type for t in ts],
            "chief_arbiter": [t.chief_arbiter for t in ts],
            "is_team": [t.is_team for t in ts],
            "extra": [json.dumps(t.extra, default=str, ensure_ascii=False) if t.extra else None for t in ts],
            "event_key": [identity.event_key(t.name) for t in ts],
            "tournament_ref": [t.ref for t in ts],
        },
        schema=_TOURNAMENT_SCHEMA | {"tournament_ref": pl.Int32},
    )
    days = (
        games.lazy()
        .filter(pl.col.game_date.is_not_null() & (pl.col.date_precision == "day"))
        .group_by("tournament_ref")
        .agg(pl.col.game_date.min().alias("d0"), pl.col.game_date.max().alias("d1"))
        .collect()
    )
    df = (
        df.join(days, on="tournament_ref", how="left", maintain_order="left")
        .with_columns(
            first_day=pl.coalesce("start_date", "d0", "end_date"),
            last_day=pl.coalesce("end_date", "d1", "start_date"),
        )
        .drop("tournament_ref", "d0", "d1")
    )
    con.register("_tournaments_df", df)
    con.execute("INSERT INTO tournaments BY NAME SELECT * REPLACE (CAST(extra AS JSON) AS extra) FROM _tournaments_df")
    con.unregister("_tournaments_df")
    return t_ids


def _insert_entries(con, parsed: ParsedFile, file_id: int, t_ids: dict[int, int], links) -> None:
    entries: dict[tuple[int, int], dict] = {}
    aliases = []
    for p in parsed.players:
        if p.tournament_ref not in t_ids:
            continue
        link = links[(p.tournament_ref, p.ref)]
        tid = t_ids[p.tournament_ref]
        by = p.birth_year or (p.birth_date.year if p.birth_date else None)
        aliases.append(
            (link.player_id, p.name or "?", identity.name_key(p.name or ""), p.fide_id, p.national_id,
             p.federation, by, file_id, tid, link.rule, link.confidence)
        )  # fmt: skip
        if (tid, link.player_id) in entries:
            continue
        entries[(tid, link.player_id)] = {
            "tournament_id": tid,
            "player_id": link.player_id,
            "start_rank": p.start_rank,
            "name_as_written": p.name,
            "fide_id_in_file": p.fide_id,
            "rating_in_file": p.rating,
            "national_rating": p.national_rating,
            "national_rating_flag": p.national_rating_flag,
            "federation": p.federation,
            "title": p.title,
            "sex": p.sex,
            "birth_date": p.birth_date,
            "birth_year": by,
            "points_in_file": float(p.points) if p.points is not None else None,
            "final_rank": p.final_rank,
            "team": p.team,
            "file_id": file_id,
            "line": p.line,
        }
    if entries:
        df = pl.DataFrame(
            list(entries.values()),
            schema={
                "tournament_id": pl.Int32,
                "player_id": pl.Int32,
                "start_rank": pl.Int32,
                "name_as_written": pl.Utf8,
                "fide_id_in_file": pl.Int64,
                "rating_in_file": pl.Int32,
                "national_rating": pl.Int32,
                "national_rating_flag": pl.Utf8,
                "federation": pl.Utf8,
                "title": pl.Utf8,
                "sex": pl.Utf8,
                "birth_date": pl.Date,
                "birth_year": pl.Int32,
                "points_in_file": pl.Float64,
                "final_rank": pl.Int32,
                "team": pl.Utf8,
                "file_id": pl.Int32,
                "line": pl.Int32,
            },
        )
        con.register("_entries_df", df)
        con.execute("INSERT INTO tournament_players BY NAME SELECT * FROM _entries_df")
        con.unregister("_entries_df")
    if aliases:
        adf = pl.DataFrame(aliases, schema=_ALIAS_SCHEMA, orient="row")
        con.register("_aliases_df", adf)
        con.execute("INSERT INTO player_aliases BY NAME SELECT * FROM _aliases_df")
        con.unregister("_aliases_df")


_ALIAS_SCHEMA = {
    "player_id": pl.Int32,
    "name_as_written": pl.Utf8,
    "name_key": pl.Utf8,
    "fide_id": pl.Int64,
    "national_id": pl.Utf8,
    "federation": pl.Utf8,
    "birth_year": pl.Int32,
    "file_id": pl.Int32,
    "tournament_id": pl.Int32,
    "match_rule": pl.Utf8,
    "confidence": pl.Float64,
}


def _insert_games(con, frame: pl.DataFrame, file_id: int, t_ids: dict[int, int], pid) -> int:
    """Insert the file's games (`frame`: those of its stored tournaments are kept) in one
    statement. File-local refs become ids through small mapping frames (joins), so a large file
    costs no Python loop."""
    if frame.is_empty() or not t_ids:
        return 0
    tmap = pl.DataFrame(
        {"tournament_ref": list(t_ids), "tournament_id": list(t_ids.values())},
        schema={"tournament_ref": pl.Int32, "tournament_id": pl.Int32},
    )
    pmap = pl.DataFrame(
        {"tournament_ref": [k[0] for k in pid], "ref": [k[1] for k in pid], "player_id": list(pid.values())},
        schema={"tournament_ref": pl.Int32, "ref": pl.Int32, "player_id": pl.Int32},
    )
    # ids from the three ref columns only: joins on the whole frame would copy every column
    ids = (
        frame.lazy()
        .select("tournament_ref", "white_ref", "black_ref")
        .join(tmap.lazy(), on="tournament_ref", how="left", maintain_order="left")
        .join(pmap.lazy().rename({"ref": "white_ref", "player_id": "white_id"}), on=["tournament_ref", "white_ref"],
              how="left", maintain_order="left")
        .join(pmap.lazy().rename({"ref": "black_ref", "player_id": "black_id"}), on=["tournament_ref", "black_ref"],
              how="left", maintain_order="left")
        .select("tournament_id", "white_id", "black_id")
        .collect()
    )  # fmt: skip
    df = (
        frame.drop("tournament_ref", "white_ref", "black_ref")
        .rename({"white_rating": "white_rating_in_file", "black_rating": "black_rating_in_file"})
        .hstack(ids)
        .with_columns(file_id=pl.lit(file_id, dtype=pl.Int32))
    )
    if ids.get_column("tournament_id").null_count():  # games of a tournament that was not stored
        df = df.filter(pl.col.tournament_id.is_not_null())
    # Arrow string views, which DuckDB scans as they are: the default Arrow export copies every string
    con.register("_games_df", df.to_arrow(compat_level=pl.CompatLevel.newest()))
    con.execute(
        "INSERT INTO games BY NAME SELECT nextval('game_id_seq') AS game_id, * REPLACE ("
        " CAST(white_score AS DECIMAL(2,1)) AS white_score, CAST(black_score AS DECIMAL(2,1)) AS black_score,"
        " CAST(NULLIF(headers, '{}') AS JSON) AS headers) FROM _games_df"
    )
    con.unregister("_games_df")
    return df.height


def _insert_unplayed(con, parsed: ParsedFile, file_id: int, t_ids: dict[int, int], pid) -> int:
    rows = [
        (
            t_ids[u.tournament_ref],
            pid.get((u.tournament_ref, u.player_ref)),
            u.round,
            u.code,
            float(u.score) if u.score is not None else None,
            pid.get((u.tournament_ref, u.opponent_ref)) if u.opponent_ref is not None else None,
            file_id,
            u.line,
        )
        for u in parsed.unplayed
        if u.tournament_ref in t_ids and (u.tournament_ref, u.player_ref) in pid
    ]
    if rows:
        _insert_rows(con, "unplayed_rounds", rows, _UNPLAYED_SCHEMA)
    return len(rows)


def _insert_teams(con, parsed: ParsedFile, file_id: int, t_ids: dict[int, int]) -> None:
    rows = [
        (t_ids[t.tournament_ref], t.team_no, t.name, t.record, t.member_ranks,
         float(t.points) if t.points is not None else None, file_id, t.line)
        for t in parsed.teams
        if t.tournament_ref in t_ids
    ]  # fmt: skip
    if rows:
        _insert_rows(con, "teams", rows, _TEAM_SCHEMA)


_UNPLAYED_SCHEMA = {
    "tournament_id": pl.Int32,
    "player_id": pl.Int32,
    "round": pl.Int32,
    "code": pl.Utf8,
    "score": pl.Float64,
    "opponent_id": pl.Int32,
    "file_id": pl.Int32,
    "line": pl.Int32,
}
_TEAM_SCHEMA = {
    "tournament_id": pl.Int32,
    "team_no": pl.Int32,
    "name": pl.Utf8,
    "record": pl.Utf8,
    "member_ranks": pl.List(pl.Int32),
    "points": pl.Float64,
    "file_id": pl.Int32,
    "line": pl.Int32,
}


def _insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple], schema: dict) -> None:
    """One INSERT of many rows (a DataFrame scan instead of one statement per row)."""
    df = pl.DataFrame(rows, schema=schema, orient="row")
    con.register("_rows_df", df)
    con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _rows_df")
    con.unregister("_rows_df")
