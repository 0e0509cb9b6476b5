"""The dates of a TRF event (trf-format.md §3): `042`/`052` start and end read together, and the
`132` round dates placed on their 10-column grid. A date that cannot be real
(`dates.implausible_reason`) is not stored, with a warning; two-digit years and day/month orders
are read in the way that fits the event's span."""

from __future__ import annotations

import datetime as dt
import re

from elopipe.read.dates import implausible_reason, trf_date_candidates
from elopipe.read.records import TournamentRec
from elopipe.read.trf.headers import HeaderRecords
from elopipe.read.trf.issues import IssueLog, shown


class EventDates:
    """Reads the dates of one file's header records (`head`), reporting to `issues`."""

    def __init__(self, head: HeaderRecords, issues: IssueLog) -> None:
        self.head = head
        self.issues = issues
        # the day the plausible dates end with (`dates.latest_plausible`): asked once a file, not once a date
        self.today = dt.date.today()

    def start_end(self, start: str | None, end: str | None) -> tuple[dt.date | None, dt.date | None]:
        """042/052 read together: two-digit-year forms are read in the order that gives a span of 0-400 days."""

        def prefer(text: str | None) -> str:
            return "dmy" if text and "/" in text and not re.match(r"^\s*\d{4}", text) else "ymd"

        sread = trf_date_candidates(start, prefer(start)) if start else []
        eread = trf_date_candidates(end, prefer(end)) if end else []
        sc = self._plausible(f"042 date {shown(start)}", sread, self.head.header_lines.get("042"))
        ec = self._plausible(f"052 date {shown(end)}", eread, self.head.header_lines.get("052"))
        for tag, text, read in (("042", start, sread), ("052", end, eread)):
            if text and not read:
                self.issues.add(
                    "trf_bad_date", f"{tag} date {shown(text)} not understood", self.head.header_lines.get(tag)
                )
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
        kept = [c for c in cands if implausible_reason(c[0], self.today) is None]
        if cands and not kept:
            why = implausible_reason(cands[0][0], self.today)
            self.issues.add("trf_date_implausible", f"{what} {why}: not stored", line, "warning", raw)
        return kept

    def round_dates(self, tour: TournamentRec) -> dict[int, dt.date]:
        """132 round dates (§3): tokens placed on the 10-column grid from col 92 (slack of a few columns)."""
        if self.head.round_dates_raw is None:
            return {}
        no, line = self.head.round_dates_raw
        tokens = [(m.start() + 1, m.group()) for m in re.finditer(r"\S+", line[4:])]
        tokens = [(col + 4, tok) for col, tok in tokens]
        if not tokens:
            return {}
        tour.extra["round_dates_raw"] = line[4:].rstrip()
        on_grid = tokens[0][0] >= 85
        start, end = tour.start_date, tour.end_date
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
        tour.extra["round_dates"] = {str(r): d.isoformat() for r, d in sorted(out.items())}
        return out
