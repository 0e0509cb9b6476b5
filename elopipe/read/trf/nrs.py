"""TRF-2026 national rating rows (trf-format.md §6): '<FED> <start rank> ...' lines that give a
player of the `001` rows a national rating, rating flag, national id, and a birth date or sex the
`001` row lacks. Kept raw in `TournamentRec.extra["nrs"]`."""

from __future__ import annotations

from typing import Any

from elopipe.read.dates import parse_trf_date
from elopipe.read.field_bounds import BIRTH_YEAR_MAX, BIRTH_YEAR_MIN
from elopipe.read.ids import is_id_word, is_placeholder_id
from elopipe.read.records import TournamentRec
from elopipe.read.trf.blocks import TrfRow
from elopipe.read.trf.codes import SEXES
from elopipe.read.trf.fields import column, int_or_none
from elopipe.read.trf.issues import IssueLog, shown


class NationalRatingRows:
    """The NRS rows of one file (`lines`: file line, text), applied to the players once all are read."""

    def __init__(self, issues: IssueLog) -> None:
        self.issues = issues
        self.lines: list[tuple[int, str]] = []

    def add(self, no: int, line: str) -> None:
        self.lines.append((no, line))

    def apply(self, rows: dict[int, TrfRow], tour: TournamentRec) -> None:
        """Give the players of `rows` their national id, rating and flag (and a birth date or sex
        their `001` row lacks) from the NRS rows: '<FED> <start rank> ... national rating, id' (§6);
        the rows go to `tour.extra["nrs"]`, a row for an unknown start rank is reported."""
        nrs_extra: list[dict[str, Any]] = []
        for no, line in self.lines:
            rank = int_or_none(column(line, 5, 8))
            row = rows.get(rank or -1)
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
            national_id = entry["national_id"]  # the raw row stays in extra as written
            if national_id and (is_placeholder_id(national_id) or is_id_word(national_id)):
                # a placeholder (0, 999999, -) or a word: no ID, never one that players share
                self.issues.add(
                    "trf_nrs_placeholder_id",
                    f"player {rank}: national id {shown(national_id)} is no ID: ignored",
                    no,
                    "warning",
                    line,
                )
                national_id = None
            if national_id:
                if p.national_id and p.national_id != national_id:
                    self.issues.add(
                        "trf_nrs_id_conflict",
                        f"player {rank}: national id {national_id} replaces {p.national_id} from the 001 row",
                        no,
                        "warning",
                        line,
                    )
                p.national_id = national_id
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
            tour.extra["nrs"] = nrs_extra
