"""What a FIDE run compares to decide which computed lists differ from the stored ones: a digest
of each list's rows in the three result tables. Used by a run in one piece (`run`) and by a run
in windows (`windows`) alike."""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

import polars as pl

from elopipe.rating import store_io

# The result tables a FIDE run writes, keyed by `list_date`.
RESULT_KEYS = ("rating_lists", "rating_changes", "tournament_ratings")


def list_hashes(frames: dict[str, pl.DataFrame]) -> dict[dt.date, str]:
    """Per list date, a SHA-1 hex digest of its rows in every table of `RESULT_KEYS` (`frames`:
    table name → its rows with a `list_date` column; decimals hashed as floats, so that the
    store's DECIMAL widths do not matter). A date with no row in any table is absent."""
    out: dict[dt.date, Any] = {}
    for name in RESULT_KEYS:
        df = frames[name].with_columns(pl.col(pl.Decimal).cast(pl.Float64))
        for d, h in store_io.period_digests(df, by="list_date").items():
            out.setdefault(d, hashlib.sha1(b"rows")).update(f"{name}:{h};".encode())
    return {d: h.hexdigest() for d, h in out.items()}
