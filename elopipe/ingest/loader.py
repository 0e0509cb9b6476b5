"""Loading parsed files into the store: a batch of files in one DuckDB transaction.

The content-hash ledger (`source_files.sha256`) makes loading idempotent: the same bytes are
loaded once (the same bytes under another name get a 'duplicate' ledger row). A file whose
content changed at the same path (and archive member) is a correction when it holds the same event
and most of the earlier games (`elopipe.ingest.corrections`): its old rows are deleted and its
ledger row marked 'replaced' in the same transaction as the new load; otherwise both are kept. A file that cannot
be read, or is not chess, still gets a ledger row ('rejected') with the reason in
`ingest_errors`, so nothing a user dropped is silently lost.

`load_batch` writes a batch of files in one transaction: the store is read once for the whole
batch (ledger, corrections, player identity by joins on the batch's keys), each table's rows are
inserted in one statement, and the store-wide steps (officers' decisions, consolidation of
players, cross-source links of games, display names) run once, for what the batch touched. The
files are taken in their order, each as if the earlier ones were loaded before it. The unit of
atomicity is the batch: it is committed whole or not at all. If its transaction fails, each of
its files is loaded in a transaction of its own, so that one file that cannot be stored is
recorded as rejected and the others load.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import duckdb
import polars as pl

from elopipe.identity import consolidate, decisions, dedup, events, facts, nearby, rerate, resolve
from elopipe.identity.rerate import Rerate
from elopipe.ingest import corrections
from elopipe.ingest import rows as load_rows
from elopipe.read.game_frame import build_frames, games_frame
from elopipe.read.records import GameTable, IngestIssue
from elopipe.runtime.errors import first_line
from elopipe.runtime.words import plural
from elopipe.store import write
from elopipe.store.connect import StoreFullError, disk_full_message, is_disk_full, is_interrupt
from elopipe.store.frames import registered

if TYPE_CHECKING:
    from polars._typing import PolarsDataType

    from elopipe.read.parse import ParsedSource

# From this many games on, a transaction's rows are written to the store file as it goes (DuckDB's
# optimistic writes) rather than kept in memory until COMMIT: slower, bounded memory.
OPTIMISTIC_GAMES = 200_000


@dataclass
class FileResult:
    """Outcome of one source. status: 'loaded' | 'partial' | 'rejected' | 'skipped' (already in the store)."""

    name: str  # path, or 'archive!member'
    status: str
    file_id: int | None = None
    path: str = ""  # the file on disk as stored in the ledger (the archive, for a member)
    member: str | None = None
    format: str = "unknown"
    n_tournaments: int = 0
    n_games: int = 0
    n_players: int = 0
    n_unplayed: int = 0
    n_errors: int = 0
    n_warnings: int = 0
    reason: str | None = None
    results_only: bool = False  # a PGN results export (`ParsedFile.results_only`)
    replaced_file_ids: list[int] = field(default_factory=list)
    removed_games: int = 0  # games of the replaced versions that this correction does not hold
    player_ids: set[int] = field(default_factory=set)
    first_issues: list[IngestIssue] = field(default_factory=list)
    in_progress: str | None = None  # an event still in progress: its unfinished round (TRF `extra.in_progress`)
    # lists an automatic merge of this file's batch changes (a rated game now another player's)
    rerate: list[Rerate] = field(default_factory=list)

    def correction_line(self) -> str | None:
        """'corrected: NAME replaces its earlier version (file_id 1)', with the games it removed
        when there are any; None when this file corrected nothing."""
        if not self.replaced_file_ids:
            return None
        ids = ", ".join(str(i) for i in self.replaced_file_ids)
        line = f"corrected: {self.name} replaces its earlier version (file_id {ids})"
        if self.removed_games:
            n = self.removed_games
            line += f"; {plural(n, 'game')} of the earlier version {'is' if n == 1 else 'are'} not in it and"
            line += f" {'was' if n == 1 else 'were'} removed"
        return line

    def in_progress_line(self) -> str | None:
        """'in progress: NAME: <its unfinished round>; not rated until ...', None when no event of
        the file is still in progress."""
        if not self.in_progress:
            return None
        return f"in progress: {self.name}: {self.in_progress}; not rated until a file with its results is loaded"


def load_parsed_source(con: duckdb.DuckDBPyConnection, ps: ParsedSource) -> FileResult:
    """`load_batch` of one source; raises StoreFullError as it does."""
    return load_batch(con, [ps])[0]


def load_batch(con: duckdb.DuckDBPyConnection, batch: list[ParsedSource]) -> list[FileResult]:
    """Write a batch of parsed sources (see the module docstring); one FileResult per source, in
    order. Never raises on bad content: a file whose rows cannot be stored is recorded as rejected
    with the reason. Raises StoreFullError when the disk holding the store is full: the files
    before the one that did not fit are committed (each in its own transaction), that one has a
    ledger row if it still fits, the rest are not attempted. The games of a large batch are
    released from the parsed files once they are inserted."""
    if not batch:
        return []
    # Loading makes many short-lived objects next to the parsed files' millions: generational GC
    # passes over those cost about a quarter of a large file's load and find nothing to free.
    was_enabled = gc.isenabled()
    gc.disable()
    large = sum(len(ps.parsed.games) for ps in batch if ps.parsed is not None) >= OPTIMISTIC_GAMES
    if large:
        con.execute("SET enable_optimistic_write = true")
    try:
        if len(batch) == 1:
            return [_load_one(con, batch[0])]
        con.execute("BEGIN TRANSACTION")
        try:
            results = _load(con, batch)
            con.execute("COMMIT")
            return results
        except Exception as exc:
            _rollback(con)  # a failed COMMIT has already ended the transaction
            if is_interrupt(exc):  # Ctrl-C during a query: stop, do not load file by file
                raise
        # one file at a time: the ones that can be stored are, the others are recorded as rejected
        done: list[FileResult] = []
        for ps in batch:
            try:
                done.append(_load_one(con, ps))
            except StoreFullError as exc:
                exc.loaded = done  # the files committed before the one that did not fit
                raise
        return done
    finally:
        if large:  # back to the store's setting (elopipe.store.connect); a failure here must not hide the load's
            with contextlib.suppress(duckdb.Error):
                con.execute("SET enable_optimistic_write = false")
        if was_enabled:
            gc.enable()


def _load_one(con: duckdb.DuckDBPyConnection, ps: ParsedSource) -> FileResult:
    """Load `ps` in one transaction; if that fails, record the file as rejected with the reason.

    Raises StoreFullError when the disk holding the store is full (the file's rows are rolled
    back; its ledger row is kept, as rejected and without its sha256 so that the same bytes load
    once space allows, if that small write still fits)."""
    con.execute("BEGIN TRANSACTION")
    try:
        result = _load(con, [ps])[0]
        con.execute("COMMIT")
        return result
    except Exception as exc:  # keep the file on record even if writing failed
        _rollback(con)
        if is_interrupt(exc):
            raise
        full = is_disk_full(exc)
        reason = "the store's disk was full" if full else f"could not be stored: {first_line(exc)}"
        fallback = _as_rejected(ps, reason, keep_sha256=not full)
        con.execute("BEGIN TRANSACTION")
        try:
            result = _load(con, [fallback])[0]
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
    from elopipe.read.parse import ParsedSource

    sha = ps.sha256 if keep_sha256 else None
    return ParsedSource(ps.source, sha, ps.size, ps.format, ps.encoding, ps.newline, None, reason)


def _replace_previous(
    con: duckdb.DuckDBPyConnection, ps: ParsedSource, new_id: int, candidates: list[int], relink: set[int]
) -> tuple[list[int], int]:
    """Of `candidates` (the stored versions of this path and member with other bytes), the file
    ids that the new bytes correct (`elopipe.ingest.corrections`: the same event and most of its
    games kept), and how many of their games the new version does not hold. Their rows are
    deleted and their ledger rows marked; the tournaments their games were linked to are added to
    `relink`: those links go with them. Unrelated content saved under a reused file name is
    loaded beside the old file, which is kept: a correction may delete rows, an accident must not."""
    if not candidates:
        return [], 0
    found = [e for e in corrections.evidence(con, ps.parsed, candidates) if e.corrects]
    touched: set[int] = set()
    for e in found:
        fid = e.file_id
        tids = {r[0] for r in con.execute("SELECT tournament_id FROM tournaments WHERE file_id = ?", [fid]).fetchall()}
        relink |= dedup.linked_tournaments(con, tids) - tids
        touched.update(
            r[0] for r in con.execute("SELECT player_id FROM tournament_players WHERE file_id = ?", [fid]).fetchall()
        )
        delete_file_rows(con, fid)
        con.execute("UPDATE source_files SET status = 'replaced', replaced_by = ? WHERE file_id = ?", [new_id, fid])
    # a spelling (or title, federation...) only the old version wrote must not stay the player's
    decisions.refresh_display_names(con, touched)
    facts.refresh_player_facts(con, touched)
    return [e.file_id for e in found], sum(e.removed for e in found)


def delete_file_rows(con: duckdb.DuckDBPyConnection, file_id: int) -> None:
    """Remove every row a file contributed (not its ledger row, nor players it created)."""
    con.execute(
        "DELETE FROM game_sources WHERE file_id = ? OR game_id IN (SELECT game_id FROM games WHERE file_id = ?)",
        [file_id, file_id],
    )
    for table in ("games", "tournament_players", "unplayed_rounds", "teams", "ingest_errors", "player_aliases"):
        con.execute(f"DELETE FROM {table} WHERE file_id = ?", [file_id])
    con.execute("DELETE FROM tournaments WHERE file_id = ?", [file_id])


@dataclass
class _Plan:
    """What `_load` does with each source of a batch, decided from one read of the ledger."""

    skipped: dict[int, FileResult] = field(default_factory=dict)  # position -> result
    duplicate_of: dict[int, int] = field(default_factory=dict)  # position -> stored file_id, same bytes
    copy_of: dict[int, int] = field(default_factory=dict)  # position -> earlier position, same bytes
    again: dict[int, int] = field(default_factory=dict)  # position -> earlier position of the same source
    load: list[int] = field(default_factory=list)  # positions that get a ledger row of their own
    corrects: dict[int, list[int]] = field(default_factory=dict)  # position -> stored file ids at its path


def _plan(con: duckdb.DuckDBPyConnection, batch: list[ParsedSource]) -> _Plan:
    """Read the ledger once for the batch: sources already stored (same bytes), the same bytes
    under another name (a 'duplicate' row), and the stored versions of each path (corrections)."""
    plan = _Plan()
    keys = pl.DataFrame(
        {
            "pos": range(len(batch)),
            "sha256": [ps.sha256 or "" for ps in batch],
            "path": [ps.source.stored_path for ps in batch],
            "member": [ps.source.member for ps in batch],
            "reason": [ps.rejected_reason for ps in batch],
        },
        schema={"pos": pl.Int64, "sha256": pl.Utf8, "path": pl.Utf8, "member": pl.Utf8, "reason": pl.Utf8},
    )
    with registered(con, "_batch_keys", keys):
        # first stored file with these bytes (not a replaced version, not a duplicate row)
        first = dict(
            con.execute(
                "SELECT sha256, arg_min(struct_pack(file_id, status), file_id) FROM source_files"
                " WHERE sha256 IN (SELECT sha256 FROM _batch_keys WHERE sha256 <> '')"
                " AND status NOT IN ('replaced', 'duplicate') GROUP BY 1"
            ).fetchall()
        )
        same_path = {
            r[0]
            for r in con.execute(
                "SELECT k.pos FROM _batch_keys k JOIN source_files s ON s.sha256 = k.sha256 AND s.path = k.path"
                " AND s.member IS NOT DISTINCT FROM k.member WHERE k.sha256 <> ''"
            ).fetchall()
        }
        # an unreadable file (no sha256) recorded already with the same reason at the same path
        rejected_again = {
            r[0]
            for r in con.execute(
                "SELECT k.pos FROM _batch_keys k JOIN source_files s ON s.path = k.path"
                " AND s.member IS NOT DISTINCT FROM k.member AND s.sha256 = '' AND s.reason = k.reason"
                " WHERE k.sha256 = ''"
            ).fetchall()
        }
        for pos, fid in con.execute(
            "SELECT k.pos, s.file_id FROM _batch_keys k JOIN source_files s ON s.path = k.path"
            " AND s.member IS NOT DISTINCT FROM k.member AND s.sha256 <> k.sha256"
            " WHERE k.sha256 <> '' AND s.status NOT IN ('replaced', 'duplicate') ORDER BY s.file_id"
        ).fetchall():
            plan.corrects.setdefault(pos, []).append(fid)
    in_batch: dict[str, int] = {}  # sha256 -> position of its first source in the batch
    for pos, ps in enumerate(batch):
        name = ps.source.display
        stored = first.get(ps.sha256) if ps.sha256 else None
        if stored is not None:
            fid, status = stored["file_id"], stored["status"]
            if pos in same_path:
                plan.skipped[pos] = FileResult(name, "skipped", file_id=fid, format=ps.format,
                                               reason=f"already ingested ({status})")  # fmt: skip
            else:
                plan.duplicate_of[pos] = fid
        elif ps.sha256 and ps.sha256 in in_batch:
            earlier = in_batch[ps.sha256]
            first_src = batch[earlier].source
            if (first_src.stored_path, first_src.member) == (ps.source.stored_path, ps.source.member):
                plan.again[pos] = earlier  # the same file named twice: one ledger row
            else:
                plan.copy_of[pos] = earlier
        elif not ps.sha256 and pos in rejected_again:
            plan.skipped[pos] = FileResult(name, "skipped", format=ps.format, reason="already recorded as unreadable")
        else:
            if ps.sha256:
                in_batch[ps.sha256] = pos
            plan.load.append(pos)
    return plan


def _load(con: duckdb.DuckDBPyConnection, batch: list[ParsedSource]) -> list[FileResult]:
    """Write the batch inside the caller's transaction (see `load_batch`)."""
    plan = _plan(con, batch)
    rows_for = sorted([*plan.load, *plan.duplicate_of, *plan.copy_of])
    # ids drawn in file order, as one file at a time would draw them
    ids = _draw(con, "file_id_seq", len(rows_for))
    file_id = dict(zip(rows_for, ids, strict=True))
    results: list[FileResult | None] = [plan.skipped.get(pos) for pos in range(len(batch))]
    now = dt.datetime.now()
    relink: set[int] = set()  # tournaments whose links a correction deleted
    ledger: list[_LedgerRow] = []
    issue_frames: list[pl.DataFrame] = []
    contents: list[tuple[int, ParsedSource, FileResult, list[IngestIssue]]] = []
    for pos in rows_for:
        ps, fid = batch[pos], file_id[pos]
        if pos in plan.duplicate_of or pos in plan.copy_of:
            first_id = plan.duplicate_of[pos] if pos in plan.duplicate_of else file_id[plan.copy_of[pos]]
            results[pos] = FileResult(ps.source.display, "skipped", file_id=first_id, format=ps.format,
                                      reason=f"same bytes as file_id {first_id}")  # fmt: skip
            ledger.append(_ledger_row(ps, fid, now, "duplicate", f"same bytes as file_id {first_id}"))
            continue
        replaced, removed = _replace_previous(con, ps, fid, plan.corrects.get(pos, []), relink)
        res = FileResult(ps.source.display, "rejected", file_id=fid, format=ps.format, replaced_file_ids=replaced,
                         removed_games=removed)  # fmt: skip
        results[pos] = res
        issues: list[IngestIssue] = list(ps.parsed.issues) if ps.parsed is not None else []
        if ps.rejected_reason is not None or ps.parsed is None:
            res.reason = ps.rejected_reason or "rejected"
            # `ingest_errors.raw` is readable through `elopipe sql`: a rejected file, whatever its
            # name says (a key or a password file named .pgn), keeps its reasons but none of its bytes
            issues = [IngestIssue("rejected", res.reason, severity="error")] + [replace(i, raw=None) for i in issues]
        else:
            res.results_only = ps.parsed.results_only
            unfinished = [t.extra["in_progress"] for t in ps.parsed.tournaments if "in_progress" in t.extra]
            res.in_progress = unfinished[0] if unfinished else None
            contents.append((fid, ps, res, issues))
        res.n_errors = sum(1 for i in issues if i.severity == "error")
        res.n_warnings = sum(1 for i in issues if i.severity == "warning")
        res.first_issues = [i for i in issues if i.severity == "error"][:5]
        if issues:
            issue_frames.append(load_rows.issues_frame(fid, issues))
    if contents:
        _load_contents(con, contents, relink)
    elif relink:
        dedup.relink_tournaments(con, relink)
    for _fid, _ps, res, _issues in contents:
        res.status = "partial" if res.n_errors else "loaded"
        if res.n_errors:
            res.reason = f"{res.n_errors} unreadable part(s); first: {res.first_issues[0].message}"
    for pos, first_pos in plan.again.items():
        first_res = results[first_pos]
        assert first_res is not None
        why = f"already ingested ({first_res.status})"
        results[pos] = FileResult(
            batch[pos].source.display, "skipped", file_id=first_res.file_id, format=batch[pos].format, reason=why
        )
    for pos in plan.load:
        loaded = results[pos]
        assert loaded is not None
        ledger.append(_ledger_row(batch[pos], file_id[pos], now, loaded.status, loaded.reason, loaded))
    ledger.sort(key=lambda r: r[0])
    _insert_ledger(con, ledger)
    if issue_frames:
        write.insert(con, "ingest_errors", pl.concat(issue_frames), exprs={"error_id": "nextval('error_id_seq')"})
    out = []
    for ps, r in zip(batch, results, strict=True):
        assert r is not None
        r.path, r.member = ps.source.stored_path, ps.source.member
        out.append(r)
    return out


# a `source_files` row, in `_LEDGER_SCHEMA` order
_LedgerRow = tuple[
    int, str, str, str | None, str, int, str | None, str | None, dt.datetime, str, int, int, int, int, int, str | None,
    bool | None,
]  # fmt: skip


def _ledger_row(
    ps: ParsedSource, file_id: int, now: dt.datetime, status: str, reason: str | None, res: FileResult | None = None
) -> _LedgerRow:
    counts = (res.n_tournaments, res.n_players, res.n_games, res.n_unplayed, res.n_errors) if res else (0, 0, 0, 0, 0)
    results_only = res.results_only if res is not None and res.status != "rejected" else None
    return (file_id, ps.sha256 or "", ps.source.stored_path, ps.source.member, ps.format, ps.size, ps.encoding,
            ps.newline, now, status, *counts, reason, results_only)  # fmt: skip


_LEDGER_SCHEMA: dict[str, PolarsDataType] = {
    "file_id": pl.Int32, "sha256": pl.Utf8, "path": pl.Utf8, "member": pl.Utf8, "format": pl.Utf8,
    "bytes": pl.Int64, "encoding": pl.Utf8, "newline": pl.Utf8, "ingested_at": pl.Datetime("us"),
    "status": pl.Utf8, "n_tournaments": pl.Int32, "n_players": pl.Int32, "n_games": pl.Int32,
    "n_unplayed": pl.Int32, "n_errors": pl.Int32, "reason": pl.Utf8, "results_only": pl.Boolean,
}  # fmt: skip


def _insert_ledger(con: duckdb.DuckDBPyConnection, rows: list[_LedgerRow]) -> None:
    if rows:
        write.insert(con, "source_files", pl.DataFrame(rows, schema=_LEDGER_SCHEMA, orient="row"))


def _draw(con: duckdb.DuckDBPyConnection, sequence: str, n: int) -> list[int]:
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


def _load_contents(
    con: duckdb.DuckDBPyConnection,
    contents: list[tuple[int, ParsedSource, FileResult, list[IngestIssue]]],
    relink: set[int],
) -> None:
    """Insert the rows of the batch's readable files, segment by segment (`_resolve_segment`),
    then link the games of the batch's tournaments and refresh its players' names once."""
    n_t = sum(len(ps.parsed.tournaments) for _, ps, _, _ in contents if ps.parsed is not None)
    t_pool = iter(_draw(con, "tournament_id_seq", n_t))
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
    ids = _draw(con, "game_id_seq", df.height)
    df = df.with_columns(pl.Series("game_id", ids, dtype=pl.Int64))
    write.insert(con, "games", df, exprs=_GAME_CASTS)


# the frame's scores are floats (0, 0.5, 1) and its headers JSON text ('{}': none)
_GAME_CASTS = {
    "white_score": "CAST(white_score AS DECIMAL(2,1))",
    "black_score": "CAST(black_score AS DECIMAL(2,1))",
    "headers": "CAST(NULLIF(headers, '{}') AS JSON)",
}
