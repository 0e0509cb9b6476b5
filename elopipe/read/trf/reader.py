"""Reader for FIDE Tournament Report Files: TRF06/TRF16, TRF-2026 and the XX/BB extensions.

Follows shared/specs/trf-format.md (a summary of FIDE C.04 Annex 2 "TRF16" and "TRF-2026",
the JaVaFo TRF(x) manual and bbpPairings' TRF(bx)); section numbers below refer to it.

`read_trf(text)` turns one decoded file (LF line ends) into a `ParsedFile`:

* one `TournamentRec` from the `??2` header records (§3), XX/BB extensions in `extra` (§7);
* one `PlayerRec` per `001` row, sliced by column on decoded characters (§4);
* the round blocks (§5) -> games and unplayed rounds, by `elopipe.read.trf.rounds` (a game written
  on both players' rows is stored ONCE; only agreeing 1/=/0 pairings are played games);
* `013`/`310` team rows -> `TeamRec`; TRF-26 NRS rows -> national id / rating (§6).

The FIDE-rating column (cols 49-52) holds a FIDE rating only in 1000..3000 (`field_bounds`):
a zero-padded value ('0951', Irish files) or one below 1000 (no FIDE floor was ever lower) is a
national rating and goes to `national_rating`; one above 3000 is stored as unrated. Points
outside 0..999.5 and declared rounds outside 1..9999 are stored as NULL. All with a warning.
More than `field_bounds.EVENT_ROUNDS_PLAUSIBLE` rounds, and 042/052/132 dates outside
`dates.DATE_MIN..latest_plausible()` (the date is then not stored), are warned about too.
Control characters in a record are blanked (columns kept), with a warning.

Problems never raise: they become `IngestIssue`s (file line, message, raw text).
Repeated quirks of one kind (e.g. 100 rows with sex `M`) are reported once per file with
a count and the first lines.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from typing import Any

from elopipe.read.control_chars import ANY_CONTROL, blank_controls
from elopipe.read.dates import implausible_reason, parse_trf_date, trf_date_candidates
from elopipe.read.field_bounds import (
    BIRTH_YEAR_MAX,
    BIRTH_YEAR_MIN,
    EVENT_ROUNDS_PLAUSIBLE,
    FIDE_RATING_MAX,
    FIDE_RATING_MIN,
    POINTS_MAX,
    ROUND_MAX,
)
from elopipe.read.ids import FIDE_ID_DIGITS, is_placeholder_id, is_too_long_id
from elopipe.read.records import GameRec, IngestIssue, ParsedFile, PlayerRec, TeamRec, TournamentRec
from elopipe.read.trf.codes import FIDE_FEDERATIONS, SEXES, TITLES
from elopipe.read.trf.issues import IssueLog, shown
from elopipe.read.trf.progress import unfinished_round
from elopipe.read.trf.rounds import (
    TOURNAMENT_REF,
    RoundResolver,
    TrfRow,
    column,
    decimal_or_none,
    int_or_none,
    parse_blocks,
)
from elopipe.read.trf.time_control import rate_class_from_encoded, rate_class_from_text

__all__ = ["looks_like_trf", "read_trf", "is_ruler_line"]

#: A FIDE ID below this is a national (e.g. Irish ICU) number written in the FIDE-ID column
#: (trf-format.md §9, heuristic of the ICU parser): kept as national_id, not as fide_id.
MIN_FIDE_ID = 100000
#: Records of TRF-2026 kept raw in `extra["records"]` (§6); 240 is also cross-checked.
TRF26_RECORDS = frozenset({"240", "250", "260", "299", "300", "320", "330", "801", "802"})
_VENDOR_RECORDS = frozenset({"DAT", "ACC", "TSE", "PAB", "FPB", "HPB", "ZPB", "MFO", "DFM"})
# Unknown records a real report may carry (vendor lines, notes) before a file counts as mostly
# something else; past it, and past half the lines, the file is rejected.
UNKNOWN_RECORDS_MAX = 20
_HEADER_FIELDS = {"012": "name", "022": "city", "032": "federation", "092": "tournament_type", "102": "chief_arbiter"}
_BLOCK_OK = re.compile(r"^[ 0-9]{4} [wbWB\- ] [10=+\-WDLHFUZwdlhfuz ]$")
_LEADING_INT = re.compile(r"^\s*(\d+)")


def _digits(s: str) -> bool:
    """ASCII digits only: str.isdigit() also accepts '²' and other digits int() refuses."""
    return s.isascii() and s.isdigit()


# ---- detection --------------------------------------------------------------------------


def is_ruler_line(line: str) -> bool:
    """True for the column rulers some writers put between records (trf-format.md §2).

    Caught: digit cycles ('0123456789...' which starts like tag 012, '123456...'), tens rulers
    ('         1         2 ...'), and letter rulers ('DDD SSSS sTTT NNNN...', 'AAA MMMM ...',
    'UUU MMMM GGGG 111 222 ...': three equal capitals then a blank).
    """
    s = line.rstrip()
    if not s:
        return False
    if _digits(s) and len(s) >= 10:
        return all(int(b) == (int(a) + 1) % 10 for a, b in zip(s, s[1:], strict=False))
    if s[0] == " ":
        tokens = s.split()
        if tokens and all(_digits(t) for t in tokens):
            nums = [int(t) for t in tokens]
            return len(nums) >= 2 and all(b == a + 1 for a, b in zip(nums, nums[1:], strict=False))
    if len(s) >= 4 and s[0].isalpha() and s[0].isupper() and s[0] == s[1] == s[2] and s[3] == " ":
        return True
    # other letter rulers ('    SSSS sTTT NNNN...'): mostly runs of 3+ equal capitals or digits
    if re.search(r"([A-Z])\1{3,}", s):
        in_runs = sum(len(m.group()) for m in re.finditer(r"([A-Z0-9])\1{2,}", s))
        return in_runs >= 0.6 * len(s.replace(" ", ""))
    return False


def looks_like_trf(text: str) -> bool:
    """Content sniffing for `.txt` files: a `001` player row with a start rank in cols 5-8,
    or at least two TRF header records (012, 022, ..., XXR) at line starts.
    Pipe-separated Vega `.tdf` rows are not TRF."""
    headers = 0
    for line in text.lstrip("\ufeff").split("\n")[:5000]:
        rec = line[:4]
        if rec == "001 " and _digits(line[4:8].strip()) and "|" not in line:
            return True
        if rec in ("012 ", "022 ", "032 ", "042 ", "052 ", "092 ", "102 ", "XXR ", "XXC "):
            headers += 1
            if headers >= 2:
                return True
    return False


# ---- the reader ---------------------------------------------------------------------------


class _TrfReader:
    def __init__(self, text: str) -> None:
        # callers pass LF text (textio); CR and CRLF are folded anyway so a raw read cannot misplace lines
        self.text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
        self.issues = IssueLog()
        self.tour = TournamentRec(ref=TOURNAMENT_REF)
        self.headers: dict[str, Any] = {}
        self.header_lines: dict[str, int] = {}
        self.xx: dict[str, Any] = {}
        self.records: dict[str, list[str]] = defaultdict(list)
        self.rows: dict[int, TrfRow] = {}
        self.row_order: list[int] = []
        self.teams: list[TeamRec] = []
        self.team_extra: list[dict[str, Any]] = []
        self.nrs: list[tuple[int, str]] = []
        self.byes_240: list[tuple[int, str]] = []
        self.unknown: list[dict[str, Any]] = []
        self.n_records = 0  # lines dispatched as records, known or not
        self.round_dates_raw: tuple[int, str] | None = None
        self.n_comments = 0
        self.n_pipe_rows = 0
        self.odd_federations: dict[str, list[int]] = {}

    # -- pass 1: dispatch lines --------------------------------------------------------
    def read(self) -> ParsedFile:
        has_controls = ANY_CONTROL.search(self.text) is not None
        for no, line in enumerate(self.text.split("\n"), start=1):
            if not line.strip():
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
            if is_ruler_line(line):
                self.issues.quirk("trf_ruler_line", "column ruler line skipped", no, line, severity="info")
                continue
            self._dispatch(no, line)
            self.n_records += 1
        return self._finish()

    def _dispatch(self, no: int, line: str) -> None:
        rec = line[:3]
        if rec == "001":
            self._player(no, line)
        elif rec == "013":
            self._team013(no, line)
        elif rec == "310":
            self._team310(no, line)
        elif rec[:2] in ("XX", "BB") and len(rec) == 3:
            self._extension(no, line)
        elif rec in TRF26_RECORDS:
            self.records[rec].append(line)
            if rec == "240":
                self._bye240(no, line)
        elif len(rec) == 3 and _digits(rec[:2]) and rec[2] == "2":
            self._header(no, line)
        elif rec.isalpha() and rec.isupper() and rec not in _VENDOR_RECORDS and _digits(line[4:8].strip()):
            self.nrs.append((no, line))
        else:
            self.unknown.append({"line": no, "raw": line[:500]})
            self.issues.quirk(
                "trf_unknown_record",
                f"unknown record {shown(rec)} kept raw in tournament extra",
                no,
                line,
                severity="info",
            )

    def _header(self, no: int, line: str) -> None:
        tag = line[:3]
        value = line[4:].strip()
        if tag == "132":
            self.round_dates_raw = (no, line)
            return
        if tag == "112":
            if value:
                self.headers.setdefault("112", []).append(value)
            return
        if tag in self.headers and tag != "112":
            self.issues.add(
                "trf_duplicate_header", f"header {tag} repeated; the later value is kept", no, "warning", line
            )
        self.headers[tag] = value
        self.header_lines[tag] = no

    def _extension(self, no: int, line: str) -> None:
        tag = line[:3]
        value = line[3:].strip()
        if tag in ("XXA", "XXP", "XXZ", "XXS") or tag.startswith("BB"):
            self.xx.setdefault(tag, []).append(value)
        else:
            if tag in self.xx:
                self.issues.add("trf_duplicate_header", f"{tag} repeated; the later value is kept", no, "warning", line)
            self.xx[tag] = value

    def _bye240(self, no: int, line: str) -> None:
        kind = column(line, 5, 5).strip().upper()
        rnd = int_or_none(column(line, 7, 9))
        if kind not in ("F", "H", "Z", "U") or rnd is None:
            self.issues.add("trf_bad_240", "240 bye record not understood", no, "warning", line)
            return
        for m in re.finditer(r"\S+", line[9:]):
            if _digits(m.group()) and int(m.group()):
                self.byes_240.append((no, f"{kind}:{rnd}:{int(m.group())}"))

    def _team013(self, no: int, line: str) -> None:
        name = column(line, 5, 36).strip() or None
        members = self._members(no, line, 37)
        self.teams.append(TeamRec(TOURNAMENT_REF, None, name, "013", members, None, no))

    def _team310(self, no: int, line: str) -> None:
        team_no = int_or_none(column(line, 5, 7))
        name = column(line, 9, 40).strip() or None
        mp = decimal_or_none(column(line, 55, 60))
        gp = decimal_or_none(column(line, 62, 67))
        members = self._members(no, line, 74)
        self.teams.append(TeamRec(TOURNAMENT_REF, team_no, name, "310", members, mp, no))
        self.team_extra.append(
            {
                "team_no": team_no,
                "name": name,
                "nickname": column(line, 42, 46).strip() or None,
                "strength": column(line, 48, 53).strip() or None,
                "match_points": str(mp) if mp is not None else None,
                "game_points": str(gp) if gp is not None else None,
                "rank": int_or_none(column(line, 69, 71)),
                "line": no,
            }
        )

    def _members(self, no: int, line: str, first_col: int) -> list[int]:
        members: list[int] = []
        col = first_col
        while col <= len(line):
            field = column(line, col, col + 3)
            if field.strip():
                if _digits(field.strip()):
                    if int(field):
                        members.append(int(field))
                else:
                    self.issues.add(
                        "trf_bad_team_member",
                        f"team member number {shown(field.strip())} at col {col}",
                        no,
                        "warning",
                        line,
                    )
            col += 5
        return members

    # -- 001 rows ------------------------------------------------------------------------
    def _player(self, no: int, line: str) -> None:
        if "|" in line:
            self.n_pipe_rows += 1
            self.issues.quirk(
                "trf_pipe_row", "001 row with '|' fields (Vega .tdf, not TRF) not read", no, line, severity="error"
            )
            return
        rank = int_or_none(column(line, 5, 8))
        if rank is None or rank == 0:
            self.issues.add(
                "trf_bad_start_rank", "001 row without a start rank in cols 5-8; not read", no, "error", line
            )
            return
        if rank in self.rows:
            self.issues.add(
                "trf_duplicate_start_rank",
                f"start rank {rank} already used on line {self.rows[rank].line}; this row is not read",
                no,
                "error",
                line,
            )
            return
        line = self._realign(no, line)
        self._check_grid(no, line)
        name = column(line, 15, 47).strip()
        if not name:
            self.issues.add("trf_no_name", f"player {rank} has no name", no, "warning", line)
        player = PlayerRec(
            ref=rank,
            tournament_ref=TOURNAMENT_REF,
            name=name or f"#{rank}",
            start_rank=rank,
            line=no,
        )
        self._sex(no, line, player)
        self._title(no, line, player)
        self._rating(no, line, player)
        fed = column(line, 54, 56).strip().upper()
        if fed in FIDE_FEDERATIONS:
            player.federation = fed
        elif fed:
            # a club/region code would contradict the player's federation in other files
            self.odd_federations.setdefault(fed, []).append(no)
        self._ids(no, line, player)
        self._birth(no, line, player)
        pts_text = column(line, 81, 84)
        player.points = decimal_or_none(pts_text)
        if pts_text.strip() and player.points is None:
            self.issues.add("trf_bad_points", f"points {shown(pts_text.strip())} not a number", no, "warning", line)
        elif player.points is not None and not 0 <= player.points <= POINTS_MAX:
            self.issues.add(
                "trf_bad_points",
                f"points {shown(pts_text.strip())} outside 0..{POINTS_MAX}: stored as NULL",
                no,
                "warning",
                line,
            )
            player.points = None
        rank_text = column(line, 86, 89)
        final = int_or_none(rank_text)
        if rank_text.strip() and final is None:
            self.issues.add("trf_bad_rank", f"rank {shown(rank_text.strip())} not a number", no, "warning", line)
        if final == 0:
            self.issues.quirk("trf_rank_zero", "rank 0 (withdrawn player) stored as no rank", no, line, "info")
            final = None
        player.final_rank = final
        blocks = parse_blocks(no, line, rank, self.issues)
        self.rows[rank] = TrfRow(player, blocks, no, line)
        self.row_order.append(rank)

    def _check_grid(self, no: int, line: str) -> None:
        separators = (4, 9, 14, 48, 53, 57, 69, 80, 85, 90, 91)
        bad = [c for c in separators if column(line, c, c) != " "]
        if bad:
            self.issues.quirk(
                "trf_off_grid",
                "001 row has characters in columns that should be blank (fields may overflow)",
                no,
                line,
            )

    def _realign(self, no: int, line: str) -> str:
        """Undo a byte-counting writer (§9): with a multibyte name, later fields sit k chars left."""
        if column(line, 15, 47).isascii() or len(line.rstrip()) < 95:
            return line

        def valid(candidate: str) -> int:
            n = (len(candidate.rstrip()) - 91 + 9) // 10
            return sum(bool(_BLOCK_OK.match(column(candidate, 82 + 10 * r, 89 + 10 * r))) for r in range(1, n + 1))

        base = valid(line)
        n_blocks = (len(line.rstrip()) - 91 + 9) // 10
        if base == n_blocks:
            return line
        best, best_k = base, 0
        for k in (1, 2, 3, 4):
            shifted = line[: 47 - k] + " " * k + line[47 - k :]
            score = valid(shifted)
            if score > best:
                best, best_k = score, k
        if best_k:
            self.issues.add(
                "trf_misaligned",
                f"misaligned data, may be bad character encoding: fields after the name re-read {best_k} "
                "column(s) to the right (writer counted bytes)",
                no,
                "warning",
                line,
            )
            return line[: 47 - best_k] + " " * best_k + line[47 - best_k :]
        return line

    def _sex(self, no: int, line: str, player: PlayerRec) -> None:
        s = column(line, 10, 10)
        if s == " ":
            return
        player.sex = SEXES.get(s)
        if s not in ("m", "w"):
            if player.sex:
                self.issues.quirk("trf_sex_mapped", f"sex written {shown(s)}, read as '{player.sex}'", no, line)
            else:
                self.issues.quirk("trf_sex_unknown", f"sex {shown(s)} not understood; stored as unknown", no, line)

    def _title(self, no: int, line: str, player: PlayerRec) -> None:
        raw = column(line, 11, 13).strip()
        if not raw:
            return
        title = TITLES.get(raw.upper())
        if title is None:
            self.issues.quirk("trf_unknown_title", f"title {shown(raw)} not a FIDE title; kept as written", no, line)
            player.title = raw.upper()
            return
        if raw != title:
            self.issues.quirk(
                "trf_legacy_title", "legacy one/two-letter titles mapped (g->GM, m->IM, ...)", no, line, "info"
            )
        player.title = title

    def _rating(self, no: int, line: str, player: PlayerRec) -> None:
        raw = column(line, 49, 52).strip()
        if not raw:
            return
        if not _digits(raw):
            self.issues.add("trf_bad_rating", f"rating {shown(raw)} not a number; ignored", no, "warning", line)
            return
        value = int(raw)
        if value > FIDE_RATING_MAX:
            self.issues.add(
                "trf_rating_implausible",
                f"rating {shown(raw)} above {FIDE_RATING_MAX}: not a FIDE rating, stored as unrated",
                no,
                "warning",
                line,
            )
            return
        if value and raw.startswith("0"):
            # Irish files write national ratings in the FIDE column ('0951', '0471'): as Ro it
            # would be far below any FIDE rating floor
            player.national_rating = value
            self.issues.quirk(
                "trf_rating_zero_padded",
                "rating zero-padded (e.g. 0951): a national rating, stored as national_rating, FIDE rating NULL",
                no,
                line,
            )
            return
        if value and value < FIDE_RATING_MIN:
            player.national_rating = value
            self.issues.quirk(
                "trf_rating_below_fide_floor",
                f"rating below {FIDE_RATING_MIN} (no FIDE rating floor was ever lower): a national rating, "
                "stored as national_rating, FIDE rating NULL",
                no,
                line,
            )
            return
        player.rating = value or None

    def _ids(self, no: int, line: str, player: PlayerRec) -> None:
        raw = column(line, 58, 68).strip()
        if is_placeholder_id(raw):
            if raw and raw.strip("0"):  # blank and zeros are the format's own "no ID"
                self.issues.quirk(
                    "trf_placeholder_fide_id",
                    "a placeholder in the FIDE-ID column (e.g. 999999) read as no ID: the player has no FIDE ID",
                    no,
                    line,
                )
            return
        if not _digits(raw):
            self.issues.add(
                "trf_bad_fide_id", f"FIDE ID {shown(raw)} not a number; kept as national id", no, "warning", line
            )
            player.national_id = raw
            return
        if is_too_long_id(raw):
            self.issues.quirk(
                "trf_fide_id_too_long",
                f"a number of more than {FIDE_ID_DIGITS} digits in the FIDE-ID column, which no FIDE ID has: "
                "read as no ID",
                no,
                line,
            )
            return
        value = int(raw)
        if value < MIN_FIDE_ID:
            self.issues.quirk(
                "trf_national_id_in_fide_column",
                f"number below {MIN_FIDE_ID} in the FIDE-ID column read as a national id, not a FIDE ID",
                no,
                line,
            )
            player.national_id = str(value)
            return
        player.fide_id = value

    def _birth(self, no: int, line: str, player: PlayerRec) -> None:
        raw = column(line, 70, 79).strip()
        if not raw:
            return
        value, precision = parse_trf_date(raw)
        if value is None:
            if raw.strip("0/.- "):
                self.issues.add("trf_bad_birth_date", f"birth date {shown(raw)} not understood", no, "warning", line)
            return
        if not BIRTH_YEAR_MIN <= value.year <= BIRTH_YEAR_MAX:
            self.issues.add(
                "trf_bad_birth_date", f"birth date {shown(raw)} out of range: not stored", no, "warning", line
            )
            return
        player.birth_year = value.year
        if precision == "day":
            player.birth_date = value

    def _nrs(self) -> None:
        """TRF-2026 national rating rows (§6): '<FED> <start rank> ... national rating, id'."""
        nrs_extra: list[dict[str, Any]] = []
        for no, line in self.nrs:
            rank = int_or_none(column(line, 5, 8))
            row = self.rows.get(rank or -1)
            entry: dict[str, Any] = {
                "line": no,
                "federation": line[:3],
                "start_rank": rank,
                "sex": column(line, 10, 10).strip() or None,
                "classification": column(line, 11, 13).strip() or None,
                "name": column(line, 15, 47).strip() or None,
                "rating": int_or_none(column(line, 49, 52)),
                "flag": column(line, 53, 53).strip() or None,
                "origin": column(line, 54, 56).strip() or None,
                "national_id": column(line, 58, 68).strip() or None,
                "birth": column(line, 70, 79).strip() or None,
            }
            nrs_extra.append(entry)
            if row is None:
                self.issues.add("trf_nrs_unknown_player", f"NRS row for unknown start rank {rank}", no, "warning", line)
                continue
            p = row.player
            if entry["national_id"]:
                if p.national_id and p.national_id != entry["national_id"]:
                    self.issues.add(
                        "trf_nrs_id_conflict",
                        f"player {rank}: national id {entry['national_id']} replaces {p.national_id} from the 001 row",
                        no,
                        "warning",
                        line,
                    )
                p.national_id = entry["national_id"]
            if entry["rating"]:
                p.national_rating = entry["rating"]
            flag = entry["flag"] or (entry["classification"] if entry["classification"] in ("F", "N", "E") else None)
            if flag:
                p.national_rating_flag = flag
            if p.birth_year is None and entry["birth"]:
                value, precision = parse_trf_date(entry["birth"])
                if value and BIRTH_YEAR_MIN <= value.year <= BIRTH_YEAR_MAX:
                    p.birth_year = value.year
                    p.birth_date = value if precision == "day" else None
            if p.sex is None and entry["sex"]:
                p.sex = SEXES.get(entry["sex"])
        if nrs_extra:
            self.tour.extra["nrs"] = nrs_extra

    # -- pass 2: tournament, pairings ------------------------------------------------------
    def _finish(self) -> ParsedFile:
        out = ParsedFile(format="trf")
        if self.n_pipe_rows and not self.rows:
            out.rejected_reason = "pipe-separated 001 rows: a Vega .tdf file, not TRF"
            out.issues = self.issues.flush()
            return out
        if not self.rows and not self.headers and not self.xx and not self.teams:
            out.rejected_reason = "no TRF records (001 player rows or ??2 headers) found"
            out.issues = self.issues.flush()
            return out
        if not self.rows:
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
        self._tournament()
        self._nrs()
        self._team_membership()
        players = [self.rows[r].player for r in sorted(self.rows)]
        if self.row_order != sorted(self.row_order):
            self.issues.add(
                "trf_rows_unordered", "001 rows are not in start-rank order (read in start-rank order)", None, "info"
            )
        if not self.rows:
            self.issues.add("trf_no_players", "no 001 player rows", None, "warning")
        if self.odd_federations:
            seen = ", ".join(f"{code} ({len(lines)})" for code, lines in sorted(self.odd_federations.items()))
            first = min(n for lines in self.odd_federations.values() for n in lines)
            self.issues.add(
                "trf_not_a_federation",
                f"federation column holds codes that are not FIDE federations (club or region codes?), "
                f"stored as no federation: {seen}",
                first,
            )
        round_dates = self._round_dates()
        resolver = RoundResolver(self.rows, self.tour, self.issues, round_dates, self.rounds_in_blocks, self.byes_240)
        games, unplayed = resolver.resolve()
        self._in_progress(games)
        out.tournaments = [self.tour]
        out.players = players
        out.games = games
        out.unplayed = unplayed
        out.teams = self.teams
        out.issues = self.issues.flush()
        return out

    def _in_progress(self, games: list[GameRec]) -> None:
        """Mark an event still in progress (`progress.unfinished_round`): `extra.in_progress` says
        which round, and the rating leaves the event out until a complete file replaces it."""
        t = self.tour
        declared = t.rounds if t.extra.get("rounds_source") in ("142", "XXR") else None
        unfinished = unfinished_round(games, declared)
        if unfinished is None:
            return
        t.extra["in_progress"] = unfinished.describe()
        self.issues.add(
            "trf_in_progress",
            f"the event is in progress: {unfinished.describe()}; it is not rated until a file with its results is "
            "loaded",
            unfinished.line,
            "warning",
        )

    def _tournament(self) -> None:
        t, h = self.tour, self.headers
        for tag, attr in _HEADER_FIELDS.items():
            value = h.pop(tag, None)
            setattr(t, attr, value or None)
        if t.name is None:
            self.issues.add("trf_no_name", "no tournament name (012)", None, "warning")
        online = " ".join(v or "" for v in (t.city, t.federation, t.chief_arbiter)).lower()
        if "lichess" in online:
            # lichess-org/lila#7696: URL in 022/102, 'Lichess' in 032, lichess ratings in cols 49-52
            t.extra["platform"] = "lichess"
            self.issues.add(
                "trf_online_export",
                "lichess export: 022/032/102 hold a URL and a platform name, and the rating column holds "
                "lichess ratings, not FIDE ratings",
                self.header_lines.get("022"),
                "warning",
            )
        t.start_date, t.end_date = self._start_end(h.pop("042", None), h.pop("052", None))
        tc = h.pop("122", None)
        t.time_control = tc or h.get("222") or None
        t.rate_class = rate_class_from_encoded(h.get("222")) or rate_class_from_text(tc)
        # a name that says 'Blitz' (lichess leaves 122 empty) is read by the rating with the rest
        # of the evidence (`elopipe.read.rate_evidence`), which records that the name said it
        declared = None
        for tag, source in (("142", "142"), ("XXR", "XXR")):
            text = h.get(tag) if tag != "XXR" else self.xx.get("XXR")
            if text:
                m = _LEADING_INT.match(text)
                if m:
                    declared = int(m.group(1))
                    if not 1 <= declared <= ROUND_MAX:
                        self.issues.add(
                            "trf_bad_rounds",
                            f"{tag} declares {declared} rounds (outside 1..{ROUND_MAX}): ignored",
                            self.header_lines.get(tag),
                            "warning",
                        )
                        declared = None
                        continue
                    t.extra["rounds_source"] = source
                    break
                self.issues.add(
                    "trf_bad_rounds",
                    f"{tag} {shown(text)} is not a number of rounds: ignored",
                    self.header_lines.get(tag),
                    "warning",
                )
        blocks_max = max(
            (b.round for row in self.rows.values() for b in row.blocks if not b.empty),
            default=0,
        )
        self.rounds_in_blocks = blocks_max
        t.extra["rounds_in_blocks"] = blocks_max
        self._implausible_rounds(blocks_max, declared)
        if declared is not None:
            t.rounds = declared
            if blocks_max > declared:
                self.issues.add(
                    "trf_rounds_exceed",
                    f"round blocks go to round {blocks_max} but {t.extra['rounds_source']} says {declared} rounds",
                    None,
                    "warning",
                )
        elif blocks_max:
            t.rounds = blocks_max
            t.extra["rounds_source"] = "blocks"
        for tag, key in (("062", "declared_players"), ("072", "declared_rated_players"), ("082", "declared_teams")):
            text = h.get(tag)
            if text:
                m = _LEADING_INT.match(text)
                if m:
                    t.extra[key] = int(m.group(1))
                else:
                    self.issues.add("trf_bad_count", f"{tag} {shown(text)} is not a number", self.header_lines.get(tag))
        if t.extra.get("declared_players") not in (None, len(self.rows)):
            self.issues.add(
                "trf_count_mismatch",
                f"062 says {t.extra['declared_players']} players, the file has {len(self.rows)} 001 rows",
                self.header_lines.get("062"),
                "info",
            )
        # TRF26 files may list each team twice, as 013 and as 310
        n_teams = max(sum(tm.record == rec for tm in self.teams) for rec in ("013", "310")) if self.teams else 0
        if t.extra.get("declared_teams") and n_teams and t.extra["declared_teams"] != n_teams:
            self.issues.add(
                "trf_count_mismatch",
                f"082 says {t.extra['declared_teams']} teams, the file has {n_teams} team records",
                self.header_lines.get("082"),
                "info",
            )
        if h:
            t.extra["headers"] = dict(sorted(h.items()))
        if self.xx:
            t.extra["extensions"] = self.xx
        if self.records:
            t.extra["records"] = dict(self.records)
        if self.unknown:
            t.extra["unknown_records"] = self.unknown
        if self.team_extra:
            t.extra["teams_310"] = self.team_extra
        if self.n_comments:
            t.extra["comment_lines"] = self.n_comments
        t.is_team = bool(self.teams)
        scoring = self._scoring()
        if scoring:
            t.extra["scoring"] = scoring

    def _implausible_rounds(self, blocks_max: int, declared: int | None) -> None:
        """Warn (data kept) when the event has more rounds than any real one
        (`field_bounds.EVENT_ROUNDS_PLAUSIBLE`), at the first 001 row that goes beyond."""
        if blocks_max > EVENT_ROUNDS_PLAUSIBLE:
            first = min(
                (row for row in self.rows.values() if any(b.round > EVENT_ROUNDS_PLAUSIBLE for b in row.blocks)),
                key=lambda row: row.line,
            )
            self.issues.add(
                "trf_implausible_rounds",
                f"round blocks go to round {blocks_max}: more than {EVENT_ROUNDS_PLAUSIBLE} rounds, "
                "which no real event has (a generated or corrupt file?); loaded as written",
                first.line,
                "warning",
            )
        elif declared is not None and declared > EVENT_ROUNDS_PLAUSIBLE:
            tag = self.tour.extra.get("rounds_source", "142")
            self.issues.add(
                "trf_implausible_rounds",
                f"{tag} declares {declared} rounds: more than {EVENT_ROUNDS_PLAUSIBLE}, which no real event has",
                self.header_lines.get(tag),
                "warning",
            )

    def _scoring(self) -> dict[str, str]:
        """Scoring system from TRF26 162 (symbol at 6, value 7-10, stride 9), XXS or BB? (§3, §7)."""
        out: dict[str, str] = {}
        text = self.headers.get("162")
        if text:
            for m in re.finditer(r"([A-Z])\s*(-?\d+(?:\.\d+)?)", text):
                out[m.group(1)] = m.group(2)
        for entry in self.xx.get("XXS", []):
            for m in re.finditer(r"([A-Z]+)=(-?\d+(?:\.\d+)?)", entry):
                out[m.group(1)] = m.group(2)
        for tag in ("BBW", "BBD", "BBL", "BBZ", "BBF", "BBU"):
            for value in self.xx.get(tag, []):
                out[tag] = value
        return out

    def _start_end(self, start: str | None, end: str | None) -> tuple[dt.date | None, dt.date | None]:
        """042/052 read together: two-digit-year forms are read in the order that gives a span of 0-400 days."""

        def prefer(text: str | None) -> str:
            return "dmy" if text and "/" in text and not re.match(r"^\s*\d{4}", text) else "ymd"

        sread = trf_date_candidates(start, prefer(start)) if start else []
        eread = trf_date_candidates(end, prefer(end)) if end else []
        sc = self._plausible(f"042 date {shown(start)}", sread, self.header_lines.get("042"))
        ec = self._plausible(f"052 date {shown(end)}", eread, self.header_lines.get("052"))
        for tag, text, read in (("042", start, sread), ("052", end, eread)):
            if text and not read:
                self.issues.add("trf_bad_date", f"{tag} date {shown(text)} not understood", self.header_lines.get(tag))
        if sc and ec:
            pairs = [(s, e) for s in sc for e in ec if 0 <= (e[0] - s[0]).days <= 400]
            if pairs:
                # same reading for both first, then the preferred reading, then the shorter span
                s, e = min(
                    pairs,
                    key=lambda p: (p[0][2] != p[1][2], sc.index(p[0]) + ec.index(p[1]), (p[1][0] - p[0][0]).days),
                )
                return s[0], e[0]
            self.issues.add(
                "trf_dates_inverted", f"052 {shown(end)} is not within 400 days after 042 {shown(start)}", None
            )
        return (sc[0][0] if sc else None), (ec[0][0] if ec else None)

    def _plausible(
        self, what: str, cands: list[tuple[dt.date, str, str]], line: int | None, raw: str | None = None
    ) -> list[tuple[dt.date, str, str]]:
        """The readings of a date (042/052, a 132 round date: `what` names it) that can be real
        (`dates.implausible_reason`); when every reading is refused, a 'trf_date_implausible'
        warning at `line` and no reading."""
        kept = [c for c in cands if implausible_reason(c[0]) is None]
        if cands and not kept:
            why = implausible_reason(cands[0][0])
            self.issues.add("trf_date_implausible", f"{what} {why}: not stored", line, "warning", raw)
        return kept

    def _round_dates(self) -> dict[int, dt.date]:
        """132 round dates (§3): tokens placed on the 10-column grid from col 92 (slack of a few columns)."""
        if self.round_dates_raw is None:
            return {}
        no, line = self.round_dates_raw
        tokens = [(m.start() + 1, m.group()) for m in re.finditer(r"\S+", line[4:])]
        tokens = [(col + 4, tok) for col, tok in tokens]
        if not tokens:
            return {}
        self.tour.extra["round_dates_raw"] = line[4:].rstrip()
        on_grid = tokens[0][0] >= 85
        start, end = self.tour.start_date, self.tour.end_date
        out: dict[int, dt.date] = {}
        odd_orders: list[str] = []
        year_fixed: list[str] = []
        outside: list[str] = []
        for i, (col, tok) in enumerate(tokens):
            rnd = int(round((col - 92) / 10)) + 1 if on_grid else i + 1
            read = trf_date_candidates(tok, "ymd")
            cands = self._plausible(f"round {rnd} date {shown(tok)}", read, no, line)
            if read and not cands:
                continue
            if not cands:
                self.issues.add(
                    "trf_bad_round_date", f"round {rnd} date {shown(tok)} not understood", no, "warning", line
                )
                continue
            chosen = cands[0]
            if start and end:
                lo, hi = start - dt.timedelta(days=1), end + dt.timedelta(days=1)
                inside = [c for c in cands if lo <= c[0] <= hi]
                if inside:
                    chosen = inside[0]
                else:
                    fixed = None
                    for value, _, order in cands:
                        for year in {start.year, end.year}:
                            try:
                                candidate = value.replace(year=year)
                            except ValueError:
                                continue
                            if lo <= candidate <= hi:
                                fixed = (candidate, "day", order)
                                break
                        if fixed:
                            break
                    if fixed:
                        year_fixed.append(f"{shown(tok)} -> {fixed[0].isoformat()}")
                        chosen = fixed
                    else:
                        outside.append(tok)
            if chosen[2] != "ymd":
                odd_orders.append(f"{shown(tok)} -> {chosen[0].isoformat()}")
            out[rnd] = chosen[0]
        if year_fixed:
            self.issues.add(
                "trf_round_date_year",
                "round dates outside 042-052; year taken from 042/052: " + ", ".join(year_fixed),
                no,
                "warning",
                line,
            )
        if outside:
            self.issues.add(
                "trf_round_date_range", "round dates outside 042-052: " + ", ".join(outside), no, "warning", line
            )
        if odd_orders:
            self.issues.add(
                "trf_round_date_order",
                "round dates not written YY/MM/DD; read as " + ", ".join(odd_orders),
                no,
                "warning",
                line,
            )
        ordered = [out[r] for r in sorted(out)]
        if any(b < a for a, b in zip(ordered, ordered[1:], strict=False)):
            self.issues.add("trf_round_dates_decrease", "round dates are not in order", no, "warning", line)
        self.tour.extra["round_dates"] = {str(r): d.isoformat() for r, d in sorted(out.items())}
        return out

    def _team_membership(self) -> None:
        seen: dict[int, str] = {}
        for team in self.teams:
            for rank in team.member_ranks:
                row = self.rows.get(rank)
                label = team.name or f"team {team.team_no}"
                if row is None:
                    self.issues.add(
                        "trf_team_unknown_member", f"team {shown(label)} lists unknown start rank {rank}", team.line
                    )
                    continue
                if rank in seen and seen[rank] != label:
                    self.issues.add(
                        "trf_team_member_twice",
                        f"player {rank} listed in teams {shown(seen[rank])} and {shown(label)}",
                        team.line,
                    )
                    continue
                seen[rank] = label
                row.player.team = team.name


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
