"""TRF `001` player rows (trf-format.md §4), read one at a time into `PlayerRec`s and their round blocks.

Fields are sliced by column on decoded characters. The FIDE-rating column (cols 49-52) holds a
FIDE rating only in 1000..3000 (`field_bounds`): a zero-padded value ('0951', Irish files) or one
below 1000 (no FIDE floor was ever lower) is a national rating and goes to `national_rating`; one
above 3000 is stored as unrated. Points outside 0..999.5 are stored as NULL. All with a warning.
A row written by a byte-counting writer (a multibyte name shifts the later fields left) is
re-aligned (§9). Problems become issues in the file's `IssueLog`; a row without a usable start
rank is not read.
"""

from __future__ import annotations

import operator
import re

from elopipe.read.dates import parse_trf_date
from elopipe.read.field_bounds import BIRTH_YEAR_MAX, BIRTH_YEAR_MIN, FIDE_RATING_MAX, FIDE_RATING_MIN, POINTS_MAX
from elopipe.read.ids import FIDE_ID_DIGITS, is_id_word, is_placeholder_id, is_too_long_id
from elopipe.read.records import PlayerRec
from elopipe.read.trf.blocks import TrfRow, parse_blocks
from elopipe.read.trf.codes import FIDE_FEDERATIONS, SEXES, TITLES
from elopipe.read.trf.fields import TOURNAMENT_REF, column, decimal_or_none, digits, int_or_none
from elopipe.read.trf.issues import IssueLog, shown

#: A FIDE ID below this is a national (e.g. Irish ICU) number written in the FIDE-ID column
#: (trf-format.md §9, heuristic of the ICU parser): kept as national_id, not as fide_id.
MIN_FIDE_ID = 100000
# the columns between the fields of a `001` row (4, 9, 14, 48, 53, 57, 69, 80, 85, 90, 91), 0-based
_SEPARATORS = operator.itemgetter(3, 8, 13, 47, 52, 56, 68, 79, 84, 89, 90)
_BLANK_SEPARATORS = (" ",) * 11
_BLOCK_OK = re.compile(r"^[ 0-9]{4} [wbWB\- ] [10=+\-WDLHFUZwdlhfuz ]$")


class PlayerRows:
    """The `001` rows of one file, by start rank (`rows`), in file order (`row_order`); federation
    codes that are no FIDE federation (`odd_federations`: code -> lines) and the count of Vega
    pipe-separated rows (`n_pipe_rows`), which are not read."""

    def __init__(self, issues: IssueLog) -> None:
        self.issues = issues
        self.rows: dict[int, TrfRow] = {}
        self.row_order: list[int] = []
        self.odd_federations: dict[str, list[int]] = {}
        self.n_pipe_rows = 0

    def add(self, no: int, line: str) -> None:
        """Read the `001` row `line` (file line `no`) into `rows`."""
        if "|" in line:
            self.n_pipe_rows += 1
            self.issues.quirk(
                "trf_pipe_row", "001 row with '|' fields (Vega .tdf, not TRF) not read", no, line, severity="error"
            )
            return
        rank = int_or_none(line[4:8])
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
        if not line[14:47].isascii():  # a multibyte name: a byte-counting writer may have shifted the rest
            line = self._realign(no, line)
        # every field below sits in cols 1..91: read from the row padded with blanks (§2), as `column` reads it
        cols = line.ljust(91)
        if _SEPARATORS(cols) != _BLANK_SEPARATORS:
            self.issues.quirk(
                "trf_off_grid",
                "001 row has characters in columns that should be blank (fields may overflow)",
                no,
                line,
            )
        name = cols[14:47].strip()
        if not name:
            self.issues.add("trf_no_name", f"player {rank} has no name", no, "warning", line)
        player = PlayerRec(
            ref=rank,
            tournament_ref=TOURNAMENT_REF,
            name=name or f"#{rank}",
            start_rank=rank,
            line=no,
        )
        if cols[9] != " ":
            self._sex(no, line, cols[9], player)
        title = cols[10:13].strip()
        if title:
            self._title(no, line, title, player)
        if not self._cut(no, line, 49, 52, "rating"):
            self._rating(no, line, cols[48:52].strip(), player)
        fed = cols[53:56].strip().upper()
        if fed in FIDE_FEDERATIONS:
            player.federation = fed
        elif fed:
            # a club/region code would contradict the player's federation in other files
            self.odd_federations.setdefault(fed, []).append(no)
        if not self._cut(no, line, 58, 68, "FIDE ID"):
            self._ids(no, line, cols[57:68].strip(), player)
        born = cols[69:79].strip()
        if born:
            self._birth(no, line, born, player)
        pts_text = cols[80:84]
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
        rank_text = cols[85:89]
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

    def _realign(self, no: int, line: str) -> str:
        """Undo a byte-counting writer (§9): with a multibyte name, later fields sit k chars left."""
        if line[14:47].isascii() or len(line.rstrip()) < 95:
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

    def _sex(self, no: int, line: str, s: str, player: PlayerRec) -> None:
        """Col 10 of `line`, `s`, not blank."""
        player.sex = SEXES.get(s)
        if s not in ("m", "w"):
            if player.sex:
                self.issues.quirk("trf_sex_mapped", f"sex written {shown(s)}, read as '{player.sex}'", no, line)
            else:
                self.issues.quirk("trf_sex_unknown", f"sex {shown(s)} not understood; stored as unknown", no, line)

    def _title(self, no: int, line: str, raw: str, player: PlayerRec) -> None:
        """Cols 11-13 of `line`, stripped: `raw`."""
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

    def _cut(self, no: int, line: str, first: int, last: int, what: str) -> bool:
        """True, with a warning, when `line` ends inside its right-aligned field `what` (columns
        `first`..`last`, trf-format.md §2) after some of its characters: a line cut short, whose
        field holds the first digits of a number ('18' of 1850), which is then not read."""
        end = len(line.rstrip())
        if not first <= end < last:
            return False
        self.issues.add(
            "trf_field_cut",
            f"the line ends inside the {what} field (columns {first}-{last}, {shown(line[first - 1 : end].strip())}):"
            f" a line cut short; {what} not read",
            no, "warning", line,
        )  # fmt: skip
        return True

    def _rating(self, no: int, line: str, raw: str, player: PlayerRec) -> None:
        """Cols 49-52 of `line`, stripped: `raw`."""
        if not raw:
            return
        if not digits(raw):
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

    def _ids(self, no: int, line: str, raw: str, player: PlayerRec) -> None:
        """Cols 58-68 of `line`, stripped: `raw`."""
        # most rows: a FIDE ID of up to nine ASCII digits, no leading zero, not all nines (none of
        # the checks below refuses it), read without them
        if raw.isdigit() and raw.isascii() and len(raw) <= FIDE_ID_DIGITS and raw[0] != "0" and raw.strip("9"):
            value = int(raw)
            if value >= MIN_FIDE_ID:
                player.fide_id = value
                return
        if is_placeholder_id(raw):
            if raw and raw.strip("0"):  # blank and zeros are the format's own "no ID"
                self.issues.quirk(
                    "trf_placeholder_fide_id",
                    "a placeholder in the FIDE-ID column (e.g. 999999) read as no ID: the player has no FIDE ID",
                    no,
                    line,
                )
            return
        if is_id_word(raw):
            self.issues.add(
                "trf_bad_fide_id", f"FIDE ID {shown(raw)} holds no digit: read as no ID", no, "warning", line
            )
            return
        if not digits(raw):
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

    def _birth(self, no: int, line: str, raw: str, player: PlayerRec) -> None:
        """Cols 70-79 of `line`, stripped: `raw`."""
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

    def report(self) -> None:
        """Issues on the rows as a whole, once all are read: not in start-rank order, odd federations."""
        if self.row_order != sorted(self.row_order):
            self.issues.add(
                "trf_rows_unordered", "001 rows are not in start-rank order (read in start-rank order)", None, "info"
            )
        self._shared_fide_ids()
        if self.odd_federations:
            seen = ", ".join(f"{code} ({len(lines)})" for code, lines in sorted(self.odd_federations.items()))
            first = min(n for lines in self.odd_federations.values() for n in lines)
            self.issues.add(
                "trf_not_a_federation",
                f"federation column holds codes that are not FIDE federations (club or region codes?), "
                f"stored as no federation: {seen}",
                first,
            )

    def _shared_fide_ids(self) -> None:
        """A warning for each FIDE ID that two or more `001` rows carry: a FIDE ID names one
        player, so two entries of one tournament under it are a typing error or one player
        entered twice, which the arbiter must settle (both rows are read as written)."""
        ranks: dict[int, list[int]] = {}
        for rank in self.row_order:
            fide_id = self.rows[rank].player.fide_id
            if fide_id is not None:
                ranks.setdefault(fide_id, []).append(rank)
        for fide_id, shared in ranks.items():
            if len(shared) > 1:
                rows = [self.rows[r] for r in sorted(shared)]
                where = ", ".join(f"{r.player.start_rank} (line {r.line})" for r in rows)
                self.issues.add(
                    "trf_shared_fide_id",
                    f"FIDE ID {fide_id} is on the rows of start ranks {where}: one FIDE ID names one player,"
                    " so one of them is mistyped or the player is entered twice; both are read as written",
                    rows[1].line,
                    "warning",
                    rows[1].raw,
                )
