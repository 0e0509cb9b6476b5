"""Placeholder player IDs: the values files write in an ID column when they have no ID.

The specs name these forms for the FIDE-ID column of TRF's `001` line (trf-format.md §3, cols
58-68: blank, `0`, `00000000`) and for PGN's WhiteFideId/BlackFideId tags (pgn-faults.md 18 and
40: empty, zero, padded, `?`, `-`, `---`); the Irish 2011 files write `999999` for a player who
has none. An ID made of zeros only or of nines only is such a placeholder: no FIDE ID was ever
issued as one, and taking it for an ID would make one player of everyone who carries it.

A number of more than `FIDE_ID_DIGITS` (9) digits, leading zeros aside, is no FIDE ID either:
FIDE's IDs have at most nine digits (the Grandmommy's Cup TRF-2026 sample writes 11-digit test
numbers, 72623454321). It is read as no ID too, and the readers warn with the line.
"""

from __future__ import annotations

import re

# Blank, dashes and question marks as in pgn-faults.md 40; digits as in trf-format.md §3. The
# pattern is also matched column-wise (Polars, on trimmed cells) by the official-list import.
PLACEHOLDER_ID_PATTERN = r"(?i)^(?:0+|9{4,}|[?\-]*|n/?a|nn)$"
_PLACEHOLDER = re.compile(PLACEHOLDER_ID_PATTERN)

#: The most digits a FIDE ID has (leading zeros aside).
FIDE_ID_DIGITS = 9
#: Largest FIDE ID: a larger number in an ID column is no ID.
FIDE_ID_MAX = 10**FIDE_ID_DIGITS - 1
# digits only, more than nine of them after leading zeros; matched column-wise too (list import)
TOO_LONG_ID_PATTERN = rf"^0*[1-9][0-9]{{{FIDE_ID_DIGITS},}}$"
_TOO_LONG = re.compile(TOO_LONG_ID_PATTERN)


def is_placeholder_id(raw: str | None) -> bool:
    """True when `raw` (an ID as written, spaces trimmed here) means "no ID": blank, `?`, `-`,
    `---`, `n/a`, `NN`, zeros only (`0`, `00000000`) or nines only (`9999`, `999999`,
    `99999999`). Never raises."""
    return raw is None or _PLACEHOLDER.match(raw.strip()) is not None


def is_id_word(raw: str | None) -> bool:
    """True when `raw` (an ID as written) holds no digit: a word such as `none`, `unknown` or
    `xxx` written where an ID goes. No FIDE ID or national ID is written without a digit (an FFE
    licence is a letter and digits, K59857), and keeping such a word as an ID would make one
    player of everyone who carries it. Never raises."""
    return raw is not None and bool(raw.strip()) and not any(c.isdigit() for c in raw)


def is_too_long_id(raw: str | None) -> bool:
    """True when `raw` (spaces trimmed here) is a number of more than nine digits, leading zeros
    aside: no FIDE ID has that many (`FIDE_ID_MAX`), so it is read as no ID. Never raises."""
    return raw is not None and _TOO_LONG.match(raw.strip()) is not None


def too_long_id_message(raw: str) -> str:
    """The warning's words for an ID of more than nine digits (`is_too_long_id`)."""
    return f"{raw.strip()} has more than {FIDE_ID_DIGITS} digits, which no FIDE ID has: read as no ID"
