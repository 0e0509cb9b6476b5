"""Dates as chess files write them, parsed to (date, precision).

Precision is 'day', 'month', 'year' or 'none'. A partial date is stored as its first
possible day (2023.??.?? -> 2023-01-01, 'year') so it sorts and joins, and the precision
says how much of it is real.
"""

from __future__ import annotations

import datetime as dt
import re

_PGN_DATE = re.compile(r"^\s*(\d{4}|\?{4})[.\-/](\d{1,2}|\?{1,2})[.\-/](\d{1,2}|\?{1,2})\s*$")


def parse_pgn_date(text: str | None) -> tuple[dt.date | None, str]:
    """Parse a PGN Date/EventDate tag ('YYYY.MM.DD' with '??' for unknown parts).

    Also accepts '-' or '/' as separators and a bare year. Returns (None, 'none') when
    nothing usable is there, and for impossible dates (e.g. 2023.02.30), which callers
    should report.
    """
    if not text:
        return None, "none"
    m = _PGN_DATE.match(text)
    if not m:
        bare = text.strip()
        if re.fullmatch(r"\d{4}", bare):
            return _safe(int(bare), 1, 1, "year")
        return None, "none"
    y, mo, d = m.groups()
    if "?" in y:
        return None, "none"
    if "?" in mo:
        return _safe(int(y), 1, 1, "year")
    if "?" in d:
        return _safe(int(y), int(mo), 1, "month")
    return _safe(int(y), int(mo), int(d), "day")


def _safe(y: int, m: int, d: int, precision: str) -> tuple[dt.date | None, str]:
    try:
        return dt.date(y, m, d), precision
    except ValueError:
        return None, "none"
