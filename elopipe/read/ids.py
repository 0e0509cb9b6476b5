"""Placeholder player IDs: the values files write in an ID column when they have no ID.

The specs name these forms for the FIDE-ID column of TRF's `001` line (trf-format.md §3, cols
58-68: blank, `0`, `00000000`) and for PGN's WhiteFideId/BlackFideId tags (pgn-faults.md 18 and
40: empty, zero, padded, `?`, `-`, `---`); the Irish 2011 files write `999999` for a player who
has none. An ID made of zeros only or of nines only is such a placeholder: no FIDE ID was ever
issued as one, and taking it for an ID would make one player of everyone who carries it.
"""

from __future__ import annotations

import re

# Blank, dashes and question marks as in pgn-faults.md 40; digits as in trf-format.md §3. The
# pattern is also matched column-wise (Polars, on trimmed cells) by the official-list import.
PLACEHOLDER_ID_PATTERN = r"(?i)^(?:0+|9{4,}|[?\-]*|n/?a|nn)$"
_PLACEHOLDER = re.compile(PLACEHOLDER_ID_PATTERN)


def is_placeholder_id(raw: str | None) -> bool:
    """True when `raw` (an ID as written, spaces trimmed here) means "no ID": blank, `?`, `-`,
    `---`, `n/a`, `NN`, zeros only (`0`, `00000000`) or nines only (`9999`, `999999`,
    `99999999`). Never raises."""
    return raw is None or _PLACEHOLDER.match(raw.strip()) is not None
