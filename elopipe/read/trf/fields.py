"""Fixed-column fields of a TRF record (trf-format.md §2): slicing and the few conversions every
record reader shares. Nothing here raises: a field that is not a number is `None`."""

from __future__ import annotations

import functools
from decimal import Decimal, InvalidOperation

#: The one tournament of a TRF file: every record of the file refers to it.
TOURNAMENT_REF = 1


def digits(s: str) -> bool:
    """ASCII digits only: str.isdigit() also accepts '²' and other digits int() refuses."""
    return s.isascii() and s.isdigit()


def int_or_none(text: str) -> int | None:
    s = text.strip()
    # isascii: str.isdigit() also accepts '²' and other digits int() refuses
    return int(s) if s.isascii() and s.isdigit() else None


@functools.lru_cache(maxsize=1 << 12)
def decimal_or_none(text: str) -> Decimal | None:
    # cached: points columns repeat (' 4.5' on thousands of rows), and a Decimal is immutable
    s = text.strip().replace(",", ".")
    if not s:
        return None
    try:
        value = Decimal(s)
    except InvalidOperation:
        return None
    # 'NaN', 'Inf' and exponents ('1e99') are not points written in a 4-column field
    return value if value.is_finite() and "e" not in s.lower() else None


def column(line: str, first: int, last: int) -> str:
    """Columns first..last, 1-based inclusive; beyond the end of the line is blank (§2)."""
    return line[first - 1 : last].ljust(last - first + 1)
