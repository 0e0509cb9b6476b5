"""FIDE conversion tables 8.1.1 (p → dp) and 8.1.2 (D → PD), loaded from the package data.

Source: FIDE B.02 (2024) 8.1.1 and 8.1.2, identical in V2017 and V2022 and in the
rapid/blitz chapter (spec §2).  The data files are ``elopipe/rating/data/table_8_1_1.csv``
(columns p, dp) and ``table_8_1_2.csv`` (d_min, d_max, pd_high, pd_low; the last band has
no d_max: |D| ≥ 736).

Units: everything is an integer.  p and PD are in hundredths (0…100); dp and D in rating
points.  PD is looked up, never interpolated or computed from the logistic formula.
"""

from __future__ import annotations

import functools
from decimal import Decimal
from importlib import resources

import polars as pl

#: |D| from which PD is 1.00 / 0.00 (table 8.1.2, last band).
PD_LAST_BAND = 736


def _read(name: str) -> pl.DataFrame:
    text = resources.files("elopipe.rating").joinpath("data", name).read_text("utf-8")
    return pl.read_csv(text.encode(), infer_schema=False)


def _x100(text: str) -> int:
    return int(Decimal(text) * 100)


@functools.cache
def dp_table() -> pl.DataFrame:
    """Table 8.1.1 as a frame: p_x100 Int64 (0…100), dp Int64 (rating points), 101 rows,
    sorted by p_x100."""
    raw = _read("table_8_1_1.csv")
    return pl.DataFrame(
        {
            "p_x100": [_x100(p) for p in raw["p"]],
            "dp": [int(v) for v in raw["dp"]],
        },
        schema={"p_x100": pl.Int64, "dp": pl.Int64},
    ).sort("p_x100")


@functools.cache
def pd_table() -> pl.DataFrame:
    """Table 8.1.2 as a frame: d_min Int64, d_max Int64 (null for the last band),
    pd_high_x100 Int64, pd_low_x100 Int64; 51 bands sorted by d_min."""
    raw = _read("table_8_1_2.csv")
    return pl.DataFrame(
        {
            "d_min": [int(v) for v in raw["d_min"]],
            "d_max": [int(v) if v else None for v in raw["d_max"]],
            "pd_high_x100": [_x100(v) for v in raw["pd_high"]],
            "pd_low_x100": [_x100(v) for v in raw["pd_low"]],
        },
        schema={
            "d_min": pl.Int64,
            "d_max": pl.Int64,
            "pd_high_x100": pl.Int64,
            "pd_low_x100": pl.Int64,
        },
    ).sort("d_min")


@functools.cache
def _pd_arrays() -> tuple[tuple[int, ...], tuple[int, ...]]:
    """PD_H and PD_L by |D| for |D| = 0 … 736 (index 736 stands for every |D| ≥ 736)."""
    high = [0] * (PD_LAST_BAND + 1)
    low = [0] * (PD_LAST_BAND + 1)
    for d_min, d_max, h, lo in pd_table().iter_rows():
        for d in range(d_min, (d_max if d_max is not None else PD_LAST_BAND) + 1):
            high[d], low[d] = h, lo
    return tuple(high), tuple(low)


@functools.cache
def _dp_array() -> tuple[int, ...]:
    out = [0] * 101
    for p, dp in dp_table().iter_rows():
        out[p] = dp
    return tuple(out)


def pd_x100(d: int) -> int:
    """Expected score PD in hundredths for a rating difference D = own − opponent.

    D ≥ 0 reads the H column at |D|, D < 0 the L column (table 8.1.2).  No 400-point rule
    here: the caller passes D after applying it.
    """
    high, low = _pd_arrays()
    i = min(abs(d), PD_LAST_BAND)
    return high[i] if d >= 0 else low[i]


def dp(p_x100: int) -> int:
    """Rating difference dp for a fractional score p in hundredths (table 8.1.1).

    Raises ValueError outside 0…100.
    """
    if not 0 <= p_x100 <= 100:
        raise ValueError(f"p must be within 0..100 hundredths, got {p_x100}")
    return _dp_array()[p_x100]


def pd_x100_expr(d: pl.Expr) -> pl.Expr:
    """Polars lookup of PD (Int64 hundredths) for an Int64 expression D (table 8.1.2).

    A gather into the 737-entry arrays: O(1) per row, no join.
    """
    high, low = _pd_arrays()
    idx = d.abs().clip(0, PD_LAST_BAND).cast(pl.UInt32)
    h = pl.lit(pl.Series("h", high, dtype=pl.Int64)).gather(idx)
    lo = pl.lit(pl.Series("l", low, dtype=pl.Int64)).gather(idx)
    return pl.when(d >= 0).then(h).otherwise(lo)


def dp_expr(p_x100: pl.Expr) -> pl.Expr:
    """Polars lookup of dp (Int64 points) for an Int64 expression p in hundredths (0…100)."""
    arr = pl.lit(pl.Series("dp", _dp_array(), dtype=pl.Int64))
    return arr.gather(p_x100.clip(0, 100).cast(pl.UInt32))
