"""Loading parsed files into the store: a batch of files in one DuckDB transaction.

The content-hash ledger (`source_files.sha256`) makes loading idempotent: the same bytes are
loaded once (the same bytes under another name get a 'duplicate' ledger row). A file whose
content changed at the same path (and archive member) is a correction when it holds the same event
and most of the earlier games, on the same days or with the same results (`elopipe.ingest.corrections`):
its old rows are deleted and its ledger row marked 'replaced' in the same transaction as the new
load; otherwise both are kept, and the result says so (`FileResult.kept_line`). A file that cannot
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

This module holds the transactions and the order of the steps; `elopipe.ingest.ledger` decides
what each source is (`plan`) and writes its ledger row (`FileResult` is the outcome of one source),
and `elopipe.ingest.segments` inserts the readable files' rows with their players resolved.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
from dataclasses import replace
from typing import TYPE_CHECKING

import duckdb
import polars as pl

from elopipe.identity import decisions, dedup, facts
from elopipe.ingest import corrections, ledger, segments
from elopipe.ingest import rows as load_rows
from elopipe.ingest.ledger import FileResult
from elopipe.read.records import IngestIssue
from elopipe.runtime.errors import first_line
from elopipe.store import write
from elopipe.store.connect import StoreFullError, disk_full_message, is_disk_full, is_interrupt

if TYPE_CHECKING:
    from elopipe.read.parse import ParsedSource


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
    large = sum(len(ps.parsed.games) for ps in batch if ps.parsed is not None) >= segments.OPTIMISTIC_GAMES
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
) -> tuple[list[int], int, list[str]]:
    """Of `candidates` (the stored versions of this path and member with other bytes), the file
    ids that the new bytes correct (`elopipe.ingest.corrections`: the same event, most of its
    games kept, and the same days or the same results), how many of their games the new version
    does not hold, and the words that name each version kept and the new one (`Evidence.old_words`,
    `new_words`). Their rows
    are deleted and their ledger rows marked; the tournaments their games were linked to are added
    to `relink`: those links go with them. Unrelated content saved under a reused file name (next
    year's event of the same name) is loaded beside the old file, which is kept: a correction may
    delete rows, an accident must not. So is a copy cut short (`ParsedFile.cut_short`) that lacks
    games of a stored version: the complete file loaded again replaces it."""
    if not candidates:
        return [], 0, []
    every = corrections.evidence(con, ps.parsed, candidates)
    # a copy cut short corrects nothing it lacks games of: the games lost are the cut's, not a fix's
    cut = ps.parsed is not None and ps.parsed.cut_short
    found = [e for e in every if e.corrects and not (cut and e.removed)]
    others = [e for e in every if e not in found]
    kept = [f"{e.old_words()} stays" for e in others]
    if cut and others:
        kept.append("this one ends in the middle of a game and lacks games of it; the games both hold count once")
    elif others and others[0].new_words():
        kept.append(f"this one is {others[0].new_words()}")
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
    return [e.file_id for e in found], sum(e.removed for e in found), kept


def delete_file_rows(con: duckdb.DuckDBPyConnection, file_id: int) -> None:
    """Remove every row a file contributed (not its ledger row, nor players it created)."""
    con.execute(
        "DELETE FROM game_sources WHERE file_id = ? OR game_id IN (SELECT game_id FROM games WHERE file_id = ?)",
        [file_id, file_id],
    )
    for table in ("games", "tournament_players", "unplayed_rounds", "teams", "ingest_errors", "player_aliases"):
        con.execute(f"DELETE FROM {table} WHERE file_id = ?", [file_id])
    con.execute("DELETE FROM tournaments WHERE file_id = ?", [file_id])


def _load(con: duckdb.DuckDBPyConnection, batch: list[ParsedSource]) -> list[FileResult]:
    """Write the batch inside the caller's transaction (see `load_batch`)."""
    plan = ledger.plan(con, batch)
    rows_for = sorted([*plan.load, *plan.duplicate_of, *plan.copy_of])
    # ids drawn in file order, as one file at a time would draw them
    ids = segments.draw(con, "file_id_seq", len(rows_for))
    file_id = dict(zip(rows_for, ids, strict=True))
    results: list[FileResult | None] = [plan.skipped.get(pos) for pos in range(len(batch))]
    now = dt.datetime.now()
    relink: set[int] = set()  # tournaments whose links a correction deleted
    ledger_rows: list[ledger.LedgerRow] = []
    issue_frames: list[pl.DataFrame] = []
    contents: list[tuple[int, ParsedSource, FileResult, list[IngestIssue]]] = []
    for pos in rows_for:
        ps, fid = batch[pos], file_id[pos]
        if pos in plan.duplicate_of or pos in plan.copy_of:
            first_id = plan.duplicate_of[pos] if pos in plan.duplicate_of else file_id[plan.copy_of[pos]]
            results[pos] = FileResult(ps.source.display, "skipped", file_id=first_id, format=ps.format,
                                      reason=f"same bytes as file_id {first_id}")  # fmt: skip
            ledger_rows.append(ledger.ledger_row(ps, fid, now, "duplicate", f"same bytes as file_id {first_id}"))
            continue
        replaced, removed, kept = _replace_previous(con, ps, fid, plan.corrects.get(pos, []), relink)
        res = FileResult(ps.source.display, "rejected", file_id=fid, format=ps.format, replaced_file_ids=replaced,
                         removed_games=removed, kept_versions=kept,
                         cut_short=ps.parsed is not None and ps.parsed.cut_short)  # fmt: skip
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
        segments.load_contents(con, contents, relink)
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
        ledger_rows.append(ledger.ledger_row(batch[pos], file_id[pos], now, loaded.status, loaded.reason, loaded))
    ledger_rows.sort(key=lambda r: r[0])
    ledger.insert_ledger(con, ledger_rows)
    if issue_frames:
        write.insert(con, "ingest_errors", pl.concat(issue_frames), exprs={"error_id": "nextval('error_id_seq')"})
    out = []
    for ps, r in zip(batch, results, strict=True):
        assert r is not None
        r.path, r.member = ps.source.stored_path, ps.source.member
        out.append(r)
    return out
