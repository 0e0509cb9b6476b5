"""Dates as chess files write them, parsed to (date, precision).

Precision is 'day', 'month', 'year' or 'none'. A partial date is stored as its first
possible day (2023.??.?? -> 2023-01-01, 'year') so it sorts and joins, and the precision
says how much of it is real.
"""

from __future__ import annotations

import datetime as dt
import functools
import re

from elopipe.read.control_chars import shown_value
from elopipe.runtime.errors import ElopipeError

# ---- plausible dates ------------------------------------------------------------------
#: The earliest date a chess file may carry: modern chess (the queen's long move) dates from
#: the late 15th century and the oldest recorded games from about 1475; a year before 1400
#: is a placeholder ('0001.01.01') or a typo, and dates near year 1 break date arithmetic.
DATE_MIN = dt.date(1400, 1, 1)
#: Days after today that a date may still lie: a file made up before its event (pairings
#: prepared a few days ahead, an event ending later this month) is not wrong, while a year
#: mistyped into the future ('2923', '9999') would stretch the calendar of rating lists
#: over centuries. A month covers every schedule written ahead of play.
FUTURE_MARGIN_DAYS = 31


#: The range of an official rating list's date: FIDE published its first rating list in 1971
#: (the FFE's Elo lists came later), so an earlier date is a typo; a list after 2100 likewise.
FIRST_LIST_DATE = dt.date(1971, 1, 1)
LAST_LIST_DATE = dt.date(2100, 12, 31)


class ListDateError(ElopipeError, ValueError):
    """A list date no rating list can have (a usage error: exit 2)."""

    exit_code = 2


def check_list_date(when: dt.date) -> dt.date:
    """`when`, or ListDateError when it lies outside FIRST_LIST_DATE .. LAST_LIST_DATE."""
    if not FIRST_LIST_DATE <= when <= LAST_LIST_DATE:
        raise ListDateError(
            f"list date {when} is out of range: give a date from {FIRST_LIST_DATE} to {LAST_LIST_DATE}"
            f" (FIDE's first list is of {FIRST_LIST_DATE.year})"
        )
    return when


def parse_list_date(text: str, option: str = "--list-date") -> dt.date:
    """The list date `text` names: 'YYYY-MM-DD', or 'YYYY-MM' for that month's list (its 1st,
    the date of a FIDE or FFE list, as `rate --through` reads a month), within FIRST_LIST_DATE ..
    LAST_LIST_DATE. Raises ListDateError (a usage error, one line naming `option`) for any other
    form: `date.fromisoformat` would also take '20220801' or '2022-W31' as another spelling."""
    found = re.fullmatch(r"([0-9]{4})-([0-9]{2})(?:-([0-9]{2}))?", text.strip())
    if not found:
        raise ListDateError(
            f"{option} must be a list date YYYY-MM-DD or a list month YYYY-MM (2024-03: the list of March 2024),"
            f" not {shown_value(text.strip())}"
        )
    try:
        when = dt.date(int(found[1]), int(found[2]), int(found[3] or 1))
    except ValueError:  # the form is right, the day or month does not exist
        raise ListDateError(f"{option}: {shown_value(text.strip())} is no day of the calendar") from None
    try:
        return check_list_date(when)
    except ListDateError as exc:
        raise ListDateError(f"{option}: {exc}") from None


def latest_plausible(today: dt.date | None = None) -> dt.date:
    """The last date a file may carry: `today` (default: the machine's date) + FUTURE_MARGIN_DAYS."""
    return (today or dt.date.today()) + dt.timedelta(days=FUTURE_MARGIN_DAYS)


def implausible_reason(value: dt.date | None, today: dt.date | None = None) -> str | None:
    """Why `value` cannot be a date of a game or event (one line), or None when it can.

    Plausible: DATE_MIN <= value <= `latest_plausible(today)`; None is plausible (unknown).
    """
    if value is None:
        return None
    if value < DATE_MIN:
        return f"is before {DATE_MIN.year} (a placeholder or a typo)"
    latest = latest_plausible(today)
    if value > latest:
        return f"is after {latest.isoformat()} (today + {FUTURE_MARGIN_DAYS} days: a mistyped year?)"
    return None


def parse_game_date(text: str | None) -> tuple[dt.date | None, str, str | None]:
    """A PGN Date/EventDate as `parse_pgn_date` reads it, refused when implausible.

    Returns (date, precision, refusal): refusal is None, or why a date that reads as a real
    calendar date was refused (`implausible_reason`); a refused date is (None, 'none', why).
    """
    value, precision = parse_pgn_date(text)
    why = implausible_reason(value)
    if why is not None:
        return None, "none", why
    return value, precision, None


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


# ---- TRF dates ----------------------------------------------------------------------
# Forms seen in TRF files (trf-format.md §3-4, §9): YYYY/MM/DD with '/', '-' or '.', partial
# birth dates (YYYY/00/00, '1975.  .', bare year), DD.MM.YYYY and DD/MM/YYYY (Vega),
# '28. 07. 2005' (spaces after the dots), YYMMDD forms with two-digit years in three orders
# (YY/MM/DD in 132, YY.DD.MM swapped, DD/MM/YY), 'May 29, 2020' (lichess), YYYYMMDD.

_MONTHS = {
    name: i + 1
    for i, names in enumerate(
        [
            ("jan", "january", "janv", "janvier", "ene", "enero"),
            ("feb", "february", "fev", "fevr", "fevrier", "febrero"),
            ("mar", "march", "mars", "marzo"),
            ("apr", "april", "avr", "avril", "abr", "abril"),
            ("may", "mai", "mayo"),
            ("jun", "june", "juin", "junio"),
            ("jul", "july", "juil", "juillet", "julio"),
            ("aug", "august", "aou", "aout", "ago", "agosto"),
            ("sep", "sept", "september", "septembre", "septiembre"),
            ("oct", "october", "octobre", "octubre"),
            ("nov", "november", "novembre", "noviembre"),
            ("dec", "december", "decembre", "dic", "diciembre"),
        ]
    )
    for name in names
}
_SEP = r"\s*[./\-]\s*"
_YEAR_FIRST = re.compile(rf"^(\d{{4}})(?:{_SEP}(\d{{1,2}}|0*|\s*)(?:{_SEP}(\d{{1,2}}|0*|\s*))?)?\.?$")
_YEAR_LAST = re.compile(rf"^(\d{{1,2}}){_SEP}(\d{{1,2}}){_SEP}(\d{{4}})$")
_TWO_DIGIT = re.compile(rf"^(\d{{2}}){_SEP}(\d{{2}}){_SEP}(\d{{2}})$")
_COMPACT = re.compile(r"^(\d{4})(\d{2})(\d{2})$")
_MONTH_FIRST = re.compile(r"^([A-Za-zéû]+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})$")
_DAY_FIRST_NAME = re.compile(r"^(\d{1,2})\.?\s+([A-Za-zéû]+)\.?,?\s+(\d{4})$")
_MONTH_YEAR = re.compile(r"^([A-Za-zéû]+)\.?,?\s+(\d{4})$")

TRF_TWO_DIGIT_ORDERS = ("ymd", "dmy", "ydm")


def _year2(yy: int) -> int:
    """Two-digit year: 00-69 -> 2000s, 70-99 -> 1900s (TRF round dates are all after 1970)."""
    return 2000 + yy if yy < 70 else 1900 + yy


def _month_of(name: str) -> int | None:
    key = name.lower().replace("é", "e").replace("û", "u").rstrip(".")
    return _MONTHS.get(key)


def trf_date_candidates(text: str | None, prefer: str = "ymd") -> list[tuple[dt.date, str, str]]:
    """Every valid reading of a TRF date field, the preferred one first.

    Returns a list of (date, precision, order); order is 'ymd', 'dmy', 'ydm', 'mdy' or 'name'.
    Only a two-digit-year form ('10.09.13', '26/09/22', '11.25.02') or a day/month-ambiguous
    DD/MM/YYYY can give more than one reading; `prefer` ('ymd', 'dmy' or 'ydm') says which
    two-digit order to try first (TRF16 round dates are YY/MM/DD). Callers with context
    (042 <= round date <= 052) pick among them. Empty list when nothing parses.
    """
    if text is None:
        return []
    return list(_trf_date_candidates(text, prefer))


@functools.lru_cache(maxsize=1 << 12)  # a month of TRF files writes its few dozen days thousands of times
def _trf_date_candidates(text: str, prefer: str) -> tuple[tuple[dt.date, str, str], ...]:
    """`trf_date_candidates` of a text that is not None, as a tuple (cached: a tuple is immutable)."""
    return tuple(_read_trf_date(text, prefer))


def _read_trf_date(text: str, prefer: str) -> list[tuple[dt.date, str, str]]:
    """`trf_date_candidates` of a text that is not None."""
    s = text.strip()
    if not s or set(s) <= set("0./- "):
        return []
    out: list[tuple[dt.date, str, str]] = []

    def add(y: int, m: int, d: int, precision: str, order: str) -> None:
        try:
            value = dt.date(y, m, d)
        except ValueError:
            return
        if all(v != value for v, _, _ in out):
            out.append((value, precision, order))

    m = _YEAR_FIRST.match(s)
    if m:
        y = int(m.group(1))
        mo_txt = (m.group(2) or "").strip()
        d_txt = (m.group(3) or "").strip()
        mo = int(mo_txt) if mo_txt else 0
        d = int(d_txt) if d_txt else 0
        if y == 0:
            return []
        if mo == 0:
            add(y, 1, 1, "year", "ymd")
        elif d == 0:
            add(y, mo, 1, "month", "ymd")
            if not out:  # month out of range: keep the year
                add(y, 1, 1, "year", "ymd")
        else:
            add(y, mo, d, "day", "ymd")
            if not out and mo <= 31 and d <= 12:  # YYYY/DD/MM written by some tools
                add(y, d, mo, "day", "ydm")
            if not out:
                add(y, 1, 1, "year", "ymd")
        return out
    m = _COMPACT.match(s)
    if m:
        add(int(m.group(1)), int(m.group(2)), int(m.group(3)), "day", "ymd")
        return out
    m = _YEAR_LAST.match(s)
    if m:
        a, b, y = int(m.group(1)), int(m.group(2)), int(m.group(3))
        add(y, b, a, "day", "dmy")
        add(y, a, b, "day", "mdy")  # US order, only when DD/MM is impossible or ambiguous
        return out
    m = _TWO_DIGIT.match(s)
    if m:
        a, b, c = (int(g) for g in m.groups())
        readings = {
            "ymd": (_year2(a), b, c),
            "dmy": (_year2(c), b, a),
            "ydm": (_year2(a), c, b),
        }
        order = [prefer] + [o for o in TRF_TWO_DIGIT_ORDERS if o != prefer]
        for o in order:
            y, mo, d = readings[o]
            add(y, mo, d, "day", o)
        return out
    m = _MONTH_FIRST.match(s)
    if m and _month_of(m.group(1)):
        add(int(m.group(3)), _month_of(m.group(1)) or 0, int(m.group(2)), "day", "name")
        return out
    m = _DAY_FIRST_NAME.match(s)
    if m and _month_of(m.group(2)):
        add(int(m.group(3)), _month_of(m.group(2)) or 0, int(m.group(1)), "day", "name")
        return out
    m = _MONTH_YEAR.match(s)
    if m and _month_of(m.group(1)):
        add(int(m.group(2)), _month_of(m.group(1)) or 0, 1, "month", "name")
    return out


@functools.lru_cache(maxsize=1 << 16)  # a month of TRF rows repeats its birth dates
def parse_trf_date(text: str | None, prefer: str = "ymd") -> tuple[dt.date | None, str]:
    """Parse any date form found in TRF files to (date, precision).

    Handles every form listed in trf-format.md: 'YYYY/MM/DD' (also '-' and '.'),
    'YYYY/00/00', 'YYYY/MM/00', '1975.  .' and a bare year (partial birth dates -> 'year'
    or 'month' precision), '0000/00/00' and blanks (-> (None, 'none')), 'DD.MM.YYYY',
    'DD/MM/YYYY', '28. 07. 2005', two-digit-year forms 'YY/MM/DD', 'YY.MM.DD',
    'YY.DD.MM' and 'DD/MM/YY', 'May 29, 2020', '29 May 2020', 'May 2020' and 'YYYYMMDD'.

    A two-digit-year form is read in the `prefer` order when that gives a real date
    (TRF16 round dates are 'YY/MM/DD'; a '11.25.02' falls through to YY.DD.MM). Use
    `trf_date_candidates` to choose with context. Never raises.
    """
    cands = trf_date_candidates(text, prefer=prefer)
    if not cands:
        return None, "none"
    value, precision, _ = cands[0]
    return value, precision
