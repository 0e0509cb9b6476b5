"""The ledger of a batch (`source_files`): what each source is, and the rows that record it.

`plan` reads the ledger once for a batch: the sources stored already (the same bytes at the
same path: skipped), the same bytes under another name (a 'duplicate' row), the same source
named twice, and the stored versions of each path that a new version may correct
(`elopipe.ingest.corrections`). `FileResult` is the outcome of one source, as the ingest reports
it and as its ledger row records it (`ledger_row`, `insert_ledger`). `elopipe.ingest.loader`
loads the batch by this plan.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import duckdb
import polars as pl

from elopipe.identity.rerate import Rerate
from elopipe.read.records import IngestIssue
from elopipe.read.sources import GONE
from elopipe.runtime.words import plural
from elopipe.store import write
from elopipe.store.frames import registered

if TYPE_CHECKING:
    from polars._typing import PolarsDataType

    from elopipe.read.parse import ParsedSource


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
    cut_short: bool = False  # a copy or download cut short (`ParsedFile.cut_short`)
    replaced_file_ids: list[int] = field(default_factory=list)
    removed_games: int = 0  # games of the replaced versions that this correction does not hold
    # the stored versions at its path that this file does not correct, kept ('EVENT DAY stays'), and
    # what this one is ('this one is of DAY')
    kept_versions: list[str] = field(default_factory=list)
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

    def kept_line(self) -> str | None:
        """'NAME: a new event under the name of a file already loaded (Club Championship
        2023-05-01 stays; this one is of 2024-05-01)': a file at the path of a stored version
        that it does not correct (`elopipe.ingest.corrections`), both kept; None otherwise."""
        if not self.kept_versions:
            return None
        what = "a copy cut short" if self.cut_short else "a new event"
        return f"{self.name}: {what} under the name of a file already loaded ({'; '.join(self.kept_versions)})"

    def in_progress_line(self) -> str | None:
        """'in progress: NAME: <its unfinished round>; not rated until ...', None when no event of
        the file is still in progress."""
        if not self.in_progress:
            return None
        return f"in progress: {self.name}: {self.in_progress}; not rated until a file with its results is loaded"


@dataclass
class Plan:
    """What `loader._load` does with each source of a batch, decided from one read of the ledger."""

    skipped: dict[int, FileResult] = field(default_factory=dict)  # position -> result
    duplicate_of: dict[int, int] = field(default_factory=dict)  # position -> stored file_id, same bytes
    copy_of: dict[int, int] = field(default_factory=dict)  # position -> earlier position, same bytes
    again: dict[int, int] = field(default_factory=dict)  # position -> earlier position of the same source
    load: list[int] = field(default_factory=list)  # positions that get a ledger row of their own
    corrects: dict[int, list[int]] = field(default_factory=dict)  # position -> stored file ids at its path


def plan(con: duckdb.DuckDBPyConnection, batch: list[ParsedSource]) -> Plan:
    """Read the ledger once for the batch: sources already stored (same bytes), the same bytes
    under another name (a 'duplicate' row), and the stored versions of each path (corrections)."""
    plan = Plan()
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
        # first stored file with these bytes (not a replaced version, not a duplicate row), one
        # that was not rejected first: only such a file makes another with its bytes a duplicate
        first = dict(
            con.execute(
                "SELECT sha256, arg_min(struct_pack(file_id, status), (status = 'rejected', file_id)) FROM source_files"
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
    # (sha256, path, member) -> the position that first named a source in the batch
    named: dict[tuple[str, str, str | None], int] = {}
    # sha256 -> the first position with these bytes that was not rejected: the one its copies follow
    originals: dict[str, int] = {}
    for pos, ps in enumerate(batch):
        name = ps.source.display
        stored = first.get(ps.sha256) if ps.sha256 else None
        key = (ps.sha256 or "", ps.source.stored_path, ps.source.member)
        earlier = named.get(key) if ps.sha256 else None
        original = originals.get(ps.sha256) if ps.sha256 else None
        if ps.rejected_reason == GONE:  # no file of the user's was read: nothing to record
            plan.skipped[pos] = FileResult(name, "skipped", format=ps.format, reason=GONE)
        elif stored is not None and pos in same_path:
            fid, status = stored["file_id"], stored["status"]
            plan.skipped[pos] = FileResult(name, "skipped", file_id=fid, format=ps.format,
                                           reason=f"already ingested ({status})")  # fmt: skip
        elif stored is not None and _same_verdict(ps, stored["status"] == "rejected"):
            plan.duplicate_of[pos] = stored["file_id"]
        elif earlier is not None:
            plan.again[pos] = earlier  # the same file named twice: one ledger row
        elif original is not None and _same_verdict(ps, False):
            plan.copy_of[pos] = original
            named[key] = pos
        elif not ps.sha256 and pos in rejected_again:
            plan.skipped[pos] = FileResult(name, "skipped", format=ps.format, reason="already recorded as unreadable")
        else:
            if ps.sha256:
                named[key] = pos
                if ps.rejected_reason is None:
                    originals.setdefault(ps.sha256, pos)
            plan.load.append(pos)
    return plan


def _same_verdict(ps: ParsedSource, other_rejected: bool) -> bool:
    """Whether `ps` is a duplicate of a file with its bytes (nothing loaded, 'already in store'):
    only when neither was rejected. A file is read by its name (a fake `x.zip` is no archive; the
    same text named `y.pgn` is read as PGN), so a file that was, or is, rejected gets its own
    verdict, the one it gets alone, whatever else holds its bytes in the batch or the store."""
    return ps.rejected_reason is None and not other_rejected


# a `source_files` row, in `_LEDGER_SCHEMA` order
LedgerRow = tuple[
    int, str, str, str | None, str, int, str | None, str | None, dt.datetime, str, int, int, int, int, int, str | None,
    bool | None,
]  # fmt: skip


def ledger_row(
    ps: ParsedSource, file_id: int, now: dt.datetime, status: str, reason: str | None, res: FileResult | None = None
) -> LedgerRow:
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


def insert_ledger(con: duckdb.DuckDBPyConnection, rows: list[LedgerRow]) -> None:
    if rows:
        write.insert(con, "source_files", pl.DataFrame(rows, schema=_LEDGER_SCHEMA, orient="row"))
