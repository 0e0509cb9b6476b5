"""TRF header records (trf-format.md §3: `012`, `022`, ... `??2`), the XX/BB extensions of JaVaFo
and bbpPairings (§7) and the TRF-2026 records kept raw (§6: `240` byes read too), gathered as the
lines come; `elopipe.read.trf.tournament` reads them into the `TournamentRec` once all are in."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from elopipe.read.trf.fields import column, digits, int_or_none
from elopipe.read.trf.issues import IssueLog

#: Records of TRF-2026 kept raw in `extra["records"]` (§6); 240 is also cross-checked.
TRF26_RECORDS = frozenset({"240", "250", "260", "299", "300", "320", "330", "801", "802"})


class HeaderRecords:
    """The header values of one file by tag (`headers`; `112` is a list) and their lines
    (`header_lines`), the extensions (`xx`: a list for XXA/XXP/XXZ/XXS and BB?, else the value),
    the TRF-2026 records by code (`records`), the `240` byes as (line, 'kind:round:rank')
    (`byes_240`) and the `132` round-dates record (`round_dates_raw`: line, text)."""

    def __init__(self, issues: IssueLog) -> None:
        self.issues = issues
        self.headers: dict[str, Any] = {}
        self.header_lines: dict[str, int] = {}
        self.xx: dict[str, Any] = {}
        self.records: dict[str, list[str]] = defaultdict(list)
        self.byes_240: list[tuple[int, str]] = []
        self.round_dates_raw: tuple[int, str] | None = None

    def trf26(self, no: int, line: str) -> None:
        """A TRF-2026 record (`TRF26_RECORDS`), kept raw; a `240` bye is read too."""
        rec = line[:3]
        self.records[rec].append(line)
        if rec == "240":
            self._bye240(no, line)

    def header(self, no: int, line: str) -> None:
        """A `??2` header record; a repeated tag keeps the later value, with a warning."""
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

    def extension(self, no: int, line: str) -> None:
        """An XX/BB extension record (§7): XXA/XXP/XXZ/XXS and BB? may repeat, the others keep the later value."""
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
            if digits(m.group()) and int(m.group()):
                self.byes_240.append((no, f"{kind}:{rnd}:{int(m.group())}"))

    def scoring(self) -> dict[str, str]:
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
