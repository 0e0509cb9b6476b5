"""Reader for FIDE Tournament Report Files: TRF06/TRF16, TRF-2026 and the XX/BB extensions.

Follows shared/specs/trf-format.md (a summary of FIDE C.04 Annex 2 "TRF16" and "TRF-2026",
the JaVaFo TRF(x) manual and bbpPairings' TRF(bx)); section numbers below refer to it.

`read_trf(text)` turns one decoded file (LF line ends) into a `ParsedFile`. A loop reads the
lines (comments, tabs, control characters, column rulers: `detect`) and hands each record, by its
code, to the builder of its kind; once all are read the builders are composed into the file:

* `001` rows -> `PlayerRec`s and their round blocks (`players`, `blocks`; columns, §4);
* `??2` header records (§3), XX/BB extensions (§7), TRF-2026 records kept raw (§6) (`headers`)
  -> one `TournamentRec` (`tournament`, dates by `event_dates`);
* `013`/`310` team rows -> `TeamRec` (`teams`); TRF-2026 NRS rows -> national id / rating (`nrs`);
* the round blocks (§5) -> games and unplayed rounds (`rounds`, `round_checks`: a game written
  on both players' rows is stored ONCE; only agreeing 1/=/0 pairings are played games).

Control characters in a record are blanked (columns kept), with a warning. A file of mostly
unknown records, or without `001` rows, is rejected.

Problems never raise: they become `IngestIssue`s (file line, message, raw text).
Repeated quirks of one kind (e.g. 100 rows with sex `M`) are reported once per file with
a count and the first lines.
"""

from __future__ import annotations

from typing import Any

from elopipe.read.control_chars import ANY_CONTROL, blank_controls
from elopipe.read.game_frame import rows_table
from elopipe.read.records import IngestIssue, ParsedFile
from elopipe.read.trf import game_rows
from elopipe.read.trf.detect import has_capital_runs, is_ruler_line, looks_like_trf
from elopipe.read.trf.event_dates import EventDates
from elopipe.read.trf.fields import digits
from elopipe.read.trf.headers import TRF26_RECORDS, HeaderRecords
from elopipe.read.trf.issues import IssueLog, shown
from elopipe.read.trf.nrs import NationalRatingRows
from elopipe.read.trf.players import PlayerRows
from elopipe.read.trf.rounds import RoundResolver
from elopipe.read.trf.teams import TeamRecords
from elopipe.read.trf.tournament import TournamentBuilder

__all__ = ["looks_like_trf", "read_trf", "is_ruler_line"]

_VENDOR_RECORDS = frozenset({"DAT", "ACC", "TSE", "PAB", "FPB", "HPB", "ZPB", "MFO", "DFM"})
# Unknown records a real report may carry (vendor lines, notes) before a file counts as mostly
# something else; past it, and past half the lines, the file is rejected.
UNKNOWN_RECORDS_MAX = 20


class _TrfReader:
    """The reading loop of one file: reads lines, dispatches each record by its code to the
    builders (composed, one per kind of record), then assembles the `ParsedFile`."""

    def __init__(self, text: str) -> None:
        # callers pass LF text (textio); CR and CRLF are folded anyway so a raw read cannot misplace lines
        self.text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
        self.issues = IssueLog()
        self.head = HeaderRecords(self.issues)
        self.players = PlayerRows(self.issues)
        self.teams = TeamRecords(self.issues)
        self.nrs = NationalRatingRows(self.issues)
        self.event = TournamentBuilder(self.head, EventDates(self.head, self.issues), self.issues)
        self.unknown: list[dict[str, Any]] = []
        self.n_records = 0  # lines dispatched as records, known or not
        self.n_comments = 0

    # -- pass 1: dispatch lines --------------------------------------------------------
    def read(self) -> ParsedFile:
        has_controls = ANY_CONTROL.search(self.text) is not None
        # searched once in the file, not in each line (a twentieth of the reading)
        capital_runs = has_capital_runs(self.text)
        for no, line in enumerate(self.text.split("\n"), start=1):
            if not line or line.isspace():  # blank (strip() would copy every line)
                continue
            if line.startswith("###"):
                self.n_comments += 1
                continue
            if "\t" in line:
                if "\t" in line.rstrip():
                    self.issues.add(
                        "trf_tab",
                        "tab character inside a fixed-column record; column positions undefined, line not read",
                        no,
                        "error",
                        line,
                    )
                    continue
                line = line.rstrip()
            if has_controls and ANY_CONTROL.search(line):
                # blanked, not removed: the fields of a TRF record sit at fixed columns
                self.issues.quirk(
                    "trf_control_chars",
                    "control characters or ANSI escape codes replaced by spaces",
                    no,
                    shown(line)[1:-1],
                )
                line = blank_controls(line)
            if is_ruler_line(line, capital_runs):
                self.issues.quirk("trf_ruler_line", "column ruler line skipped", no, line, severity="info")
                continue
            self._dispatch(no, line)
            self.n_records += 1
        return self._finish()

    def _dispatch(self, no: int, line: str) -> None:
        rec = line[:3]
        if rec == "001":
            self.players.add(no, line)
        elif rec == "013":
            self.teams.record_013(no, line)
        elif rec == "310":
            self.teams.record_310(no, line)
        elif rec[:2] in ("XX", "BB") and len(rec) == 3:
            self.head.extension(no, line)
        elif rec in TRF26_RECORDS:
            self.head.trf26(no, line)
        elif len(rec) == 3 and digits(rec[:2]) and rec[2] == "2":
            self.head.header(no, line)
        elif rec.isalpha() and rec.isupper() and rec not in _VENDOR_RECORDS and digits(line[4:8].strip()):
            self.nrs.add(no, line)
        else:
            self.unknown.append({"line": no, "raw": line[:500]})
            self.issues.quirk(
                "trf_unknown_record",
                f"unknown record {shown(rec)} kept raw in tournament extra",
                no,
                line,
                severity="info",
            )

    # -- pass 2: tournament, pairings ------------------------------------------------------
    def _finish(self) -> ParsedFile:
        out = ParsedFile(format="trf")
        rows = self.players.rows
        if self.players.n_pipe_rows and not rows:
            out.rejected_reason = "pipe-separated 001 rows: a Vega .tdf file, not TRF"
            out.issues = self.issues.flush()
            return out
        if not rows and not self.head.headers and not self.head.xx and not self.teams.teams:
            out.rejected_reason = "no TRF records (001 player rows or ??2 headers) found"
            out.issues = self.issues.flush()
            return out
        if not rows:
            out.rejected_reason = "no player rows (001): not a tournament report"
            out.issues = self.issues.flush()
            return out
        if len(self.unknown) > max(UNKNOWN_RECORDS_MAX, self.n_records // 2):
            # mostly lines that are no TRF record: another file with a TRF line in it (or glued
            # to it); loading it would keep its text in the store, readable through `elopipe sql`
            out.rejected_reason = (
                f"{len(self.unknown)} of {self.n_records} lines are no TRF record: not a tournament report"
            )
            out.issues = self.issues.flush()
            return out
        tour = self.event.tour
        self.event.build(rows, self.teams, self.unknown, self.n_comments)
        self.nrs.apply(rows, tour)
        self.teams.assign_members(rows)
        players = [rows[r].player for r in sorted(rows)]
        self.players.report()
        round_dates = self.event.dates.round_dates(tour)
        resolver = RoundResolver(rows, tour, self.issues, round_dates, self.event.rounds_in_blocks, self.head.byes_240)
        games, unplayed = resolver.resolve()
        self.event.in_progress(games, unplayed)
        out.tournaments = [tour]
        out.players = players
        out.games = rows_table(game_rows.COLUMNS, games)
        out.unplayed = unplayed
        out.teams = self.teams.teams
        out.issues = self.issues.flush()
        return out


def read_trf(text: str, source_name: str = "") -> ParsedFile:
    """Read one decoded TRF file (LF line ends) into a `ParsedFile` with format 'trf'.

    Source: FIDE C.04 Annex 2 (TRF16) and TRF-2026, per shared/specs/trf-format.md.
    Output: one `TournamentRec` (ref 1; headers not mapped to a field are in `extra`),
    one `PlayerRec` per `001` row (ref = start rank; rating/FIDE ID 0 or blank -> None),
    `GameRec`s (one per pairing; `played=True` only for agreeing 1/=/0 results; scores
    Decimal 1, 0.5, 0), `UnplayedRec`s (byes, forfeits, W/D/L, scheduled '*', not paired ' '),
    `TeamRec`s (013/310). `source_name` only names the file in a crash report.

    Raises nothing on content: unreadable lines become `IngestIssue`s (1-based line, message,
    raw text); `rejected_reason` is set when no TRF record at all is found (or, as a last
    resort, when the reader itself fails, with an issue 'trf_reader_crash').
    """
    try:
        return _TrfReader(text).read()
    except Exception as exc:  # a reader bug must not stop the ingest of other files
        out = ParsedFile(format="trf")
        where = f" on {source_name}" if source_name else ""
        out.rejected_reason = f"TRF reader failed{where}: {type(exc).__name__}: {exc}"
        out.issues.append(IngestIssue("trf_reader_crash", out.rejected_reason, None, None, "error"))
        return out
