"""The `TournamentRec` of a TRF file (trf-format.md §3, §7): name, place, federation, type, arbiter,
dates, time control and rate class from the header records; the number of rounds (142 or XXR,
else the round blocks); declared counts (062/072/082) against the rows; scoring (162, XXS, BB?).
Headers not mapped to a field, the extensions, TRF-2026 records, unknown records and 310 team
fields are kept in `extra`. Declared rounds outside 1..9999 are ignored, more than
`field_bounds.EVENT_ROUNDS_PLAUSIBLE` rounds are warned about; an event still in progress is
marked (`elopipe.read.trf.progress`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from elopipe.read.field_bounds import EVENT_ROUNDS_PLAUSIBLE, ROUND_MAX
from elopipe.read.records import TournamentRec, UnplayedRec
from elopipe.read.trf.blocks import TrfRow
from elopipe.read.trf.event_dates import EventDates
from elopipe.read.trf.fields import TOURNAMENT_REF
from elopipe.read.trf.headers import HeaderRecords
from elopipe.read.trf.issues import IssueLog, shown
from elopipe.read.trf.progress import unfinished_round
from elopipe.read.trf.teams import TeamRecords
from elopipe.read.trf.time_control import rate_class_from_encoded, rate_class_from_text

_HEADER_FIELDS = {"012": "name", "022": "city", "032": "federation", "092": "tournament_type", "102": "chief_arbiter"}
_LEADING_INT = re.compile(r"^\s*(\d+)")


class TournamentBuilder:
    """Builds `tour`, the file's one `TournamentRec`, from its header records (`head`, dates read
    by `dates`); `rounds_in_blocks` is the last round any `001` row has a block for."""

    def __init__(self, head: HeaderRecords, dates: EventDates, issues: IssueLog) -> None:
        self.head = head
        self.dates = dates
        self.issues = issues
        self.tour = TournamentRec(ref=TOURNAMENT_REF)
        self.rounds_in_blocks = 0

    def build(
        self, rows: dict[int, TrfRow], teams: TeamRecords, unknown: list[dict[str, Any]], n_comments: int
    ) -> None:
        """Fill `tour` once every line is read: `rows` by start rank, the `teams`, the `unknown`
        records kept raw and the number of `###` comment lines. The headers mapped to a field are
        taken out of `head.headers`; the others go to `extra["headers"]`."""
        t, h = self.tour, self.head.headers
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
                self.head.header_lines.get("022"),
                "warning",
            )
        t.start_date, t.end_date = self.dates.start_end(h.pop("042", None), h.pop("052", None))
        tc = h.pop("122", None)
        t.time_control = tc or h.get("222") or None
        t.rate_class = rate_class_from_encoded(h.get("222")) or rate_class_from_text(tc)
        # a name that says 'Blitz' (lichess leaves 122 empty) is read by the rating with the rest
        # of the evidence (`elopipe.read.rate_evidence`), which records that the name said it
        declared = None
        for tag, source in (("142", "142"), ("XXR", "XXR")):
            text = h.get(tag) if tag != "XXR" else self.head.xx.get("XXR")
            if text:
                m = _LEADING_INT.match(text)
                if m:
                    declared = int(m.group(1))
                    if not 1 <= declared <= ROUND_MAX:
                        self.issues.add(
                            "trf_bad_rounds",
                            f"{tag} declares {declared} rounds (outside 1..{ROUND_MAX}): ignored",
                            self.head.header_lines.get(tag),
                            "warning",
                        )
                        declared = None
                        continue
                    t.extra["rounds_source"] = source
                    break
                self.issues.add(
                    "trf_bad_rounds",
                    f"{tag} {shown(text)} is not a number of rounds: ignored",
                    self.head.header_lines.get(tag),
                    "warning",
                )
        # a row's blocks are in round order: its last written one is the last round it has
        blocks_max = max(
            (next((b.round for b in reversed(row.blocks) if not b.empty), 0) for row in rows.values()),
            default=0,
        )
        self.rounds_in_blocks = blocks_max
        t.extra["rounds_in_blocks"] = blocks_max
        self._implausible_rounds(rows, blocks_max, declared)
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
                    self.issues.add(
                        "trf_bad_count", f"{tag} {shown(text)} is not a number", self.head.header_lines.get(tag)
                    )
        if t.extra.get("declared_players") not in (None, len(rows)):
            self.issues.add(
                "trf_count_mismatch",
                f"062 says {t.extra['declared_players']} players, the file has {len(rows)} 001 rows",
                self.head.header_lines.get("062"),
                "info",
            )
        # TRF26 files may list each team twice, as 013 and as 310
        n_teams = max(sum(tm.record == rec for tm in teams.teams) for rec in ("013", "310")) if teams.teams else 0
        if t.extra.get("declared_teams") and n_teams and t.extra["declared_teams"] != n_teams:
            self.issues.add(
                "trf_count_mismatch",
                f"082 says {t.extra['declared_teams']} teams, the file has {n_teams} team records",
                self.head.header_lines.get("082"),
                "info",
            )
        if h:
            t.extra["headers"] = dict(sorted(h.items()))
        if self.head.xx:
            t.extra["extensions"] = self.head.xx
        if self.head.records:
            t.extra["records"] = dict(self.head.records)
        if unknown:
            t.extra["unknown_records"] = unknown
        if teams.team_extra:
            t.extra["teams_310"] = teams.team_extra
        if n_comments:
            t.extra["comment_lines"] = n_comments
        t.is_team = bool(teams.teams)
        scoring = self.head.scoring()
        if scoring:
            t.extra["scoring"] = scoring

    def _implausible_rounds(self, rows: dict[int, TrfRow], blocks_max: int, declared: int | None) -> None:
        """Warn (data kept) when the event has more rounds than any real one
        (`field_bounds.EVENT_ROUNDS_PLAUSIBLE`), at the first 001 row that goes beyond."""
        if blocks_max > EVENT_ROUNDS_PLAUSIBLE:
            first = min(
                (row for row in rows.values() if any(b.round > EVENT_ROUNDS_PLAUSIBLE for b in row.blocks)),
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
                self.head.header_lines.get(tag),
                "warning",
            )

    def in_progress(self, games: list[list[object]], unplayed: Sequence[UnplayedRec] = ()) -> None:
        """Mark an event still in progress (`progress.unfinished_round`): `extra.in_progress` says
        which round, and the rating leaves the event out until a complete file replaces it. `games`:
        rows of `game_rows.COLUMNS`; `unplayed`: the byes and absences."""
        t = self.tour
        declared = t.rounds if t.extra.get("rounds_source") in ("142", "XXR") else None
        unfinished = unfinished_round(games, declared, unplayed)
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
