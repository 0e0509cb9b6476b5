"""Counts in the user's words: '1 error', '2 errors' (never '1 errors' or 'error(s)')."""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None, *, thousands: bool = False) -> str:
    """'1 list', '0 lists', '3 lists'; `many` for an irregular plural ('1 match', '2 matches');
    `thousands` writes 1,234."""
    count = f"{n:,}" if thousands else str(n)
    return f"{count} {word if n == 1 else (many or word + 's')}"


def bar(done: int, total: int, width: int = 20) -> str:
    """'[#####---------------] 250/1,000': `done` of `total` as a text bar."""
    filled = width * done // total if total else width
    return f"[{'#' * filled}{'-' * (width - filled)}] {done:,}/{total:,}"
